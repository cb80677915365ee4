//! `trailblaze doctor`: what the machine has (adb, Chromium, Node.js, a WebDriverAgent, the LLM's
//! settings) and whether the workspace's trailmaps have what they need; and `trailblaze
//! completions SHELL`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use trailblaze_e2e::{Fixture, text, trailblaze_bin};

/// The LLM key's value: it must never be printed.
const CANARY: &str = "sk-doctor-canary-7f3e91";

/// `trailblaze ARGS` in `cwd` with `env` on top of a scrubbed environment: no `TRAILBLAZE_*` of the
/// caller's, a closed adb server port and WebDriverAgent URL (each answers at once).
fn tb(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(trailblaze_bin());
    cmd.current_dir(cwd).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("TRAILBLAZE_") || k.starts_with("ADB_") || k.starts_with("ANDROID_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("ADB_SERVER_SOCKET", "tcp:127.0.0.1:9")
        .env("TRAILBLAZE_WDA_URL", "http://127.0.0.1:9");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("trailblaze runs")
}

/// The line of check `name` in the text report.
fn line<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{stdout}"))
}

/// A folder for PATH holding only `node` (a symlink), so no adb and no Chromium are found on it.
fn path_without_adb(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    if let Ok(node) = which("node") {
        std::os::unix::fs::symlink(node, bin.join("node")).expect("symlink");
    }
    bin
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

/// A workspace of one trailmap whose target is the web.
fn web_workspace() -> Fixture {
    let f = Fixture::new("shop");
    f.file("trailmap.yaml", "id: shop\ntarget:\n  platforms:\n    web: {}\n");
    f
}

#[test]
fn doctor_says_adb_is_missing_with_the_command_that_installs_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bin = path_without_adb(tmp.path());
    let o = tb(tmp.path(), &["doctor"], &[("PATH", bin.to_str().expect("utf-8"))]);
    let (stdout, stderr) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "outside a workspace: the machine only\n{stdout}{stderr}"
    );
    let adb = line(&stdout, "adb");
    assert!(adb.starts_with("missing"), "{adb}");
    let fix = stdout
        .lines()
        .skip_while(|l| !l.starts_with("missing  adb "))
        .nth(1)
        .unwrap_or_default();
    assert!(
        fix.contains("fix:") && fix.contains("adb"),
        "the install command: {fix}\n{stdout}"
    );
    assert!(line(&stdout, "chromium").starts_with("missing"), "{stdout}");
    assert!(line(&stdout, "wda").starts_with("missing"), "{stdout}");
    assert!(line(&stdout, "workspace").starts_with("missing"), "{stdout}");
}

#[test]
fn a_chromium_that_is_not_there_or_fails_is_broken_and_a_web_workspace_then_exits_1() {
    let tmp = tempfile::tempdir().expect("tmp");
    let failing = tmp.path().join("chromium-fails");
    std::fs::write(&failing, "#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n").expect("write");
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let f = web_workspace();
    for chromium in ["/nonexistent", failing.to_str().expect("utf-8")] {
        // Outside a workspace: broken, but nothing needs it.
        let o = tb(tmp.path(), &["doctor"], &[("TRAILBLAZE_CHROMIUM", chromium)]);
        let (stdout, stderr) = text(&o);
        let l = line(&stdout, "chromium");
        assert!(
            l.starts_with("broken") && l.contains(chromium),
            "{chromium}: {l}\n{stderr}"
        );
        assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
        // In a workspace whose trailmap targets the web: exit 1, naming who needs it.
        let o = tb(f.dir.path(), &["doctor"], &[("TRAILBLAZE_CHROMIUM", chromium)]);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{chromium}\n{stdout}{stderr}");
        let l = line(&stdout, "chromium");
        assert!(l.starts_with("broken") && l.contains("needed by shop"), "{l}");
        assert!(stdout.contains("not ready: shop needs chromium"), "{stdout}");
    }
}

#[test]
fn a_web_workspace_with_a_working_chromium_is_ready() {
    let Ok(chromium) = which("chromium") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "Debian's `chromium` is needed for this test in CI"
        );
        eprintln!("skipped: no chromium on PATH");
        return;
    };
    let f = web_workspace();
    let o = tb(
        f.dir.path(),
        &["doctor"],
        &[("TRAILBLAZE_CHROMIUM", chromium.to_str().expect("utf-8"))],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let l = line(&stdout, "chromium");
    assert!(l.starts_with("ok") && l.contains("Chromium"), "the version: {l}");
    assert!(line(&stdout, "workspace").contains("shop (web)"), "{stdout}");
    assert!(
        stdout.contains("ready: nothing the workspace needs is missing"),
        "{stdout}"
    );
}

#[test]
fn doctor_json_has_one_entry_per_check_and_never_the_llm_key() {
    let f = web_workspace();
    let env = [
        ("TRAILBLAZE_CHROMIUM", "/nonexistent"),
        ("TRAILBLAZE_LLM_MODEL", "gpt-doctor"),
        ("TRAILBLAZE_LLM_API_KEY", CANARY),
    ];
    let o = tb(f.dir.path(), &["doctor", "--json"], &env);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains(CANARY) && !stderr.contains(CANARY), "the key leaked");
    let v: Value = serde_json::from_str(&stdout).expect("JSON");
    let names: Vec<&str> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        ["adb", "adb-server", "chromium", "node", "wda", "llm", "workspace"]
    );
    let check = |n: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(check("chromium")["status"], "broken");
    assert_eq!(check("chromium")["needed_by"], serde_json::json!(["shop"]));
    let llm = check("llm");
    assert_eq!(llm["status"], "ok");
    assert!(
        llm["found"].as_str().unwrap().contains("gpt-doctor") && llm["found"].as_str().unwrap().contains("key set")
    );
    assert_eq!(v["ok"], false);
    assert_eq!(v["trailmaps"][0]["id"], "shop");
    // The text report keeps it out too, and says "not set" without one.
    let o = tb(f.dir.path(), &["doctor"], &env);
    let (stdout, stderr) = text(&o);
    assert!(!stdout.contains(CANARY) && !stderr.contains(CANARY), "the key leaked");
    assert!(line(&stdout, "llm").contains("key set"), "{stdout}");
    let o = tb(f.dir.path(), &["doctor"], &[("TRAILBLAZE_CHROMIUM", "/nonexistent")]);
    assert!(line(&text(&o).0, "llm").contains("key not set"));
}

#[test]
fn completions_for_bash_and_zsh_name_the_commands_but_not_the_hidden_ones() {
    let tmp = tempfile::tempdir().expect("tmp");
    let o = tb(tmp.path(), &["completions", "bash"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let bash = text(&o).0;
    assert!(bash.contains("session") && bash.contains("doctor"), "{bash}");
    assert!(!names_serve(&bash), "the hidden `session serve` is completed");
    let script = tmp.path().join("trailblaze.bash");
    std::fs::write(&script, &bash).expect("write");
    let n = Command::new("bash").arg("-n").arg(&script).output().expect("bash runs");
    assert!(n.status.success(), "bash -n: {}", text(&n).1);

    let o = tb(tmp.path(), &["completions", "zsh"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let zsh = text(&o).0;
    for sub in ["run", "check", "session", "doctor", "completions"] {
        assert!(zsh.contains(&format!("'{sub}:")), "zsh: no `{sub}`");
    }
    assert!(!names_serve(&zsh), "the hidden `session serve` is completed");

    let o = tb(tmp.path(), &["completions", "tcsh"], &[]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is a usage error");
    assert!(text(&o).1.contains("tcsh"));
}

/// Whether `script` has the word `serve` (the hidden `session serve`; `--adb-server` is another word).
fn names_serve(script: &str) -> bool {
    script.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "serve")
}
