use std::{fs, path::PathBuf, sync::Arc};

use swc_core::{
    common::{FileName, SourceMap, sync::Lrc},
    ecma::{
        ast::EsVersion,
        parser::{Syntax, parse_file_as_module},
    },
};

use super::{
    disk::{cache_dir_from, cache_key, hex},
    *,
};

fn ok(source: &str) -> Transpiled {
    match transpile_uncached("tools/test.ts", source) {
        Ok(t) => t,
        Err(e) => panic!("transpile failed: {e}"),
    }
}

fn err(source: &str) -> TranspileError {
    match transpile_uncached("tools/bad.ts", source) {
        Ok(t) => panic!("expected an error, got:\n{}", t.code),
        Err(e) => e,
    }
}

/// The 1-based output line holding `needle`.
fn out_line_of(t: &Transpiled, needle: &str) -> u32 {
    let index = t
        .code
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in output:\n{}", t.code));
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

const TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
import type { ToolContext } from "@trailblaze/scripting";
import { type Selector, helper } from "./helpers";

/** Input of the tool. */
interface SignInInput {
  email: string;
  password?: string;
}
type Pair<T> = [T, T];

function first<T>(xs: readonly T[]): T | undefined {
  return xs[0];
}

enum Mode { Fast = 1, Slow }

class Counter<T> {
  private count: number = 0;
  constructor(public readonly label: string) {}
  bump(by: number = 1): number { return this.count += by; }
}

export const signIn = trailblaze.tool<SignInInput, { ok: boolean }>(
  { description: "Sign in" },
  async (input: SignInInput, ctx: ToolContext) => {
const sel = { textRegex: input.email } as Selector;
const cfg = { retries: 2 } satisfies Record<string, number>;
const el = ctx.find(sel)!;
const pair: Pair<number> = [1, 2];
await ctx.tools.tap({ ref: el?.ref ?? first<string>(["x"]) });
helper(cfg, pair, Mode.Slow, new Counter<string>("c").bump());
return { ok: true };
  },
);
"#;

#[test]
fn strips_types_and_keeps_the_module() {
    let t = ok(TOOL);
    let code = &t.code;
    for gone in [
        "interface",
        "SignInInput",
        "type Pair",
        "ToolContext",
        "Selector",
        " as ",
        "satisfies",
        "<T>",
        "<string>",
        ": number",
        "private ",
        "readonly",
        ")!",
    ] {
        assert!(!code.contains(gone), "{gone:?} survived:\n{code}");
    }
    for kept in [
        r#"import { trailblaze } from "@trailblaze/scripting";"#,
        r#"import { helper } from "./helpers";"#,
        "export const signIn = trailblaze.tool(",
        "async (input, ctx)=>",
        "await ctx.tools.tap(",
        "el?.ref ?? first([",
        "class Counter {",
        "count = 0;",
        "this.label = label;",
        "Mode[Mode[\"Fast\"] = 1]",
    ] {
        assert!(code.contains(kept), "{kept:?} missing:\n{code}");
    }
    // The type-only import disappears entirely rather than becoming a side-effect import.
    assert_eq!(code.matches("@trailblaze/scripting").count(), 1, "{code}");
    assert_eq!(t.line_map.len(), code.lines().count());
}

#[test]
fn output_is_javascript_that_reparses_as_a_module() {
    let t = ok(TOOL);
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(Lrc::new(FileName::Anon), t.code.clone());
    let mut recovered = Vec::new();
    let parsed = parse_file_as_module(
        &fm,
        Syntax::Es(Default::default()),
        EsVersion::latest(),
        None,
        &mut recovered,
    );
    assert!(parsed.is_ok() && recovered.is_empty(), "not valid JS:\n{}", t.code);
}

#[test]
fn a_syntax_error_names_file_line_and_column() {
    let e = err("const a = 1;\n\nfunction f(x: number {\n  return x;\n}\n");
    let TranspileError::Syntax { file, line, col, .. } = &e else {
        panic!("expected a syntax error, got {e:?}");
    };
    assert_eq!((file.as_str(), *line, *col), ("tools/bad.ts", 3, 22), "{e}");
    assert!(e.to_string().starts_with("tools/bad.ts:3:22: "), "{e}");
}

#[test]
fn a_syntax_error_after_multibyte_text_counts_characters() {
    // `;` is the 26th character but the 27th byte.
    let e = err("const s = \"héllo\"; let = ;\n");
    assert!(e.to_string().starts_with("tools/bad.ts:1:26: "), "{e}");
}

#[test]
fn unsupported_syntax_is_an_error_not_a_panic() {
    let e = err("function dec(x: any) { return x; }\n@dec\nexport class A {}\n");
    assert_eq!(
        e.to_string(),
        "tools/bad.ts:2:1: decorators are not supported (QuickJS cannot run them)"
    );

    let e = err("import fs = require(\"fs\");\nexport const x = fs;\n");
    let TranspileError::Unsupported { line, .. } = &e else {
        panic!("expected unsupported, got {e:?}");
    };
    assert_eq!(*line, 1, "{e}");
    assert!(e.to_string().contains("Import assignment"), "{e}");

    let e = err("const x = 1;\nexport = x;\n");
    assert!(matches!(e, TranspileError::Unsupported { line: 2, .. }), "{e}");
}

#[test]
fn namespaces_and_enums_become_javascript() {
    let t = ok("export namespace Keys {\n  export const enter = 66;\n}\n\
                export const enum Dir { Up = \"up\", Down = \"down\" }\n\
                export const d = Dir.Up;\n");
    assert!(t.code.contains("(function(Keys)"), "{}", t.code);
    assert!(t.code.contains("\"up\""), "{}", t.code);
}

#[test]
fn absurd_nesting_is_refused_before_swc_recurses() {
    // Each of these overflowed a 64 MiB stack in swc (or would, at a larger count).
    let n = 50_000;
    let shapes = [
        format!("export const x = {}1{};\n", "(".repeat(n), ")".repeat(n)),
        format!("export const x = {}true;\n", "!".repeat(n)),
        format!("export const x = {}1;\n", "- ".repeat(n)),
        format!("export const x = {}c;\n", "a ? b : ".repeat(n)),
        format!("export const x = {}c;\n", "a =>\n".repeat(n)),
        format!("export const x = {}X;\n", "new ".repeat(n)),
        format!("let a;\nexport const x = {}1;\n", "a = ".repeat(n)),
        format!("export const x = {}{};\n", "() => {".repeat(n), "}".repeat(n)),
        format!("export const x = {}1{};\n", "`${".repeat(n), "}`".repeat(n)),
        format!("export const x: {}number{} = [];\n", "Array<".repeat(n), ">".repeat(n)),
        format!(
            "export function f(a) {{\n  if (a) return 0;\n{}}}\n",
            "  else if (a) return 1; /* */\n".repeat(n)
        ),
        format!(
            "export function f(a) {{\n  if (a) return 0\n{}}}\n",
            "  else if (a) return 1\n".repeat(n)
        ),
    ];
    for src in &shapes {
        let e = err(src);
        assert!(
            matches!(e, TranspileError::Unsupported { .. }) && e.to_string().contains("nested more than 1000 levels"),
            "{e} for {}",
            &src[..60]
        );
    }
    let e = err(&shapes[0]);
    // `export const x = ` is 17 characters and its `=` one level: the bracket that goes
    // past the limit is the 1000th.
    let col = 17 + u32::try_from(MAX_NESTING).unwrap_or(0);
    assert!(
        matches!(e, TranspileError::Unsupported { line: 1, col: c, .. } if c == col),
        "{e}"
    );
}

#[test]
fn long_but_shallow_code_is_not_refused() {
    let n = 3 * MAX_NESTING;
    // Brackets and operators inside strings, comments, regexes and template text.
    ok(&format!(
        "// {}\n/* {} */\nexport const s = \"{}\";\nexport const t = '{}';\n\
         export const r = /[(]{}/;\nexport const u = `{}`;\n",
        "(".repeat(n),
        "!".repeat(n),
        "[".repeat(n),
        "?".repeat(n),
        "\\(".repeat(n),
        "{".repeat(n),
    ));
    // Many statements, with and without semicolons; long lists; a chain within the limit.
    let mut src = String::new();
    for i in 0..n {
        src.push_str(&format!("export const a{i}: number = -{i} + (x ? 1 : 2)\n"));
        src.push_str(&format!("let b{i} = !a{i};\n"));
    }
    src.push_str(&format!("const list = [{}];\n", "!1, ".repeat(n)));
    src.push_str(&format!("const sum = {}1;\n", "1 + ".repeat(MAX_NESTING / 2)));
    src.push_str("declare const x: boolean;\n");
    ok(&src);
}

#[test]
fn long_left_leaning_chains_are_refused_before_swc() {
    // swc nests `f()()()`, `a.b.c` and `x + x + x` as deep as they are long: a 240 KB call chain
    // overflowed its stack, a 20 KB concatenation cost gigabytes. Each is refused with a position.
    let n = 3 * MAX_NESTING;
    for src in [
        format!("export const x = f{};\n", "()".repeat(n)),
        format!("export const x = a{};\n", ".b".repeat(n)),
        format!("export const x = {}\"ab\";\n", "\"ab\" + ".repeat(n)),
        format!("export const x = a{};\n", "[0]".repeat(n)),
    ] {
        let e = transpile_uncached("t.ts", &src).expect_err("too long a chain");
        let msg = e.to_string();
        assert!(msg.starts_with("t.ts:1:") && msg.contains("nested more than"), "{msg}");
    }
    // Control: the same chains at half the limit transpile.
    let half = MAX_NESTING / 2;
    ok(&format!("export const x = f{};\n", "()".repeat(half)));
    ok(&format!("export const x = {}\"ab\";\n", "\"ab\" + ".repeat(half)));
}

#[test]
fn nesting_just_under_the_limit_does_not_overflow() {
    // The most stack-hungry shape measured, at the deepest the check lets through, on a
    // 2 MiB test thread: swc's own thread must be what carries it.
    let n = MAX_NESTING / 2 - 10;
    ok(&format!("export const x = {}{};\n", "() => {".repeat(n), "}".repeat(n)));
    ok(&format!(
        "export const x = {}1{};\n",
        "(".repeat(MAX_NESTING - 5),
        ")".repeat(MAX_NESTING - 5)
    ));
}

#[test]
fn line_map_survives_removed_multiline_types() {
    let src = "interface A {\n  a: string;\n  b: number;\n}\n\
               type B =\n  | { kind: \"x\" }\n  | { kind: \"y\" };\n\
               export function f(\n  a: A,\n  b: B,\n): void {\n  console.log(a, b);\n}\n\
               export const marker = 42;\n";
    let t = ok(src);
    assert_eq!(t.source_line(out_line_of(&t, "console.log")), Some(12), "{t:?}");
    assert_eq!(t.source_line(out_line_of(&t, "marker = 42")), Some(14), "{t:?}");
    assert_eq!(t.source_line(out_line_of(&t, "export function f")), Some(8), "{t:?}");
    assert_eq!(Transpiler::source_line(&t, 0), None);

    // `}, async (input, ctx)=>{` belongs to the arrow's line, not the `}` before it.
    let t = ok(TOOL);
    let arrow = TOOL.lines().position(|l| l.contains("async (input")).map(|i| i + 1);
    let arrow = arrow.and_then(|l| u32::try_from(l).ok());
    assert_eq!(t.source_line(out_line_of(&t, "async (input, ctx)")), arrow);
    // A line of closers only (`});`) still maps to where they closed.
    let end = out_line_of(&t, "return {") + 3;
    assert!(matches!(t.source_line(end), Some(34 | 35)), "{t:?}");
    assert_eq!(Transpiler::source_line(&t, 10_000), None);
}

#[test]
fn second_call_is_a_memory_hit() {
    let tp = Transpiler::new(None);
    let a = tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((tp.transpile_count(), tp.memory_hits()), (1, 0));
    // Same content under another name: still a hit (the name is not in the key).
    let b = tp.transpile("tools/b.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((tp.transpile_count(), tp.memory_hits()), (1, 1));
    assert!(Arc::ptr_eq(&a, &b));
    tp.transpile("tools/c.ts", "export const c = 1;\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tp.transpile_count(), 2);
}

#[test]
fn errors_are_not_cached_and_name_each_file() {
    let tp = Transpiler::new(None);
    let bad = "let = ;\n";
    let e1 = tp.transpile("tools/one.ts", bad).err().map(|e| e.to_string());
    let e2 = tp.transpile("tools/two.ts", bad).err().map(|e| e.to_string());
    assert!(e1.is_some_and(|e| e.starts_with("tools/one.ts:1:")));
    assert!(e2.is_some_and(|e| e.starts_with("tools/two.ts:1:")));
    assert_eq!(tp.transpile_count(), 2);
}

#[test]
fn a_second_process_hits_the_disk_cache() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let first = Transpiler::new(Some(dir.path().to_path_buf()));
    let a = first.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.transpile_count(), 1);

    let second = Transpiler::new(Some(dir.path().to_path_buf()));
    let b = second.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((second.transpile_count(), second.disk_hits()), (0, 1));
    assert_eq!(*a, *b);
    // Then memory serves it.
    second.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((second.disk_hits(), second.memory_hits()), (1, 1));
    // Only the entry is left behind, no temp files.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_corrupt_cache_file_is_ignored_and_rewritten() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let entry = dir.path().join(format!("{}.json", hex(&cache_key(TOOL))));
    for garbage in [&b"{\"code\": \"trunc"[..], b"{\"code\":\"x\",\"line_map\":[]}"] {
        fs::write(&entry, garbage).unwrap_or_else(|e| panic!("{e}"));
        let tp = Transpiler::new(Some(dir.path().to_path_buf()));
        let t = tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((tp.transpile_count(), tp.disk_hits()), (1, 0));
        let on_disk: Transpiled = serde_json::from_slice(&fs::read(&entry).unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(on_disk, *t);
    }
}

#[test]
fn an_unwritable_cache_dir_does_not_fail_the_transpile() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("not-a-dir");
    fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
    let tp = Transpiler::new(Some(file.join("cache")));
    tp.transpile("tools/a.ts", "export const a = 1;\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tp.transpile_count(), 1);
}

#[test]
fn default_cache_dir_follows_the_environment() {
    use std::ffi::OsString;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    };
    assert_eq!(
        cache_dir_from(env(&[("TRAILBLAZE_CACHE_DIR", "/c"), ("HOME", "/h")])),
        Some(PathBuf::from("/c"))
    );
    assert_eq!(
        cache_dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
        Some(PathBuf::from("/x/trailblaze/transpile"))
    );
    assert_eq!(
        cache_dir_from(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
        Some(PathBuf::from("/h/.cache/trailblaze/transpile"))
    );
    assert_eq!(cache_dir_from(env(&[("TRAILBLAZE_CACHE_DIR", "")])), None);
}

#[test]
fn a_panic_becomes_an_error() {
    let e = isolated("tools/p.ts", || panic!("boom {}", 42));
    assert_eq!(
        e.err().map(|e| e.to_string()),
        Some("tools/p.ts: internal error while transpiling: swc panicked: boom 42".to_owned())
    );
}

#[test]
fn empty_and_crlf_sources() {
    assert_eq!(ok("").code, "");
    assert_eq!(ok("\u{feff}// only a comment\n").code, "");
    let t = ok("type A = {\r\n  a: 1;\r\n};\r\nexport const b = 2;\r\n");
    assert_eq!(t.source_line(out_line_of(&t, "b = 2")), Some(4), "{t:?}");
}

#[test]
fn concurrent_writers_leave_a_whole_entry() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let tp = Transpiler::new(Some(dir.path().to_path_buf()));
                tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
            });
        }
    });
    let tp = Transpiler::new(Some(dir.path().to_path_buf()));
    tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((tp.transpile_count(), tp.disk_hits()), (0, 1));
    let entries = fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0);
    assert_eq!(entries, 1);
}

#[test]
fn the_key_depends_on_content_only() {
    assert_eq!(cache_key("a"), cache_key("a"));
    assert_ne!(cache_key("a"), cache_key("b"));
}

/// A source swc takes a while over (thousands of typed functions), so two threads reliably miss at
/// the same time.
fn slow_source(tag: &str) -> String {
    (0..3000)
        .map(|i| format!("export function f{i}_{tag}(a: number, b: string): number {{ return a + b.length + {i}; }}\n"))
        .collect()
}

#[test]
fn concurrent_misses_on_the_same_content_run_swc_once() {
    let t = Arc::new(Transpiler::new(None));
    let race = |sources: [String; 2]| {
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = sources
            .into_iter()
            .map(|src| {
                let (t, barrier) = (t.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    t.transpile("tools/slow.ts", &src).map(|o| o.code.len())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect::<Vec<_>>()
    };
    let same = slow_source("a");
    let lens = race([same.clone(), same]);
    assert_eq!(lens[0], lens[1]);
    assert_eq!(
        t.transpile_count(),
        1,
        "one swc run for two threads missing the same content"
    );
    assert_eq!(t.memory_hits(), 1, "the waiter read the first one's result");
    // Control: different contents do not wait on each other's gate; each runs swc.
    race([slow_source("b"), slow_source("c")]);
    assert_eq!(t.transpile_count(), 3);
    // No gate is left behind.
    assert!(t.inflight.lock().unwrap().is_empty());
}
