//! Every tool the original declares (`@TrailblazeToolClass` in its main sources, tests left out)
//! exists here, but for a short list left out on purpose (docs/tools.md says why): `mobile_maestro`,
//! the cloud service's `revyl_*`, and the original's internal `_yaml_defined` marker.
//!
//! The names come from the original's sources when a checkout is here (`$TRAILBLAZE_ORIGINAL`, or a
//! folder `orig` beside this repository), and must then equal the committed list of names,
//! tests/fixtures/original-tool-names.txt (refresh it with `TRAILBLAZE_BLESS=1`). Without a
//! checkout the test says so on stderr and checks the committed list.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trailblaze_e2e::{Fixture, in_dir, repo_root, text};

/// Left out on purpose: raw Maestro commands (no Maestro here), a cloud device service, and the
/// original's own marker for YAML-defined tools (not a tool).
fn excluded(name: &str) -> bool {
    name == "mobile_maestro" || name.starts_with("revyl_") || name == "_yaml_defined"
}

const NAMES_FILE: &str = "tests/fixtures/original-tool-names.txt";

fn original() -> Option<PathBuf> {
    let given = std::env::var_os("TRAILBLAZE_ORIGINAL").map(PathBuf::from);
    let sibling = repo_root().parent().map(|p| p.join("orig"));
    given
        .into_iter()
        .chain(sibling)
        .find(|p| p.join("trailblaze-common").is_dir())
}

/// Whether a folder holds tests (`src/test`, `jvmTest`, `commonTest`, `androidTest`, ...).
fn test_dir(name: &str) -> bool {
    name == "test" || name.ends_with("Test") || name.ends_with("Tests") || name == "testFixtures"
}

/// The tool names declared by `@TrailblazeToolClass` annotations in the `.kt` files under `root`,
/// test folders, build output and `node_modules` left out. A name given as a constant
/// (`name = RUN_COMMAND_TOOL_NAME`) is looked up among the files' `const val`s.
pub fn declared(root: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(test_dir(&name) || name == "build" || name == "node_modules" || name.starts_with('.')) {
                    walk(&p, out);
                }
            } else if name.ends_with(".kt")
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                out.push(t);
            }
        }
    }
    let mut sources = Vec::new();
    walk(root, &mut sources);
    let consts: Vec<(String, String)> = sources
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| {
            let rest = l.trim().split("const val ").nth(1)?;
            let (name, value) = rest.split_once('=')?;
            let value = value.trim();
            let value = value.strip_prefix('"')?.strip_suffix('"')?;
            Some((name.trim().trim_end_matches([':', ' ']).to_string(), value.to_string()))
        })
        .collect();
    let mut names = BTreeSet::new();
    for t in &sources {
        let mut rest = t.as_str();
        while let Some(i) = rest.find("@TrailblazeToolClass(") {
            let line_start = rest[..i].rfind('\n').map_or(0, |n| n + 1);
            let is_annotation = rest[line_start..i].trim().is_empty();
            let body = &rest[i + "@TrailblazeToolClass(".len()..];
            let end = body.find(')').unwrap_or(body.len());
            let args = &body[..end];
            rest = &body[end..];
            if !is_annotation {
                continue; // in a comment or a string
            }
            let named = args.split(',').map(str::trim).find_map(|a| {
                a.strip_prefix("name")
                    .map(|r| r.trim_start().trim_start_matches('=').trim())
            });
            let value = named.or_else(|| args.split(',').map(str::trim).find(|a| a.starts_with('"')));
            let Some(value) = value else { continue };
            let resolved = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(literal) => Some(literal.to_string()),
                None => consts.iter().find(|(n, _)| n == value).map(|(_, v)| v.clone()),
            };
            if let Some(n) = resolved {
                names.insert(n);
            }
        }
    }
    names
}

fn committed() -> BTreeSet<String> {
    std::fs::read_to_string(repo_root().join(NAMES_FILE))
        .unwrap_or_else(|e| panic!("{NAMES_FILE}: {e}"))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Every tool this host has (`tools --all`).
fn ours() -> BTreeSet<String> {
    let f = Fixture::new("t");
    let o = in_dir(&f, f.dir.path(), &["tools", "--all", "--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let all: Vec<Value> = serde_json::from_str(&out).expect("json");
    all.iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The names of `declared` this host lacks, but for the ones left out on purpose.
fn missing(declared: &BTreeSet<String>, ours: &BTreeSet<String>) -> Vec<String> {
    declared
        .iter()
        .filter(|n| !excluded(n) && !ours.contains(*n))
        .cloned()
        .collect()
}

#[test]
fn every_tool_the_original_declares_exists_here() {
    let names = match original() {
        Some(root) => {
            let scanned = declared(&root);
            if std::env::var_os("TRAILBLAZE_BLESS").is_some_and(|v| v == "1") {
                let mut text = String::from(
                    "# The tool names the original (block/trailblaze) declares with @TrailblazeToolClass in its main\n\
                     # sources, as tests/e2e/original_catalog.rs reads them. Names only. Refresh with\n\
                     # TRAILBLAZE_BLESS=1 TRAILBLAZE_ORIGINAL=<checkout> cargo test -p trailblaze-e2e --test e2e original_catalog\n",
                );
                for n in &scanned {
                    text.push_str(n);
                    text.push('\n');
                }
                std::fs::write(repo_root().join(NAMES_FILE), text).expect("write the names");
            }
            assert_eq!(
                scanned,
                committed(),
                "the original at {} declares other tools than {NAMES_FILE} lists: refresh it with TRAILBLAZE_BLESS=1",
                root.display()
            );
            scanned
        }
        None => {
            eprintln!(
                "\n!!! original_catalog: NO CHECKOUT OF THE ORIGINAL (set TRAILBLAZE_ORIGINAL to block/trailblaze): \
                 checking the committed list of its tool names ({NAMES_FILE}) instead of its sources !!!\n"
            );
            committed()
        }
    };
    assert!(
        names.len() > 100,
        "{} names: the scan or the list is broken",
        names.len()
    );
    let gone = missing(&names, &ours());
    assert!(
        gone.is_empty(),
        "tools the original declares that this host lacks: {gone:?}"
    );
}

#[test]
fn the_scan_reads_every_annotation_form_and_a_missing_tool_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("mod/src/main/kotlin/Tools.kt");
    std::fs::create_dir_all(src.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &src,
        "const val SHELL_NAME = \"shellOut\"\n\
         @TrailblazeToolClass(\"positional\")\nclass A\n\
         @TrailblazeToolClass(\n  name = \"named\",\n  surfaceToLlm = false,\n)\nclass B\n\
         @TrailblazeToolClass(name = SHELL_NAME, isRecordable = false)\nclass C\n\
         // @TrailblazeToolClass(\"inAComment\")\n\
         @TrailblazeToolClass(\"revyl_tap\")\nclass D\n",
    )
    .expect("write");
    let test = dir.path().join("mod/src/jvmTest/kotlin/T.kt");
    std::fs::create_dir_all(test.parent().expect("parent")).expect("mkdir");
    std::fs::write(&test, "@TrailblazeToolClass(\"onlyInTests\")\nclass T\n").expect("write");
    let found = declared(dir.path());
    let want: BTreeSet<String> = ["named", "positional", "revyl_tap", "shellOut"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
    // The check fails on a name this host lacks, and not on one left out on purpose.
    let ours: BTreeSet<String> = ["named".to_string()].into();
    assert_eq!(missing(&found, &ours), ["positional", "shellOut"]);
}
