//! The user's docs are real: every ```` ```yaml trail ```` block passes the parse gate (and the type
//! gate when it targets the demo), every ```` ```yaml app ```` block loads on the simulated device,
//! and the "first trailmap" walkthrough, assembled from its `file=` blocks, checks clean and runs
//! green. Also the demo's `openMessage`, which the docs use. (`docs/tools.md` is compared with the
//! catalog by `surface::reference`'s unit tests, next to the generator.) Every `trailblaze` command
//! line in a shell block of the docs and the README names a real subcommand and real flags.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trailblaze::device::sim::SimDevice;
use trailblaze::gates::check_native;
use trailblaze::gates::parse_yaml;
use trailblaze::report::Outcome as TrailOutcome;
use trailblaze::trails::find_trails;
use trailblaze::{ProjectOptions, RunOptions, Settings, run_trails};
use trailblaze_e2e::{Fixture, repo_root};
use trailblaze_host_functions::SecretStore;

/// One fenced code block: where it starts (the fence's line), its info string and its text.
#[derive(Debug, Clone)]
pub(super) struct Block {
    pub(super) doc: String,
    pub(super) line: usize,
    pub(super) info: Vec<String>,
    pub(super) text: String,
}

impl Block {
    pub(super) fn is(&self, lang: &str, kind: &str) -> bool {
        self.info.first().is_some_and(|l| l == lang) && self.info.iter().any(|w| w == kind)
    }

    /// `file=PATH` in the info string.
    pub(super) fn file(&self) -> Option<&str> {
        self.info.iter().find_map(|w| w.strip_prefix("file="))
    }

    pub(super) fn at(&self) -> String {
        format!("{}:{}", self.doc, self.line)
    }
}

/// Every fenced block of a Markdown text (``` fences, not nested).
pub(super) fn blocks(doc: &str, md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in md.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    doc: doc.to_string(),
                    line: i + 1,
                    info: info.split_whitespace().map(str::to_string).collect(),
                    text: String::new(),
                });
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => out.extend(open.take()),
            (Some(b), _) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// The names of every page under docs/.
fn all_docs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo_root().join("docs"))
        .expect("docs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names
}

fn doc_blocks(name: &str) -> Vec<Block> {
    let path = repo_root().join("docs").join(name);
    let md = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    blocks(&format!("docs/{name}"), &md)
}

/// The parse gate over a `yaml trail` block: its target, or every error at its line in the doc.
fn parse_block(b: &Block) -> Result<Option<String>, String> {
    match trailblaze::Trail::parse(&b.text, Path::new(&b.doc)) {
        Ok(trail) => Ok(trail.config.target),
        Err(errors) => {
            let lines: Vec<String> = errors
                .iter()
                .map(|e| format!("{}:{}:{}: {}", b.doc, b.line + e.pos.line, e.pos.col, e.message))
                .collect();
            Err(format!("a `yaml trail` block does not parse:\n{}", lines.join("\n")))
        }
    }
}

/// The parse gate, then (for a trail targeting `demo`) the native type gate against the demo.
fn check_trail_block(b: &Block, demo: &Fixture) -> Result<(), String> {
    if parse_block(b)?.as_deref() != Some("demo") {
        return Ok(());
    }
    let file = demo.map_dir().join(format!("trails/doc-{}.trail.yaml", b.line));
    std::fs::write(&file, &b.text).map_err(|e| e.to_string())?;
    let report = check_native(&demo.project(), std::slice::from_ref(&file));
    let _ = std::fs::remove_file(&file);
    let errors: Vec<String> = report
        .findings
        .iter()
        .filter(|f| !f.warning)
        .map(|f| f.to_string())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: the type gate found:\n{}", b.at(), errors.join("\n")))
    }
}

fn load_app_block(b: &Block) -> Result<(), String> {
    SimDevice::from_app_yaml(&b.text, Path::new(&b.at()))
        .map(|_| ())
        .map_err(|e| format!("{}: the app does not load: {e}", b.at()))
}

fn failures(results: impl IntoIterator<Item = Result<(), String>>) -> Vec<String> {
    results.into_iter().filter_map(Result::err).collect()
}

#[test]
fn docs_trail_blocks_pass_the_gates() {
    let demo = Fixture::demo();
    let mut seen = 0;
    let mut bad = Vec::new();
    for doc in all_docs() {
        let trails: Vec<Block> = doc_blocks(&doc).into_iter().filter(|b| b.is("yaml", "trail")).collect();
        seen += trails.len();
        bad.extend(failures(trails.iter().map(|b| check_trail_block(b, &demo))));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    // The counter-example the docs show stays refused, with exactly the output quoted after it.
    let all = doc_blocks("writing-trails.md");
    let at = all
        .iter()
        .position(|b| b.is("yaml", "rejected"))
        .expect("writing-trails.md shows a rejected trail");
    let quoted = all[at + 1..].iter().find(|b| b.is("text", "text")).expect("its output");
    let Err(errors) = trailblaze::Trail::parse(&all[at].text, Path::new("trailmaps/demo/trails/x.trail.yaml")) else {
        panic!("{}: the counter-example is accepted", all[at].at());
    };
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(shown.join("\n"), quoted.text.trim_end(), "{}", quoted.at());
    // Control: the test sees the blocks (writing-trails.md alone has a dozen).
    assert!(seen >= 10, "only {seen} `yaml trail` blocks found");
}

#[test]
fn docs_app_blocks_load_on_the_simulated_device() {
    let mut seen = 0;
    let mut bad = Vec::new();
    for doc in ["app-yaml.md", "first-trailmap.md", "writing-trails.md"] {
        let apps: Vec<Block> = doc_blocks(doc).into_iter().filter(|b| b.is("yaml", "app")).collect();
        seen += apps.len();
        bad.extend(failures(apps.iter().map(load_app_block)));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    assert!(seen >= 3, "only {seen} `yaml app` blocks found");
}

#[test]
fn docs_broken_blocks_are_rejected_by_the_same_checks() {
    let md = "intro\n\n```yaml trail\nconfig:\n  target: demo\ntrail:\n  - step: a\n    recordin: {}\n```\n\n\
              ```yaml trail\nconfig:\n  target: demo\ntrail:\n  - step: a\n    recording:\n      tools:\n        - inputText: { text: 5 }\n```\n\n\
              ```yaml app\nid: x\nstart: home\nscreens:\n  home:\n    nodes:\n      - { id: a, colour: red }\n```\n\n\
              ```yaml trail\nconfig:\n  target: demo\ntrail:\n  - step: a\n    recording:\n      tools:\n        - inputText: { text: '5' }\n```\n";
    let bs = blocks("broken.md", md);
    assert_eq!(bs.len(), 4);
    let demo = Fixture::demo();
    let unknown_key = check_trail_block(&bs[0], &demo).expect_err("an unknown key");
    assert!(
        unknown_key.contains("broken.md:8:5") && unknown_key.contains("did you mean `recording`"),
        "{unknown_key}"
    );
    let wrong_type = check_trail_block(&bs[1], &demo).expect_err("a number where text goes");
    assert!(wrong_type.contains("inputText"), "{wrong_type}");
    let app = load_app_block(&bs[2]).expect_err("an unknown node key");
    assert!(app.contains("colour"), "{app}");
    // Control: the same call with text passes both gates.
    assert_eq!(check_trail_block(&bs[3], &demo), Ok(()));
}

/// Writes every `file=` block of the walkthrough under `root`.
fn assemble(root: &Path, bs: &[Block]) -> Vec<PathBuf> {
    let mut written = Vec::new();
    for b in bs {
        let Some(rel) = b.file() else { continue };
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &b.text).expect("write");
        written.push(path);
    }
    written
}

#[test]
fn docs_first_trailmap_checks_clean_and_runs_green() {
    let dir = tempfile::tempdir().expect("temp dir");
    let written = assemble(dir.path(), &doc_blocks("first-trailmap.md"));
    assert!(written.len() >= 4, "the walkthrough's files: {written:?}");
    let project = trailblaze::open(
        &dir.path().join("trailmaps"),
        ProjectOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..ProjectOptions::default()
        },
    )
    .expect("the walkthrough's trailmap opens");
    let trails = find_trails(&[dir.path().join("trailmaps")]).expect("trails");
    assert!(!trails.is_empty(), "the walkthrough has a trail");
    let report = check_native(&project, &trails);
    assert_eq!(report.errors(), 0, "{:#?}", report.findings);
    assert!(report.calls > 0, "the type gate saw the recorded calls");
    let out = run_trails(
        &project,
        &trails,
        &RunOptions {
            out: dir.path().join("out"),
            settings: Settings::default(),
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("runs");
    for t in &out.report.trails {
        assert_eq!(t.outcome, TrailOutcome::Passed, "{t:#?}");
    }
}

/// A subject of the demo app: the `subject` node's text on screen `message<i>` of app.yaml.
fn demo_subject(i: usize) -> String {
    let path = repo_root().join("trailmaps/demo/app.yaml");
    let text = std::fs::read_to_string(&path).expect("app.yaml");
    let doc = parse_yaml(&text, &path).expect("app.yaml parses");
    let nodes = doc.value["screens"][format!("message{i}")]["nodes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let subject = nodes.iter().find(|n| n["id"] == "subject").expect("a subject node");
    subject["text"].as_str().expect("subject text").to_string()
}

#[test]
fn demo_open_message_returns_the_subject_on_screen() {
    let f = Fixture::demo();
    let secrets = SecretStore::from_pairs([
        ("DEMO_USERNAME".to_string(), "jane@example.com".to_string()),
        ("DEMO_PASSWORD".to_string(), "hunter2".to_string()),
    ]);
    let project = f.project().with_secrets(secrets);
    let device = project.sim_device("demo").expect("sim");
    let s = project
        .open_session(
            "demo",
            trailblaze::SessionOptions {
                device: Some(device),
                out_dir: Some(f.out()),
                ..Default::default()
            },
        )
        .expect("session");
    s.call("signIn", json!({ "account": "demo" })).expect("signs in");
    let first = s.call("openMessage", json!({ "index": 1 })).expect("opens message 1");
    assert_eq!(first["subject"], Value::String(demo_subject(1)));
    // Control: another message gives another subject, so the tool reads the screen it opened.
    s.call("pressKey", json!({ "keyCode": "BACK" }))
        .expect("back to the inbox");
    let third = s.call("openMessage", json!({ "index": 3 })).expect("opens message 3");
    assert_eq!(third["subject"], Value::String(demo_subject(3)));
    assert_ne!(demo_subject(1), demo_subject(3));
}

/// Every `trailblaze ...` command line in a shell block of the docs (```sh, ```bash, ```console or a
/// bare fence), with where it is: `(place, words)`, the words up to a `#` comment.
fn command_lines(doc: &str, md: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for b in blocks(doc, md) {
        if !matches!(
            b.info.first().map(String::as_str),
            None | Some("sh" | "bash" | "console" | "shell")
        ) {
            continue;
        }
        for (i, line) in b.text.lines().enumerate() {
            let line = line.trim_start().trim_start_matches("$ ");
            let line = line.split(" #").next().unwrap_or_default();
            for part in line.split(['|', ';', '&']) {
                let words: Vec<String> = part.split_whitespace().map(str::to_string).collect();
                if words.first().map(String::as_str) == Some("trailblaze") {
                    out.push((format!("{doc}:{}", b.line + 1 + i), words));
                }
            }
        }
    }
    out
}

/// What is wrong with one command line against the binary's own `--help`: a subcommand it does not
/// have, or a `--flag` neither the subcommand nor the top level takes. `help` caches `--help` text.
fn command_drift(words: &[String], help: &mut impl FnMut(&[&str]) -> Option<String>) -> Option<String> {
    let top = help(&[]).unwrap_or_default();
    // Global flags before the subcommand take a value (`--trailmaps DIR`), except these.
    let mut i = 1;
    while i < words.len() && words[i].starts_with('-') {
        i += if ["--version", "-V", "--help", "-h"].contains(&words[i].as_str()) {
            1
        } else {
            2
        };
    }
    let sub = words.get(i)?;
    let Some(mut sub_help) = help(&[sub.as_str()]) else {
        return Some(format!("`trailblaze {sub}` is no subcommand"));
    };
    let mut name = sub.clone();
    // A command of subcommands (`session start`, `skill install`): the flags are the inner one's.
    if sub_help.contains("\nCommands:\n")
        && let Some(inner) = words.get(i + 1).filter(|w| !w.starts_with('-'))
    {
        match help(&[sub.as_str(), inner.as_str()]) {
            Some(h) => {
                sub_help = h;
                name = format!("{sub} {inner}");
            }
            None => return Some(format!("`trailblaze {sub} {inner}` is no subcommand")),
        }
    }
    let takes = |text: &str, flag: &str| {
        text.match_indices(flag).any(|(at, _)| {
            let next = text[at + flag.len()..].chars().next();
            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    };
    for w in &words[1..] {
        let flag = w.split('=').next().unwrap_or_default();
        if flag.starts_with("--") && !takes(&sub_help, flag) && !takes(&top, flag) {
            return Some(format!("`trailblaze {name}` takes no `{flag}`"));
        }
    }
    None
}

#[test]
fn every_command_line_in_the_docs_names_real_subcommands_and_flags() {
    let mut cache = std::collections::HashMap::<Vec<String>, Option<String>>::new();
    let mut help = |args: &[&str]| -> Option<String> {
        let key: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        cache
            .entry(key)
            .or_insert_with(|| {
                let o = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
                    .args(args)
                    .arg("--help")
                    .output()
                    .expect("run trailblaze --help");
                o.status
                    .success()
                    .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
            })
            .clone()
    };
    let root = repo_root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.push(root.join("README.md"));
    let mut lines = Vec::new();
    for path in &docs {
        let name = path.strip_prefix(&root).unwrap_or(path).display().to_string();
        let md = std::fs::read_to_string(path).expect("read a doc");
        lines.extend(command_lines(&name, &md));
    }
    let bad: Vec<String> = lines
        .iter()
        .filter_map(|(at, words)| command_drift(words, &mut help).map(|why| format!("{at}: {why}")))
        .collect();
    assert!(
        bad.is_empty(),
        "commands in the docs that the binary refuses:\n{}",
        bad.join("\n")
    );
    // Controls: the scan sees the docs' commands, and a drifted flag or subcommand is caught.
    assert!(lines.len() >= 20, "only {} command lines found", lines.len());
    let planted = command_lines(
        "planted.md",
        "```sh\ntrailblaze run --no-such-flag trails/\ntrailblaze frobnicate\ntrailblaze --trailmaps x check --all\n\
         trailblaze session start --name a --idle 5m\ntrailblaze session begin\ntrailblaze session stop --no-such-flag\n```\n",
    );
    let found: Vec<Option<String>> = planted.iter().map(|(_, w)| command_drift(w, &mut help)).collect();
    assert_eq!(
        found,
        [
            Some("`trailblaze run` takes no `--no-such-flag`".to_string()),
            Some("`trailblaze frobnicate` is no subcommand".to_string()),
            None,
            None,
            Some("`trailblaze session begin` is no subcommand".to_string()),
            Some("`trailblaze session stop` takes no `--no-such-flag`".to_string()),
        ]
    );
}

/// The names at a crate root: `pub use ...::{A, B}` / `pub use ...::A` lines and `pub mod a`
/// (outside any `pub mod a { ... }` block, whose contents are that module's).
fn root_names(lib: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut depth = 0usize;
    let mut statement = String::new();
    // A `#[doc(hidden)]` module is the part crates' way in, not the embedders' API.
    let mut hidden = false;
    for line in lib.lines() {
        let code = line.split("//").next().unwrap_or_default();
        if depth == 0 {
            let t = code.trim();
            if t == "#[doc(hidden)]" {
                hidden = true;
                continue;
            }
            let was_hidden = std::mem::take(&mut hidden);
            if let Some(rest) = t.strip_prefix("pub fn ") {
                names.insert(rest.split('(').next().unwrap_or_default().to_string());
            } else if let Some(rest) = t.strip_prefix("pub mod ") {
                if !was_hidden {
                    names.insert(rest.trim_end_matches(['{', ';', ' ']).to_string());
                }
            } else if t.starts_with("pub use ") || !statement.is_empty() {
                statement.push_str(t);
                if t.ends_with(';') {
                    let body = statement.trim_start_matches("pub use ").trim_end_matches(';');
                    let list = match body.split_once('{') {
                        Some((_, group)) => group.trim_end_matches('}').to_string(),
                        None => body.rsplit("::").next().unwrap_or_default().to_string(),
                    };
                    for item in list.split(',').map(str::trim).filter(|i| !i.is_empty() && *i != "*") {
                        names.insert(item.rsplit(" as ").next().unwrap_or(item).to_string());
                    }
                    statement.clear();
                }
            }
        }
        depth = (depth + code.matches('{').count()).saturating_sub(code.matches('}').count());
    }
    names
}

/// The names the first column of embedding.md's "The public names" table lists.
fn documented_names(md: &str) -> std::collections::BTreeSet<String> {
    let section = md.split("## The public names").nth(1).unwrap_or_default();
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .flat_map(|l| {
            let first = l.split(" | ").next().unwrap_or_default();
            first
                .split('`')
                .map(str::trim)
                .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn embedding_md_lists_exactly_the_crate_roots_public_names() {
    let root = repo_root();
    // `trailblaze` re-exports the core's root and adds the parts and `open`.
    let lib = std::fs::read_to_string(root.join("runtime/core/src/lib.rs")).expect("lib.rs");
    let facade = std::fs::read_to_string(root.join("runtime/trailblaze/src/lib.rs")).expect("lib.rs");
    let md = std::fs::read_to_string(root.join("docs/embedding.md")).expect("embedding.md");
    let mut public = root_names(&lib);
    public.extend(root_names(&facade));
    let documented = documented_names(&md);
    assert_eq!(
        public, documented,
        "the roots of runtime/core and runtime/trailblaze (left) and docs/embedding.md (right) differ"
    );
    // About fifteen everyday names, the rest in modules.
    let items = public
        .iter()
        .filter(|n| n.starts_with(char::is_uppercase) || n.contains('_'))
        .count();
    assert!(items <= 20, "{items} names at the crate root: {public:?}");
    // Controls: the reader sees a planted name and a planted module, and none inside a module block.
    let planted = format!(
        "{lib}\npub use crate::x::{{Extra, Other as Renamed}};\npub mod planted;\n#[doc(hidden)]\npub mod inside;\npub fn opened() {{}}\n"
    );
    let seen = root_names(&planted);
    assert!(seen.contains("Extra") && seen.contains("Renamed") && seen.contains("planted") && seen.contains("opened"));
    assert!(!seen.contains("inside") && !seen.contains("*"), "{seen:?}");
    assert!(
        !public.contains("TrailReport") && public.contains("report"),
        "{public:?}"
    );
    assert!(
        documented.contains("Project") && documented.contains("gates"),
        "{documented:?}"
    );
}
