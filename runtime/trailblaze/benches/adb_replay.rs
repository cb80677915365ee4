//! Replay of the demo trails (each step's calls, then the report's screenshot) over the fake phone
//! behind the real adb protocol, with a `uiautomator dump` latency, beside the simulated device in
//! the same run. Prints captures per selector step and steps per second for each.
//!
//! `TRAILBLAZE_DUMP_MS=300 cargo bench -p trailblaze --bench adb_replay` (default 300 ms; under
//! `cargo test` a smoke-sized pass with 5 ms)

use std::time::Duration;

use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::replay::{Replay, demo_project, replay_demo};

fn line(label: &str, rounds: u32, r: &Replay) {
    println!(
        "{label:<28} {rounds} × {} steps ({} with a selector): {} captures, {:.2} per selector step \
         (worst step {:?}), {:.1} steps/s",
        r.steps / u64::from(rounds),
        r.selector_steps / u64::from(rounds),
        r.captures / u64::from(rounds),
        r.captures_per_selector_step(),
        r.worst.as_ref().map(|w| format!("{} {}: {}/{}", w.0, w.1, w.2, w.3)),
        r.steps_per_second(),
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let dump_ms: u64 = std::env::var("TRAILBLAZE_DUMP_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 300 } else { 5 });
    let (sim_rounds, phone_rounds) = if full { (200, 3) } else { (2, 1) };
    let cache = tempfile::tempdir().expect("temp dir");
    let project = demo_project(cache.path());

    let sim = Replay::sum(sim_rounds, || {
        replay_demo(&project, &mut || project.sim_device("demo").expect("the demo's sim"))
    });
    let fake = FakeAdb::demo("emulator-5554");
    fake.set_dump_delay(Duration::from_millis(dump_ms));
    let addr = fake.addr();
    let phone = Replay::sum(phone_rounds, || {
        replay_demo(&project, &mut || {
            Box::new(AdbDevice::connect(addr, None, AdbOptions::default()).expect("the fake phone"))
        })
    });
    println!("demo trails replayed (screenshots after every step, as `run --screenshots all`):");
    line("sim", sim_rounds, &sim);
    line(&format!("fake phone, dump {dump_ms} ms"), phone_rounds, &phone);
    let dumps = fake.phone().dumps;
    println!(
        "fake phone: {dumps} uiautomator dumps; at the dump latency alone {:.1} s of {:.1} s",
        dumps as f64 * dump_ms as f64 / 1000.0,
        phone.elapsed.as_secs_f64()
    );
    assert!(
        phone.calls_capture_at_most_once_per_step() && phone.captures <= phone.selector_steps,
        "{phone:?}"
    );
}
