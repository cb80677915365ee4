//! The invoke path: strict decoding, panics, errors passing through, encoding, names, plumbing.

mod common;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use trailblaze_host_functions::{
    HostCallError, HostContext, HostError, HostFunction, HostFunctionEntry, HostRegistry, script_reply,
};

fn call(name: &str, args: Value) -> Result<Value, HostCallError> {
    registry().call(name, args, &mut FakeContext::new())
}

#[test]
fn a_correct_call_succeeds() {
    assert_eq!(call("nested", nested_args("v")).unwrap(), json!({ "seen": "v" }));
}

#[test]
fn an_unknown_key_at_depth_one_names_the_key_not_the_value() {
    let mut args = nested_args("v");
    args["lable"] = json!(CANARY);
    let err = call("nested", args).unwrap_err();
    let HostCallError::Decode { name, source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((name.as_str(), source.full_path().as_str()), ("nested", "lable"));
    let msg = err.to_string();
    assert!(
        msg.starts_with("host function `nested`: unknown key `lable`; did you mean `label`?"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY) && !format!("{err:?}").contains(CANARY), "{msg}");
}

#[test]
fn an_unknown_key_at_depth_three_names_its_path() {
    let mut args = nested_args("v");
    args["outer"]["middle"]["valeu"] = json!(CANARY);
    let err = call("nested", args).unwrap_err();
    let HostCallError::Decode { source, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.full_path(), "outer.middle.valeu");
    let msg = err.to_string();
    assert!(
        msg.contains("unknown key `outer.middle.valeu`; did you mean `value`?"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY), "{msg}");
}

#[test]
fn a_wrong_type_at_depth_three_names_path_and_type() {
    let mut args = nested_args("v");
    args["outer"]["middle"]["value"] = json!(4_823_117);
    let msg = call("nested", args).unwrap_err().to_string();
    assert_eq!(
        msg,
        "host function `nested`: `outer.middle.value`: expected a string, found an integer"
    );
    assert!(!msg.contains("4823117"), "{msg}");
}

#[test]
fn null_arguments_mean_no_arguments() {
    assert!(call("now", Value::Null).is_ok());
    let msg = call("nested", Value::Null).unwrap_err().to_string();
    assert_eq!(msg, "host function `nested`: missing required key `label`");
}

#[test]
fn a_panic_becomes_an_error_and_the_next_call_works() {
    let registry = registry();
    let mut cx = FakeContext::new();
    for _ in 0..2 {
        let err = registry.call("boom", json!({ "secret": CANARY }), &mut cx).unwrap_err();
        assert!(matches!(err, HostCallError::Panicked { .. }), "{err:?}");
        assert_eq!(err.to_string(), "host function boom panicked");
        assert!(!format!("{err:?}").contains(CANARY));
        assert_eq!(
            registry.call("nested", nested_args("after"), &mut cx).unwrap(),
            json!({ "seen": "after" })
        );
    }
}

#[test]
fn a_host_error_message_passes_through_unchanged() {
    let err = call("refuse", json!({})).unwrap_err();
    assert!(
        matches!(&err, HostCallError::Failed { name, .. } if name == "refuse"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "refused: the account is locked");
}

#[test]
fn an_encode_failure_names_the_type_not_the_value() {
    let err = call("unencodable", json!({})).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, HostCallError::Encode { .. }), "{err:?}");
    assert!(
        msg.contains("host function `unencodable`") && msg.contains("common::Unserializable"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY) && !format!("{err:?}").contains(CANARY), "{msg}");
}

#[test]
fn an_unknown_name_gets_suggestions() {
    let err = call("lookupCredentials", json!({})).unwrap_err();
    let HostCallError::UnknownFunction { suggestions, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(suggestions.first().map(String::as_str), Some("lookupCredential"));
    assert!(
        err.to_string()
            .starts_with("unknown host function `lookupCredentials`; did you mean `lookupCredential`")
    );
    // Tools are another namespace: a tool's name is not a host function.
    assert_eq!(
        call("tap", json!({})).unwrap_err().to_string(),
        "unknown host function `tap`"
    );
}

#[test]
fn unknown_uses_the_names_it_is_given() {
    let err = HostCallError::unknown("nestd", &["nested", "now"]);
    assert_eq!(err.to_string(), "unknown host function `nestd`; did you mean `nested`?");
    assert_eq!((err.name(), err.kind()), ("nestd", "unknown"));
}

#[test]
fn a_host_function_dispatches_tools_through_the_context() {
    let registry = registry();
    let mut cx = FakeContext::new();
    let out = registry
        .call("callsTool", json!({ "tool": "echo", "text": "hi" }), &mut cx)
        .unwrap();
    assert_eq!(out, json!({ "echoed": { "text": "hi" } }));
    assert_eq!(cx.tool_calls, vec![("echo".to_string(), json!({ "text": "hi" }))]);
    // A tool's error reaches the script as the host function's own error.
    let err = registry
        .call("callsTool", json!({ "tool": "nope", "text": "hi" }), &mut cx)
        .unwrap_err();
    assert_eq!(err.to_string(), "unknown tool `nope`");
    assert_eq!(cx.tool_calls.len(), 2);
}

/// Registered under a name already taken.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Impostor {}

impl HostFunction for Impostor {
    const NAME: &'static str = "nested";
    type Output = ();
    fn call(self, _cx: &mut dyn HostContext) -> Result<(), HostError> {
        Ok(())
    }
}

#[test]
fn a_name_registered_twice_keeps_the_first() {
    let mut registry = registry();
    registry.register::<Impostor>();
    assert_eq!(
        call_with(&registry, "nested", nested_args("v")),
        Ok(json!({ "seen": "v" }))
    );
    assert_eq!(registry.names().filter(|n| *n == "nested").count(), 1);
}

fn call_with(registry: &HostRegistry, name: &str, args: Value) -> Result<Value, String> {
    registry
        .call(name, args, &mut FakeContext::new())
        .map_err(|e| e.to_string())
}

#[test]
fn the_builtin_registry_and_the_empty_one() {
    let builtin = HostRegistry::builtin();
    let names: Vec<_> = builtin.names().collect();
    assert_eq!(names, ["env", "lookupCredential", "now", "readFixture"]);
    assert_eq!(HostRegistry::new().names().count(), 0);
}

/// Catalog rule: every struct in every host function's arguments denies unknown keys, and every
/// host function has a description.
#[test]
fn every_host_function_is_strict_and_described() {
    for entry in registry().entries() {
        assert_eq!(entry.open_objects(), Vec::<String>::new(), "{}", entry.name);
        assert!(!entry.description.is_empty(), "{} has no doc comment", entry.name);
        assert_eq!(entry.args_schema.get("type"), Some(&json!("object")), "{}", entry.name);
    }
    let lookup = HostRegistry::builtin();
    let lookup = lookup.get("lookupCredential").unwrap();
    assert!(
        lookup
            .description
            .starts_with("The username and password of a test account")
    );
    assert_eq!(
        lookup.result_schema.get("required"),
        Some(&json!(["username", "password"]))
    );
}

/// Forgot `deny_unknown_fields`, one level down.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lenient {
    inner: LenientInner,
}

#[derive(Deserialize, JsonSchema)]
struct LenientInner {
    value: String,
}

impl HostFunction for Lenient {
    const NAME: &'static str = "lenient";
    type Output = String;
    fn call(self, _cx: &mut dyn HostContext) -> Result<String, HostError> {
        Ok(self.inner.value)
    }
}

#[test]
fn the_strictness_check_can_fail() {
    let entry = HostFunctionEntry::of::<Lenient>();
    assert_eq!(entry.open_objects(), ["/$defs/LenientInner"]);
    assert_eq!(entry.description, "Forgot `deny_unknown_fields`, one level down.");
}

#[test]
fn the_script_reply_envelope() {
    assert_eq!(
        script_reply(call("nested", nested_args("v"))),
        json!({ "ok": true, "value": { "seen": "v" } })
    );
    assert_eq!(
        script_reply(call("boom", json!({ "secret": CANARY }))),
        json!({ "ok": false, "error": "host function boom panicked" })
    );
}

#[test]
fn an_embedders_function_is_registered_once_and_its_failures_and_panics_stay_values() {
    let echo: trailblaze_host_functions::DynamicHostFn = std::sync::Arc::new(|args: Value| match args["n"].as_i64() {
        Some(7) => panic!("seven {CANARY}"),
        Some(n) => Ok(json!({ "twice": n * 2 })),
        None => Err("n is missing".into()),
    });
    let schema = json!({"type": "object", "description": "Doubles n.", "properties": {"n": {"type": "integer"}}});
    let entry = HostFunctionEntry::dynamic("double", schema.clone(), json!({}), echo.clone()).expect("valid");
    assert!(entry.is_dynamic() && !HostFunctionEntry::of::<Lenient>().is_dynamic());
    assert_eq!(entry.description, "Doubles n.");
    let mut reg = HostRegistry::new();
    reg.add(entry.clone()).expect("first");
    assert!(reg.add(entry).is_err(), "a second `double` is refused");
    let mut cx = FakeContext::new();
    assert_eq!(
        reg.call("double", json!({"n": 4}), &mut cx).unwrap(),
        json!({"twice": 8})
    );
    assert_eq!(
        reg.call("double", Value::Null, &mut cx).unwrap_err().to_string(),
        "n is missing"
    );
    let panicked = reg.call("double", json!({"n": 7}), &mut cx).unwrap_err().to_string();
    assert_eq!(panicked, "host function double panicked");
    // Bad names and schemas are refused before anything is registered.
    for bad in ["", "1x", "a-b", "a b"] {
        assert!(
            HostFunctionEntry::dynamic(bad, schema.clone(), json!({}), echo.clone()).is_err(),
            "{bad:?}"
        );
    }
    assert!(HostFunctionEntry::dynamic("f", json!({"type": "string"}), json!({}), echo).is_err());
}
