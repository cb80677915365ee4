//! The snapshot cache on a slow phone: replaying the demo trails costs at most one view-tree capture
//! per step that needs the screen (counted with `Device::captures` and the fake's dumps, never timed).

use std::time::Duration;

use serde_json::json;
use trailblaze::SessionOptions;
use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::replay::{demo_project, replay_demo};

const SERIAL: &str = "emulator-5554";

#[test]
fn a_replayed_step_costs_at_most_one_capture_on_a_slow_phone() {
    let cache = tempfile::tempdir().expect("temp dir");
    let project = demo_project(cache.path());
    let fake = FakeAdb::demo(SERIAL);
    // Slow enough that an extra dump would be worth avoiding, quick enough for the suite.
    fake.set_dump_delay(Duration::from_millis(15));
    let addr = fake.addr();
    let r = replay_demo(&project, &mut || {
        Box::new(AdbDevice::connect(addr, None, AdbOptions::default()).expect("connects"))
    });
    assert!(r.selector_steps >= 15, "the demo trails find nodes by selector: {r:?}");
    assert!(
        r.calls_capture_at_most_once_per_step(),
        "a step's calls captured more than once: {r:?}"
    );
    // A PNG needs no view tree until a secret was typed; then the capture that finds the field to
    // paint over becomes the next step's snapshot: no more captures over the whole replay.
    assert!(r.captures <= r.selector_steps, "{r:?}");
    assert!(r.screenshot_captures > 0, "the sign-in typed a secret: {r:?}");
    assert_eq!(fake.phone().dumps, r.captures, "each capture is one `uiautomator dump`");
}

#[test]
fn the_same_replay_on_the_sim_also_captures_once_per_step() {
    let cache = tempfile::tempdir().expect("temp dir");
    let project = demo_project(cache.path());
    let r = replay_demo(&project, &mut || project.sim_device("demo").expect("sim"));
    assert!(r.calls_capture_at_most_once_per_step(), "{r:?}");
    // The sim's SVG screens are masked from a capture once a secret was typed; that capture is
    // kept as the snapshot, so the step after it does not take its own: over the whole replay,
    // still about one capture per step that needs the screen.
    assert!(r.screenshot_captures > 0, "{r:?}");
    assert!(r.captures <= r.selector_steps + r.screenshot_captures / 2, "{r:?}");
}

#[test]
fn the_capture_count_sees_every_capture() {
    // Control for the tests above: the counter is not blind. Cached snapshots cost nothing more,
    // while each fresh look at the device is one capture and one dump.
    let cache = tempfile::tempdir().expect("temp dir");
    let project = demo_project(cache.path());
    let fake = FakeAdb::demo(SERIAL);
    let device = AdbDevice::connect(fake.addr(), None, AdbOptions::default()).expect("connects");
    let s = project
        .open_session(
            "demo",
            SessionOptions {
                device: Some(Box::new(device)),
                ..SessionOptions::default()
            },
        )
        .expect("session");
    s.call("snapshot", json!({})).expect("snapshot");
    s.call("snapshot", json!({})).expect("cached");
    assert_eq!(s.captures(), 1);
    s.view_tree().expect("fresh");
    s.view_tree().expect("fresh");
    assert_eq!((s.captures(), fake.phone().dumps), (3, 3));
}

#[test]
fn a_secret_typed_into_the_focused_field_stays_masked_with_no_capture_of_its_own() {
    use trailblaze_e2e::android_fixture::{self as app, focus_search, passes};
    use trailblaze_host_functions::SecretStore;
    let f = app::fixture();
    let secrets = SecretStore::from_pairs([("PIN".to_string(), "4711-SECRET".to_string())]);
    let (_p, s) = app::sim_session(&f, Some(secrets));
    focus_search(&s);
    let before = s.captures();
    passes(&s, "inputText", json!({ "text": "{{secret:PIN}}" }));
    assert_eq!(s.captures(), before, "typing captured nothing");
    // Deleting a character must not show the rest of the secret.
    passes(&s, "eraseText", json!({ "charactersToErase": 1 }));
    let text = passes(&s, "snapshot", json!({}))["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("\"***\"") && !text.contains("4711"), "{text}");
    // Control: a plain text typed and cut the same way shows what is left.
    passes(&s, "eraseText", json!({ "charactersToErase": 20 }));
    passes(&s, "snapshot", json!({})); // seen empty: no longer masked
    passes(&s, "inputText", json!({ "text": "4711-plain" }));
    passes(&s, "eraseText", json!({ "charactersToErase": 1 }));
    let text = passes(&s, "snapshot", json!({}))["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("\"4711-plai\""), "{text}");
}
