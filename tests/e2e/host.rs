//! `ctx.host`: host functions are not tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use trailblaze_e2e::{CANARY, Fixture, log_events, session_with, traces};
use trailblaze_host_functions::{HostContext, HostError, HostFunction, HostRegistry, SecretStore};

/// Nested arguments, to prove strictness at every level.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nested {
    outer: Level1,
}
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Level1 {
    middle: Level2,
}
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Level2 {
    value: String,
}
#[derive(Serialize, JsonSchema)]
struct Length {
    len: usize,
}
impl HostFunction for Nested {
    const NAME: &'static str = "nested";
    type Output = Length;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Length, HostError> {
        Ok(Length {
            len: self.outer.middle.value.len(),
        })
    }
}

/// Panics.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Explode {}
impl HostFunction for Explode {
    const NAME: &'static str = "explode";
    type Output = Length;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Length, HostError> {
        panic!("{}", CANARY)
    }
}

/// Dispatches the scripted tool `bouncer`, which calls back into this function.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Bounce {}
impl HostFunction for Bounce {
    const NAME: &'static str = "bounce";
    type Output = serde_json::Value;
    fn call(self, cx: &mut dyn HostContext) -> Result<serde_json::Value, HostError> {
        cx.call_tool("bouncer", json!({})).map_err(HostError)
    }
}

const TOOLS: &str = r#"import { trailblaze, TrailblazeHostError } from "@trailblaze/scripting";

/** Looks a credential up, snapshots around it, returns only the username. */
export const useCredential = trailblaze.tool<{ account: string }, { user: string }>(async (input, ctx) => {
  const c = ctx.host.lookupCredential({ account: input.account });
  const n = ctx.host.now({});
  if (typeof n.epochMillis !== "number") throw new Error("now is not a time");
  return { user: c.username };
});

/** Calls a host function by name with raw arguments; returns the value or the error text. */
export const host = trailblaze.tool<{ name: string; args: unknown }, unknown>(async (input, ctx) => {
  try {
    return { ok: (ctx.host as any)[input.name](input.args) };
  } catch (e) {
    if (!(e instanceof TrailblazeHostError)) throw e;
    return { error: e.message, hostFunction: e.hostFunction };
  }
});

/** Calls a tool by name; returns its value or the error text. */
export const tool = trailblaze.tool<{ name: string }, unknown>(async (input, ctx) => {
  try {
    return { ok: await (ctx.tools as any)[input.name]({}) };
  } catch (e) {
    return { error: (e as Error).message };
  }
});

/** Host calls between snapshots. */
export const hostBetweenSnapshots = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  await ctx.tools.snapshot({});
  for (let i = 0; i < 5; i++) ctx.host.now({});
  await ctx.tools.snapshot({});
  return {};
});

/** Two calls with one argument whose member is a getter: how often did the host read it? */
export const getterReads = trailblaze.tool<{}, { reads: number; len: number }>(async (_i, ctx) => {
  let reads = 0;
  const arg = { get outer() { reads++; return { middle: { value: "abc" } }; } };
  const a = (ctx.host as any).nested(arg);
  const b = (ctx.host as any).nested(arg);
  return { reads, len: a.len + b.len };
});

/** Calls the host function `bounce`, which calls this tool again. */
export const bouncer = trailblaze.tool<{}, unknown>(async (_i, ctx) => (ctx.host as any).bounce({}));
"#;

fn fixture(register: &[&str]) -> Fixture {
    let f = Fixture::new("t");
    f.tool("tools", TOOLS);
    for name in register {
        f.file(
            &format!("host/{name}.host.yaml"),
            &format!("id: {name}\nclass: {name}\n"),
        );
    }
    f
}

fn registry() -> HostRegistry {
    let mut r = HostRegistry::builtin();
    r.register::<Nested>().register::<Explode>().register::<Bounce>();
    r
}

fn secrets() -> SecretStore {
    SecretStore::from_pairs([
        ("DEMO_USERNAME".into(), "jane@example.com".into()),
        ("DEMO_PASSWORD".into(), CANARY.into()),
    ])
}

const ALL: &[&str] = &["lookupCredential", "now", "nested", "explode", "bounce"];

#[test]
fn a_host_call_is_no_step_and_its_secret_goes_nowhere() {
    let _ = traces();
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let v = session
        .call("useCredential", json!({ "account": "demo" }))
        .expect("runs");
    // The username is a secret value too (TRAILBLAZE_SECRET_DEMO_USERNAME): no reply carries one.
    assert_eq!(v, json!({ "user": "***" }));
    drop(session);
    let events = log_events(&f.out());
    let steps: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "step_started")
        .filter_map(|e| e["tool"].as_str())
        .collect();
    assert_eq!(steps, ["useCredential"], "the tool's step and no host step");
    let summaries: Vec<&serde_json::Value> = events.iter().filter(|e| e["event"] == "host_calls").collect();
    assert_eq!(
        summaries.len(),
        1,
        "one summary of the host calls, before the step finishes: {events:?}"
    );
    let calls = summaries[0]["calls"].as_array().expect("calls");
    let names: Vec<(&str, u64)> = calls
        .iter()
        .map(|c| (c["name"].as_str().unwrap_or(""), c["calls"].as_u64().unwrap_or(0)))
        .collect();
    assert_eq!(names, [("lookupCredential", 1), ("now", 1)]);
    assert!(!f.all_output().contains(CANARY), "the password is in no output file");
    let traces = traces();
    assert!(
        traces.contains("host_call") && traces.contains("lookupCredential"),
        "the traces were captured"
    );
    assert!(!traces.contains(CANARY), "the password is in no trace");
}

#[test]
fn host_calls_keep_the_snapshot_and_tool_calls_drop_it() {
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let before = session.captures();
    session.call("hostBetweenSnapshots", json!({})).expect("runs");
    assert_eq!(
        session.captures() - before,
        1,
        "five host calls between two snapshots: one capture"
    );
    // Positive control: a tool call in between does drop it.
    let before = session.captures();
    session.call("tool", json!({ "name": "snapshot" })).expect("snapshot");
    session.call("tool", json!({ "name": "snapshot" })).expect("snapshot");
    assert_eq!(
        session.captures() - before,
        2,
        "the scripted `tool` itself is not read-only, so each call invalidates"
    );
}

#[test]
fn unknown_keys_are_refused_at_depth_one_and_three() {
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let call = |args: serde_json::Value| {
        session
            .call("host", json!({ "name": "nested", "args": args }))
            .expect("runs")
    };
    let e1 = call(json!({ "outer": { "middle": { "value": "x" } }, "extra": CANARY }));
    let msg = e1["error"].as_str().expect("refused").to_string();
    assert!(msg.contains("unknown key `extra`"), "{msg}");
    let e3 = call(json!({ "outer": { "middle": { "value": "x", "sneaky": CANARY } } }));
    let msg3 = e3["error"].as_str().expect("refused").to_string();
    assert!(msg3.contains("outer.middle.sneaky"), "{msg3}");
    let wrong = call(json!({ "outer": { "middle": { "value": 7 } } }));
    let msg_t = wrong["error"].as_str().expect("refused").to_string();
    assert!(
        msg_t.contains("outer.middle.value") && msg_t.contains("found an integer"),
        "{msg_t}"
    );
    for m in [&msg, &msg3, &msg_t] {
        assert!(!m.contains(CANARY), "{m}");
    }
    assert_eq!(
        call(json!({ "outer": { "middle": { "value": "abcd" } } })),
        json!({ "ok": { "len": 4 } })
    );
}

#[test]
fn a_host_call_reads_each_member_of_its_argument_once() {
    // The first call of a function keeps its argument's shape for the next calls: by its keys
    // only. Had it read the values too, the getter would have run three times.
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let v = session.call("getterReads", json!({})).expect("runs");
    // Control: the getter's reads are counted at all, and both calls decoded through it.
    assert_eq!(v, json!({ "reads": 2, "len": 6 }));
}

#[test]
fn a_panicking_host_function_returns_the_error_envelope() {
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let v = session
        .call("host", json!({ "name": "explode", "args": {} }))
        .expect("the script catches it");
    // Thrown by the function's own binding (no SDK wrapper in QuickJS): still the SDK's error, naming it.
    assert_eq!(
        v,
        json!({ "error": "host function explode panicked", "hostFunction": "explode" })
    );
    let v = session
        .call("host", json!({ "name": "now", "args": {} }))
        .expect("still works");
    assert!(v["ok"]["epochMillis"].is_number(), "{v}");
}

#[test]
fn the_two_namespaces_never_resolve_each_others_names() {
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let v = session
        .call("tool", json!({ "name": "lookupCredential" }))
        .expect("runs");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("unknown tool `lookupCredential`")),
        "{v}"
    );
    let v = session
        .call("host", json!({ "name": "snapshot", "args": {} }))
        .expect("runs");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("unknown host function `snapshot`")),
        "{v}"
    );
    // Positive controls: each name works in its own namespace.
    assert!(session.call("tool", json!({ "name": "snapshot" })).expect("runs")["ok"].is_object());
    assert!(
        session
            .call("host", json!({ "name": "now", "args": {} }))
            .expect("runs")["ok"]
            .is_object()
    );
}

#[test]
fn host_and_tool_calls_share_the_depth_cap() {
    let f = fixture(ALL);
    let (_s, session) = session_with(&f, secrets(), registry());
    let err = session.call("bouncer", json!({})).expect_err("capped").to_string();
    assert!(err.contains("call depth 16 reached; refusing"), "{err}");
    assert!(
        session.call("host", json!({ "name": "now", "args": {} })).is_ok(),
        "the session goes on"
    );
}

#[test]
fn a_compiled_in_function_not_registered_cannot_be_called() {
    let f = fixture(&["now"]);
    let (_s, session) = session_with(&f, secrets(), registry());
    let v = session
        .call(
            "host",
            json!({ "name": "lookupCredential", "args": { "account": "demo" } }),
        )
        .expect("runs");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("unknown host function `lookupCredential`")),
        "{v}"
    );
    assert!(
        session
            .call("host", json!({ "name": "now", "args": {} }))
            .expect("runs")["ok"]
            .is_object()
    );
}

/// Calls the embedder's `scale`.
const SCALER: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Scales a number through the embedder's host function. */
export const scaler = trailblaze.tool<{ n: number }, unknown>(async (input, ctx) => (ctx.host as any).scale({ n: input.n }));

/** Calls `scale` with a key its schema does not have. */
export const badScaler = trailblaze.tool<{}, unknown>(async (_i, ctx) => (ctx.host as any).scale({ n: 1, secretish: "zz-canary" }));
"#;

#[test]
fn an_embedders_host_function_is_called_from_a_script_with_its_schema_held_strictly() {
    let f = Fixture::new("t");
    f.tool("scaler", SCALER);
    f.file("host/scale.host.yaml", "id: scale\nclass: scale\n");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let seen = calls.clone();
    let scale: trailblaze_host_functions::DynamicHostFn = std::sync::Arc::new(move |args: serde_json::Value| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let n = args["n"].as_f64().ok_or("n must be a number")?;
        Ok(json!({ "scaled": n * 10.0 }))
    });
    let schema = json!({
        "type": "object",
        "description": "Multiplies by ten.",
        "properties": { "n": { "type": "number" } },
        "required": ["n"],
        "additionalProperties": false
    });
    let entry =
        trailblaze_host_functions::HostFunctionEntry::dynamic("scale", schema, json!({}), scale).expect("entry");
    // Control: before it is added, the trailmap's declaration names an unknown class.
    let mut project = f.project();
    assert!(project.catalog("t").is_err(), "`scale` is not compiled in");
    project.add_host_function(entry.clone()).expect("added");
    assert!(project.add_host_function(entry).is_err(), "a name is added once");
    let session = project
        .open_session("t", trailblaze::SessionOptions::default())
        .expect("session");
    assert_eq!(
        session.call("scaler", json!({ "n": 4 })).expect("runs"),
        json!({ "scaled": 40 })
    );
    let err = session
        .call("badScaler", json!({}))
        .expect_err("unknown key")
        .to_string();
    assert!(err.contains("host function `scale`: unknown key `secretish`"), "{err}");
    assert!(!err.contains("zz-canary"), "{err}");
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the bad call never reached the embedder"
    );
}
