//! Placeholders expand once: text that came from the device (a remembered value), a secret's value
//! or an argument's value is never scanned for `{{secret:...}}` or memory tokens again, so a screen
//! (or a PR title passed as `--arg`) cannot make the runner type a secret it holds.

use serde_json::json;
use trailblaze_e2e::{Fixture, device_tree, field_text, session_with, text, trailblaze_bin};
use trailblaze_host_functions::{HostRegistry, SecretStore};

/// A screen that shows text an attacker chose, and a field to type into.
const APP: &str = r#"id: com.example.echo
start: s
screens:
  s:
    nodes:
      - { id: shown, class: android.widget.TextView, text: "{{secret:PIN}}" }
      - { id: field, class: android.widget.EditText, hint: Field, editable: true }
"#;

const PIN: &str = "4242-real-pin";

#[test]
fn a_remembered_value_holding_a_placeholder_is_typed_as_it_reads() {
    let f = Fixture::new("t");
    f.file("app.yaml", APP);
    let store = SecretStore::from_pairs([("PIN".to_string(), PIN.to_string())]);
    let (_s, s) = session_with(&f, store, HostRegistry::builtin());
    let field = json!({ "androidAccessibility": { "hintTextRegex": "Field" } });
    s.call("launchApp", json!({ "appId": "com.example.echo" }))
        .expect("launch");
    s.call("rememberText", json!({ "prompt": "shown", "variable": "seen" }))
        .expect("remembers the screen's text");
    s.call("inputText", json!({ "text": "{{seen}}", "nodeSelector": field }))
        .expect("types");
    let typed = field_text(&device_tree(&s), "field");
    assert_eq!(
        typed.as_deref(),
        Some("{{secret:PIN}}"),
        "typed as the screen showed it"
    );
    // Control: the placeholder written by the caller does expand.
    s.call("eraseText", json!({})).ok();
    let s2 = {
        let f2 = Fixture::new("t");
        f2.file("app.yaml", APP);
        let store = SecretStore::from_pairs([("PIN".to_string(), PIN.to_string())]);
        let (_x, s2) = session_with(&f2, store, HostRegistry::builtin());
        s2.call("launchApp", json!({ "appId": "com.example.echo" }))
            .expect("launch");
        s2.call("inputText", json!({ "text": "{{secret:PIN}}", "nodeSelector": field }))
            .expect("types");
        field_text(&device_tree(&s2), "field")
    };
    assert_eq!(s2.as_deref(), Some(PIN));
}

#[test]
fn an_argument_value_holding_a_placeholder_is_refused_not_expanded() {
    let f = Fixture::new("t");
    f.file("app.yaml", APP);
    f.file(
        "trails/typed.trail.yaml",
        "config:\n  id: t/typed\n  target: t\n  args:\n    title: string\ntrail:\n  - step: Type the title\n    recording:\n      tools:\n        - launchApp: { appId: com.example.echo }\n        - inputText: { text: \"{{args.title}}\", nodeSelector: { androidAccessibility: { hintTextRegex: Field } } }\n",
    );
    let run = |arg: &str| {
        let o = std::process::Command::new(trailblaze_bin())
            .args(["run", "--no-check", "--trailmaps"])
            .arg(f.root())
            .arg("--out")
            .arg(f.out())
            .args(["--arg", arg])
            .env("TRAILBLAZE_SECRET_PIN", PIN)
            .arg(f.map_dir().join("trails/typed.trail.yaml"))
            .output()
            .expect("runs");
        let (out, err) = text(&o);
        (o.status.code(), format!("{out}{err}"))
    };
    let (code, all) = run("title=Fix {{secret:PIN}} leak");
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("the value of `{{args.title}}` holds `{{` or `${`"),
        "{all}"
    );
    assert!(!all.contains(PIN));
    // Control: a plain value is typed.
    let (code, all) = run("title=Fix the leak");
    assert_eq!(code, Some(0), "{all}");
}
