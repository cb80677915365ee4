//! A replay of the demo's sign-in trail on the fake iPhone behind WebDriverAgent's protocol
//! (tests/fake_wda), each page source taking `TRAILBLAZE_SOURCE_MS` (default 150 ms, as a real
//! simulator's source of a small screen takes), beside the fake Android phone with the same dump
//! latency and the simulated device, in the same run. Prints the WDA requests per step (source reads
//! per selector step: the goal is at most one, as on Android) and the wall time of each.
//!
//! `cargo bench -p trailblaze --bench ios_replay` (under `cargo test`, a smoke-sized pass at 5 ms)

use std::time::Duration;

use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze::device::spec::IosOptions;
use trailblaze::ios::IosDevice;
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::fake_wda::FakeWda;
use trailblaze_e2e::replay::{Replay, demo_project, replay_trails};

fn line(label: &str, rounds: u32, r: &Replay) {
    println!(
        "{label:<32} {} steps ({} with a selector): {:.2} captures per selector step, {:.0} ms per trail",
        r.steps / u64::from(rounds),
        r.selector_steps / u64::from(rounds),
        r.captures_per_selector_step(),
        r.elapsed.as_secs_f64() * 1000.0 / f64::from(rounds),
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let ms: u64 = std::env::var("TRAILBLAZE_SOURCE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 150 } else { 5 });
    let n = if full { 5 } else { 1 };
    let cache = tempfile::tempdir().expect("temp dir");
    let project = demo_project(cache.path());
    let trail = [trailblaze_e2e::repo_root().join("trailmaps/demo/trails/sign-in.trail.yaml")];

    let sim = Replay::sum(n * 20, || {
        replay_trails(&project, &trail, ("android", None), &mut || {
            project.sim_device("demo").expect("the demo's sim")
        })
    });
    let adb = FakeAdb::demo("emulator-5554");
    adb.set_dump_delay(Duration::from_millis(ms));
    let addr = adb.addr();
    let phone = Replay::sum(n, || {
        replay_trails(&project, &trail, ("android", None), &mut || {
            Box::new(AdbDevice::connect(addr, None, AdbOptions::default()).expect("the fake phone"))
        })
    });
    let wda = FakeWda::demo();
    wda.set_source_delay(Duration::from_millis(ms));
    let opts = IosOptions {
        udid: None,
        wda: wda.url(),
    };
    let before = wda.requests().len();
    let iphone = Replay::sum(n, || {
        replay_trails(&project, &trail, ("ios", Some("ios-iphone")), &mut || {
            Box::new(IosDevice::connect(&opts, None).expect("the fake iPhone"))
        })
    });
    let requests = &wda.requests()[before..];
    let count = |f: &dyn Fn(&str) -> bool| requests.iter().filter(|q| f(&q.path)).count() as f64 / f64::from(n);
    let sources = count(&|p| p.ends_with("/source"));
    let actions = count(&|p| p.ends_with("/actions") || p.ends_with("/wda/keys"));
    let screenshots = count(&|p| p.ends_with("/screenshot"));
    let all = requests.len() as f64 / f64::from(n);
    let steps = iphone.steps as f64 / f64::from(n);

    println!("the demo's sign-in trail replayed (its calls, then the report's screenshot after each step):");
    line("sim", n * 20, &sim);
    line(&format!("fake Android phone, dump {ms} ms"), n, &phone);
    line(&format!("fake iPhone, source {ms} ms"), n, &iphone);
    println!(
        "fake iPhone: {all:.0} WDA requests per trail ({:.1} per step): {sources:.0} page sources \
         ({:.2} per selector step), {actions:.0} touches and keys, {screenshots:.0} screenshots, \
         {:.0} session and app calls",
        all / steps.max(1.0),
        sources / (iphone.selector_steps as f64 / f64::from(n)).max(1.0),
        all - sources - actions - screenshots,
    );
    println!(
        "iPhone / Android phone wall time: {:.2}× (the same latency per screen read)",
        iphone.elapsed.as_secs_f64() / phone.elapsed.as_secs_f64().max(f64::EPSILON)
    );
    assert!(
        iphone.calls_capture_at_most_once_per_step() && iphone.captures <= iphone.selector_steps,
        "{iphone:?}"
    );
}
