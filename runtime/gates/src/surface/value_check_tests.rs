//! The native type gate, rule by rule, each with a positive control: against schemas schemars derives
//! from Rust types shaped like the built-ins, and against an analyzer-shaped hand-written schema.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::surface::test_support::{KeyCode, LaunchMode, TrailblazeNodeSelector};
use trailblaze_core::surface::value_check::*;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Tool {
    text: String,
    key_code: KeyCode,
    #[serde(default)]
    launch_mode: Option<LaunchMode>,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    long_press: bool,
    #[serde(default)]
    at: Option<Point>,
    #[serde(default)]
    node_selector: Option<TrailblazeNodeSelector>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    labels: std::collections::BTreeMap<String, u8>,
    #[serde(default)]
    pair: Option<(String, i32)>,
}

fn tool_schema() -> Value {
    schemars::schema_for!(Tool).to_value()
}

fn base() -> Value {
    json!({"text": "hello", "keyCode": "BACK"})
}

fn with(extra: Value) -> Value {
    let mut v = base();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn findings(schema: &Value, value: &Value) -> Vec<(String, String)> {
    check_value(schema, None, value)
        .into_iter()
        .map(|f| (f.path, f.message))
        .collect()
}

/// Exactly one finding, at `path`, whose message contains `needle`.
#[track_caller]
fn one(schema: &Value, value: &Value, path: &str, needle: &str) -> String {
    let f = findings(schema, value);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, path, "{f:?}");
    assert!(f[0].1.contains(needle), "{:?} lacks {needle:?}", f[0].1);
    f[0].1.clone()
}

#[track_caller]
fn clean(schema: &Value, value: &Value) {
    assert_eq!(findings(schema, value), vec![], "{value}");
}

#[test]
fn types_and_the_quoted_number_bug() {
    let s = tool_schema();
    clean(&s, &base());
    clean(&s, &with(json!({"text": "12345678"})));
    one(
        &s,
        &with(json!({"text": 12345678})),
        "text",
        "expected string, found number",
    );
    one(
        &s,
        &with(json!({"text": true})),
        "text",
        "expected string, found boolean",
    );
    clean(&s, &with(json!({"longPress": true})));
    one(
        &s,
        &with(json!({"longPress": "true"})),
        "longPress",
        "expected boolean, found string",
    );
    one(
        &s,
        &with(json!({"longPress": null})),
        "longPress",
        "expected boolean, found null",
    );
}

#[test]
fn integers_follow_serde() {
    let s = tool_schema();
    clean(&s, &with(json!({"count": 3})));
    one(
        &s,
        &with(json!({"count": 3.5})),
        "count",
        "found number with a fractional part",
    );
    one(
        &s,
        &with(json!({"count": 3.0})),
        "count",
        "found number with a decimal point",
    );
    one(
        &s,
        &with(json!({"count": "3"})),
        "count",
        "expected integer or null, found string",
    );
    // u32: schemars writes `minimum: 0`.
    one(&s, &with(json!({"count": -1})), "count", "must be at least 0");
    // u8 map values: `maximum: 255`.
    clean(&s, &with(json!({"labels": {"a": 255}})));
    one(
        &s,
        &with(json!({"labels": {"a": 256}})),
        "labels.a",
        "must be at most 255",
    );
    // A plain number field takes both.
    let n = json!({"type": "object", "properties": {"f": {"type": "number"}}});
    clean(&n, &json!({"f": 3}));
    clean(&n, &json!({"f": 3.5}));
    one(&n, &json!({"f": "3"}), "f", "expected number, found string");
}

#[test]
fn nullable_type_lists() {
    let s = tool_schema();
    clean(&s, &with(json!({"count": null})));
    let sel = |v: Value| with(json!({"nodeSelector": {"androidAccessibility": {"textRegex": v}}}));
    clean(&s, &sel(json!(null)));
    clean(&s, &sel(json!("Inbox")));
    one(
        &s,
        &sel(json!(7)),
        "nodeSelector.androidAccessibility.textRegex",
        "expected string or null, found number",
    );
}

#[test]
fn enums_list_their_values() {
    let s = tool_schema();
    clean(&s, &with(json!({"keyCode": "ENTER"})));
    let m = one(
        &s,
        &with(json!({"keyCode": "ENTR"})),
        "keyCode",
        "not one of the allowed values",
    );
    assert!(m.contains("`BACK`, `ENTER`"), "{m}");
    one(
        &s,
        &with(json!({"keyCode": 3})),
        "keyCode",
        "expected one of `BACK`, `ENTER`, found number",
    );
    // Option<Enum>: `anyOf [{$ref}, {type: null}]` over a `oneOf` of `enum` and `const`.
    clean(&s, &with(json!({"launchMode": "RESUME"})));
    clean(&s, &with(json!({"launchMode": "REINSTALL"})));
    clean(&s, &with(json!({"launchMode": null})));
    let m = one(
        &s,
        &with(json!({"launchMode": "RESTART"})),
        "launchMode",
        "not one of the allowed values",
    );
    for v in ["`FORCE_RESTART`", "`RESUME`", "`REINSTALL`", "`null`"] {
        assert!(m.contains(v), "{m}");
    }
    assert!(!m.contains("`RESTART`"), "the value itself is never quoted: {m}");
    let c = json!({"properties": {"k": {"const": "A"}}});
    clean(&c, &json!({"k": "A"}));
    one(&c, &json!({"k": "B"}), "k", "not one of the allowed values: `A`");
}

#[test]
fn required_and_unknown_arguments() {
    let s = tool_schema();
    one(
        &s,
        &json!({"keyCode": "BACK"}),
        "text",
        "missing required argument `text`",
    );
    let m = one(
        &s,
        &with(json!({"lonPress": true})),
        "lonPress",
        "unknown argument `lonPress`",
    );
    assert!(m.ends_with("did you mean `longPress`?"), "{m}");
    let m = one(&s, &with(json!({"zzzzzz": 1})), "zzzzzz", "unknown argument `zzzzzz`");
    assert!(m.contains("known: `text`"), "{m}");
    // Nested closed objects too.
    one(
        &s,
        &with(json!({"at": {"x": 1, "y": 2, "z": 3}})),
        "at.z",
        "unknown argument `z`",
    );
    one(
        &s,
        &with(json!({"at": {"x": 1}})),
        "at.y",
        "missing required argument `y`",
    );
    clean(&s, &with(json!({"at": {"x": 1, "y": 2}})));
    one(
        &s,
        &with(json!({"at": {"x": 1, "y": "2"}})),
        "at.y",
        "expected integer, found string",
    );
    // Findings are reported in a stable order: required first, then keys in value order.
    let f = findings(&s, &json!({"b": 1, "a": 2}));
    let paths: Vec<&str> = f.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["text", "keyCode", "b", "a"]);
    // Open objects (no `additionalProperties`) accept unknown keys, as JSON Schema says.
    clean(&json!({"type": "object", "properties": {"a": {}}}), &json!({"b": 1}));
    let none = json!({"type": "object", "additionalProperties": false});
    one(&none, &json!({"b": 1}), "b", "none are accepted here");
    clean(&none, &json!({}));
}

#[test]
fn selectors_are_checked_at_every_depth() {
    let s = tool_schema();
    let deep =
        json!({"nodeSelector": {"below": {"containsDescendants": [{}, {"androidAccessibility": {"textRegx": "a"}}]}}});
    let m = one(
        &s,
        &with(deep),
        "nodeSelector.below.containsDescendants[1].androidAccessibility.textRegx",
        "unknown argument `textRegx`",
    );
    assert!(m.ends_with("did you mean `textRegex`?"), "{m}");
    let ok = json!({"nodeSelector": {"below": {"containsDescendants": [{"androidAccessibility": {"textRegex": "a"}}], "index": 2}}});
    clean(&s, &with(ok));
    one(
        &s,
        &with(json!({"nodeSelector": {"below": {"index": "2"}}})),
        "nodeSelector.below.index",
        "expected integer or null",
    );
    one(
        &s,
        &with(json!({"nodeSelector": "Email"})),
        "nodeSelector",
        "expected object or null, found string",
    );
    one(
        &s,
        &with(json!({"nodeSelector": {"below": []}})),
        "nodeSelector.below",
        "expected object or null, found array",
    );
}

#[test]
fn arrays_maps_and_tuples() {
    let s = tool_schema();
    clean(&s, &with(json!({"tags": ["a", "b"]})));
    one(
        &s,
        &with(json!({"tags": ["a", 2]})),
        "tags[1]",
        "expected string, found number",
    );
    one(&s, &with(json!({"tags": "a"})), "tags", "expected array, found string");
    one(
        &s,
        &with(json!({"labels": {"a b": "x"}})),
        "labels[\"a b\"]",
        "expected integer, found string",
    );
    clean(&s, &with(json!({"pair": ["a", 1]})));
    one(
        &s,
        &with(json!({"pair": [1, 1]})),
        "pair[0]",
        "expected string, found number",
    );
    one(
        &s,
        &with(json!({"pair": ["a"]})),
        "pair",
        "expected at least 2 items, found 1",
    );
}

#[test]
fn recursion_is_bounded() {
    let s = tool_schema();
    let mut sel = json!({});
    for _ in 0..200 {
        sel = json!({ "below": sel });
    }
    let f = findings(&s, &with(json!({ "nodeSelector": sel })));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].1.contains("not checked"), "{f:?}");
    // A schema that refers to itself without consuming the value ends too.
    let looping = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"});
    assert_eq!(findings(&looping, &json!(1)).len(), 1);
    one(&json!({"$ref": "#/$defs/Gone"}), &json!(1), "", "does not resolve");
}

/// A scripted tool's schema as the analyzer lowers it, whose selector `$ref` resolves only in a
/// shared document.
fn analyzer_schema() -> Value {
    json!({
        "type": "object",
        "description": "Signs in.",
        "properties": {
            "email": {"type": "string", "description": "The account's email."},
            "pin": {"type": "number"},
            "remember": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "maybe": {"type": ["string", "null"]},
            "field": {"$ref": "#/$defs/TrailblazeNodeSelector"},
            "extras": {"type": "object", "additionalProperties": {"type": "string"}},
            "steps": {"type": "array", "items": {
                "type": "object",
                "properties": {"tool": {"type": "string"}, "args": {}},
                "required": ["tool"],
                "additionalProperties": false
            }},
            "either": {"anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
                {"type": "array", "items": {"type": "string"}}
            ]}
        },
        "required": ["email", "pin"],
        "additionalProperties": false
    })
}

#[test]
fn analyzer_shaped_schema_with_shared_selector_defs() {
    let s = analyzer_schema();
    let shared = schemars::schema_for!(Tool).to_value()["$defs"].clone();
    let run = |v: Value| -> Vec<(String, String)> {
        check_value(&s, Some(&shared), &v)
            .into_iter()
            .map(|f| (f.path, f.message))
            .collect()
    };
    let ok = json!({"email": "a@b.c", "pin": 1234, "remember": false, "mode": "fast", "maybe": null,
        "field": {"androidAccessibility": {"textRegex": "x"}}, "extras": {"k": "v"},
        "steps": [{"tool": "tap", "args": {"anything": [1]}}], "either": ["x"]});
    assert_eq!(run(ok.clone()), vec![]);
    let bad = |k: &str, v: Value| {
        let mut x = ok.clone();
        x[k] = v;
        run(x)
    };
    assert_eq!(bad("pin", json!("1234"))[0].1, "expected number, found string");
    assert!(bad("mode", json!("medium"))[0].1.contains("`fast`, `slow`"));
    assert_eq!(
        bad("field", json!({"androidAccessibility": {"txt": "x"}}))[0].0,
        "field.androidAccessibility.txt"
    );
    assert_eq!(bad("extras", json!({"k": 1}))[0].0, "extras.k");
    assert_eq!(
        bad("steps", json!([{"args": {}}]))[0].1,
        "missing required argument `tool`"
    );
    // anyOf: the branch of the value's kind speaks.
    assert_eq!(
        bad("either", json!({"b": "x"})).len(),
        2,
        "{:?}",
        bad("either", json!({"b": "x"}))
    );
    assert_eq!(
        bad("either", json!([1]))[0],
        ("either[0]".into(), "expected string, found number".into())
    );
    assert_eq!(bad("either", json!(1))[0].1, "expected object or array, found number");
    // Without the shared document the selector reference cannot be checked, and says so.
    let f = check_value(&s, None, &ok);
    assert!(f.len() == 1 && f[0].message.contains("does not resolve"), "{f:?}");
    // A shared document whose root is the selector (`$ref: "#"` inside) works too.
    let doc = schemars::schema_for!(TrailblazeNodeSelector).to_value();
    let renamed = json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/TrailblazeNodeSelector"}}});
    assert_eq!(
        check_value(&renamed, Some(&doc), &json!({"s": {"below": {"index": 1}}})),
        vec![]
    );
    let f = check_value(&renamed, Some(&doc), &json!({"s": {"below": {"below": {"idx": 1}}}}));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].path, "s.below.below.idx");
}

#[test]
fn findings_never_quote_values() {
    let canary = "CANARY-12345678-secret";
    let s = tool_schema();
    let values = [
        with(json!({"text": 12345678, "keyCode": canary})),
        with(json!({"launchMode": canary, "count": canary, "longPress": canary})),
        with(
            json!({"nodeSelector": {"androidAccessibility": {"textRegex": 5, "isPassword": canary}}, "tags": [canary, 1]}),
        ),
        with(json!({"at": canary, "labels": {"k": canary}, "pair": [canary, canary]})),
        json!({"text": [canary], "keyCode": {"x": canary}}),
    ];
    let mut total = 0;
    for v in values {
        for f in check_value(&s, None, &v) {
            total += 1;
            assert!(!f.message.contains("CANARY") && !f.path.contains("CANARY"), "{f:?}");
            assert!(!f.message.contains("12345678"), "{f:?}");
        }
    }
    assert!(total >= 10, "the canaries must actually be rejected: {total}");
}
