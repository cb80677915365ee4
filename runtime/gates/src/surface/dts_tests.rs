//! TypeScript rendering: golden-ish types, determinism, then the real tsc over a generated
//! `trailblaze-client.d.ts` with scripts that must and must not compile.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::*;
use crate::surface::test_support::{KeyCode, LaunchMode, TrailblazeNodeSelector};
use crate::surface::tsc::{run_tsc, testing};

// More Rust types shaped like the real built-ins; the selector and enums are in `test_support`.

/// Types text into a field.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct InputText {
    /// The text to type.
    text: String,
    /// The field to type into; the focused field when absent.
    #[serde(default)]
    node_selector: Option<TrailblazeNodeSelector>,
}

/// Taps the first node the selector matches.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct TapOnElementBySelector {
    node_selector: TrailblazeNodeSelector,
    #[serde(default)]
    long_press: bool,
}

/// Taps a point.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct TapOnPoint {
    x: i32,
    y: i32,
    #[serde(default)]
    long_press: bool,
}

/// Launches an app.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct LaunchApp {
    app_id: String,
    #[serde(default)]
    launch_mode: Option<LaunchMode>,
}

/// Presses a key.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct PressKey {
    key_code: KeyCode,
}

/// Returns the current screen.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Snapshot {}

/// A username and password.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct LookupCredential {
    /// The account's name, e.g. `demo`.
    account: String,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct Credential {
    username: String,
    password: String,
}

/// A host function sharing a tool's name: the two maps are separate namespaces.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct HostInputText {
    n: u32,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NowValue {
    epoch_millis: u64,
    iso: String,
}

fn schema<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

pub(crate) fn entry(name: &str, args: Value, result: Option<Value>) -> SurfaceEntry {
    let description = args
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    SurfaceEntry {
        name: name.into(),
        description: description.into(),
        args: args.into(),
        result: result.into(),
    }
}

/// A scripted tool as the analyzer lowers it: the selector `$ref` has no `$defs` beside it.
pub(crate) fn scripted_sign_in() -> Value {
    json!({
        "type": "object",
        "description": "Signs in with a stored account.",
        "properties": {
            "email": {"type": "string", "description": "The account's email."},
            "field": {"$ref": "#/$defs/TrailblazeNodeSelector"},
            "extras": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "required": ["email"],
        "additionalProperties": false
    })
}

pub(crate) fn sample_tools() -> Vec<SurfaceEntry> {
    vec![
        entry("inputText", schema::<InputText>(), None),
        entry("tapOnElementBySelector", schema::<TapOnElementBySelector>(), None),
        entry("tapOnPoint", schema::<TapOnPoint>(), Some(json!({"type": "object"}))),
        entry("launchApp", schema::<LaunchApp>(), None),
        entry("pressKey", schema::<PressKey>(), None),
        entry("snapshot", schema::<Snapshot>(), None),
        entry("demo-signIn", scripted_sign_in(), Some(json!({"type": "boolean"}))),
    ]
}

pub(crate) fn sample_host_functions() -> Vec<SurfaceEntry> {
    vec![
        entry(
            "lookupCredential",
            schema::<LookupCredential>(),
            Some(schema::<Credential>()),
        ),
        entry(
            "inputText",
            schema::<HostInputText>(),
            Some(json!({"type": ["string", "null"]})),
        ),
        entry("now", schema::<Snapshot>(), Some(schema::<NowValue>())),
    ]
}

#[test]
fn renders_derived_schemas() {
    assert_eq!(
        ts_type(&schema::<InputText>(), None),
        "{\n  /** The text to type. */\n  text: string;\n  /** The field to type into; the focused field when absent. */\n  \
         nodeSelector?: TrailblazeNodeSelector | null;\n}"
    );
    assert_eq!(
        ts_type(&schema::<LaunchApp>(), None),
        r#"{ appId: string; launchMode?: "FORCE_RESTART" | "RESUME" | "REINSTALL" | null }"#
    );
    assert_eq!(ts_type(&schema::<PressKey>(), None), r#"{ keyCode: "BACK" | "ENTER" }"#);
    assert_eq!(
        ts_type(&schema::<TapOnPoint>(), None),
        "{ x: number; y: number; longPress?: boolean }"
    );
    assert_eq!(
        ts_type(&schema::<TapOnElementBySelector>(), None),
        "{ nodeSelector: TrailblazeNodeSelector; longPress?: boolean }"
    );
    assert_eq!(ts_type(&schema::<Snapshot>(), None), "Record<string, never>");
    assert_eq!(
        ts_type(&schema::<Credential>(), None),
        "{ username: string; password: string }"
    );
    // The selector document itself: its root is the selector, so its `#` refs render by name.
    let sel = ts_type(&schema::<TrailblazeNodeSelector>(), None);
    for want in [
        "below?: TrailblazeNodeSelector | null;",
        "containsDescendants?: TrailblazeNodeSelector[] | null;",
        "androidAccessibility?: { textRegex?: string | null; hintTextRegex?: string | null; isPassword?: boolean | null } | null;",
        "index?: number | null;",
    ] {
        assert!(sel.contains(want), "{want} in {sel}");
    }
}

#[test]
fn renders_the_analyzer_dialect() {
    assert_eq!(
        ts_type(&scripted_sign_in(), None),
        "{\n  /** The account's email. */\n  email: string;\n  field?: TrailblazeNodeSelector;\n  \
         extras?: Record<string, string>;\n}"
    );
    let cases = [
        (json!({}), "unknown"),
        (json!(true), "unknown"),
        (json!(false), "never"),
        (json!({"type": "object"}), "Record<string, unknown>"),
        (json!({"type": "string", "enum": ["a", "b"]}), r#""a" | "b""#),
        (
            json!({"type": ["string", "null"], "enum": ["a", null]}),
            r#""a" | null"#,
        ),
        (json!({"const": 3}), "3"),
        (json!({"type": ["string", "number"]}), "string | number"),
        (
            json!({"type": "array", "items": {"type": ["string", "number"]}}),
            "(string | number)[]",
        ),
        (json!({"type": "array"}), "unknown[]"),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2, "maxItems": 2}),
            "[string, number]",
        ),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": ["integer", "null"]}], "minItems": 1}),
            "[string, (number | null)?, ...unknown[]]",
        ),
        (
            json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}, {"type": "null"}]}),
            "{ a: string } | null",
        ),
        (
            json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"type": "object", "properties": {"b": {"type": "number"}}}]}),
            "({ a: string } & { b?: number })",
        ),
        (
            json!({"type": "object", "properties": {"a-b": {"type": "string"}, "type": {"type": "boolean"}}, "required": ["a-b", "type"]}),
            r#"{ "a-b": string; type: boolean }"#,
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "number"}}),
            "{ a?: string; [key: string]: string | number | undefined }",
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            "Record<string, number>",
        ),
        (json!({"type": "string", "enum": ["x\u{2028}y"]}), "\"x\\u2028y\""),
    ];
    for (s, want) in cases {
        assert_eq!(ts_type(&s, None), want, "{s}");
    }
    // Recursion through a definition that is not the selector stops at `unknown`.
    let tree = json!({"$ref": "#/$defs/Tree", "$defs": {"Tree": {"type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, "additionalProperties": false}}});
    assert_eq!(ts_type(&tree, None), "{ kids?: unknown[] }");
    // Descriptions: multi-line, and `*/` cannot end the comment.
    let documented = json!({"type": "object", "properties": {"a": {"type": "string", "description": "One */ two\n\nthree"}},
        "additionalProperties": false});
    assert_eq!(
        ts_type(&documented, None),
        "{\n  /**\n   * One *\\/ two\n   *\n   * three\n   */\n  a?: string;\n}"
    );
}

#[test]
fn client_dts_shape_and_determinism() {
    let text = client_dts(&sample_tools(), &sample_host_functions());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "// GENERATED BY TRAILBLAZE. DO NOT EDIT.");
    assert_eq!(
        lines[1],
        r#"import type { TrailblazeNodeSelector } from "@trailblaze/scripting";"#
    );
    assert_eq!(lines[2], r#"declare module "@trailblaze/scripting" {"#);
    assert!(text.ends_with("  }\n}\n"), "{text}");
    for want in [
        "    /** Launches an app. */\n    launchApp: {\n      \
         args: { appId: string; launchMode?: \"FORCE_RESTART\" | \"RESUME\" | \"REINSTALL\" | null };\n      \
         result: unknown;\n    };\n",
        "    pressKey: { args: { keyCode: \"BACK\" | \"ENTER\" }; result: unknown };\n",
        "    snapshot: { args: Record<string, never>; result: unknown };\n",
        "    \"demo-signIn\": {\n      args: {\n        /** The account's email. */\n        email: string;\n",
        "    inputText: { args: { n: number }; result: string | null };\n",
        "    lookupCredential: {\n      args: {\n        /** The account's name, e.g. `demo`. */\n        account: string;\n      };\n      \
         result: { username: string; password: string };\n    };\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // Sorted by name within each map; `inputText` is in both.
    let tools_at = text.find("interface TrailblazeToolMap").unwrap();
    let host_at = text.find("interface TrailblazeHostFunctionMap").unwrap();
    let order: Vec<usize> = [
        "\"demo-signIn\":",
        "inputText:",
        "launchApp:",
        "pressKey:",
        "snapshot:",
        "tapOnElementBySelector:",
        "tapOnPoint:",
    ]
    .iter()
    .map(|k| tools_at + text[tools_at..host_at].find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text[host_at..].contains("inputText:"));
    // Same input, shuffled, duplicated after the first: byte-identical.
    let mut tools = sample_tools();
    tools.reverse();
    let mut hosts = sample_host_functions();
    hosts.rotate_left(1);
    assert_eq!(client_dts(&tools, &hosts), text);
    assert_eq!(client_dts(&sample_tools(), &sample_host_functions()), text);
    let mut dup = sample_tools();
    dup.push(entry("inputText", json!({"type": "object"}), None));
    assert_eq!(client_dts(&dup, &sample_host_functions()), text);
    // No entries: empty interfaces, still a module.
    let empty = client_dts(&[], &[]);
    assert!(
        empty.contains("  interface TrailblazeToolMap {}\n  interface TrailblazeHostFunctionMap {}\n"),
        "{empty}"
    );
}

#[test]
fn tools_tsconfig_is_the_sdk_fixture() {
    let sdk = testing::sdk();
    let fixture = std::fs::read_to_string(sdk.root.join("test/fixtures/trailmap-tools.tsconfig.json")).unwrap();
    assert_eq!(tools_tsconfig("../../../sdk-ts/src/index.ts"), fixture);
    let v: Value = serde_json::from_str(&tools_tsconfig("C:\\sdk \"x\"/index.ts")).unwrap();
    assert_eq!(
        v["compilerOptions"]["paths"]["@trailblaze/scripting"][0],
        "C:\\sdk \"x\"/index.ts"
    );
}

const POSITIVE: &str = r#"import { trailblaze, type TrailblazeNodeSelector } from "@trailblaze/scripting";

const field: TrailblazeNodeSelector = { androidAccessibility: { hintTextRegex: "Email" }, below: { index: 0 } };

/** Uses every kind of entry the surface renders. */
export const signIn = trailblaze.tool<{ account: string }, string>(async (input, ctx) => {
  const c = ctx.host.lookupCredential({ account: input.account });
  await ctx.tools.inputText({ text: c.username, nodeSelector: field });
  await ctx.tools.inputText({ text: c.password, nodeSelector: null });
  await ctx.tools.tapOnElementBySelector({ nodeSelector: { containsDescendants: [field] }, longPress: true });
  await ctx.tools.tapOnPoint({ x: 1, y: 2 });
  await ctx.tools.launchApp({ appId: "com.example.demo", launchMode: "FORCE_RESTART" });
  await ctx.tools.pressKey({ keyCode: "ENTER" });
  await ctx.tools.snapshot({});
  const ok: boolean = await ctx.tools["demo-signIn"]({ email: "a@b.c", field, extras: { k: "v" } });
  const n: number | undefined = ctx.host.inputText({ n: 3 })?.length;
  return `${ok} ${n} ${ctx.host.now({}).epochMillis + 1} ${ctx.host.now({}).iso}`;
});
"#;

/// Each negative script: its one bad line and the codes tsc 5.9 reports there.
const NEGATIVES: &[(&str, &str, &[&str])] = &[
    (
        "misspelled_host_arg",
        r#"ctx.host.lookupCredential({ acount: "x" });"#,
        &["TS2561"],
    ),
    (
        "unknown_host_function",
        r#"ctx.host.lookupPassword({ account: "x" });"#,
        &["TS2339"],
    ),
    (
        "host_function_via_tools",
        r#"await ctx.tools.lookupCredential({ account: "x" });"#,
        &["TS2339"],
    ),
    (
        "wrong_tool_arg_type",
        r#"await ctx.tools.tapOnPoint({ x: "1", y: 2 });"#,
        &["TS2322"],
    ),
    (
        "missing_required_arg",
        r#"await ctx.tools.launchApp({ launchMode: "RESUME" });"#,
        &["TS2345"],
    ),
    (
        "wrong_enum",
        r#"await ctx.tools.pressKey({ keyCode: "ENTR" });"#,
        &["TS2820"],
    ),
    (
        "selector_deep_typo",
        r#"await ctx.tools.inputText({ text: "x", nodeSelector: { below: { androidAccessibility: { hintRegex: "E" } } } });"#,
        &["TS2353"],
    ),
    (
        "extra_on_empty",
        r#"await ctx.tools.snapshot({ all: true });"#,
        &["TS2322"],
    ),
    (
        "wrong_result_use",
        r#"const s: string = ctx.host.inputText({ n: 1 });"#,
        &["TS2322"],
    ),
];

#[test]
fn real_tsc_accepts_the_surface_and_rejects_misuse() {
    let sdk = testing::sdk();
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("trailmaps/demo/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let write = |name: &str, text: &str| std::fs::write(tools.join(name), text).unwrap();
    write("tsconfig.json", &tools_tsconfig(sdk.index.to_str().unwrap()));
    write(
        "trailblaze-client.d.ts",
        &client_dts(&sample_tools(), &sample_host_functions()),
    );
    write("positive.ts", POSITIVE);
    for (name, line, _) in NEGATIVES {
        let body = format!(
            "import {{ trailblaze }} from \"@trailblaze/scripting\";\n\
             export const t = trailblaze.tool<{{}}, void>(async (_input, ctx) => {{\n  {line}\n}});\n"
        );
        write(&format!("{name}.ts"), &body);
    }
    let diagnostics = run_tsc(&sdk.tsc, &tools).unwrap();
    let mut by_file: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for d in &diagnostics {
        by_file
            .entry(d.file.clone())
            .or_default()
            .push((d.line, d.code.clone()));
    }
    let all = format!("{diagnostics:#?}");
    assert!(!by_file.contains_key("positive.ts"), "{all}");
    assert!(!by_file.contains_key("trailblaze-client.d.ts"), "{all}");
    for (name, _, codes) in NEGATIVES {
        let got = by_file.remove(&format!("{name}.ts")).unwrap_or_default();
        let want: Vec<(usize, String)> = codes.iter().map(|c| (3, c.to_string())).collect();
        assert_eq!(got, want, "{name}: {all}");
    }
    assert!(by_file.is_empty(), "{all}");
    assert!(Path::new(&tools).join("positive.ts").is_file());
}

/// The selector grammar as a shared `$defs` map, for schemas (the analyzer's) that only refer to it.
pub(crate) fn shared_selector_defs() -> Value {
    schema::<InputText>()["$defs"].clone()
}
