//! `trailblaze shell` through its real line editor, fed by a pipe: snapshot, tap, type (a secret
//! too), steps, save; the saved trail checks clean and replays green on a fresh device.

use std::io::Write;
use std::process::{Command, Stdio};

use trailblaze_e2e::{Fixture, in_dir, text, trailblaze_bin};

/// The demo app's password, passed as a secret: it must never be printed or saved.
const PASSWORD: &str = "hunter2";

/// The ref of the snapshot line that contains `needle` (refs are stable across captures).
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in:\n{snapshot}"));
    line.trim_start()[1..].split(']').next().unwrap_or_default().to_string()
}

/// The sign-in screen's email, password and button refs, from a `trailblaze snapshot`.
fn sign_in_refs(f: &Fixture) -> (String, String, String) {
    let snap = text(&in_dir(f, f.dir.path(), &["snapshot"])).0;
    (
        ref_of(&snap, "hint=\"Email\""),
        ref_of(&snap, "hint=\"Password\""),
        ref_of(&snap, "\"Sign in\""),
    )
}

fn shell(f: &Fixture, lines: &str) -> (i32, String, String) {
    let mut child = Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .arg("shell")
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", PASSWORD)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shell starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(lines.as_bytes())
        .expect("lines written");
    let out = child.wait_with_output().expect("shell ends");
    let (o, e) = text(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

#[test]
fn a_shell_session_saves_a_trail_that_checks_and_replays_green() {
    let f = Fixture::demo();
    let (email, password, sign_in) = sign_in_refs(&f);
    let script = format!(
        "snapshot\ntap {email}\ntype jane@example.com\ntype {{{{secret:DEMO_PASSWORD}}}} {password}\n\
         tap [{sign_in}]\nsnapshot\nsteps\nnosuchtool a=1\ntap\nsave shell-login\nsave shell-login\nquit\n"
    );
    let (code, out, err) = shell(&f, &script);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Inbox"), "the taps and typing signed in: {out}");
    assert!(
        out.contains("tapOnElementBySelector") && out.contains("{{secret:DEMO_PASSWORD}}"),
        "steps: {out}"
    );
    assert!(out.contains("Saved "), "{out}");
    assert!(
        err.contains("unknown tool `nosuchtool`") && err.contains("`help` lists"),
        "{err}"
    );
    assert!(err.contains("usage: tap REF"), "{err}");
    assert!(
        err.contains("exists; pass `overwrite: true`"),
        "a second save keeps the first: {err}"
    );
    assert!(
        !out.contains(PASSWORD) && !err.contains(PASSWORD),
        "no secret value printed"
    );
    let saved = f.map_dir().join("trails/shell-login.trail.yaml");
    let yaml = std::fs::read_to_string(&saved).expect("the trail was written");
    assert!(!yaml.contains(PASSWORD), "{yaml}");
    // The saved trail passes both gates' native one and replays green on a fresh device.
    let o = in_dir(&f, f.dir.path(), &["check", saved.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o).0, text(&o).1);
    let o = Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .args(["run", saved.to_str().unwrap_or_default()])
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", PASSWORD)
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o).0, text(&o).1);
}

#[test]
fn control_a_wrong_password_typed_in_the_shell_does_not_sign_in() {
    let f = Fixture::demo();
    let (email, password, sign_in) = sign_in_refs(&f);
    let script = format!("type jane@example.com {email}\ntype wrong {password}\ntap {sign_in}\nsnapshot\n");
    let (code, out, err) = shell(&f, &script);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("Inbox"), "{out}");
}

/// `save ../../x` is refused as MCP's `saveTrail` refuses it, not saved as `x`; `trails/NAME.trail.yaml`
/// (the folder saves go to) still names `NAME` (the control).
#[test]
fn the_shells_save_refuses_a_path_as_save_trail_does() {
    let f = Fixture::demo();
    let (email, _, _) = sign_in_refs(&f);
    let script = format!("snapshot\ntype x {email}\nsave ../../escaped\nsave trails/kept.trail.yaml\nquit\n");
    let (code, out, err) = shell(&f, &script);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("`../../escaped` is not allowed"), "{err}");
    let trails = f.map_dir().join("trails");
    assert!(!trails.join("escaped.trail.yaml").exists(), "not renamed");
    assert!(!f.dir.path().join("escaped.trail.yaml").exists() && !f.root().join("escaped.trail.yaml").exists());
    assert!(trails.join("kept.trail.yaml").exists(), "{out}{err}");
}
