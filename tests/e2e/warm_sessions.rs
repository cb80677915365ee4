//! Sessions started on warm threads (engines made before they are asked for) and modules loaded
//! from bytecode another engine compiled: the same isolation and the same `.ts` positions as a
//! session that made everything itself.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze::{Project, Settings};
use trailblaze_e2e::Fixture;

/// Module state a session's tools share, and no one else's.
const COUNTER: &str = r#"import { trailblaze } from "@trailblaze/scripting";
let calls = 0;
/** Counts its calls in this session. */
export const count = trailblaze.tool<{}, { calls: number }>(async () => ({ calls: ++calls }));
"#;

/// A helper module whose error names it: the same text under two names (`lib1.ts`, `lib2.ts`).
const LIB: &str = r#"export function boom(): never {
  throw new Error("boom");
}
"#;

fn tool_importing(lib: &str, name: &str) -> String {
    format!(
        "import {{ trailblaze }} from \"@trailblaze/scripting\";\nimport {{ boom }} from \"./{lib}\";\n/** Fails in {lib}. */\nexport const {name} = trailblaze.tool<{{}}, {{}}>(async () => {{\n  boom();\n  return {{}};\n}});\n"
    )
}

fn fixture() -> Fixture {
    let f = Fixture::new("warm");
    f.tool("count", COUNTER);
    f.tool("lib1", LIB).tool("lib2", LIB);
    f.tool("fail1", &tool_importing("lib1", "fail1"));
    f.tool("fail2", &tool_importing("lib2", "fail2"));
    f
}

fn open(project: &Project) -> trailblaze::Session {
    open_with(project, Settings::default()).expect("session")
}

fn counts(project: &Project) -> Vec<Value> {
    let s = open(project);
    (0..2)
        .map(|_| s.call("count", json!({})).expect("count")["calls"].clone())
        .collect()
}

/// Waits until the pool has a thread waiting (it is made in the background).
fn until_warm(project: &Project) {
    let until = Instant::now() + Duration::from_secs(20);
    while project.warm_sessions().waiting() == 0 {
        assert!(Instant::now() < until, "no warm session thread was made");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sessions_on_warm_threads_share_no_module_state() {
    let f = fixture();
    let project = f.project().with_warm_sessions(2);
    // The first two sessions make their own engines; the second asks for the pool to be filled.
    assert_eq!(counts(&project), [json!(1), json!(2)]);
    assert_eq!(counts(&project), [json!(1), json!(2)]);
    assert_eq!(project.warm_sessions().hits(), 0);
    for _ in 0..3 {
        until_warm(&project);
        assert_eq!(
            counts(&project),
            [json!(1), json!(2)],
            "a warm session starts from nothing"
        );
    }
    assert_eq!(project.warm_sessions().hits(), 3, "the pool served them");

    // Control: without the pool every session makes its engine, with the same result.
    let cold = f.project().with_warm_sessions(0);
    for _ in 0..3 {
        assert_eq!(counts(&cold), [json!(1), json!(2)]);
    }
    assert_eq!((cold.warm_sessions().hits(), cold.warm_sessions().waiting()), (0, 0));
}

/// A one-shot command prepares its session's engine before it has made its device: the session
/// then starts on that thread, as fresh as any. Control: with other limits the prepared engine is
/// not the one asked for, and the session makes its own.
#[test]
fn a_prepared_session_starts_on_the_engine_made_for_it() {
    let f = fixture();
    let project = f.project();
    project.prepare_session("warm", &Settings::default()).expect("prepared");
    assert_eq!(project.warm_sessions().waiting(), 1);
    assert_eq!(counts(&project), [json!(1), json!(2)], "it starts from nothing");
    assert_eq!(
        (project.warm_sessions().hits(), project.warm_sessions().waiting()),
        (1, 0)
    );

    let other = f.project();
    let mut tight = Settings::default();
    tight.limits.memory_bytes /= 2;
    other.prepare_session("warm", &tight).expect("prepared");
    assert_eq!(counts(&other), [json!(1), json!(2)]);
    assert_eq!(
        other.warm_sessions().hits(),
        0,
        "an engine made for other limits is not taken"
    );

    // A pool turned off prepares nothing.
    let off = f.project().with_warm_sessions(0);
    off.prepare_session("warm", &Settings::default()).expect("prepared");
    assert_eq!(off.warm_sessions().waiting(), 0);
}

fn failure(project: &Project, tool: &str) -> String {
    open(project).call(tool, json!({})).expect_err("it throws").to_string()
}

#[test]
fn a_module_loaded_from_bytecode_keeps_its_name_and_ts_positions() {
    let f = fixture();
    let project = f.project().with_warm_sessions(0);
    // The first session compiles the modules, the next loads them from that bytecode: same text.
    let compiled = failure(&project, "fail1");
    assert!(
        compiled.contains("boom") && compiled.contains("lib1.ts:2"),
        "{compiled}"
    );
    assert_eq!(failure(&project, "fail1"), compiled);
    // The same text under another name is that module, not the first one's bytecode.
    let other = failure(&project, "fail2");
    assert!(other.contains("lib2.ts:2") && !other.contains("lib1"), "{other}");
    assert_eq!(failure(&project, "fail2"), other);
}

/// Settings whose memory limit is below what the script engine needs to start at all.
fn starved() -> Settings {
    Settings {
        limits: trailblaze::Limits {
            memory_bytes: 64 << 10,
            ..trailblaze::Limits::default()
        },
        ..Settings::default()
    }
}

fn open_with(project: &Project, settings: Settings) -> Result<trailblaze::Session, String> {
    let device = project.sim_device("warm").expect("device");
    project
        .open_session(
            "warm",
            trailblaze::SessionOptions {
                device: Some(device),
                settings,
                ..Default::default()
            },
        )
        .map_err(|e| e.to_string())
}

/// A session started for a caller waiting for it makes its script engine for the first call that
/// may run a script, not before: built-in calls are served without one. Seen through an engine that
/// cannot be made (a memory limit below what it needs): the built-in calls succeed, the scripted one
/// fails naming the engine. Control: a thread the pool started ahead of its session makes the engine
/// first, so a session on it does not start at all.
#[test]
fn a_session_makes_its_engine_only_for_a_call_that_may_run_a_script() {
    let f = fixture();
    let project = f.project().with_warm_sessions(1);
    let s = open_with(&project, starved()).expect("no engine is made to start a session");
    s.call("snapshot", json!({})).expect("a built-in call needs no engine");
    let err = s.call("count", json!({})).expect_err("no engine").to_string();
    assert!(err.contains("the script engine"), "{err}");
    s.call("snapshot", json!({}))
        .expect("built-in calls go on being served");
    drop(s);
    // The second session asks the pool for a thread made ahead (after its first call).
    let s = open_with(&project, starved()).expect("started for its caller");
    s.call("snapshot", json!({})).expect("a built-in call");
    drop(s);
    until_warm(&project);
    let err = open_with(&project, starved())
        .err()
        .expect("the warm thread's engine failed");
    assert!(err.contains("the script engine"), "{err}");
    // And with room, the same sessions run the script.
    let s = open_with(&project, Settings::default()).expect("session");
    assert_eq!(s.call("count", json!({})).expect("count")["calls"], json!(1));
}
