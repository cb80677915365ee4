//! Finding tools, reading their specs and docs, and following imports.

use super::*;
use crate::script::analyze::module::clean_doc;

#[test]
fn a_real_tool_lowers_with_its_docs_flags_and_types() {
    let tool = one(SIGN_IN);
    assert_eq!(tool.name, "signIn");
    assert_eq!(
        tool.description.as_deref(),
        Some("Signs in with an email account.\n\nWaits for the inbox.")
    );
    assert_eq!(
        (tool.surface_to_llm, tool.is_recordable, tool.read_only),
        (Some(false), None, Some(true))
    );
    assert_eq!(tool.line, line_of(SIGN_IN, "export const signIn"));
    let input = tool.input_schema.unwrap_or_default();
    let expected = object(
        json!({
            "email": {"type": "string", "description": "The account's email address."},
            "password": {"type": "string", "description": "Leave out to use the stored password."},
            "environment": {
                "type": "string",
                "enum": ["staging", "production"],
                "description": "Where to sign in."
            },
            "retries": {"type": "number", "description": "Retries before giving up."},
            "remember": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "profile": object(
                json!({
                    "displayName": {"type": "string", "description": "Shown on the inbox."},
                    "locale": {"type": "string", "enum": ["en", "fr"]},
                }),
                &["displayName"],
            ),
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        }),
        &["email", "environment", "remember", "tags", "profile", "headers"],
    );
    assert_eq!(input, expected, "{input:#}");
    // Declaration order is kept, not sorted.
    let keys: Vec<&String> = input["properties"]
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("email"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("headers"));

    let output = tool.output_schema.unwrap_or_default();
    let screen = object(
        json!({"name": {"type": "string"}, "at": {"type": "number"}}),
        &["name", "at"],
    );
    assert_eq!(
        output,
        object(
            json!({
                "signedIn": {"type": "boolean"},
                "screens": {"type": "array", "items": screen},
            }),
            &["signedIn", "screens"],
        )
    );
}

#[test]
fn both_call_forms_several_tools_and_other_exports() {
    let tools = analyze(
        r#"import { trailblaze } from "@trailblaze/scripting";
/** Ignored: the spec's description wins. */
export const a = trailblaze.tool<{ x: string }, void>({ description: "Does A." }, async () => {});
export const notATool = 42;
export function helper() {}
export const other = someoneElse.tool<{ x: string }, void>(() => {});
const hidden = trailblaze.tool<{ x: string }, void>(() => {});

const handler = async (input: { s: string }): Promise<void> => {};
export const d = trailblaze.tool(handler);

/** Adds one. */
export const b = trailblaze.tool(async (input: { n: number }): Promise<{ n: number }> => ({ n: input.n + 1 }));
// A plain comment is not a doc comment.
export const c = trailblaze.tool(async () => {});
"#,
    );
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "d", "b", "c"]);
    let [a, d, b, c] = &tools[..] else { unreachable!() };
    assert_eq!(d.input_schema, Some(object(json!({"s": {"type": "string"}}), &["s"])));
    assert_eq!(d.output_schema, Some(json!({"type": "null"})));

    assert_eq!(a.description.as_deref(), Some("Does A."));
    assert_eq!(a.input_schema, Some(object(json!({"x": {"type": "string"}}), &["x"])));
    assert_eq!(a.output_schema, Some(json!({"type": "null"})), "void output");
    assert_eq!((a.line, b.line, c.line), (3, 13, 15));

    // No type arguments: the handler's annotations stand in, as tsc would infer them.
    assert_eq!(b.description.as_deref(), Some("Adds one."));
    assert_eq!(b.input_schema, Some(object(json!({"n": {"type": "number"}}), &["n"])));
    assert_eq!(b.output_schema, Some(object(json!({"n": {"type": "number"}}), &["n"])));
    assert_eq!((b.surface_to_llm, b.is_recordable, b.read_only), (None, None, None));

    assert_eq!(c.description, None);
    assert_eq!((c.input_schema.as_ref(), c.output_schema.as_ref()), (None, None));
}

#[test]
fn other_ways_to_name_the_sdk_and_to_export() {
    let tools = analyze(
        r#"import { tool as defineTool } from "@trailblaze/scripting";
import tb from "@trailblaze/scripting";
import { trailblaze as sdk } from "@trailblaze/scripting";

export const viaTool = defineTool<{ a: string }, void>(() => {});
export const viaDefault = tb.tool<{ b: string }, void>(() => {});
export const viaAlias = (sdk.tool<{ c: string }, void>(() => {})) satisfies unknown;

/** Declared first, exported below. */
const late = trailblaze.tool<{ d: string }, void>({ isRecordable: false }, () => {});
export { late as exportedLate };
"#,
    );
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["viaTool", "viaDefault", "viaAlias", "exportedLate"]);
    let late = &tools[3];
    assert_eq!(late.description.as_deref(), Some("Declared first, exported below."));
    assert_eq!(late.is_recordable, Some(false));
    assert_eq!(late.line, 10);
    assert_eq!(
        late.input_schema,
        Some(object(json!({"d": {"type": "string"}}), &["d"]))
    );
}

#[test]
fn imported_types_are_followed_through_sibling_modules() {
    let files = Files::new(&[("tools/shared.ts", SHARED), ("tools/base.ts", BASE)]);
    let tools = files
        .analyze(
            r#"import { trailblaze } from "@trailblaze/scripting";
import type { Account } from "./shared";
import { type Page, Region as Where } from "./shared.ts";
import type { Accounts, Base } from "./shared";
import * as shared from "./shared";

export const pick = trailblaze.tool<
  { account: Account; region: Where; page: Page<shared.Region>; all: Accounts; base: Base },
  void
>(async () => {});
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let input = tools[0].input_schema.clone().unwrap_or_default();
    let id = json!({"type": "string", "description": "Stable id."});
    let mut account = object(json!({"id": id, "email": {"type": "string"}}), &["id", "email"]);
    account["description"] = json!("An account to sign in with.");
    let region = json!({"type": "string", "enum": ["eu", "us"]});
    assert_eq!(input["properties"]["account"], account);
    assert_eq!(input["properties"]["region"], region);
    assert_eq!(
        input["properties"]["page"],
        object(
            json!({"items": {"type": "array", "items": region}, "next": {"type": "string"}}),
            &["items"]
        )
    );
    assert_eq!(input["properties"]["all"], json!({"type": "array", "items": account}));
    assert_eq!(input["properties"]["base"], object(json!({"id": id}), &["id"]));
    // `load` is asked once per importer and specifier (the last is base.ts's import of
    // shared.ts); a file it names twice is parsed once.
    let requests = files.requests.lock().map(|r| r.clone()).unwrap_or_default();
    assert_eq!(
        requests,
        ["./shared", "./base", "./shared.ts", "./shared"],
        "{requests:?}"
    );
}

#[test]
fn an_unresolvable_import_or_name_is_an_error_at_the_type() {
    let files = Files::new(&[("tools/shared.ts", SHARED), ("tools/base.ts", BASE)]);
    let e = files.analyze_err(
        "import type { Missing } from \"./shared\";\n\
         export const t = trailblaze.tool<{ a: Missing }, void>(() => {});\n",
    );
    assert_eq!((e.file.as_str(), e.line, e.col), (FILE, 2, 39), "{e}");
    assert_mentions(
        &e,
        &["`./shared` has no exported type `Missing`", "tool `t`", "inputSchema"],
    );

    let e = files.analyze_err(
        "import type { X } from \"./nowhere\";\n\
         export const t = trailblaze.tool<{ a: X }, void>(() => {});\n",
    );
    assert_mentions(&e, &["cannot find the module `./nowhere`"]);

    // A type the analyzer cannot lower in an imported module is located there.
    let files = Files::new(&[(
        "tools/types.ts",
        "export interface Input {\n  ok: string;\n  onDone: () => void;\n}\n",
    )]);
    let e = files.analyze_err(
        "import type { Input } from \"./types\";\n\
         export const t = trailblaze.tool<Input, void>(() => {});\n",
    );
    assert_eq!((e.file.as_str(), e.line, e.col), ("tools/types.ts", 3, 11), "{e}");
    assert_mentions(&e, &["tool `t`", "`() => void` is a function type", "inputSchema"]);

    let e = analyze_err("export const t = trailblaze.tool<{ when: Date; who: Person }, void>(() => {});\n");
    assert_mentions(&e, &["`Date` is a built-in object type"]);
    let e = analyze_err("export const t = trailblaze.tool<{ who: Person }, void>(() => {});\n");
    assert_mentions(&e, &["cannot resolve the type `Person`", "t.tool.yaml"]);
    assert_eq!((e.line, e.col), (1, 41), "{e}");
}

#[test]
fn a_syntax_error_in_an_imported_module_names_that_file() {
    let broken = "export interface A {\n  a: string;\n}\nexport const b = ;\n";
    let e = Files::new(&[("tools/broken.ts", broken)]).analyze_err(
        "import type { A } from \"./broken\";\n\
         export const t = trailblaze.tool<A, void>(() => {});\n",
    );
    assert_eq!((e.file.as_str(), e.line), ("tools/broken.ts", 4), "{e}");
}

#[test]
fn a_syntax_error_names_file_line_and_column() {
    let e = analyze_err("const a = 1;\n\nexport const t = trailblaze.tool<{ a: string }, void>(() => {;\n");
    assert_eq!((e.file.as_str(), e.line), (FILE, 3), "{e}");
    assert!(e.to_string().starts_with("tools/t.ts:3:"), "{e}");

    // Columns count characters, not bytes.
    let e = analyze_err("const s = \"héllo\"; const t = ;\n");
    assert!(e.to_string().starts_with("tools/t.ts:1:30: "), "{e}");
}

#[test]
fn a_selector_is_a_reference_to_the_hosts_definition() {
    let tool = one(
        r#"import { trailblaze, type TrailblazeNodeSelector } from "@trailblaze/scripting";
import type * as sdk from "@trailblaze/scripting";

export const tapTwice = trailblaze.tool<
  {
    /** What to tap. */
    target: TrailblazeNodeSelector;
    fallback?: TrailblazeNodeSelector | null;
    all: sdk.TrailblazeNodeSelector[];
  },
  void
>(async () => {});
"#,
    );
    let r = json!({"$ref": SELECTOR_REF});
    assert_eq!(
        tool.input_schema,
        Some(object(
            json!({
                "target": {"$ref": SELECTOR_REF, "description": "What to tap."},
                "fallback": {"anyOf": [r, {"type": "null"}]},
                "all": {"type": "array", "items": r},
            }),
            &["target", "all"],
        ))
    );

    // Other SDK types are not lowered (the positive control is above).
    let e = analyze_err(
        "import type { WebMatch } from \"@trailblaze/scripting\";\n\
         export const t = trailblaze.tool<{ m: WebMatch }, void>(() => {});\n",
    );
    assert_mentions(&e, &["`WebMatch` from @trailblaze/scripting cannot be lowered"]);
}

#[test]
fn the_spec_must_be_literal() {
    let tool = one("const spec = { readOnly: true, description: `Reads.` } as const;\n\
         export const t = trailblaze.tool<{}, void>(spec, () => {});");
    assert_eq!(
        (tool.read_only, tool.description.as_deref()),
        (Some(true), Some("Reads."))
    );

    let cases = [
        (
            "{ readOnly: isReadOnly }",
            "sets `readOnly` to something other than `true` or `false`",
        ),
        ("{ readonly: true }", "unknown key `readonly`"),
        ("{ ...base }", "uses a spread"),
        (
            "{ description: `a${b}` }",
            "sets `description` to something other than a string literal",
        ),
        ("makeSpec()", "is not an object literal"),
    ];
    for (spec, needle) in cases {
        let e = analyze_err(&format!(
            "export const t = trailblaze.tool<{{}}, void>({spec}, () => {{}});"
        ));
        assert_mentions(&e, &[needle, "tool `t`"]);
        assert_eq!(e.line, 1);
    }
}

#[test]
fn doc_comments_are_cleaned() {
    assert_eq!(clean_doc("* One line. "), Some("One line.".into()));
    assert_eq!(
        clean_doc("*\n   * First.\n   *\n   *     indented\n   * @returns nothing\n   * more\n   "),
        Some("First.\n\n    indented".into())
    );
    assert_eq!(clean_doc("*\n * @deprecated\n "), None);
    assert_eq!(clean_doc("**"), None);

    let tools = analyze(
        "/* not a doc */\nexport const a = trailblaze.tool(() => {});\n\
         /** Doc. */\n// eslint-disable-next-line\nexport const b = trailblaze.tool(() => {});\n",
    );
    assert_eq!(tools[0].description, None);
    assert_eq!(tools[1].description.as_deref(), Some("Doc."));
}

#[test]
fn a_declared_input_schema_skips_the_input_type() {
    let source = "export const t = trailblaze.tool<{ f: () => void }, { ok: boolean }>(() => ({ ok: true }));";
    analyze_err(source);
    let options = AnalyzeOptions {
        inputs_declared: vec!["t".into()],
    };
    let tools = analyze_module_with(FILE, source, &no_imports, &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tools[0].input_schema, None);
    assert!(tools[0].output_schema.is_some());
}
