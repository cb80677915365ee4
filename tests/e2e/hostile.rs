//! Hostile scripts: each fails only its own call, with a clear error naming the tool, and the same
//! session then runs the next call normally.

use std::time::Duration;

use serde_json::json;
use trailblaze::Limits as EngineLimits;
use trailblaze::{Session, Settings};
use trailblaze_e2e::Fixture;

const OK_TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
export const fine = trailblaze.tool<{}, { ok: boolean }>(async () => ({ ok: true }));
"#;

fn settings() -> Settings {
    Settings {
        limits: EngineLimits {
            timeout: Duration::from_millis(500),
            memory_bytes: 64 << 20,
            stack_bytes: 1 << 20,
            ..EngineLimits::default()
        },
        ..Settings::default()
    }
}

fn hostile(name: &str, body: &str) -> (Fixture, String) {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        name,
        &format!("import {{ trailblaze }} from \"@trailblaze/scripting\";\n{body}\n"),
    );
    (f, name.to_string())
}

fn assert_next_call_works(s: &Session) {
    assert_eq!(
        s.call("fine", json!({})).expect("the next call succeeds"),
        json!({ "ok": true })
    );
}

#[test]
fn an_infinite_loop_hits_the_deadline() {
    let (f, name) = hostile(
        "spin",
        "export const spin = trailblaze.tool(async () => { while (true) {} });",
    );
    let (_p, s) = f.session(settings());
    let err = s.call(&name, json!({})).expect_err("interrupted").to_string();
    assert!(err.starts_with("spin: exceeded its time limit of 500 ms"), "{err}");
    assert_next_call_works(&s);
    // Twice: the interrupt leaves the context usable.
    assert!(s.call(&name, json!({})).is_err());
    assert_next_call_works(&s);
}

#[test]
fn a_memory_bomb_hits_the_memory_limit() {
    let (f, name) = hostile(
        "bomb",
        "export const bomb = trailblaze.tool(async () => { const a: string[] = []; while (true) a.push('x'.repeat(1 << 20) + a.length); });",
    );
    let (_p, s) = f.session(settings());
    let err = s.call(&name, json!({})).expect_err("out of memory").to_string();
    assert!(err.starts_with("bomb: exceeded its memory limit of 64 MiB"), "{err}");
    assert_next_call_works(&s);
}

#[test]
fn unbounded_recursion_hits_the_stack_limit() {
    let (f, name) = hostile(
        "deep",
        "function down(n: number): number { return down(n + 1) + 1; }\nexport const deep = trailblaze.tool(async () => ({ n: down(0) }));",
    );
    let (_p, s) = f.session(settings());
    let err = s.call(&name, json!({})).expect_err("stack overflow").to_string();
    assert!(err.starts_with("deep: exceeded its stack limit"), "{err}");
    assert_next_call_works(&s);
}

#[test]
fn a_thrown_error_names_the_tool_and_the_ts_line() {
    let (f, name) = hostile(
        "thrower",
        "interface In {\n  /** many lines of types, stripped */\n  a?: string;\n}\n\nexport const thrower = trailblaze.tool<In, {}>(async () => {\n  throw new Error(\"boom\");\n});",
    );
    let (_p, s) = f.session(settings());
    let err = s.call(&name, json!({})).expect_err("throws").to_string();
    // Line 1 is the import; the throw is on line 8 of the .ts file.
    // The position is a path a terminal opens (the fixture is outside the current directory).
    let file = f.root().join("t/tools/thrower.ts");
    assert_eq!(err, format!("thrower: Error: boom (at {}:8)", file.display()));
    assert_next_call_works(&s);
}

#[test]
fn a_syntax_error_names_the_file_and_line() {
    let (f, name) = hostile(
        "broken",
        "export const broken = trailblaze.tool(async () => {\n  let x = ;\n});",
    );
    let (_p, s) = f.session(settings());
    let err = s.call(&name, json!({})).expect_err("syntax error").to_string();
    assert!(err.starts_with("broken: t/tools/broken.ts:3:"), "{err}");
    assert_next_call_works(&s);
}

#[test]
fn a_panicking_builtin_becomes_that_calls_error() {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use trailblaze::tools::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

    /// Panics.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Boom {}
    impl BuiltinTool for Boom {
        const NAME: &'static str = "boom";
        const FLAGS: ToolFlags = ToolFlags::DEFAULT;
        fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
            panic!("kaboom")
        }
    }

    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        "callsBoom",
        r#"import { trailblaze } from "@trailblaze/scripting";
export const callsBoom = trailblaze.tool(async (_i, ctx) => { await ctx.tools.boom({}); return {}; });"#,
    );
    let project = f.project();
    let mut catalog =
        trailblaze::Catalog::for_trailmap(&project.trailmaps, "t", project.registry.clone()).expect("catalog");
    catalog.register_builtin(BuiltinEntry::of::<Boom>());
    let s = project
        .open_session(
            "t",
            trailblaze::SessionOptions {
                catalog: Some(std::sync::Arc::new(catalog)),
                settings: settings(),
                ..Default::default()
            },
        )
        .expect("session");
    assert_eq!(
        s.call("boom", json!({})).expect_err("panics").to_string(),
        "tool boom panicked"
    );
    assert_next_call_works(&s);
    let err = s
        .call("callsBoom", json!({}))
        .expect_err("panic inside a script's call")
        .to_string();
    assert!(err.contains("tool boom panicked"), "{err}");
    assert_next_call_works(&s);
}

#[test]
fn results_that_expand_without_end_are_refused_by_budget() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        "expand",
        r#"import { trailblaze } from "@trailblaze/scripting";
export const sparse = trailblaze.tool<{}, unknown>(async () => { const a: number[] = []; a[2147483646] = 1; return { a }; });
export const dag = trailblaze.tool<{}, unknown>(async () => {
  let level: unknown = { leaf: "x" };
  for (let i = 0; i < 24; i++) level = { l: level, r: level };
  return level;
});
export const wide = trailblaze.tool<{}, unknown>(async () => "y".repeat(40 * 1024 * 1024));
export const holes = trailblaze.tool<{}, unknown>(async () => { const a: number[] = []; a[3] = 7; return a; });
"#,
    );
    let (_p, s) = f.session(Settings {
        limits: EngineLimits {
            timeout: Duration::from_secs(20),
            memory_bytes: 256 << 20,
            ..EngineLimits::default()
        },
        ..Settings::default()
    });
    for (name, budget) in [("sparse", "values"), ("dag", "values"), ("wide", "MiB of text")] {
        let err = s.call(name, json!({})).expect_err("over budget").to_string();
        assert!(
            err.contains("its result: more than") && err.contains(budget),
            "{name}: {err}"
        );
        assert_next_call_works(&s);
    }
    // Control: a small sparse array converts, holes as null.
    assert_eq!(s.call("holes", json!({})).expect("small"), json!([null, null, null, 7]));
}

#[test]
fn discovery_reads_regular_files_only() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    let zero = f.map_dir().join("tools/zero.ts");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let project = f.project();
    let catalog = project.catalog("t").expect("the trailmap still loads");
    assert!(
        catalog
            .problems
            .iter()
            .any(|p| p.contains("zero.ts") && p.contains("not a regular file")),
        "{:?}",
        catalog.problems
    );
    let (_p, s) = f.session(settings());
    assert_next_call_works(&s);
}

#[test]
fn a_long_call_chain_or_concatenation_is_refused_with_its_position_not_a_crash() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    let chain = "()".repeat(120_000);
    f.tool(
        "chain",
        &format!("import {{ trailblaze }} from \"@trailblaze/scripting\";\nexport const chain = trailblaze.tool(async () => f{chain});\n"),
    );
    let concat = "\"ab\" + ".repeat(10_000);
    f.tool(
        "concat",
        &format!("import {{ trailblaze }} from \"@trailblaze/scripting\";\nexport const concat = trailblaze.tool(async () => ({{ s: {concat}\"ab\" }}));\n"),
    );
    let (_p, s) = f.session(settings());
    for name in ["chain", "concat"] {
        let err = s.call(name, json!({})).expect_err("refused").to_string();
        assert!(
            err.contains(&format!("t/tools/{name}.ts:2:")) && err.contains("nested more than"),
            "{name}: {err}"
        );
    }
    assert_next_call_works(&s);
}

#[test]
fn a_huge_result_is_returned_but_not_kept_whole_in_the_log() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        "huge",
        "import { trailblaze } from \"@trailblaze/scripting\";\nexport const huge = trailblaze.tool(async () => ({ s: \"z\".repeat(5 * 1024 * 1024) }));\n",
    );
    let (_p, s) = f.session(settings());
    let v = s.call("huge", json!({})).expect("returned");
    assert_eq!(
        v["s"].as_str().map(str::len),
        Some(5 * 1024 * 1024),
        "the caller gets it whole"
    );
    let step = s.steps().into_iter().find(|r| r.tool == "huge").expect("the step");
    drop(s);
    let log = f.all_output();
    assert!(
        log.len() < 1024 * 1024,
        "the log holds a note, not 5 MiB: {} bytes",
        log.len()
    );
    assert!(log.contains("notLogged"), "control: the note is there");
    assert!(step.error.is_none());
}

const LEFTOVERS: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Starts a chain of tool calls it does not await, and returns at once. */
export const orphan = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  (async () => { for (;;) await ctx.tools.pressKey({ keyCode: "TAB" }); })();
  return {};
});
/** Leaves a microtask loop behind. */
export const spinner = trailblaze.tool<{}, {}>(async () => {
  const spin = (): Promise<void> => Promise.resolve().then(spin);
  spin();
  return {};
});
/** Loops on tool calls, catching every failure. */
export const stubborn = trailblaze.tool<{}, { refused: number }>(async (_i, ctx) => {
  let refused = 0;
  for (let i = 0; i < 1000000; i++) {
    try { await ctx.tools.pressKey({ keyCode: "TAB" }); } catch { refused++; if (refused > 50) break; }
  }
  return { refused };
});
/** Replaces Promise.resolve for everyone after it. */
export const poison = trailblaze.tool<{}, {}>(async () => {
  (Promise as any).resolve = () => ({ then: (ok: (v: unknown) => void) => ok("POISONED") });
  return {};
});
"#;

#[test]
fn nothing_of_a_call_runs_after_it_returned_and_no_call_outlives_the_deadline() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool("leftovers", LEFTOVERS);
    let (_p, s) = f.session(settings());
    let before = s.steps().len();
    s.call("orphan", json!({})).expect("returns at once");
    let after_orphan = s.steps().len();
    // The orphaned chain got as far as the call's own queue went, then nothing more.
    assert_next_call_works(&s);
    let later = s.steps().len();
    assert!(
        after_orphan - before < 100,
        "the chain stopped with its call: {} steps",
        after_orphan - before
    );
    assert_eq!(later, after_orphan + 1, "no step of the chain ran during the next call");
    s.call("spinner", json!({}))
        .expect("a leftover microtask loop does not hold the call");
    assert_next_call_works(&s);
    // A loop of tool calls that catches its failures: past the deadline every call is refused, and
    // the script's own loop is then interrupted.
    let err = s.call("stubborn", json!({}));
    match err {
        Ok(v) => assert!(v["refused"].as_u64().unwrap_or(0) > 50, "{v}"),
        Err(e) => assert!(e.to_string().contains("exceeded its time limit"), "{e}"),
    }
    assert_next_call_works(&s);
    // The realm is frozen: poisoning a shared intrinsic fails in the poisoning tool only.
    let err = s.call("poison", json!({})).expect_err("refused").to_string();
    assert!(err.starts_with("poison: TypeError: "), "{err}");
    assert_next_call_works(&s);
}

#[test]
fn a_long_session_keeps_recent_steps_in_memory_and_all_in_the_log() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        "many",
        "import { trailblaze } from \"@trailblaze/scripting\";\nexport const many = trailblaze.tool<{ n: number }, {}>(async (input, ctx) => { for (let i = 0; i < input.n; i++) await ctx.tools.pressKey({ keyCode: \"TAB\" }); return {}; });\n",
    );
    let (_p, s) = f.session(Settings {
        limits: EngineLimits {
            timeout: Duration::from_secs(120),
            ..EngineLimits::default()
        },
        ..Settings::default()
    });
    s.call("many", json!({ "n": 12_000 })).expect("runs");
    let steps = s.steps();
    assert!(steps.len() <= 10_000, "memory keeps the recent steps: {}", steps.len());
    assert_eq!(
        steps.last().map(|r| r.seq),
        Some(12_001),
        "the most recent are the ones kept"
    );
    drop(s);
    let logged = f.all_output().matches("\"step_finished\"").count();
    assert_eq!(logged, 12_001, "the log keeps every step");
}

#[test]
fn the_memory_limit_is_per_call_not_per_session() {
    let f = Fixture::new("t");
    f.tool("fine", OK_TOOL);
    f.tool(
        "memory",
        r#"import { trailblaze } from "@trailblaze/scripting";
function take(mib: number): string[] { const a: string[] = []; for (let i = 0; i < mib; i++) a.push("x".repeat(1 << 20) + i); return a; }
let kept: string[] = [];
/** Keeps 40 MiB in module scope. */
export const hoard = trailblaze.tool(async () => { kept = take(40); return { n: kept.length }; });
/** Uses `mib` MiB for the length of the call. */
export const use = trailblaze.tool<{ mib: number }, { n: number }>(async (input) => ({ n: take(input.mib).length }));
"#,
    );
    let (_p, s) = f.session(settings());
    s.call("hoard", json!({})).expect("40 MiB fit in a call's 64");
    // The next call gets its own 64 MiB on top of what the first one left behind.
    assert_eq!(
        s.call("use", json!({ "mib": 40 })).expect("its own budget"),
        json!({ "n": 40 })
    );
    // Control: one call past its 64 MiB still fails, and the session goes on.
    let err = s
        .call("use", json!({ "mib": 80 }))
        .expect_err("over a call's budget")
        .to_string();
    assert!(err.starts_with("use: exceeded its memory limit of 64 MiB"), "{err}");
    assert_next_call_works(&s);
}

/// A `"__proto__"` key (from a trail, an agent, a screen's text) is a member of the tool's input,
/// as `JSON.parse` reads it, never the input object's prototype.
#[test]
fn a_proto_key_in_the_arguments_is_a_member_not_the_prototype() {
    let (f, name) = hostile(
        "protoKey",
        "export const protoKey = trailblaze.tool<Record<string, unknown>, unknown>(async (input) => [\
           Object.getPrototypeOf(input) === Object.prototype, Object.hasOwn(input, '__proto__'), \
           (input as { polluted?: boolean }).polluted === undefined, JSON.stringify(input)]);",
    );
    let (_p, s) = f.session(settings());
    let got = s
        .call(&name, json!({ "__proto__": { "polluted": true }, "plain": 1 }))
        .expect("the call succeeds");
    assert_eq!(
        got,
        json!([true, true, true, r#"{"__proto__":{"polluted":true},"plain":1}"#])
    );
    // Control: the same object built by assignment in the script does change its prototype.
    let (f, name) = hostile(
        "assigned",
        "export const assigned = trailblaze.tool<{}, unknown>(async () => { const o: Record<string, unknown> = {}; \
           o['__proto__'] = { polluted: true }; return (o as { polluted?: boolean }).polluted === true; });",
    );
    let (_p, s) = f.session(settings());
    assert_eq!(s.call(&name, json!({})).expect("the call succeeds"), json!(true));
}
