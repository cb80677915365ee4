//! The warm Node worker's calls share nothing: every global a call sees (`Buffer`, `URL`,
//! `TextEncoder`, `process`, `JSON`, `Object.prototype`, ...) is its own, so what one call patches
//! the next never sees; and no call reaches the runner's realm (whose `Buffer`, `JSON` and pipes
//! carry every call's requests and results), however it tries. Each check beside its control:
//! within the call that patched, the patch is there.

use serde_json::{Value, json};
use trailblaze_e2e::Fixture;

use super::{node_processes_of, settings};

/// What the calls of one worker could share if anything were shared: the first patches all of it
/// (and whatever it can reach past its own globals), the second uses all of it.
const TOOLS: &str = r#"
import { trailblaze } from "@trailblaze/scripting";
const G = globalThis as any;

/** Paths from the globals (three levels down) to objects that are not of this call's realm. */
function foreign(extra: Record<string, unknown>): string[] {
  const found: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: any, path: string, depth: number) => {
    if (v === null || (typeof v !== "object" && typeof v !== "function") || seen.has(v)) return;
    seen.add(v);
    let top = v;
    for (let p = Object.getPrototypeOf(v); p !== null; p = Object.getPrototypeOf(p)) top = p;
    // Every chain ends at this realm's Object.prototype (or the object has no prototype at all).
    if (top !== Object.prototype && Object.getPrototypeOf(v) !== null) found.push(path);
    if (depth === 0) return;
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      if (d) for (const x of [d.value, d.get, d.set]) walk(x, `${path}.${String(key)}`, depth - 1);
    }
  };
  for (const key of Reflect.ownKeys(G)) walk(G[key], String(key), 3);
  for (const [key, v] of Object.entries(extra)) walk(v, key, 3);
  return found;
}

/** What a string given to a realm's `Function` sees: a runner's realm has `process.binding`. */
function reach(v: any): string {
  try {
    return v.constructor.constructor("return typeof process + '/' + typeof (globalThis.process && process.binding)")();
  } catch (e) {
    return `threw ${(e as Error).message}`;
  }
}

/** Patches everything it can reach to record into, and rewrite, what later calls do. */
export const patch = trailblaze.tool<{}, unknown>(async (_input, ctx) => {
  const log: string[] = [];
  G.__log = log;
  (URL.prototype as any).__seen = log;
  const href = Object.getOwnPropertyDescriptor(URL.prototype, "href")!;
  Object.defineProperty(URL.prototype, "href", { ...href, get() { log.push("href"); return "http://rewritten.example/"; } });
  // Whatever realm `Buffer`'s and `process`'s `Function` give: the runner's, if they were its.
  for (const outer of [(Buffer as any).constructor.constructor("return globalThis")(), (process as any).constructor.constructor("return globalThis")(), G]) {
    const from = outer.Buffer.from;
    outer.Buffer.from = function (this: unknown, ...a: any[]) {
      log.push("Buffer.from");
      return from.apply(this, a.map((x) => (typeof x === "string" ? x.replaceAll("through", "rewritten") : x)));
    };
    const stringify = outer.JSON.stringify;
    outer.JSON.stringify = function (...a: any[]) {
      log.push("stringify");
      const text = stringify.apply(this, a);
      return typeof text === "string" ? text.replaceAll("through", "rewritten").replaceAll("epochMillis", "rewritten") : text;
    };
    const parse = outer.JSON.parse;
    outer.JSON.parse = function (...a: any[]) {
      log.push("parse");
      const v = parse.apply(this, a);
      if (v !== null && typeof v === "object") v.rewritten = true;
      return v;
    };
    outer.TextEncoder.prototype.encode = function () {
      log.push("encode");
      return new Uint8Array([1]);
    };
    outer.process.stdout.write = () => log.push("stdout");
    outer.process.stderr.write = () => log.push("stderr");
  }
  Object.defineProperty(Object.prototype, "toJSON", { configurable: true, get() { log.push("toJSON"); return undefined; } });
  (Array.prototype as any).extra = "proto";
  const then = Promise.prototype.then;
  Promise.prototype.then = function (this: Promise<unknown>, a: any, b: any) {
    log.push("then");
    return then.call(this, a, b);
  } as any;
  // Control: within this call every patch is there.
  const visible = {
    href: new URL("https://a.example/p").href,
    encoded: Array.from(new TextEncoder().encode("hi")),
    extra: ([] as any).extra,
    logged: (Buffer.from("x"), log.includes("Buffer.from")),
  };
  let importError = "none";
  try {
    await import("node:fs" as string);
  } catch (e) {
    importError = (e as any).constructor === Error || (e as any).constructor === TypeError ? "own" : "foreign";
  }
  const hostError = (() => {
    try {
      (ctx.host as any).noSuchHostFunction({});
      return "none";
    } catch (e) {
      return (e as any).constructor.constructor === Function ? "own" : "foreign";
    }
  })();
  const handles: Record<string, unknown> = { ctx, tools: ctx.tools, host: ctx.host, now: ctx.host.now({}) };
  return {
    visible,
    importError,
    hostError,
    reached: [G, Buffer, process, setTimeout, console.log, URL, TextEncoder, structuredClone, performance, fetch, ctx, ctx.host.now, handles.now].map(reach),
    foreign: foreign(handles),
  };
});

/** Uses everything the first call patched; what it sees. */
export const use = trailblaze.tool<{}, unknown>(async (_input, ctx) => {
  const now = ctx.host.now({}) as Record<string, unknown>;
  const echoed = await ctx.tools.echo({ text: "through" });
  await new Promise((r) => setTimeout(r, 1));
  process.stdout.write("a line through stdout\n");
  return {
    log: G.__log ?? null,
    seen: (URL.prototype as any).__seen ?? null,
    href: new URL("https://a.example/p?q=1").href,
    buffer: Buffer.from("through").toString(),
    encoded: Array.from(new TextEncoder().encode("hi")),
    json: JSON.stringify({ through: 1 }),
    parsed: JSON.parse("{}"),
    extra: ([] as any).extra ?? null,
    toJSON: ({} as any).toJSON ?? null,
    now: [typeof now.epochMillis, "rewritten" in now],
    echoed,
    foreign: foreign({ ctx, now, echoed }),
  };
});

/** Returns its text: a nested call in the same worker. */
export const echo = trailblaze.tool<{ text: string }, { text: string }>(async (input) => ({ text: input.text }));
"#;

fn fixture() -> Fixture {
    let f = Fixture::new("t");
    f.tool("iso", TOOLS);
    f.file("host/now.host.yaml", "id: now\nclass: now\n");
    for name in ["patch", "use", "echo"] {
        f.file(&format!("tools/{name}.tool.yaml"), "runtime: subprocess\n");
    }
    f
}

#[test]
fn what_one_call_patches_the_next_never_sees_and_no_call_reaches_the_runner() {
    let f = fixture();
    let (_p, s) = f.session(settings(60_000));
    let patched = s.call("patch", json!({})).expect("patch runs");
    // Control: the patches are real within the call that made them.
    assert_eq!(
        patched["visible"],
        json!({ "href": "http://rewritten.example/", "encoded": [1], "extra": "proto", "logged": true }),
        "{patched}"
    );
    // Nothing of the runner's realm is within reach: every `Function` is the call's own (no
    // `process.binding`), every object's chain ends at the call's own `Object.prototype`, and the
    // errors handed to the call are its own.
    let reached = patched["reached"].as_array().expect("reached");
    assert!(
        reached.iter().all(|r| r == "object/undefined"),
        "a global reached another realm: {patched}"
    );
    assert_eq!(patched["foreign"], json!([]), "{patched}");
    assert_eq!(patched["importError"], "own", "{patched}");
    assert_eq!(patched["hostError"], "own", "{patched}");
    let worker = node_processes_of(&f);
    assert_eq!(worker.len(), 1);

    let before = s.steps().len();
    let used = s.call("use", json!({})).expect("use runs");
    // The second call sees none of it: no hook recorded anything, nothing was rewritten (its own
    // globals, its host call's and its nested call's results, its own result on the way out).
    let want = json!({
        "log": null,
        "seen": null,
        "href": "https://a.example/p?q=1",
        "buffer": "through",
        "encoded": [104, 105],
        "json": "{\"through\":1}",
        "parsed": {},
        "extra": null,
        "toJSON": null,
        "now": ["number", false],
        "echoed": { "text": "through" },
        "foreign": [],
    });
    assert_eq!(used, want);
    // The nested call's step went to the host as the tool wrote it.
    let echo: Vec<Value> = s.steps()[before..]
        .iter()
        .filter(|r| r.tool == "echo")
        .map(|r| r.args.clone())
        .collect();
    assert_eq!(echo, [json!({ "text": "through" })]);
    // One worker served both: isolation within it, not a fresh process.
    assert_eq!(node_processes_of(&f), worker);
}
