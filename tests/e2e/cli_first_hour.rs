//! The CLI as a newcomer meets it: pipes, streams, colour, diagnostics drawn once, the workspace
//! found from a subfolder, the type gate before a run, shards, budgets as flags, `tools NAME`.

use std::process::Command;

use trailblaze_e2e::{Fixture, in_dir, text, trailblaze_bin};

const BAD_TRAIL: &str =
    "config:\n  target: demo\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { txt: a }\n";

/// Through a real pipe to a reader that closes early, every command ends quietly.
#[test]
fn a_closed_pipe_ends_quietly() {
    let f = Fixture::demo();
    let bin = trailblaze_bin();
    let secrets = f.root().join("demo/demo.secrets");
    for (cmd, lines) in [
        (format!("'{}' tools | head -1", bin.display()), 1),
        (
            format!(
                "'{}' run --secrets '{}' 2>&1 | head -2",
                bin.display(),
                secrets.display()
            ),
            2,
        ),
    ] {
        let o = Command::new("bash")
            .args(["-c", &format!("set -o pipefail; {cmd}")])
            .current_dir(f.dir.path())
            .env("TRAILBLAZE_CACHE_DIR", f.cache())
            .output()
            .expect("bash runs");
        let (out, err) = text(&o);
        // 0, or 141 (128 + SIGPIPE) as a filter conventionally ends: never 101 (a panic) or 134.
        assert!(
            matches!(o.status.code(), Some(0) | Some(141)),
            "{cmd}: {:?}\n{out}{err}",
            o.status
        );
        assert!(!err.contains("panicked") && !out.contains("panicked"), "{err}");
        assert_eq!(out.lines().count(), lines, "{cmd}: {out}");
    }
    // Control: without the early close, the same commands print more than `head` let through.
    let full = in_dir(&f, f.dir.path(), &["tools"]);
    assert!(text(&full).0.lines().count() > 5);
}

#[test]
fn run_writes_results_to_stdout_and_the_json_report_alone_with_json() {
    let f = Fixture::demo();
    let secrets = f.root().join("demo/demo.secrets");
    let secrets = secrets.to_str().unwrap_or_default();
    let o = in_dir(&f, f.dir.path(), &["run", "--secrets", secrets]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("3 passed, 0 failed") && out.contains("report: "), "{out}");
    assert!(out.contains("✓ step 1"), "{out}");
    assert!(
        !err.contains("passed"),
        "the summary is a result, not a diagnostic: {err}"
    );
    // The workspace was found from its root: outputs beside the trailmaps.
    assert!(f.dir.path().join("trailblaze-out").is_dir());
    let o = in_dir(&f, f.dir.path(), &["run", "--json", "--secrets", secrets]);
    let (out, err) = text(&o);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {out}"));
    assert_eq!(v["trails"].as_array().map(Vec::len), Some(3));
    assert!(err.contains("✓ step 1"), "progress goes to stderr under --json: {err}");
}

#[test]
fn the_workspace_is_found_from_a_subfolder_and_its_absence_explained() {
    let f = Fixture::demo();
    let deep = f.map_dir().join("trails");
    let o = in_dir(&f, &deep, &["tools"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("signIn"), "{out}");
    // Outside any workspace: one clear error with what to do.
    let nowhere = tempfile::tempdir().expect("temp dir");
    let o = in_dir(&f, nowhere.path(), &["tools"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("no trailmaps folder") && err.contains("run from the project root or pass --trailmaps DIR"),
        "{err}"
    );
    // An explicit folder that is not one: the same help, drawn once, no fake source line.
    let o = in_dir(&f, nowhere.path(), &["--trailmaps", "missing", "tools"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err.matches("is not a folder").count(), 1, "{err}");
    assert!(!err.contains("1 |"), "{err}");
}

#[test]
fn an_error_is_drawn_once_with_its_frame_and_bad_arguments_exit_2() {
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["tool", "tap", "foo=1"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "bad arguments are usage errors: {err}");
    assert_eq!(err.matches("unknown key `foo`").count(), 1, "{err}");
    // A tool that runs and fails is 1 (control for the 2 above).
    let o = in_dir(&f, f.dir.path(), &["tool", "openMessage", "index=1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    // A file diagnostic: the position, the source line once, a caret.
    std::fs::write(f.map_dir().join("trails/bad.trail.yaml"), BAD_TRAIL).expect("write");
    let o = in_dir(&f, f.dir.path(), &["check", "trailmaps/demo/trails/bad.trail.yaml"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("--> trailmaps/demo/trails/bad.trail.yaml:7:24"), "{out}");
    assert_eq!(
        out.matches("7 |         - inputText: { txt: a }").count(),
        2,
        "one frame per finding: {out}"
    );
    assert!(out.contains("|                        ^"), "{out}");
}

#[test]
fn colour_only_on_a_terminal() {
    let f = Fixture::demo();
    std::fs::write(f.map_dir().join("trails/bad.trail.yaml"), BAD_TRAIL).expect("write");
    let args = ["check", "trailmaps/demo/trails/bad.trail.yaml"];
    let piped = in_dir(&f, f.dir.path(), &args);
    let (out, err) = text(&piped);
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'), "{out}{err}");
    // Control: under a pseudo-terminal (util-linux `script`) the same command is coloured, and
    // NO_COLOR turns it off again.
    let under_tty = |no_color: bool| {
        let mut c = Command::new("script");
        c.args([
            "-qec",
            &format!("'{}' {}", trailblaze_bin().display(), args.join(" ")),
            "/dev/null",
        ])
        .current_dir(f.dir.path())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
        if no_color {
            c.env("NO_COLOR", "1");
        }
        let o = c.output().expect("script runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let tty = under_tty(false);
    assert!(tty.contains("inputText") && tty.contains('\u{1b}'), "{tty}");
    let plain = under_tty(true);
    assert!(plain.contains("inputText") && !plain.contains('\u{1b}'), "{plain}");
}

#[test]
fn warnings_read_warning_without_module_paths() {
    let f = Fixture::new("t");
    f.file("trailmap.yaml", "id: t\ntarget:\n  tools: [nosuch]\n");
    let o = in_dir(&f, f.dir.path(), &["tools"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: t/trailmap.yaml: target.tools names `nosuch`"),
        "{err}"
    );
    assert!(!err.contains("trailblaze::") && !err.contains("WARN"), "{err}");
}

#[test]
fn run_checks_types_before_the_device_and_no_check_skips_it() {
    let f = Fixture::demo();
    let bad = f.map_dir().join("trails/bad.trail.yaml");
    std::fs::write(&bad, BAD_TRAIL).expect("write");
    let bad = bad.to_str().unwrap_or_default().to_string();
    let o = in_dir(&f, f.dir.path(), &["run", &bad]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("missing required argument `text`") && err.contains("nothing was run"),
        "{err}"
    );
    assert!(
        !f.dir.path().join("trailblaze-out").exists(),
        "the device was never touched"
    );
    // Control: --no-check runs it, and it fails at the dispatcher instead.
    let o = in_dir(&f, f.dir.path(), &["run", "--no-check", &bad]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("0 passed, 1 failed"), "{out}");
}

#[test]
fn run_takes_a_trailmap_id_and_an_empty_shard_passes_with_a_notice() {
    let f = Fixture::demo();
    let secrets = f.root().join("demo/demo.secrets");
    let secrets = secrets.to_str().unwrap_or_default();
    let o = in_dir(&f, f.dir.path(), &["run", "demo", "--secrets", secrets]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("3 passed"), "{out}");
    // Four shards of three trails: the fourth is empty, and that is fine.
    let o = in_dir(
        &f,
        f.dir.path(),
        &["run", "demo", "--shard", "4/4", "--secrets", secrets],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("notice: shard 4/4 has no trails (3 in all)"), "{err}");
    // Control: nothing to find at all is still a usage error.
    let empty = f.dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    let o = in_dir(&f, f.dir.path(), &["run", "empty"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
}

#[test]
fn the_script_budget_is_a_flag() {
    let f = Fixture::new("t");
    f.tool(
        "busy",
        "import { trailblaze } from \"@trailblaze/scripting\";\n/** Spins for `ms` milliseconds. */\nexport const busy = trailblaze.tool<{ ms: number }, {}>(async (input) => { const end = Date.now() + input.ms; while (Date.now() < end) {} return {}; });\n",
    );
    let o = in_dir(&f, f.dir.path(), &["tool", "busy", "ms=600", "--script-timeout", "0.2"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("exceeded its time limit"), "{err}");
    // Control: the default budget lets it finish.
    let o = in_dir(&f, f.dir.path(), &["tool", "busy", "ms=600"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // A bad value is a usage error naming the flag and what it expects.
    let o = in_dir(&f, f.dir.path(), &["tool", "busy", "--script-timeout", "0"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("--script-timeout") && err.contains("seconds"), "{err}");
}

#[test]
fn tools_lists_whole_sentences_and_shows_one_tool_in_full() {
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["tools"]);
    let (out, _) = text(&o);
    let tap = out.lines().find(|l| l.starts_with("tap ")).unwrap_or_default();
    assert!(tap.trim_end().ends_with('.'), "a whole sentence: {tap}");
    let o = in_dir(&f, f.dir.path(), &["tools", "tap"]);
    let (out, _) = text(&o);
    assert!(
        out.contains("tap · LLM-visible") && out.contains("ref: string (required)"),
        "{out}"
    );
    // Hidden tools are shown too, marked.
    let o = in_dir(&f, f.dir.path(), &["tools", "inputText"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("hidden from the LLM"), "{out}");
    // Control: an unknown name is a usage error with the nearest names.
    let o = in_dir(&f, f.dir.path(), &["tools", "tapp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("did you mean"), "{}", text(&o).1);
}

#[test]
fn tools_all_lists_hidden_and_other_platforms_tools_with_their_arguments() {
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["tools", "--all"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for line in [
        "inputText {text, nodeSelector?, reasoning?, hideKeyboardAfter?}  [hidden, recorded]",
        "exec {argv, workingDir?, expectedExitCode?, outputFilterRegex?, timeoutSeconds?}  [hidden]",
        "rememberText {prompt, variable}  [LLM-visible, recorded, read-only]",
        "web_click {ref?, reasoning?, nodeSelector?}  [hidden, recorded, web only]",
        "openMessage {",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "{line}\n{out}");
    }
    // Control: the plain list is the LLM's, without the hidden ones.
    let o = in_dir(&f, f.dir.path(), &["tools"]);
    let (plain, _) = text(&o);
    assert!(plain.lines().any(|l| l.starts_with("tap ")));
    assert!(
        !plain
            .lines()
            .any(|l| l.starts_with("exec ") || l.starts_with("web_click ")),
        "{plain}"
    );
    let o = in_dir(&f, f.dir.path(), &["tools", "--all", "--json"]);
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let web = all
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "web_click")
        .unwrap();
    assert_eq!(web["platform"], "web");
}

#[test]
fn help_has_examples() {
    let f = Fixture::demo();
    for args in [vec!["--help"], vec!["run", "--help"], vec!["tool", "--help"]] {
        let o = in_dir(&f, f.dir.path(), &args);
        let (out, _) = text(&o);
        assert!(out.contains("Examples:"), "{args:?}: {out}");
    }
}
