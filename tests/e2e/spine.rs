//! The one dispatcher as scripts see it: steps, snapshot invalidation, depth, strict arguments.

use serde_json::json;
use trailblaze::Settings;
use trailblaze_e2e::{CANARY, Fixture, log_events};

const COUNTER: &str = r#"
import { trailblaze } from "@trailblaze/scripting";

/** Snapshots twice, taps, snapshots again. */
export const probe = trailblaze.tool<{}, { n: number }>(async (_i, ctx) => {
  await ctx.tools.snapshot({});
  await ctx.tools.snapshot({});
  await ctx.tools.tapOnPoint({ x: 1, y: 1 });
  await ctx.tools.snapshot({});
  return { n: 4 };
});

/** Only reads the screen. */
export const look = trailblaze.tool<{}, { root: string }>({ readOnly: true }, async (_i, ctx) => {
  const tree = (await ctx.tools.snapshot({})) as { root: { className: string } };
  return { root: tree.root.className };
});

/** Reads the screen but is not declared read-only. */
export const lookLoudly = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  await ctx.tools.snapshot({});
  return {};
});
"#;

#[test]
fn script_calls_write_one_step_each_and_invalidate_the_snapshot() {
    let f = Fixture::new("t");
    f.tool("probe", COUNTER);
    let (_p, s) = f.session(Settings::default());
    let before = s.captures();
    s.call("probe", json!({})).expect("probe runs");
    // snapshot (capture), snapshot (cached), tap (invalidates), snapshot (capture).
    assert_eq!(s.captures() - before, 2);
    let steps: Vec<_> = s.steps();
    let inner: Vec<&str> = steps.iter().filter(|r| r.depth == 1).map(|r| r.tool.as_str()).collect();
    assert_eq!(inner, ["snapshot", "snapshot", "tapOnPoint", "snapshot"]);
    assert_eq!(
        steps.iter().filter(|r| r.depth == 0).count(),
        1,
        "the scripted tool itself is one step"
    );
    drop(s);
    let events = log_events(&f.out());
    let started = events.iter().filter(|e| e["event"] == "step_started").count();
    let finished = events
        .iter()
        .filter(|e| e["event"] == "step_finished" && e["ok"] == true)
        .count();
    assert_eq!(
        (started, finished),
        (5, 5),
        "the log file holds every step, started and finished"
    );
}

#[test]
fn a_read_only_tool_keeps_the_snapshot_and_others_drop_it() {
    let f = Fixture::new("t");
    f.tool("probe", COUNTER);
    let (_p, s) = f.session(Settings::default());
    s.call("look", json!({})).expect("look");
    let after_first = s.captures();
    s.call("look", json!({})).expect("look again");
    assert_eq!(
        s.captures(),
        after_first,
        "read-only: the second call reuses the cached snapshot"
    );
    // Positive control: a tool not declared read-only invalidates, so the next look captures again.
    s.call("lookLoudly", json!({})).expect("lookLoudly");
    let before = s.captures();
    s.call("look", json!({})).expect("look after");
    assert_eq!(s.captures(), before + 1);
}

const RECURSE: &str = r#"
import { trailblaze } from "@trailblaze/scripting";
export const recurse = trailblaze.tool<{ n: number }, { n: number }>(async (input, ctx) => {
  return (await ctx.tools.recurse({ n: input.n + 1 })) as { n: number };
});
export const hello = trailblaze.tool<{}, { hi: string }>(async () => ({ hi: "there" }));
export const forge = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  // Calling the runner with a smaller depth must not get around the cap.
  const run = (globalThis as any).__trailblazeRun;
  return run({ handler: async (_x: unknown, c: any) => c.tools.forge({}) }, {}, 0);
});
"#;

#[test]
fn recursion_stops_at_depth_16_and_the_session_goes_on() {
    let f = Fixture::new("t");
    f.tool("recurse", RECURSE);
    let (_p, s) = f.session(Settings::default());
    let err = s.call("recurse", json!({ "n": 0 })).expect_err("recursion is capped");
    assert!(
        err.to_string().contains("call depth 16 reached; refusing recurse"),
        "{err}"
    );
    let deepest = s.steps().iter().map(|r| r.depth).max();
    assert_eq!(deepest, Some(15), "depths 0..=15 run, 16 is refused");
    assert_eq!(
        s.call("hello", json!({})).expect("next call works"),
        json!({ "hi": "there" })
    );
}

#[test]
fn a_forged_depth_does_not_escape_the_cap() {
    let f = Fixture::new("t");
    f.tool("recurse", RECURSE);
    let (_p, s) = f.session(Settings::default());
    let err = s.call("forge", json!({})).expect_err("capped");
    assert!(
        err.to_string().contains("call depth 16 reached; refusing forge"),
        "{err}"
    );
}

#[test]
fn unknown_tool_suggests_nearest_names() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let err = s.call("inputTxt", json!({ "text": CANARY })).expect_err("unknown");
    let msg = err.to_string();
    assert!(
        msg.starts_with("unknown tool `inputTxt`") && msg.contains("`inputText`"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY));
    // Positive control: the right name works.
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("known tool runs");
}

#[test]
fn unknown_argument_key_is_named_without_its_value() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("launchApp", json!({ "appId": "com.example.demo", "apId": CANARY }))
        .expect_err("unknown key");
    let msg = err.to_string();
    assert!(
        msg.contains("unknown key `apId`") && msg.contains("did you mean `appId`"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY), "{msg}");
}

#[test]
fn wrong_type_names_path_and_type_without_the_value() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("tapOnPoint", json!({ "x": CANARY, "y": 3 }))
        .expect_err("wrong type");
    let msg = err.to_string();
    assert!(
        msg.contains("`x`") && msg.contains("expected i32") && msg.contains("found a string"),
        "{msg}"
    );
    assert!(!msg.contains(CANARY), "{msg}");
    let err = s.call("pressKey", json!({ "keyCode": CANARY })).expect_err("bad enum");
    assert!(!err.to_string().contains(CANARY), "{err}");
    assert!(err.to_string().contains("`BACK`"), "{err}");
    // Positive control.
    s.call("tapOnPoint", json!({ "x": 3, "y": 3 }))
        .expect("right types run");
}

#[test]
fn script_arguments_are_decoded_strictly_too() {
    let f = Fixture::new("t");
    f.tool(
        "caller",
        r#"import { trailblaze } from "@trailblaze/scripting";
export const caller = trailblaze.tool<{ secret: string }, {}>(async (input, ctx) => {
  await ctx.tools.launchApp({ appId: "com.example.demo", mode: input.secret } as any);
  return {};
});"#,
    );
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("caller", json!({ "secret": CANARY }))
        .expect_err("unknown key from a script");
    let msg = err.to_string();
    assert!(msg.contains("unknown key `mode`"), "{msg}");
    assert!(!msg.contains(CANARY), "{msg}");
}
