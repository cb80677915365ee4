//! What a new user following the docs hit, each held with a control beside it: `console.*` in a
//! tool type-checks under the real tsc; `config.memory` pre-seeds `{{name}}`; a YAML error at the
//! end of `trailmap.yaml` shows the line it is on; `check`'s summary is a result (stdout) and its
//! notice about `.ts` tools is given only when there are some; sdk.md's `npx` runs TypeScript.

use std::path::Path;

use trailblaze::{ReplayOptions, Settings, Trail};
use trailblaze_e2e::{Fixture, device_tree, field_text, in_dir, text};

const CHATTY: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Says what it does at every level the runtimes print. */
export const chatty = trailblaze.tool<{}, {}>(async () => {
  console.log("log", 1, { a: [2] });
  console.info("info");
  console.warn("warn");
  console.error(new Error("error"));
  console.debug("debug");
  return {};
});
"#;

#[test]
fn console_in_a_tool_passes_check_tsc_and_a_misspelling_still_fails() {
    let f = Fixture::demo();
    f.tool("chatty", CHATTY);
    let o = in_dir(&f, f.dir.path(), &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(!out.contains("TS2584") && !out.contains("chatty.ts"), "{out}");
    // Control: a name that is not a global is still an error, at its line.
    f.tool("chatty", &CHATTY.replace("console.info", "consol.info"));
    let o = in_dir(&f, f.dir.path(), &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("chatty.ts:6:") && out.contains("'consol'"), "{out}");
}

/// The demo app's email field after replaying a trail that types `text` into it.
fn typed_with(memory: &str, text: &str) -> String {
    let f = Fixture::demo();
    let (_project, session) = f.session(Settings::default());
    let yaml = format!(
        "config:\n  target: demo\n{memory}trailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: {{ appId: com.example.demo }}\n\
         trail:\n  - step: Type\n    recording:\n      tools:\n        - inputText:\n            text: \"{text}\"\n            \
         nodeSelector: {{ androidAccessibility: {{ hintTextRegex: Email }} }}\n"
    );
    let trail = Trail::parse(&yaml, Path::new("memory.trail.yaml")).expect("the trail parses");
    let report = session.replay(&trail, &ReplayOptions::default(), &mut ());
    assert!(report.error.is_none(), "{report:#?}");
    field_text(&device_tree(&session), "email").expect("the email field")
}

#[test]
fn config_memory_pre_seeds_the_trails_tokens() {
    let tokens = "{{who}} / ${who} / {{memory.who}} / {{nobody}}";
    let seeded = typed_with("  memory: { who: jane@example.com }\n", tokens);
    assert_eq!(
        seeded,
        "jane@example.com / jane@example.com / jane@example.com / {{nobody}}"
    );
    // Control: without `config.memory` the same tokens stay as written.
    assert_eq!(typed_with("", tokens), tokens);
}

#[test]
fn a_yaml_error_at_the_end_of_trailmap_yaml_shows_its_line() {
    let f = Fixture::new("x");
    f.file("trailmap.yaml", "id: x\ntarget:\n  app_ids: [com.example\n");
    let o = in_dir(&f, f.dir.path(), &["check"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("trailmap.yaml:3:24") && err.contains("3 |   app_ids: [com.example"),
        "{err}"
    );
    assert!(!err.contains(":1:1"), "{err}");
    // Control: an error inside the file is shown where it is.
    f.file("trailmap.yaml", "id: x\nfoo: \"abc\nbar: 1\n");
    let (_, err) = text(&in_dir(&f, f.dir.path(), &["check"]));
    assert!(
        err.contains("trailmap.yaml:2:6") && err.contains("2 | foo: \"abc"),
        "{err}"
    );
}

#[test]
fn check_prints_its_summary_on_stdout_and_the_tsc_notice_only_for_ts_tools() {
    let notice = "notice: scripted tools (tools/*.ts) were not type-checked";
    // A trailmap with no scripted `.ts` tool: no notice.
    let f = Fixture::new("plain");
    f.file(
        "trails/a.trail.yaml",
        "config:\n  target: plain\ntrail:\n  - step: Go\n    recording:\n      tools:\n        - launchApp: { appId: com.example.demo }\n",
    );
    let o = in_dir(&f, f.dir.path(), &["check"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("checked 1 trail(s), 1 recorded call(s): 0 finding(s)"),
        "{out}"
    );
    assert!(!err.contains("checked 1 trail(s)") && !err.contains(notice), "{err}");
    // Control: the demo has `.ts` tools, so the notice is given (on stderr), the summary on stdout.
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["check"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("checked 3 trail(s)") && !err.contains("checked 3 trail(s)"),
        "{out}{err}"
    );
    assert!(err.contains(notice) && !out.contains(notice), "{out}{err}");
}

/// What npm asks its registry for when `npx` finds no compiler to run, offline (so nothing is
/// fetched, and the error names the package it would have fetched).
fn npx_wants(command: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let o = std::process::Command::new("bash")
        .args(["-c", command])
        .current_dir(dir.path())
        .env("HOME", &home)
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash runs");
    let (out, err) = text(&o);
    format!("{out}{err}")
}

/// sdk.md's first command, where no TypeScript is installed, asks for TypeScript; a bare `npx tsc`
/// (the control) asks for npm's unrelated package named `tsc`.
#[test]
fn sdk_md_runs_typescript_through_npx_never_the_package_named_tsc() {
    let md = std::fs::read_to_string(trailblaze_e2e::repo_root().join("docs/sdk.md")).expect("sdk.md");
    let line = md
        .lines()
        .find(|l| l.starts_with("npx "))
        .expect("sdk.md type-checks with npx");
    let command = line.split(" #").next().unwrap_or_default().trim();
    assert!(command.contains("-p typescript@5 tsc"), "{command}");
    let wanted = npx_wants(command);
    assert!(wanted.contains("/typescript failed"), "{wanted}");
    let bare = npx_wants("npx tsc -p trailmaps/demo/tools");
    assert!(bare.contains("/tsc failed"), "{bare}");
}
