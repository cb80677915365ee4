//! Issue 24 item 5: machine-readable output stays valid. A right-to-left app's ordinary text holds
//! bidi marks and C1 controls; `tool --json` and `migrate --stdout` are JSON and YAML of the exact
//! text, whatever stdout is (the terminal-safety escape, `\u{202e}`, would make either invalid: the
//! choice between the two is tested with an explicit terminal flag in the CLI's output module).

use std::path::Path;

use trailblaze_e2e::{Fixture, in_dir, text};

/// Text a right-to-left app shows: an override, a C1 control (NEL), an isolate.
const RTL: &str = "\u{202e}olleh\u{85}\u{2067}x";

#[test]
fn tool_json_is_valid_json_of_the_exact_text() {
    let f = Fixture::demo();
    let app = std::fs::read_to_string(f.map_dir().join("app.yaml")).expect("app.yaml");
    let node = "      - { id: rtl, class: android.widget.TextView, text: \"\\u202Eolleh\\x85\\u2067x\" }\n";
    let app = app.replacen("    nodes:\n", &format!("    nodes:\n{node}"), 1);
    f.file("app.yaml", &app);
    let o = in_dir(&f, f.dir.path(), &["tool", "--json", "snapshot"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{out}"));
    assert!(
        v["result"].to_string().contains(RTL),
        "the exact text comes back: {}",
        v["result"]
    );
    assert!(!out.contains("\\u{"), "no terminal escape in JSON");
}

#[test]
fn migrate_stdout_is_valid_yaml_of_the_exact_text() {
    let f = Fixture::demo();
    let file = f.map_dir().join("trails/legacy.trail.yaml");
    std::fs::write(
        &file,
        "- config:\n    id: demo/legacy\n    target: demo\n- prompts:\n  - step: \"Say \\u202Eolleh\\x85\\u2067x\"\n    recording:\n      tools:\n        - inputText: { text: \"\\u202Eolleh\\x85\\u2067x\" }\n",
    )
    .expect("write");
    let o = in_dir(
        &f,
        f.dir.path(),
        &["migrate", "--stdout", file.to_str().unwrap_or_default()],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !out.contains("\\u{") && !out.contains('\u{85}'),
        "valid YAML escapes only:\n{out}"
    );
    let trail = trailblaze::Trail::parse(&out, Path::new("migrated.trail.yaml"))
        .unwrap_or_else(|e| panic!("the output passes the parse gate: {e:?}\n{out}"));
    let (_, _, call) = trail.calls().next().expect("the call");
    assert_eq!(call.args["text"], RTL);
    assert_eq!(trail.steps[0].text, format!("Say {RTL}"));
    // Control: in place, the same file is migrated to the same text.
    let o = in_dir(&f, f.dir.path(), &["migrate", file.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(std::fs::read_to_string(&file).expect("read").trim_end(), out.trim_end());
}
