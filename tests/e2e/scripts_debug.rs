//! Scripts that are isolated and debuggable: what one tool changes in the shared realm fails in that
//! tool only; `console.*` reaches the log and the embedder, scrubbed and bounded; an un-awaited
//! `ctx.tools` call that fails fails its tool; a tool's own time budget; `.ts` positions a terminal
//! opens from the current directory.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze::console::{ConsoleLevel, ConsoleLine, ConsoleSink};
use trailblaze::{Limits, Session, SessionOptions, Settings};
use trailblaze_e2e::{CANARY, Fixture, trailblaze_bin};
use trailblaze_host_functions::SecretStore;

const ATTACKS: &str = r#"import { trailblaze, TrailblazeToolError } from "@trailblaze/scripting";

/** What every attack below would change, read by another tool. */
export const probe = trailblaze.tool<{}, Record<string, unknown>>(async (_i, ctx) => ({
  mapped: [1, 2].map((x) => x * 2),
  own: ({ a: 1 } as any).hasOwnProperty("b"),
  leaked: typeof (globalThis as any).leaked,
  json: JSON.stringify({ a: 1 }),
  tool: typeof trailblaze.tool({ description: "x" }, async () => ({})).handler,
  errorProto: "pwned" in TrailblazeToolError.prototype,
  snapshot: typeof (await ctx.tools.snapshot({})),
  errorText: String(new Error("x")),
  resolved: await Promise.resolve("real"),
}));

export const protoMethod = trailblaze.tool<{}, {}>(async () => {
  Array.prototype.map = function () { return ["pwned"]; } as any;
  return {};
});
export const objectProto = trailblaze.tool<{}, {}>(async () => {
  Object.prototype.hasOwnProperty = () => true;
  return {};
});
export const addGlobal = trailblaze.tool<{}, {}>(async () => {
  (globalThis as any).leaked = 1;
  return {};
});
export const json = trailblaze.tool<{}, {}>(async () => {
  JSON.stringify = () => "pwned";
  return {};
});
export const sdkObject = trailblaze.tool<{}, {}>(async () => {
  (trailblaze as any).tool = () => ({ handler: "pwned" });
  return {};
});
export const sdkClass = trailblaze.tool<{}, {}>(async () => {
  (TrailblazeToolError.prototype as any).pwned = 1;
  return {};
});
export const ctxTools = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  (ctx.tools as any).snapshot = async () => 42;
  return {};
});
export const ctxProto = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  (Object.getPrototypeOf(ctx.tools) as any).snapshot = async () => 42;
  return {};
});
export const tamedOnPrototype = trailblaze.tool<{}, {}>(async () => {
  Error.prototype.toString = () => "pwned";
  return {};
});
export const poison = trailblaze.tool<{}, {}>(async () => {
  (Promise as any).resolve = () => ({ then: (ok: (v: unknown) => void) => ok("POISONED") });
  return {};
});
"#;

const CONTROLS: &str = r#"import { trailblaze } from "@trailblaze/scripting";

class Custom extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Custom";
  }
}

let calls = 0;

/** Counts its calls in module scope. */
export const counter = trailblaze.tool<{}, { n: number }>(async () => ({ n: ++calls }));

/** Throws an Error subclass that names itself. */
export const customError = trailblaze.tool<{}, {}>(async () => {
  throw new Custom("it is mine");
});

/** Gives plain objects and arrays their own members over the shared prototypes' names. */
export const ownMembers = trailblaze.tool<{}, Record<string, unknown>>(async () => {
  const o: any = {};
  o.toString = () => "mine";
  o.constructor = "ctor";
  const a: any = [1];
  a.toString = () => "own list";
  const e: any = new Error("m");
  e.message = "changed";
  return { text: String(o), ctor: o.constructor, list: String(a), error: e.message, shared: String([3, 4]) };
});
"#;

const ATTACK_NAMES: [&str; 10] = [
    "protoMethod",
    "objectProto",
    "addGlobal",
    "json",
    "sdkObject",
    "sdkClass",
    "ctxTools",
    "ctxProto",
    "tamedOnPrototype",
    "poison",
];

fn expected_probe() -> Value {
    json!({
        "mapped": [2, 4], "own": false, "leaked": "undefined", "json": "{\"a\":1}", "tool": "function",
        "errorProto": false, "snapshot": "object", "errorText": "Error: x", "resolved": "real"
    })
}

#[test]
fn what_one_tool_changes_in_the_shared_realm_fails_that_tool_and_no_other() {
    let f = Fixture::new("t");
    f.tool("attacks", ATTACKS);
    let (_p, s) = f.session(Settings::default());
    // Control: the probe sees the real thing, so a changed answer below would show.
    assert_eq!(s.call("probe", json!({})).expect("probe"), expected_probe());
    for name in ATTACK_NAMES {
        let err = s.call(name, json!({})).expect_err(name).to_string();
        assert!(
            err.starts_with(&format!("{name}: TypeError: ")),
            "{name} fails in itself: {err}"
        );
        assert_eq!(
            s.call("probe", json!({})).expect("probe"),
            expected_probe(),
            "after {name}"
        );
    }
}

#[test]
fn module_state_error_subclasses_and_own_members_keep_working() {
    let f = Fixture::new("t");
    f.tool("controls", CONTROLS);
    let (_p, s) = f.session(Settings::default());
    assert_eq!(s.call("counter", json!({})).expect("counts"), json!({ "n": 1 }));
    assert_eq!(s.call("counter", json!({})).expect("counts"), json!({ "n": 2 }));
    let err = s.call("customError", json!({})).expect_err("throws").to_string();
    assert!(err.starts_with("customError: Custom: it is mine"), "{err}");
    assert_eq!(
        s.call("ownMembers", json!({})).expect("own members"),
        json!({ "text": "mine", "ctor": "ctor", "list": "own list", "error": "changed", "shared": "3,4" })
    );
}

const TALK: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Prints in every level and every kind of value. */
export const talk = trailblaze.tool<{ secret: string }, {}>(async (input, ctx) => {
  console.log("hello", 42, { a: [1, "x"] }, null, undefined, new Error("bad"));
  console.info("info");
  console.warn("the secret is", input.secret);
  console.error(new TypeError("typed"));
  console.debug([1, 2n], Symbol("s"));
  const cyclic: any = { name: "loop" };
  cyclic.self = cyclic;
  console.log(cyclic);
  await ctx.tools.quiet({});
  return {};
});

/** Prints one line, from inside another tool. */
export const quiet = trailblaze.tool<{}, {}>(async () => {
  console.log("inner");
  return {};
});

/** Prints `n` lines and one very long one. */
export const flood = trailblaze.tool<{ n: number }, {}>(async (input) => {
  console.log("x".repeat(20000));
  for (let i = 0; i < input.n; i++) console.log("line", i);
  return {};
});
"#;

pub type Lines = Arc<Mutex<Vec<ConsoleLine>>>;

/// A session whose console lines are collected, with `CANARY` as its one secret.
pub fn console_session(f: &Fixture) -> (Session, Lines) {
    let lines: Lines = Arc::default();
    let sink = {
        let lines = lines.clone();
        ConsoleSink::new(move |l| lines.lock().expect("lines").push(l.clone()))
    };
    let project = f.project();
    let secrets = SecretStore::from_pairs([("CANARY".to_string(), CANARY.to_string())]);
    let session = project
        .open_session(
            &f.id,
            SessionOptions {
                out_dir: Some(f.out()),
                settings: Settings {
                    console: Some(sink),
                    ..Settings::default()
                },
                secrets: Some(Arc::new(secrets)),
                ..SessionOptions::default()
            },
        )
        .expect("session");
    (session, lines)
}

/// The `console` events of the session log.
fn logged_console(f: &Fixture) -> Vec<Value> {
    f.all_output()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "console")
        .collect()
}

pub fn talk_lines(subprocess: bool) -> Vec<(String, ConsoleLevel, String)> {
    let f = Fixture::new("t");
    f.tool("talk", TALK);
    if subprocess {
        for name in ["talk", "quiet"] {
            f.file(&format!("tools/{name}.tool.yaml"), "runtime: subprocess\n");
        }
    }
    let (s, lines) = console_session(&f);
    s.call("talk", json!({ "secret": CANARY })).expect("talks");
    drop(s);
    let got: Vec<_> = lines
        .lock()
        .expect("lines")
        .iter()
        .map(|l| (l.tool.clone(), l.level, l.text.clone()))
        .collect();
    // The log holds the same lines, and no secret anywhere.
    let logged = logged_console(&f);
    assert_eq!(logged.len(), got.len(), "{logged:?}");
    for (l, (tool, _, text)) in logged.iter().zip(&got) {
        assert_eq!(
            (l["tool"].as_str(), l["text"].as_str()),
            (Some(tool.as_str()), Some(text.as_str()))
        );
    }
    assert!(!f.all_output().contains(CANARY), "the secret was scrubbed from the log");
    got
}

pub fn expected_talk() -> Vec<(String, ConsoleLevel, String)> {
    let line = |tool: &str, level, text: &str| (tool.to_string(), level, text.to_string());
    vec![
        line(
            "talk",
            ConsoleLevel::Log,
            r#"hello 42 {"a":[1,"x"]} null undefined Error: bad"#,
        ),
        line("talk", ConsoleLevel::Info, "info"),
        line("talk", ConsoleLevel::Warn, "the secret is ***"),
        line("talk", ConsoleLevel::Error, "TypeError: typed"),
        line("talk", ConsoleLevel::Debug, r#"[1,"2n"] Symbol(s)"#),
        line("talk", ConsoleLevel::Log, r#"{"name":"loop","self":"[Circular]"}"#),
        line("quiet", ConsoleLevel::Log, "inner"),
    ]
}

#[test]
fn console_lines_reach_the_log_and_the_sink_with_tool_and_level_and_no_secret() {
    assert_eq!(talk_lines(false), expected_talk());
}

#[test]
fn console_output_is_bounded_per_line_and_per_call() {
    let f = Fixture::new("t");
    f.tool("talk", TALK);
    let (s, lines) = console_session(&f);
    s.call("flood", json!({ "n": 1500 })).expect("floods");
    let got = lines.lock().expect("lines").clone();
    assert_eq!(got.len(), 1001, "1,000 lines, then one that says the rest was dropped");
    assert!(got[0].text.len() < 9 << 10 && got[0].text.ends_with("[truncated: 20000 bytes in all]"));
    assert_eq!(got[999].text, "line 998");
    assert!(got[1000].text.contains("further output dropped"), "{}", got[1000].text);
    // Control: the next call has its own allowance.
    s.call("flood", json!({ "n": 3 })).expect("floods");
    let got = lines.lock().expect("lines").clone();
    assert_eq!(got.len(), 1005);
    assert_eq!(got[1004].text, "line 2");
}

pub const UNAWAITED: &str = r#"import { trailblaze } from "@trailblaze/scripting";
const nowhere = { nodeSelector: { androidAccessibility: { textRegex: "Nowhere" } } };

/** Starts a failing tool call and does not wait for it. */
export const forgets = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  ctx.tools.tapOnElementBySelector(nowhere);
  return {};
});
/** Waits for the failing call and catches it. */
export const catches = trailblaze.tool<{}, { caught: boolean }>(async (_i, ctx) => {
  try {
    await ctx.tools.tapOnElementBySelector(nowhere);
    return { caught: false };
  } catch {
    return { caught: true };
  }
});
/** Handles the failure with `.catch` and never awaits it. */
export const handles = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  ctx.tools.tapOnElementBySelector(nowhere).catch(() => {});
  return {};
});
"#;

/// `forgets`, `catches` and `handles` in one runtime: their outcomes.
pub fn unawaited_outcomes(subprocess: bool) -> Vec<Result<Value, String>> {
    let f = Fixture::new("t");
    f.tool("unawaited", UNAWAITED);
    if subprocess {
        for name in ["forgets", "catches", "handles"] {
            f.file(&format!("tools/{name}.tool.yaml"), "runtime: subprocess\n");
        }
    }
    let (_p, s) = f.session(Settings::default());
    ["forgets", "catches", "handles"]
        .iter()
        .map(|n| s.call(n, json!({})).map_err(|e| e.to_string()))
        .collect()
}

pub fn check_unawaited(outcomes: &[Result<Value, String>]) {
    let err = outcomes[0].as_ref().expect_err("an un-awaited failure fails the tool");
    assert!(
        err.starts_with("forgets: an un-awaited ctx.tools.tapOnElementBySelector(...) call failed: "),
        "{err}"
    );
    // Controls: the same failure, caught or handled, does not.
    assert_eq!(outcomes[1], Ok(json!({ "caught": true })));
    assert_eq!(outcomes[2], Ok(json!({})));
}

#[test]
fn a_failed_call_the_tool_did_not_await_fails_the_tool() {
    check_unawaited(&unawaited_outcomes(false));
}

const SLOW: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Spins for `ms` milliseconds of script time. */
export const spinFor = trailblaze.tool<{ ms: number }, { done: boolean }>(async (input) => {
  const start = Date.now();
  while (Date.now() - start < input.ms) {}
  return { done: true };
});
/** The same, without a budget of its own. */
export const spinPlain = trailblaze.tool<{ ms: number }, { done: boolean }>(async (input) => {
  const start = Date.now();
  while (Date.now() - start < input.ms) {}
  return { done: true };
});
"#;

#[test]
fn a_tools_own_time_budget_replaces_the_sessions_when_it_is_the_top_level_call() {
    let f = Fixture::new("t");
    f.tool("slow", SLOW);
    f.file("tools/spinFor.tool.yaml", "timeoutMs: 30000\n");
    let (_p, s) = f.session(Settings {
        limits: Limits {
            timeout: Duration::from_millis(300),
            ..Limits::default()
        },
        ..Settings::default()
    });
    // Its own 30 s budget lets it spin past the session's 300 ms.
    assert_eq!(
        s.call("spinFor", json!({ "ms": 600 })).expect("its own budget"),
        json!({ "done": true })
    );
    // Control: the same spin without a budget of its own hits the session's.
    let err = s
        .call("spinPlain", json!({ "ms": 600 }))
        .expect_err("the session's budget")
        .to_string();
    assert!(err.starts_with("spinPlain: exceeded its time limit of 300 ms"), "{err}");

    // A smaller budget than the session's, named in the error.
    f.file("tools/spinFor.tool.yaml", "timeoutMs: 100\n");
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("spinFor", json!({ "ms": 5000 }))
        .expect_err("its own budget")
        .to_string();
    assert_eq!(err, "spinFor: exceeded its time limit of 100 ms (timeoutMs)");
    // Control: the session's budget is back for the next call.
    assert_eq!(
        s.call("spinPlain", json!({ "ms": 200 })).expect("fits"),
        json!({ "done": true })
    );
}

#[test]
fn a_bad_time_budget_is_refused_with_its_position() {
    for (yaml, want) in [
        ("description: x\ntimeoutMs: 0\n", ":2:"),
        ("timeoutMs: 99999999999\n", ":1:"),
        ("timeoutMs: fast\n", ":1:"),
    ] {
        let f = Fixture::new("t");
        f.tool("slow", SLOW);
        f.file("tools/spinFor.tool.yaml", yaml);
        let err = match trailblaze::open(
            &f.root(),
            trailblaze::ProjectOptions {
                cache_dir: Some(f.cache()),
                ..trailblaze::ProjectOptions::default()
            },
        )
        .and_then(|p| p.catalog("t").map(|_| ()))
        {
            Ok(()) => panic!("{yaml} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(&format!("spinFor.tool.yaml{want}")), "{yaml}: {err}");
        assert!(err.contains("timeoutMs"), "{yaml}: {err}");
    }
    // Control: a good value loads.
    let f = Fixture::new("t");
    f.tool("slow", SLOW);
    f.file("tools/spinFor.tool.yaml", "timeoutMs: 250\n");
    f.project().catalog("t").expect("a budget in range loads");
}

const THROWER: &str = "import { trailblaze } from \"@trailblaze/scripting\";\n\nexport const thrower = trailblaze.tool<{}, {}>(async () => {\n  throw new Error(\"boom\");\n});\n";

#[test]
fn ts_positions_are_paths_a_terminal_opens_from_the_current_directory() {
    let f = Fixture::new("t");
    f.tool("thrower", THROWER);
    // In process, the fixture is outside the current directory: the whole path.
    let (_p, s) = f.session(Settings::default());
    let err = s.call("thrower", json!({})).expect_err("throws").to_string();
    let file = f.root().join("t/tools/thrower.ts");
    assert_eq!(err, format!("thrower: Error: boom (at {}:4)", file.display()));
    assert!(file.is_file(), "the shown path opens");
    // From the fixture's folder, the path relative to it.
    let out = std::process::Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .args(["tool", "thrower", "--out", "out"])
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("(at trailmaps/t/tools/thrower.ts:4)"), "{stderr}");
}
