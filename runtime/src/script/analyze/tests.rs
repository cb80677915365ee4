use std::cell::RefCell;

use serde_json::{Value, json};

use super::*;

const FILE: &str = "tools/t.ts";

fn no_imports(_: &str, _: &str) -> Option<(String, String)> {
    None
}

fn analyze(source: &str) -> Vec<AnalyzedTool> {
    analyze_module(FILE, source, &no_imports).unwrap_or_else(|e| panic!("{e}\n{source}"))
}

fn analyze_err(source: &str) -> AnalyzeError {
    match analyze_module(FILE, source, &no_imports) {
        Ok(tools) => panic!("expected an error, got {tools:#?}"),
        Err(e) => e,
    }
}

fn one(source: &str) -> AnalyzedTool {
    let mut tools = analyze(source);
    assert_eq!(tools.len(), 1, "{tools:#?}");
    tools.remove(0)
}

/// A loader over in-memory files: `./x` and `./x.ts` from `dir/importer.ts` read `dir/x.ts`.
/// It records each request, and (being on the caller's thread) needs no `Send`.
struct Files {
    files: Vec<(&'static str, &'static str)>,
    requests: RefCell<Vec<String>>,
}

impl Files {
    fn new(files: &[(&'static str, &'static str)]) -> Self {
        Self {
            files: files.to_vec(),
            requests: RefCell::new(Vec::new()),
        }
    }

    fn load(&self, specifier: &str, importer: &str) -> Option<(String, String)> {
        self.requests.borrow_mut().push(specifier.to_owned());
        let dir = importer.rsplit_once('/').map_or("", |(dir, _)| dir);
        let path = format!("{dir}/{}", specifier.strip_prefix("./")?);
        let path = if path.ends_with(".ts") {
            path
        } else {
            format!("{path}.ts")
        };
        let (name, source) = self.files.iter().find(|(name, _)| *name == path)?;
        Some(((*name).to_owned(), (*source).to_owned()))
    }

    fn analyze(&self, source: &str) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
        analyze_module(FILE, source, &|s, i| self.load(s, i))
    }
}

/// The schema of property `x` of a tool whose input is `{ x: <ty> }`, after `decls`.
fn field_with(decls: &str, ty: &str) -> (Value, bool) {
    let source = format!("{decls}\nexport const t = trailblaze.tool<{{ x: {ty} }}, void>(async () => {{}});\n");
    let input = one(&source).input_schema.unwrap_or_default();
    let required = input["required"].as_array().is_some_and(|r| r.contains(&json!("x")));
    (input["properties"]["x"].clone(), required)
}

fn field(ty: &str) -> Value {
    field_with("", ty).0
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The 1-based line of the first line holding `needle`.
fn line_of(source: &str, needle: &str) -> u32 {
    let index = source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?}"));
    u32::try_from(index + 1).unwrap_or(0)
}

fn assert_mentions(e: &AnalyzeError, needles: &[&str]) {
    let text = e.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in: {text}");
    }
}

const SIGN_IN: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Where to sign in. */
type Environment = "staging" | "production";

interface SignInInput {
  /** The account's email address. */
  email: string;
  /**
   * Leave out to use the stored password.
   */
  password?: string;
  environment: Environment;
  /** Retries before giving up. */
  retries: number | undefined;
  remember: boolean;
  tags: string[];
  profile: {
    /** Shown on the inbox. */
    displayName: string;
    locale?: "en" | "fr";
  };
  headers: Record<string, string>;
}

interface SignInResult {
  signedIn: boolean;
  screens: Array<{ name: string; at: number }>;
}

/**
 * Signs in with an email account.
 *
 * Waits for the inbox.
 * @param input the account
 */
export const signIn = trailblaze.tool<SignInInput, SignInResult>(
  { readOnly: true, surfaceToLlm: false },
  async (input, ctx) => {
    await ctx.tools.tap({ ref: "y1" });
    return { signedIn: true, screens: [] };
  },
);
"#;

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

const SHARED: &str = r#"
export * from "./base";
import type { Base } from "./base";

/** An account to sign in with. */
export interface Account extends Base {
  email: string;
}

export type Region = "eu" | "us";

export type Page<T> = { items: T[]; next?: string };
"#;

const BASE: &str = r#"
import type { Account } from "./shared";
export interface Base {
  /** Stable id. */
  id: string;
}
// A cycle back to shared.ts must not loop.
export type Accounts = Account[];
"#;

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
    let requests = files.requests.borrow().clone();
    assert_eq!(
        requests,
        ["./shared", "./base", "./shared.ts", "./shared"],
        "{requests:?}"
    );
}

#[test]
fn an_unresolvable_import_or_name_is_an_error_at_the_type() {
    let files = Files::new(&[("tools/shared.ts", SHARED), ("tools/base.ts", BASE)]);
    let e = files
        .analyze(
            "import type { Missing } from \"./shared\";\n\
             export const t = trailblaze.tool<{ a: Missing }, void>(() => {});\n",
        )
        .err()
        .unwrap_or_else(|| panic!("expected an error"));
    assert_eq!((e.file.as_str(), e.line, e.col), (FILE, 2, 39), "{e}");
    assert_mentions(
        &e,
        &["`./shared` has no exported type `Missing`", "tool `t`", "inputSchema"],
    );

    let e = files
        .analyze(
            "import type { X } from \"./nowhere\";\n\
             export const t = trailblaze.tool<{ a: X }, void>(() => {});\n",
        )
        .err()
        .unwrap_or_else(|| panic!("expected an error"));
    assert_mentions(&e, &["cannot find the module `./nowhere`"]);

    // A type the analyzer cannot lower in an imported module is located there.
    let files = Files::new(&[(
        "tools/types.ts",
        "export interface Input {\n  ok: string;\n  onDone: () => void;\n}\n",
    )]);
    let e = files
        .analyze(
            "import type { Input } from \"./types\";\n\
             export const t = trailblaze.tool<Input, void>(() => {});\n",
        )
        .err()
        .unwrap_or_else(|| panic!("expected an error"));
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
    let files = Files::new(&[(
        "tools/broken.ts",
        "export interface A {\n  a: string;\n}\nexport const b = ;\n",
    )]);
    let e = files
        .analyze(
            "import type { A } from \"./broken\";\n\
             export const t = trailblaze.tool<A, void>(() => {});\n",
        )
        .err()
        .unwrap_or_else(|| panic!("expected an error"));
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
fn primitives_literals_and_unions() {
    let cases = [
        ("string", json!({"type": "string"})),
        ("number", json!({"type": "number"})),
        ("boolean", json!({"type": "boolean"})),
        ("\"on\"", json!({"type": "string", "enum": ["on"]})),
        ("1 | 2 | -3", json!({"type": "number", "enum": [1, 2, -3]})),
        ("0.5", json!({"type": "number", "enum": [0.5]})),
        ("true | false", json!({"type": "boolean"})),
        ("true", json!({"type": "boolean", "enum": [true]})),
        ("string | number", json!({"type": ["string", "number"]})),
        ("\"a\" | string", json!({"type": "string"})),
        ("\"a\" | 1", json!({"type": ["string", "number"], "enum": ["a", 1]})),
        ("`plain`", json!({"type": "string", "enum": ["plain"]})),
        (
            "\"auto\" | number",
            json!({"anyOf": [{"type": "string", "enum": ["auto"]}, {"type": "number"}]}),
        ),
        ("unknown", json!({})),
        ("any", json!({})),
        ("string | unknown", json!({})),
        ("object", json!({"type": "object"})),
        ("null", json!({"type": "null"})),
        ("(string)", json!({"type": "string"})),
        ("\"a\" | \"b\" | (string & {})", json!({"type": "string"})),
    ];
    for (ty, expected) in cases {
        assert_eq!(field(ty), expected, "{ty}");
    }
}

#[test]
fn null_and_undefined() {
    let cases = [
        ("string | null", json!({"type": ["string", "null"]}), true),
        ("null | string", json!({"type": ["string", "null"]}), true),
        (
            "\"a\" | \"b\" | null",
            json!({"type": ["string", "null"], "enum": ["a", "b", null]}),
            true,
        ),
        (
            "string[] | null",
            json!({"type": ["array", "null"], "items": {"type": "string"}}),
            true,
        ),
        ("string | undefined", json!({"type": "string"}), false),
        ("string | null | undefined", json!({"type": ["string", "null"]}), false),
        ("unknown | null", json!({}), true),
        (
            "(string | undefined)[]",
            json!({"type": "array", "items": {"type": ["string", "null"]}}),
            true,
        ),
        ("NonNullable<string | null>", json!({"type": "string"}), true),
    ];
    for (ty, expected, required) in cases {
        assert_eq!(field_with("", ty), (expected, required), "{ty}");
    }
    let (nullable_object, _) = field_with("", "{ a: string } | null");
    assert_eq!(nullable_object["type"], json!(["object", "null"]));
    // `x?:` is optional; the positive control is `x:`.
    let tool = one("export const t = trailblaze.tool<{ x?: string; y: string }, void>(() => {});");
    assert_eq!(tool.input_schema.unwrap_or_default()["required"], json!(["y"]));
    // An alias that includes undefined makes the property optional too.
    assert_eq!(
        field_with("type Maybe = string | undefined;", "Maybe"),
        (json!({"type": "string"}), false)
    );
}

#[test]
fn arrays_tuples_records_and_nested_objects() {
    let items = json!({"type": "array", "items": {"type": "number"}});
    for ty in [
        "number[]",
        "Array<number>",
        "ReadonlyArray<number>",
        "readonly number[]",
    ] {
        assert_eq!(field(ty), items, "{ty}");
    }
    assert_eq!(
        field("[string, number]"),
        json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "number"}],
            "minItems": 2,
            "maxItems": 2,
        })
    );
    let by_string = json!({"type": "object", "additionalProperties": {"type": "number"}});
    assert_eq!(field("Record<string, number>"), by_string);
    assert_eq!(field("{ [key: string]: number }"), by_string);
    assert_eq!(
        field("Record<\"min\" | \"max\", number>"),
        object(
            json!({"min": {"type": "number"}, "max": {"type": "number"}}),
            &["min", "max"]
        )
    );
    assert_eq!(
        field("{ a: { b: { c: boolean[][] } } }"),
        object(
            json!({"a": object(
                json!({"b": object(
                    json!({"c": {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}}}),
                    &["c"],
                )}),
                &["b"],
            )}),
            &["a"],
        )
    );
    assert_eq!(field("{}"), object(json!({}), &[]));
    assert_eq!(field("Record<string, never>"), object(json!({}), &[]));
    assert_eq!(field("{ [k: string]: never }"), object(json!({}), &[]));
    assert_eq!(
        field("{ \"content-type\": string; 2: string }"),
        object(
            json!({"content-type": {"type": "string"}, "2": {"type": "string"}}),
            &["content-type", "2"]
        )
    );
}

#[test]
fn interfaces_extend_and_intersections_merge() {
    let decls = r#"
interface Base { /** The id. */ id: string; note?: string }
interface Named extends Base { name: string; note: string }
interface Named { late: boolean }
type Both = Named & { extra: boolean };
type Generic<T, U = string> = { value: T; other: U };
"#;
    let id = json!({"type": "string", "description": "The id."});
    let s = json!({"type": "string"});
    assert_eq!(
        field_with(decls, "Named").0,
        object(
            json!({"id": id, "note": s, "name": s, "late": {"type": "boolean"}}),
            &["id", "note", "name", "late"]
        ),
        "own `note` overrides the inherited optional one; merged declarations add `late`"
    );
    assert_eq!(
        field_with(decls, "Both").0,
        object(
            json!({"id": id, "note": s, "name": s, "late": {"type": "boolean"}, "extra": {"type": "boolean"}}),
            &["id", "note", "name", "late", "extra"]
        )
    );
    assert_eq!(
        field_with(decls, "Partial<Base>").0,
        object(json!({"id": id, "note": s}), &[])
    );
    assert_eq!(
        field_with(decls, "Required<Base>").0,
        object(json!({"id": id, "note": s}), &["id", "note"])
    );
    assert_eq!(
        field_with(decls, "Pick<Named, \"id\" | \"name\">").0,
        object(json!({"id": id, "name": s}), &["id", "name"])
    );
    assert_eq!(
        field_with(decls, "Omit<Base, \"note\">").0,
        object(json!({"id": id}), &["id"])
    );
    assert_eq!(field_with(decls, "Readonly<Base>").0, field_with(decls, "Base").0);
    assert_eq!(
        field_with(decls, "Generic<number>").0,
        object(json!({"value": {"type": "number"}, "other": s}), &["value", "other"])
    );

    // Two different types for one property cannot be merged; the same type can.
    assert_eq!(field("{ a: string } & { a: string }"), object(json!({"a": s}), &["a"]));
    let e = analyze_err("export const t = trailblaze.tool<{ a: string } & { a: number }, void>(() => {});");
    assert_mentions(&e, &["cannot be merged", "`a` has two different types", "inputSchema"]);
    let e = analyze_err("export const t = trailblaze.tool<{ a: string } & string[], void>(() => {});");
    assert_mentions(&e, &["`string[]` is not an object type"]);
}

#[test]
fn enums_lower_to_their_values() {
    let decls = r#"
enum Mode { Fast = "fast", Slow = "slow" }
const enum Level { Low, High = 5, Max }
"#;
    assert_eq!(
        field_with(decls, "Mode").0,
        json!({"type": "string", "enum": ["fast", "slow"]})
    );
    assert_eq!(
        field_with(decls, "Level").0,
        json!({"type": "number", "enum": [0, 5, 6]})
    );
    assert_eq!(
        field_with(decls, "Mode.Slow").0,
        json!({"type": "string", "enum": ["slow"]})
    );
    let e = analyze_err("enum E { A = \"a\".length }\nexport const t = trailblaze.tool<{ e: E }, void>(() => {});");
    assert_mentions(&e, &["`E.A` has a computed value"]);
    assert_eq!(e.line, 1, "{e}");
}

#[test]
fn unsupported_types_name_the_type_and_point_at_input_schema() {
    // Positive control: the same shape with an argument lowers.
    let decls = "interface Wrapper<T> {\n  value: T;\n}\n";
    assert_eq!(
        field_with(decls, "Wrapper<string>").0,
        object(json!({"value": {"type": "string"}}), &["value"])
    );
    let e = analyze_err(&format!(
        "{decls}export const wrapped = trailblaze.tool<Wrapper, void>(() => {{}});\n"
    ));
    assert_eq!((e.file.as_str(), e.line, e.col), (FILE, 2, 10), "located at `T`: {e}");
    assert_mentions(
        &e,
        &[
            "tool `wrapped`",
            "`T` is a generic type parameter",
            "`wrapped.tool.yaml`",
            "`inputSchema`",
        ],
    );

    let cases = [
        ("{ onDone: () => void }", "`() => void` is a function type"),
        ("{ f(): void }", "`f(): void` is a method"),
        ("{ k: keyof Foo }", "uses `keyof`"),
        ("{ k: typeof x }", "uses `typeof`"),
        ("{ k: Foo[\"a\"] }", "indexed access"),
        ("{ k: string extends T ? 1 : 2 }", "conditional type"),
        ("{ k: { [P in \"a\"]: string } }", "mapped type"),
        ("{ k: `id-${string}` }", "template literal type"),
        ("{ k: bigint }", "`bigint` has no JSON representation"),
        ("{ k: Promise<string> }", "only a tool's whole output may be a Promise"),
        ("{ k: import(\"./x\").Y }", "import the type by name"),
        ("{ [k: number]: string }", "keys are not `string`"),
        ("string", "`string` is not an object type"),
        ("{ a: string } | { b: string }", "is not an object type"),
        ("{ a: string } | undefined", "is not an object type"),
    ];
    for (ty, needle) in cases {
        let e = analyze_err(&format!(
            "interface Foo {{ a: string }}\nconst x = 1;\n\
             export const t = trailblaze.tool<{ty}, void>(() => {{}});\n"
        ));
        assert_mentions(&e, &[needle, "tool `t`", "`t.tool.yaml`", "`inputSchema`"]);
        assert_eq!(e.line, 3, "{ty}: {e}");
    }
    let e = analyze_err("class Session {}\nexport const t = trailblaze.tool<{ s: Session }, void>(() => {});");
    assert_mentions(&e, &["`Session` is a class"]);
}

#[test]
fn outputs_may_be_void_promised_unknown_or_unions() {
    let output = |ty: &str| {
        one(&format!(
            "export const t = trailblaze.tool<{{}}, {ty}>(async () => {{}});"
        ))
        .output_schema
        .unwrap_or_default()
    };
    assert_eq!(output("void"), json!({"type": "null"}));
    assert_eq!(output("undefined"), json!({"type": "null"}));
    assert_eq!(output("Promise<void>"), json!({"type": "null"}));
    assert_eq!(output("Promise<string>"), json!({"type": "string"}));
    assert_eq!(output("unknown"), json!({}));
    assert_eq!(output("string | undefined"), json!({"type": ["string", "null"]}));
    assert_eq!(
        output("{ ok: true } | { ok: false; error: string }"),
        json!({"anyOf": [
            object(json!({"ok": {"type": "boolean", "enum": [true]}}), &["ok"]),
            object(json!({"ok": {"type": "boolean", "enum": [false]}, "error": {"type": "string"}}), &["ok", "error"]),
        ]})
    );
    // An unlowerable output says so, without pointing at `inputSchema`.
    let e = analyze_err("export const t = trailblaze.tool<{}, Date>(async () => new Date());");
    assert_mentions(&e, &["cannot lower the output type", "`Date`", "or `unknown`"]);
    assert!(!e.message.contains("inputSchema"), "{e}");
}

#[test]
fn recursive_and_runaway_types_are_errors() {
    let e = analyze_err(
        "interface Tree { label: string; children: Tree[] }\n\
         export const t = trailblaze.tool<{ tree: Tree }, void>(() => {});",
    );
    assert_mentions(&e, &["`Tree` is recursive", "inputSchema"]);
    assert_eq!((e.line, e.col), (1, 43), "{e}");

    // Deep but finite: a chain of 100 aliases.
    let mut chain = String::new();
    for i in 0..100 {
        chain.push_str(&format!("type T{i} = {{ next: T{} }};\n", i + 1));
    }
    chain.push_str("type T100 = string;\n");
    let e = analyze_err(&format!(
        "{chain}export const t = trailblaze.tool<T0, void>(() => {{}});"
    ));
    assert_mentions(&e, &["nests deeper than 64 levels"]);
    // The positive control: 20 levels are fine.
    let shallow = chain.replace("type T20 = { next: T21 };", "type T20 = string;");
    one(&format!(
        "{shallow}export const t = trailblaze.tool<T0, void>(() => {{}});"
    ));

    // Exponential inlining: each level doubles.
    let mut doubling = String::from("type D0 = { a: string };\n");
    for i in 1..30 {
        doubling.push_str(&format!("type D{i} = {{ a: D{0}; b: D{0} }};\n", i - 1));
    }
    let e = analyze_err(&format!(
        "{doubling}export const t = trailblaze.tool<D29, void>(() => {{}});"
    ));
    assert_mentions(&e, &["expands to more than"]);
}

#[test]
fn pathological_sources_are_refused_before_swc_recurses() {
    let deep = format!("export const x = {}1{};\n", "(".repeat(20_000), ")".repeat(20_000));
    let e = analyze_err(&deep);
    assert_mentions(&e, &["nested deeper than 500"]);
    assert_eq!(e.line, 1);
    let generic = format!("type X = {}string{};\n", "Array<".repeat(30_000), ">".repeat(30_000));
    assert_mentions(&analyze_err(&generic), &["nested deeper than 500"]);
    let big = format!("export const x = 1;\n{}", "// padding\n".repeat(30_000));
    assert_mentions(&analyze_err(&big), &["more than the analyzer's limit"]);

    // The shapes that cost swc the most stack per byte, as large as the cap allows, parse
    // without overflowing the worker's stack.
    let budget = MAX_SOURCE_BYTES - 100;
    let arrows = format!("export const f = {}1;\n", "a=>".repeat(budget / 3));
    assert!(analyze(&arrows).is_empty());
    let nots = format!("export const n = {}true;\n", "!".repeat(budget));
    assert!(analyze(&nots).is_empty());

    // The fallback worker (for devices that cannot reserve the big stack) has a cap to match.
    let small = STACKS[1] / STACK_PER_BYTE;
    let on_small = |source: &str| {
        on_worker(STACKS[1], FILE, source, &no_imports, &AnalyzeOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    };
    let arrows = format!("export const f = {}1;\n", "a=>".repeat((small - 100) / 3));
    assert_eq!(on_small(&arrows).map(|t| t.len()).ok(), Some(0));
    let too_big = format!("{arrows}{}", " ".repeat(small));
    assert!(on_small(&too_big).is_err_and(|e| e.message.contains("limit")));

    // Brackets in strings and comments, and comparisons, do not count.
    let harmless = format!(
        "// {}\nconst s = \"{}\";\n{}export const t = trailblaze.tool<{{ a: string }}, void>(() => {{}});\n",
        "(".repeat(2000),
        "[".repeat(2000),
        "for (let i = 0; i<3; i++) {}\nif (1<2) {}\n".repeat(600),
    );
    assert_eq!(analyze(&harmless).len(), 1);
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

#[test]
fn no_prefix_of_a_tool_makes_the_analyzer_panic() {
    // Every prefix of a real tool: each either analyzes or is an error, never a panic.
    let files = Files::new(&[("tools/shared.ts", SHARED), ("tools/base.ts", BASE)]);
    let source = format!("import type {{ Account }} from \"./shared\";\n{SIGN_IN}");
    let mut errors = 0;
    for end in (0..=source.len()).step_by(7).filter(|&i| source.is_char_boundary(i)) {
        match files.analyze(&source[..end]) {
            Ok(_) => {}
            Err(e) => {
                assert!(!e.message.contains("panicked"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0);
}
