//! Lowering each kind of TypeScript type, and refusing the ones JSON Schema cannot express.

use super::*;

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
