//! Write-back edits a trail's text at the step and nowhere else, and what it writes reads back as
//! exactly the recordings it was given.

use std::path::Path;

use serde_json::json;

use super::*;
use trailblaze_core::trail::parse_trail;

const TRAIL: &str = "\
# A trail with a comment on top.
config:
  id: demo/agent
  target: demo
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  # the agent records this one
  - step: Sign in
    maxRetries: 1
  # a comment that introduces the next step
  - verify: The inbox is shown   # trailing comment
    recording:
      tools:
        - assertVisibleBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Inbox } }
  - step: Last one
";

fn file() -> &'static Path {
    Path::new("agent.trail.yaml")
}

fn tap(text: &str) -> (String, serde_json::Value) {
    (
        "tapOnElementBySelector".to_string(),
        json!({ "nodeSelector": { "androidAccessibility": { "textRegex": text } } }),
    )
}

fn edit(path: &str, calls: Vec<(String, serde_json::Value)>) -> StepEdit {
    StepEdit {
        path: path.into(),
        key: "android".into(),
        calls,
    }
}

/// The lines of `new` that are not in `old`, in order (a line diff good enough for insertions).
fn added(old: &str, new: &str) -> Vec<String> {
    let mut rest: Vec<&str> = old.lines().collect();
    rest.reverse();
    let mut out = Vec::new();
    for l in new.lines() {
        if rest.last() == Some(&l) {
            rest.pop();
        } else {
            out.push(l.to_string());
        }
    }
    assert!(rest.is_empty(), "no old line was lost: {rest:?}\n{new}");
    out
}

#[test]
fn an_unrecorded_step_gets_its_recording_and_nothing_else_changes() {
    let calls = vec![
        tap("Sign in"),
        ("inputText".into(), json!({ "text": "{{secret:DEMO_PASSWORD}}" })),
    ];
    let out = with_recordings(
        TRAIL,
        file(),
        &[edit("trail[0]", calls.clone()), edit("trail[2]", vec![tap("x")])],
    )
    .expect("written");
    assert!(out.kept_layout, "{}", out.text);
    let new = added(TRAIL, &out.text);
    assert_eq!(new[0], "    recording:", "{}", out.text);
    assert_eq!(new[1], "      android:");
    assert!(
        out.text.contains("    maxRetries: 1\n    recording:\n"),
        "after the step's last line:\n{}",
        out.text
    );
    assert!(
        out.text
            .contains("  # a comment that introduces the next step\n  - verify:"),
        "the next step's comment stays with it:\n{}",
        out.text
    );
    let trail = parse_trail(&out.text, file()).expect("the parse gate passes");
    let got: Vec<_> = trail.steps[0]
        .calls_for("android", None)
        .expect("recorded")
        .iter()
        .map(|c| (c.tool.clone(), c.args.clone()))
        .collect();
    assert_eq!(got, calls, "the placeholder stays a string placeholder");
    assert!(trail.steps[2].calls_for("android", None).is_some());
    // Control: the original has no recording there.
    let before = parse_trail(TRAIL, file()).expect("parses");
    assert!(before.steps[0].calls_for("android", None).is_none());
}

#[test]
fn a_failing_recording_gets_a_device_entry_beside_it_or_replaced() {
    let out = with_recordings(TRAIL, file(), &[edit("trail[1]", vec![tap("Inbox")])]).expect("written");
    assert!(out.kept_layout);
    let trail = parse_trail(&out.text, file()).expect("parses");
    let keys: Vec<&str> = trail.steps[1].recording.as_ref().expect("rec").keys().collect();
    assert_eq!(keys, ["tools", "android"], "the old entry is kept for other devices");
    assert!(out.text.contains("# trailing comment"));
    // Written again: the `android` entry is replaced, not added twice.
    let again = with_recordings(&out.text, file(), &[edit("trail[1]", vec![tap("Inbox 2")])]).expect("again");
    assert!(again.kept_layout);
    let trail = parse_trail(&again.text, file()).expect("parses");
    let calls = trail.steps[1].calls_for("android", None).expect("android");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].args["nodeSelector"]["androidAccessibility"]["textRegex"],
        "Inbox 2"
    );
    assert_eq!(again.text.matches("android:").count(), 1, "{}", again.text);
}

#[test]
fn the_trailhead_a_last_step_without_newline_and_crlf_files() {
    let text = "config:\n  id: x\ntrailhead:\n  step: Launch\ntrail:\n  - step: A";
    let out = with_recordings(
        text,
        file(),
        &[edit("trailhead", vec![tap("a")]), edit("trail[0]", vec![tap("b")])],
    )
    .expect("written");
    assert!(out.kept_layout, "{}", out.text);
    let t = parse_trail(&out.text, file()).expect("parses");
    assert!(
        t.trailhead
            .as_ref()
            .and_then(|s| s.calls_for("android", None))
            .is_some()
    );
    assert!(t.steps[0].calls_for("android", None).is_some());
    let crlf = "config:\r\n  id: x\r\ntrail:\r\n  - step: A\r\n  - step: B\r\n";
    let out = with_recordings(crlf, file(), &[edit("trail[0]", vec![tap("b")])]).expect("written");
    assert!(
        out.kept_layout && !out.text.replace("\r\n", "").contains('\n'),
        "{:?}",
        out.text
    );
}

#[test]
fn a_flow_style_step_is_written_whole_and_said_so() {
    let text = "# head\nconfig: { id: x }\ntrail:\n  - { step: A, recording: { tools: [ { pressKey: { keyCode: BACK } } ] } }\n";
    let out = with_recordings(text, file(), &[edit("trail[0]", vec![tap("b")])]).expect("written");
    assert!(!out.kept_layout);
    assert!(
        out.text.starts_with("# head\n"),
        "the opening comment is kept:\n{}",
        out.text
    );
    let t = parse_trail(&out.text, file()).expect("parses");
    let rec = t.steps[0].recording.as_ref().expect("rec");
    assert_eq!(rec.keys().collect::<Vec<_>>(), ["tools", "android"]);
}

#[test]
fn a_step_that_is_not_there_is_an_error() {
    let e = with_recordings(TRAIL, file(), &[edit("trail[9]", vec![tap("b")])]).expect_err("no such step");
    assert!(e.to_string().contains("trail[9]"), "{e}");
}

#[test]
fn the_healed_copy_is_no_trail_name() {
    assert_eq!(
        healed_path(Path::new("t/sign-in.trail.yaml")),
        Path::new("t/sign-in.trail.healed.yaml")
    );
    assert_eq!(
        healed_path(Path::new("t/a/trail.yaml")),
        Path::new("t/a/trail.healed.yaml")
    );
    for p in ["sign-in.trail.healed.yaml", "trail.healed.yaml", "blaze.healed.yaml"] {
        assert!(!trailblaze_core::trail::is_trail_name(p), "{p}");
    }
    // Control: the originals are trail names.
    assert!(trailblaze_core::trail::is_trail_name("sign-in.trail.yaml"));
}
