//! Issue 24 item 8: what a live session records replays what it did. A literal typed over MCP that
//! equals a secret's value is saved as that secret's placeholder (never `***`, which would replay
//! as the text `***`); a secret in a form no placeholder stands for is refused at save; the shell's
//! `save` refuses a path as MCP's `saveTrail` does; an overwrite of a trail edited since this
//! session saved it is refused.

use std::process::Command;

use serde_json::{Value, json};
use trailblaze_e2e::{CANARY, Fixture, text as out_text};

use super::mcp::{assert_ok, call, cli, demo, drive_stdio_env, refs, text};

const EMAIL: &str = "jane@example.com";
const WRONG: &str = "Wrong email or password";

/// `cli` with the email as a secret too (`DEMO_EMAIL`) when `email_secret`.
fn with_email(f: &Fixture, email_secret: bool) -> Command {
    let mut c = cli(f);
    if email_secret {
        c.env("TRAILBLAZE_SECRET_DEMO_EMAIL", EMAIL);
    }
    c
}

/// Signs in typing `typed` into the email field, proves it live, saves as `name`.
fn session(f: &Fixture, typed: &str, name: &str, email_secret: bool) -> Vec<Value> {
    let (email, password, submit) = refs(f);
    let ops = json!([
        call("type", json!({ "text": typed, "ref": email })),
        call("type", json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": password })),
        call("tap", json!({ "ref": submit })),
        call("assertNotVisibleWithText", json!({ "text": WRONG })),
        call("saveTrail", json!({ "name": name })),
    ]);
    drive_stdio_env(f, &ops, &with_email(f, email_secret)).0
}

fn replay(f: &Fixture, name: &str, email_secret: bool) -> (bool, String) {
    let path = f.map_dir().join(format!("trails/{name}.trail.yaml"));
    let o = with_email(f, email_secret)
        .arg("run")
        .arg(&path)
        .output()
        .expect("run runs");
    let (so, se) = out_text(&o);
    (o.status.success(), format!("{so}{se}"))
}

#[test]
fn a_literal_equal_to_a_secret_is_saved_as_its_placeholder_and_replays_the_same_text() {
    let f = demo();
    let r = session(&f, EMAIL, "literal", true);
    for (i, what) in ["type email", "type password", "tap", "signed in", "saveTrail"]
        .iter()
        .enumerate()
    {
        assert_ok(&r[i], what);
    }
    let saved = std::fs::read_to_string(f.map_dir().join("trails/literal.trail.yaml")).expect("saved");
    assert!(saved.contains("text: \"{{secret:DEMO_EMAIL}}\""), "{saved}");
    assert!(
        !saved.contains("text: \"***\"") && !saved.contains(EMAIL) && !saved.contains(CANARY),
        "{saved}"
    );
    // The replay types the email again: the app signs in, so the recorded check passes.
    let (ok, out) = replay(&f, "literal", true);
    assert!(ok, "{out}");
}

/// Control: with no secret of that value the literal is saved as it is and replays green too; the
/// replay above fails when the value is typed as anything else (here: no email secret to resolve).
#[test]
fn control_a_literal_that_is_no_secret_is_saved_as_written() {
    let f = demo();
    let r = session(&f, EMAIL, "plain", false);
    assert_ok(&r[4], "saveTrail");
    let saved = std::fs::read_to_string(f.map_dir().join("trails/plain.trail.yaml")).expect("saved");
    assert!(
        saved.contains(&format!("text: {EMAIL}")) || saved.contains(&format!("text: \"{EMAIL}\"")),
        "{saved}"
    );
    assert!(replay(&f, "plain", false).0);
    // The recorded check can fail: the placeholder trail without its secret does not replay green.
    let r = session(&f, EMAIL, "needs-secret", true);
    assert_ok(&r[4], "saveTrail");
    assert!(
        !replay(&f, "needs-secret", false).0,
        "an unknown secret fails the replay"
    );
}

#[test]
fn a_secret_in_a_form_no_placeholder_stands_for_is_refused_at_save() {
    let f = demo();
    // The upper-case form of the email is redacted everywhere (`***`), so it cannot be recorded.
    let r = session(&f, &EMAIL.to_uppercase(), "upper", true);
    assert_eq!(r[4]["isError"], json!(true), "{}", text(&r[4]));
    assert!(text(&r[4]).contains("cannot stand for"), "{}", text(&r[4]));
    assert!(!f.map_dir().join("trails/upper.trail.yaml").exists());
}

/// Item 4 for `saveTrail`: an overwrite of a trail edited since this session saved it is refused and
/// the edit stays; the control, an overwrite of what the session itself saved, goes through.
#[test]
fn an_overwrite_of_a_trail_edited_since_it_was_saved_is_refused() {
    let f = demo();
    let (email, _, _) = refs(&f);
    let edited_path = f.map_dir().join("trails/edited.trail.yaml");
    let edit = "# edited by a person\n";
    let ops = json!([
        call("type", json!({ "text": "a", "ref": email })),
        call("saveTrail", json!({ "name": "edited" })),
        call("saveTrail", json!({ "name": "kept" })),
        { "op": "write", "path": edited_path, "text": edit },
        call("type", json!({ "text": "b", "ref": email })),
        call("saveTrail", json!({ "name": "edited", "overwrite": true })),
        call("saveTrail", json!({ "name": "kept", "overwrite": true })),
    ]);
    let (r, _) = drive_stdio_env(&f, &ops, &cli(&f));
    assert_ok(&r[1], "first save");
    assert_eq!(r[5]["isError"], json!(true), "{}", text(&r[5]));
    assert!(
        text(&r[5]).contains("changed since this session saved it"),
        "{}",
        text(&r[5])
    );
    assert_eq!(std::fs::read_to_string(&edited_path).expect("trail"), edit);
    assert_ok(&r[6], "an overwrite of the session's own save");
    let kept = std::fs::read_to_string(f.map_dir().join("trails/kept.trail.yaml")).expect("kept");
    assert!(kept.contains("text: b"), "{kept}");
}
