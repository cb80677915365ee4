//! `trailblaze mcp`'s tools over the workspace (`listTrails`, `readTrail`, `runTrail`), its device
//! (`switchDevice`) and its resources (`trailblaze://devices`, `trailblaze://trailmaps`), driven by
//! the official TypeScript SDK client: each rule beside a control that shows it could fail.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trailblaze_e2e::CANARY;
use trailblaze_e2e::fake_adb::FakeAdb;

use super::{assert_ok, call, cli, demo, drive_stdio, drive_stdio_env, refs, text};

/// What the file outside the workspace holds: no reply may show it.
const OUTSIDE: &str = "OUTSIDE-MARKER-7f3c";

/// A reply's text as JSON.
fn json_of(r: &Value) -> Value {
    serde_json::from_str(text(r)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(r)))
}

fn assert_err(r: &Value, what: &str) {
    assert_eq!(r["isError"], json!(true), "{what} should fail: {}", text(r));
}

/// A resource read's one text, as JSON.
fn resource_json(r: &Value) -> Value {
    let contents = r["contents"].as_array().unwrap_or_else(|| panic!("no contents: {r}"));
    assert_eq!(contents.len(), 1, "{r}");
    assert_eq!(contents[0]["mimeType"], json!("application/json"), "{r}");
    serde_json::from_str(contents[0]["text"].as_str().unwrap_or_default()).expect("the resource is JSON")
}

/// The demo's sign-in, then a step that fails (no such screen), then one never run.
const FAILS_AT_TWO: &str = r#"config:
  id: demo/fails-at-two
  target: demo
  title: Fails at step two
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Sign in
    recording:
      tools:
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText: { text: "jane@example.com" }
        - inputText:
            text: "{{secret:DEMO_PASSWORD}}"
            nodeSelector: { androidAccessibility: { resourceIdRegex: ".*:id/password" } }
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Sign in } }
  - verify: The settings of another app are shown
    recording:
      tools:
        - assertVisibleBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Nowhere to be seen } }
  - step: Go back
    recording:
      tools:
        - pressKey: { keyCode: BACK }
"#;

#[test]
fn list_trails_lists_the_workspace_trails_and_read_trail_reads_only_trails_inside() {
    let f = demo();
    // Outside the workspace (the trailmaps folder): a trail file, and a link to it from inside.
    let outside = f.dir.path().join("outside.trail.yaml");
    std::fs::write(&outside, format!("# {OUTSIDE}\n")).expect("write");
    std::os::unix::fs::symlink(&outside, f.map_dir().join("trails/link.trail.yaml")).expect("link");
    let sign_in = f.map_dir().join("trails/sign-in.trail.yaml");
    let abs = |p: &Path| p.to_str().expect("utf-8").to_string();
    let ops = json!([
        call("listTrails", json!({})),
        call("listTrails", json!({ "trailmap": "demo" })),
        call("listTrails", json!({ "trailmap": "nope" })),
        call("readTrail", json!({ "path": "demo/trails/sign-in.trail.yaml" })),
        call("readTrail", json!({ "path": abs(&sign_in) })),
        call("readTrail", json!({ "path": "../../etc/passwd" })),
        call("readTrail", json!({ "path": "/etc/passwd" })),
        call("readTrail", json!({ "path": "../outside.trail.yaml" })),
        call("readTrail", json!({ "path": abs(&outside) })),
        call("readTrail", json!({ "path": "demo/trails/link.trail.yaml" })),
        call("readTrail", json!({ "path": "demo/app.yaml" })),
        call("readTrail", json!({ "path": 7 })),
        call(
            "readTrail",
            json!({ "path": "demo/trails/sign-in.trail.yaml", "extra": CANARY })
        ),
        call("runTrail", json!({ "path": "../outside.trail.yaml" })),
    ]);
    let (r, stderr) = drive_stdio(&f, &ops);

    // Every trail of the workspace; not the link that leads outside it.
    assert_ok(&r[0], "listTrails");
    let listed = json_of(&r[0]);
    let trails = listed["trails"].as_array().expect("trails");
    let paths: Vec<&str> = trails.iter().filter_map(|t| t["path"].as_str()).collect();
    for want in [
        "demo/trails/dark-mode.trail.yaml",
        "demo/trails/open-message.trail.yaml",
        "demo/trails/sign-in.trail.yaml",
    ] {
        assert!(paths.contains(&want), "{want} not in {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.contains("link")), "{paths:?}");
    assert!(!text(&r[0]).contains(OUTSIDE), "{}", text(&r[0]));
    let sign = trails
        .iter()
        .find(|t| t["path"] == "demo/trails/sign-in.trail.yaml")
        .expect("sign-in");
    assert_eq!(sign["id"], "demo/sign-in");
    assert_eq!(sign["title"], "Sign in");
    assert_eq!(sign["target"], "demo");
    assert_eq!(sign["steps"], 2);
    assert_eq!(sign["trailhead"], true);
    // The filter: the same trails for their trailmap; an unknown one is refused by the argument's name.
    assert_ok(&r[1], "listTrails demo");
    assert_eq!(json_of(&r[1])["trails"], listed["trails"]);
    assert_err(&r[2], "listTrails of no trailmap");
    assert!(
        text(&r[2]).contains("`trailmap`") && text(&r[2]).contains("demo"),
        "{}",
        text(&r[2])
    );

    // The control: a trail inside reads as its file is, relative or absolute.
    let file = std::fs::read_to_string(&sign_in).expect("trail");
    assert_ok(&r[3], "readTrail");
    assert_eq!(text(&r[3]), file);
    assert_ok(&r[4], "readTrail by an absolute path inside");
    assert_eq!(text(&r[4]), file);
    // Anything outside, or not a trail, is refused by the argument's name, its text never shown.
    for (i, what) in [
        (5, "a `..` escape"),
        (6, "an absolute path outside"),
        (7, "a trail outside by `..`"),
        (8, "a trail outside by its absolute path"),
        (9, "a link to a trail outside"),
        (10, "a file that is no trail"),
        (11, "a path that is no string"),
        (12, "an unknown argument"),
        (13, "runTrail of a trail outside"),
    ] {
        assert_err(&r[i], what);
        let t = text(&r[i]);
        assert!(t.contains("`path`") || t.contains("`extra`"), "{what}: {t}");
        assert!(
            !t.contains("root:") && !t.contains(OUTSIDE),
            "{what} shows what it read: {t}"
        );
        assert!(
            !t.contains("passwd") && !t.contains("outside.trail"),
            "{what} repeats the value: {t}"
        );
    }
    assert!(text(&r[6]).contains("inside the workspace"), "{}", text(&r[6]));
    assert!(text(&r[10]).contains("trail file"), "{}", text(&r[10]));
    assert!(text(&r[11]).contains("must be a string"), "{}", text(&r[11]));
    assert!(!stderr.contains(OUTSIDE));
}

#[test]
fn run_trail_replays_on_the_session_and_reports_the_failing_step_without_recording() {
    let f = demo();
    f.file("trails/fails-at-two.trail.yaml", FAILS_AT_TWO);
    let (email, ..) = refs(&f);
    let ops = json!([
        call("type", json!({ "text": "before@example.com", "ref": email })),
        call("runTrail", json!({ "path": "demo/trails/sign-in.trail.yaml" })),
        call("snapshot", json!({})),
        call("runTrail", json!({ "path": "demo/trails/fails-at-two.trail.yaml" })),
        call("setDarkMode", json!({ "enabled": true })),
        call("saveTrail", json!({ "name": "around-replays" })),
        call("runTrail", json!({ "path": "demo/trails/none.trail.yaml" })),
    ]);
    let (r, _) = drive_stdio(&f, &ops);
    assert_ok(&r[0], "type");

    // A passing trail: passed, its steps, its time, no failed step; the device is where it left it.
    assert_ok(&r[1], "runTrail sign-in");
    let passed = json_of(&r[1]);
    assert_eq!(passed["outcome"], "passed", "{passed}");
    assert_eq!(passed["passed"], true);
    assert_eq!(passed["path"], "demo/trails/sign-in.trail.yaml");
    assert!(passed["durationMs"].is_u64(), "{passed}");
    assert!(passed.get("failedStep").is_none(), "{passed}");
    assert_eq!(
        passed["steps"].as_array().map(Vec::len),
        Some(3),
        "trailhead and two steps: {passed}"
    );
    assert!(
        text(&r[2]).contains("Inbox"),
        "signed in by the replay:\n{}",
        text(&r[2])
    );

    // A trail that fails at step 2: that step, its text and error; the step after it is skipped.
    assert_ok(
        &r[3],
        "runTrail fails-at-two (a failed trail is a result, not a tool error)",
    );
    let failed = json_of(&r[3]);
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["passed"], false);
    assert_eq!(failed["failedStep"]["index"], 2, "{failed}");
    assert_eq!(failed["failedStep"]["text"], "The settings of another app are shown");
    let error = failed["failedStep"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("Nowhere to be seen"), "the step's error: {error}");
    let outcomes: Vec<&str> = failed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["outcome"].as_str())
        .collect();
    assert_eq!(outcomes, ["passed", "passed", "failed", "skipped"]);

    // The recording holds the client's calls around the replays (the control), none of the replays'.
    assert_ok(&r[4], "setDarkMode");
    assert_ok(&r[5], "saveTrail");
    let saved = std::fs::read_to_string(f.map_dir().join("trails/around-replays.trail.yaml")).expect("saved");
    assert!(
        saved.contains("before@example.com") && saved.contains("setDarkMode"),
        "{saved}"
    );
    for replayed in [
        "launchApp",
        "jane@example.com",
        "DEMO_PASSWORD",
        "id/password",
        "Nowhere",
    ] {
        assert!(
            !saved.contains(replayed),
            "a replayed call joined the recording ({replayed}):\n{saved}"
        );
    }
    assert_err(&r[6], "runTrail of no file");
    assert!(text(&r[6]).contains("`path`"), "{}", text(&r[6]));
    assert!(!serde_json::to_string(&r).expect("json").contains(CANARY));
}

/// The session folders holding a trace under `out`.
fn traces(out: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(out)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("trace.json").is_file())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn switch_device_keeps_the_recording_and_a_bad_device_keeps_the_session() {
    const SERIAL: &str = "emulator-5554";
    let fake = FakeAdb::demo(SERIAL);
    let f = demo();
    let (email, ..) = refs(&f);
    let before = traces(&f.out()).len();
    let mut env = cli(&f);
    env.env("ADB_SERVER_SOCKET", format!("tcp:{}", fake.addr()));
    let ops = json!([
        call("type", json!({ "text": "kept@example.com", "ref": email })),
        call("switchDevice", json!({ "device": "pixel-phone" })),
        call("switchDevice", json!({ "device": "android:gone-serial" })),
        call("switchDevice", json!({ "device": 5 })),
        call("snapshot", json!({})),
        call("switchDevice", json!({ "device": format!("android:{SERIAL}") })),
        call("snapshot", json!({})),
        call("switchDevice", json!({ "device": "sim" })),
        call("snapshot", json!({})),
        call("saveTrail", json!({ "name": "kept" })),
    ]);
    let (r, _) = drive_stdio_env(&f, &ops, &env);
    assert_ok(&r[0], "type");
    // A name that is no device, a phone the adb server does not have, a wrong type: refused by
    // the argument's name, the value not repeated, and the session as it was.
    for (i, value) in [(1, "pixel-phone"), (2, "gone-serial"), (3, "")] {
        assert_err(&r[i], "a bad device");
        let t = text(&r[i]);
        assert!(t.contains("`device`"), "{t}");
        assert!(value.is_empty() || !t.contains(value), "repeats the value: {t}");
    }
    assert!(text(&r[2]).contains("cannot be opened"), "{}", text(&r[2]));
    assert!(text(&r[3]).contains("must be a string"), "{}", text(&r[3]));
    assert!(
        text(&r[4]).contains("kept@example.com"),
        "the session changed after a refused switch:\n{}",
        text(&r[4])
    );
    // The phone behind the adb server: a session on it, at its start screen.
    assert_ok(&r[5], "switchDevice to the phone");
    assert_ok(&r[6], "snapshot on the phone");
    assert!(
        text(&r[6]).contains("hint=\"Email\"") && !text(&r[6]).contains("kept@example.com"),
        "{}",
        text(&r[6])
    );
    // Back to a fresh sim: the start screen (the control for the refused switches above).
    assert_ok(&r[7], "switchDevice sim");
    assert!(!text(&r[8]).contains("kept@example.com"), "{}", text(&r[8]));
    assert!(text(&r[8]).contains("hint=\"Email\""), "{}", text(&r[8]));
    // The recording went on across the switches.
    assert_ok(&r[9], "saveTrail");
    let saved = std::fs::read_to_string(f.map_dir().join("trails/kept.trail.yaml")).expect("saved");
    assert!(saved.contains("kept@example.com"), "{saved}");
    // Each device session ended wrote its trace, as `resetSession` does: the sim's first session
    // at the switch to the phone, the phone's at the switch back, the last sim's at the end.
    assert_eq!(traces(&f.out()).len(), before + 3, "{:?}", traces(&f.out()));
}

#[test]
fn resources_describe_the_devices_and_trailmaps_and_an_unknown_one_is_not_found() {
    const SERIAL: &str = "emulator-5554";
    let fake = FakeAdb::demo(SERIAL);
    let f = demo();
    let mut env = cli(&f);
    env.env("ADB_SERVER_SOCKET", format!("tcp:{}", fake.addr()));
    let ops = json!([
        { "op": "listResources" },
        { "op": "readResource", "uri": "trailblaze://devices" },
        { "op": "readResource", "uri": "trailblaze://trailmaps" },
        { "op": "readResource", "uri": "trailblaze://trailmaps/demo" },
        { "op": "readResource", "uri": "trailblaze://nothing" },
        { "op": "readResource", "uri": "trailblaze://trailmaps/nope" },
        { "op": "readResource", "uri": "file:///etc/passwd" },
    ]);
    let (r, _) = drive_stdio_env(&f, &ops, &env);

    assert_eq!(r[0]["capability"], json!(true), "{}", r[0]);
    let uris: Vec<&str> = r[0]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|res| res["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "trailblaze://devices",
            "trailblaze://trailmaps",
            "trailblaze://trailmaps/demo"
        ]
    );
    assert_eq!(r[0]["templates"][0]["uriTemplate"], "trailblaze://trailmaps/{id}");

    let devices = resource_json(&r[1]);
    let list = devices["devices"].as_array().expect("devices");
    assert_eq!(list[0]["name"], "sim");
    assert_eq!(list[0]["state"], "ready");
    assert!(list.iter().any(|d| d["name"] == "web"), "{devices}");
    let phone = list
        .iter()
        .find(|d| d["name"] == format!("android:{SERIAL}"))
        .unwrap_or_else(|| panic!("the adb server's phone: {devices}"));
    assert_eq!(phone["state"], "device");
    assert_eq!(phone["platform"], "android");
    assert_eq!(devices["default"], "sim");

    let maps = resource_json(&r[2]);
    let demo_map = &maps["trailmaps"][0];
    assert_eq!(demo_map["id"], "demo", "{maps}");
    assert_eq!(demo_map["folder"], "demo");
    assert_eq!(demo_map["app"], "demo/app.yaml");
    assert_eq!(demo_map["trails"], 3);
    assert_eq!(demo_map["served"], true);
    assert!(
        demo_map["appIds"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("com.example.demo")))
    );
    // The demo's own tools (signIn, openMessage, setDarkMode, inboxSubjects, the fixture's spin, ...).
    assert!(demo_map["tools"].as_u64().is_some_and(|n| n >= 5), "{demo_map}");

    let one = resource_json(&r[3]);
    assert_eq!(one["id"], "demo");
    assert!(
        one["toolNames"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("signIn"))),
        "{one}"
    );
    assert_eq!(one["trailList"].as_array().map(Vec::len), Some(3), "{one}");
    assert_eq!(one["tools"], demo_map["tools"]);

    // Unknown URIs: the JSON-RPC error for a resource not found (the known ones above, the control).
    for res in &r[4..=6] {
        assert_eq!(res["error"]["code"], json!(-32002), "{res}");
        assert!(res.get("contents").is_none());
    }
}
