//! The LLM-facing tools: refs, `tap` and `type` recorded as selectors, the text+key rule, secrets.

use serde_json::{Value, json};
use trailblaze::{Session, Settings};
use trailblaze_e2e::{CANARY, Fixture, device_tree, field_text, session_with, traces};
use trailblaze_host_functions::{HostRegistry, SecretStore};

/// The recorded steps (name, args) below depth 0, in order.
fn recorded(s: &Session) -> Vec<(String, Value)> {
    s.steps().into_iter().map(|r| (r.tool, r.args)).collect()
}

/// The ref of the node whose resource id ends in `:id/<id>`, from a fresh snapshot.
fn ref_of(s: &Session, id: &str) -> String {
    let snap = s.call("snapshot", json!({})).expect("snapshot");
    fn find(n: &Value, suffix: &str) -> Option<String> {
        if n["resourceId"].as_str().is_some_and(|r| r.ends_with(suffix)) {
            return n["ref"].as_str().map(str::to_string);
        }
        n["children"].as_array()?.iter().find_map(|c| find(c, suffix))
    }
    find(&snap["root"], &format!(":id/{id}")).expect("node on screen")
}

#[test]
fn type_with_a_ref_records_one_input_text_with_taps_selector() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let email = ref_of(&s, "email");
    s.call("tap", json!({ "ref": email })).expect("tap");
    let tap_selector = recorded(&s)
        .last()
        .map(|(t, a)| (t.clone(), a["nodeSelector"].clone()))
        .unwrap();
    assert_eq!(tap_selector.0, "tapOnElementBySelector");
    let before = recorded(&s).len();
    s.call("type", json!({ "text": "jane@example.com", "ref": email }))
        .expect("type");
    let steps = recorded(&s)[before..].to_vec();
    assert_eq!(steps.len(), 1, "one recorded step: {steps:?}");
    assert_eq!(steps[0].0, "inputText");
    assert_eq!(
        steps[0].1["nodeSelector"], tap_selector.1,
        "the same selector tap records"
    );
    assert_eq!(steps[0].1["text"], "jane@example.com");
    assert_eq!(
        field_text(&device_tree(&s), "email").as_deref(),
        Some("jane@example.com")
    );
}

#[test]
fn type_without_a_ref_records_a_plain_input_text() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    s.call("tap", json!({ "ref": ref_of(&s, "email") })).expect("focus");
    let before = recorded(&s).len();
    s.call("type", json!({ "text": "abc" })).expect("type");
    let steps = recorded(&s)[before..].to_vec();
    assert_eq!(steps, vec![("inputText".to_string(), json!({ "text": "abc" }))]);
    assert_eq!(field_text(&device_tree(&s), "email").as_deref(), Some("abc"));
}

const BARE_FIELDS: &str = "id: com.example.bare\nstart: form\nscreens:\n  form:\n    nodes:\n      - { class: android.widget.EditText, editable: true }\n      - { class: android.widget.EditText, editable: true }\n";

#[test]
fn type_with_a_coordinate_only_ref_taps_the_point_then_types() {
    let f = Fixture::new("t");
    f.file("app.yaml", BARE_FIELDS);
    let (_p, s) = f.session(Settings::default());
    let snap = s.call("snapshot", json!({})).expect("snapshot");
    let second = snap["root"]["children"][1]["ref"]
        .as_str()
        .expect("second field")
        .to_string();
    s.call("type", json!({ "text": "hello", "ref": second })).expect("type");
    let tools: Vec<String> = recorded(&s)
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| t != "snapshot")
        .collect();
    assert_eq!(tools, ["tapOnPoint", "inputText"]);
    let tree = device_tree(&s);
    assert_eq!(tree.root.children[1].text.as_deref(), Some("hello"));
    assert_eq!(
        tree.root.children[0].text.as_deref().unwrap_or(""),
        "",
        "the other field is untouched"
    );
}

#[test]
fn an_unknown_ref_asks_for_a_fresh_snapshot() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("tap", json!({ "ref": "zz99" }))
        .expect_err("unknown ref")
        .to_string();
    assert!(
        err.contains("unknown ref `zz99`") && err.contains("fresh snapshot"),
        "{err}"
    );
}

#[test]
fn refs_are_stable_across_captures_while_the_node_is_unchanged() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let a = s.call("snapshot", json!({})).expect("snapshot")["text"].clone();
    s.call("pressKey", json!({ "keyCode": "ESCAPE" })).expect("invalidate");
    let b = s.call("snapshot", json!({})).expect("snapshot")["text"].clone();
    assert_eq!(a, b);
}

fn counting_session(f: &Fixture) -> (std::sync::Arc<SecretStore>, Session) {
    let secrets = SecretStore::from_pairs([("PIN".to_string(), CANARY.to_string())]);
    session_with(f, secrets, HostRegistry::builtin())
}

#[test]
fn text_with_a_key_is_refused_before_secrets_or_the_device() {
    let f = Fixture::new("t");
    let (secrets, s) = counting_session(&f);
    s.call("tap", json!({ "ref": ref_of(&s, "email") })).expect("focus");
    let lookups = secrets.lookups();
    let steps = recorded(&s).len();
    let err = s
        .call("type", json!({ "text": "{{secret:PIN}}", "keyCode": "ENTER" }))
        .expect_err("refused")
        .to_string();
    assert_eq!(secrets.lookups(), lookups, "no secret was looked up");
    assert_eq!(recorded(&s).len(), steps, "nothing ran");
    assert_eq!(
        field_text(&device_tree(&s), "email").as_deref(),
        Some(""),
        "nothing typed"
    );
    assert!(
        err.contains(
            "runSequence {steps: [{tool: type, args: {text: ...}}, {tool: pressKey, args: {keyCode: ENTER}}]}"
        ),
        "{err}"
    );
    assert!(
        err.contains("safer than two separate calls"),
        "the secret sentence: {err}"
    );
    assert!(!err.contains(CANARY));
}

#[test]
fn a_plain_text_with_a_key_is_refused_without_the_secret_sentence() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("type", json!({ "text": "hello", "keyCode": "ENTER" }))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("runSequence {steps: ["), "{err}");
    assert!(!err.contains("safer"), "no secret sentence for plain text: {err}");
    assert!(!err.contains("hello"), "the text is never echoed: {err}");
    // Shape, not truthiness: an empty text with a key is refused too.
    let err = s
        .call("type", json!({ "text": "", "keyCode": "ENTER" }))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("never both"), "{err}");
}

#[test]
fn text_alone_and_key_alone_still_work() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    s.call("tap", json!({ "ref": ref_of(&s, "email") })).expect("focus");
    s.call("type", json!({ "text": "ab" })).expect("text alone");
    s.call("type", json!({ "keyCode": "BACKSPACE" })).expect("key alone");
    assert_eq!(field_text(&device_tree(&s), "email").as_deref(), Some("a"));
    // And the retry the refusal teaches works as written.
    s.call(
        "runSequence",
        json!({ "steps": [{ "tool": "type", "args": { "text": "b" } }, { "tool": "pressKey", "args": { "keyCode": "TAB" } }] }),
    )
    .expect("runSequence");
    assert_eq!(field_text(&device_tree(&s), "email").as_deref(), Some("ab"));
}

#[test]
fn a_secret_typed_with_type_lands_in_the_field_and_nowhere_else() {
    let _ = traces();
    let f = Fixture::new("t");
    let (_secrets, s) = counting_session(&f);
    let email = ref_of(&s, "email");
    s.call("type", json!({ "text": "{{secret:PIN}}", "ref": email }))
        .expect("type");
    assert_eq!(
        field_text(&device_tree(&s), "email").as_deref(),
        Some(CANARY),
        "the device got the value"
    );
    let snap = s.call("snapshot", json!({})).expect("snapshot");
    assert!(!snap.to_string().contains(CANARY), "the snapshot shows *** instead");
    let err = s
        .call("type", json!({ "text": "{{secret:PIN}}", "ref": "nope" }))
        .expect_err("bad ref")
        .to_string();
    assert!(!err.contains(CANARY));
    drop(s);
    assert!(
        !f.all_output().contains(CANARY),
        "no file under the session output holds it"
    );
    let traces = traces();
    assert!(
        traces.contains("tool_call") && traces.contains("inputText"),
        "the traces were captured: {}",
        &traces[..traces.len().min(2000)]
    );
    assert!(!traces.contains(CANARY), "no trace holds it");
}

#[test]
fn a_selector_with_no_predicate_is_refused_and_never_passes_an_assertion() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    for sel in [
        json!({}),
        json!({ "androidAccessibility": {} }),
        json!({ "index": 0 }),
        json!({ "androidAccessibility": { "textRegex": "Inbox" }, "below": {} }),
    ] {
        for tool in [
            "assertNotVisibleBySelector",
            "assertVisibleBySelector",
            "tapOnElementBySelector",
        ] {
            let err = s
                .call(tool, json!({ "nodeSelector": sel }))
                .expect_err("no predicate")
                .to_string();
            assert!(err.contains("has no predicate"), "{tool} {sel}: {err}");
        }
    }
    // Control: a real predicate that matches nothing passes `assertNotVisibleBySelector`.
    s.call(
        "assertNotVisibleBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Nothing like this" } } }),
    )
    .expect("not visible");
}

#[test]
fn run_sequence_reaches_llm_visible_tools_only() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let before = s.steps().len();
    let err = s
        .call(
            "runSequence",
            json!({ "steps": [
                { "tool": "snapshot", "args": {} },
                { "tool": "tapOnElementBySelector", "args": { "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } } },
            ] }),
        )
        .expect_err("a hidden tool in a sequence");
    let msg = err.to_string();
    assert!(
        msg.contains("`steps[1].tool`") && msg.contains("not an LLM-visible tool"),
        "{msg}"
    );
    assert_eq!(s.steps().len(), before, "refused before any step ran");
    // Control: the same sequence of LLM-visible tools runs, and scripts and trails still reach
    // hidden tools directly.
    s.call(
        "runSequence",
        json!({ "steps": [{ "tool": "snapshot", "args": {} }, { "tool": "pressKey", "args": { "keyCode": "BACK" } }] }),
    )
    .expect("visible tools run");
    s.call(
        "tapOnElementBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } }),
    )
    .expect("hidden tools stay callable directly");
}

#[test]
fn a_field_that_held_a_secret_stays_masked_until_cleared_and_no_result_tells_its_length() {
    let f = Fixture::new("t");
    let (_secrets, s) = counting_session(&f);
    let email = ref_of(&s, "email");
    let typed = s
        .call("type", json!({ "text": "{{secret:PIN}}", "ref": email }))
        .expect("type");
    assert_eq!(typed["typed"], 3, "a secret counts as its `***`: {typed}");
    let prefix: String = CANARY.chars().take(CANARY.chars().count() - 1).collect();
    // Delete one character: the field now holds all of the secret but its last character.
    s.call("pressKey", json!({ "keyCode": "BACKSPACE" }))
        .expect("backspace");
    assert_eq!(
        field_text(&device_tree(&s), "email").as_deref(),
        Some(prefix.as_str()),
        "control: the device holds the prefix"
    );
    let snap = s.call("snapshot", json!({})).expect("snapshot").to_string();
    assert!(
        !snap.contains(&prefix[..8]),
        "the snapshot shows part of the secret: {snap}"
    );
    assert!(snap.contains("***"), "{snap}");
    // Cleared, the field is ordinary again: what is typed next shows.
    s.call("eraseText", json!({ "charactersToErase": 100 })).expect("erase");
    s.call("snapshot", json!({})).expect("snapshot of the empty field");
    s.call("type", json!({ "text": "plain@example.com", "ref": email }))
        .expect("type");
    let snap = s.call("snapshot", json!({})).expect("snapshot").to_string();
    assert!(snap.contains("plain@example.com"), "{snap}");
}
