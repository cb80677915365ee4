//! The core has no feature switches and no optional part: no `cfg(feature ...)` in its sources, no
//! `[features]` or optional dependency in its manifest, and none of the crates that belong to a
//! part (an adb client, an HTTP client or server, TLS, a WebSocket, an image codec) among its
//! dependencies. A part is a crate of its own that registers what it brings (`Parts`).

use std::path::{Path, PathBuf};

/// Crates that belong to an optional part, never to the core.
const PART_CRATES: &[&str] = &[
    "adb_client",
    "ureq",
    "rustls",
    "hyper",
    "axum",
    "tokio",
    "tungstenite",
    "roxmltree",
    "resvg",
    "usvg",
    "gif",
    "png",
    "base64",
];

fn core_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each place in `text` that switches on a feature: `cfg(feature`, `cfg!(feature`, a feature
/// inside `any(...)`/`all(...)`/`not(...)`/`cfg_attr(...)`, as `line: text`.
fn feature_switches(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or_default();
            let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
            (squeezed.contains("cfg(") || squeezed.contains("cfg!(") || squeezed.contains("cfg_attr("))
                && squeezed.contains("feature=")
        })
        .map(|(i, l)| format!("{}: {}", i + 1, l.trim()))
        .collect()
}

/// What the manifest holds that a core must not: a `[features]` table, an optional dependency,
/// a dependency on a part's crate (in `[dependencies]`; dev-dependencies are the tests').
fn manifest_problems(toml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in toml.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = l.to_string();
            if l == "[features]" {
                out.push("a [features] table".to_string());
            }
            continue;
        }
        if section != "[dependencies]" || l.starts_with('#') || l.is_empty() {
            continue;
        }
        let name = l.split(['=', '.', ' ']).next().unwrap_or_default();
        if l.replace(' ', "").contains("optional=true") {
            out.push(format!("optional dependency `{name}`"));
        }
        if PART_CRATES.contains(&name) {
            out.push(format!("a part's crate `{name}`"));
        }
    }
    out
}

#[test]
fn the_core_switches_on_no_feature() {
    let mut files = Vec::new();
    rust_files(&core_dir().join("src"), &mut files);
    assert!(files.len() > 100, "the core's sources were found ({})", files.len());
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            feature_switches(&text)
                .into_iter()
                .map(move |s| format!("{}:{s}", f.display()))
        })
        .collect();
    assert!(found.is_empty(), "feature switches in the core:\n{}", found.join("\n"));
}

#[test]
fn the_detector_finds_each_form_of_switch_and_passes_plain_code() {
    for planted in [
        "#[cfg(feature = \"web\")]\nmod web;",
        "    #[cfg(not(feature = \"adb\"))]",
        "#[cfg(all(test, feature = \"raster\"))]",
        "#[cfg_attr(not(feature = \"fetch\"), allow(dead_code))]",
        "let on = cfg!(feature = \"web\");",
        "#[cfg( feature=\"agent\" )]",
    ] {
        assert_eq!(feature_switches(planted).len(), 1, "{planted}");
    }
    // Controls: a test module, a platform switch and a comment are not feature switches.
    for plain in [
        "#[cfg(test)]\nmod tests;",
        "#[cfg(unix)]\nfn f() {}",
        "// #[cfg(feature = \"web\")] was here",
        "let feature = 1;",
    ] {
        assert!(feature_switches(plain).is_empty(), "{plain}");
    }
}

#[test]
fn the_core_manifest_has_no_optional_part() {
    let toml = std::fs::read_to_string(core_dir().join("Cargo.toml")).expect("the core's manifest");
    let problems = manifest_problems(&toml);
    assert!(problems.is_empty(), "runtime/core/Cargo.toml: {problems:?}");
    assert!(toml.contains("[dependencies]\n"), "control: the manifest was read");
}

#[test]
fn the_manifest_check_finds_features_optional_and_part_crates() {
    let bad = "[package]\nname = \"x\"\n\n[features]\nweb = []\n\n[dependencies]\nserde.workspace = true\nureq = { workspace = true, optional = true }\ntungstenite = \"0.28\"\n\n[dev-dependencies]\npng = \"0.18\"\n";
    let problems = manifest_problems(bad);
    assert_eq!(
        problems,
        [
            "a [features] table",
            "optional dependency `ureq`",
            "a part's crate `ureq`",
            "a part's crate `tungstenite`"
        ],
        "dev-dependencies are the tests' own"
    );
    // Control: a manifest of plain dependencies passes.
    assert!(manifest_problems("[dependencies]\nserde.workspace = true\nregex = \"1\"\n").is_empty());
}
