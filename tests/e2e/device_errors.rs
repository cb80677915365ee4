//! A device that fails is not a failed step: the error stays typed from the device up to the caller.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use trailblaze::device::{Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewTree};
use trailblaze::{CallError, SessionOptions};
use trailblaze_e2e::Fixture;

/// The simulated device, until `lost` is set: then every action fails as an unreachable device would.
struct Flaky {
    inner: Box<dyn Device>,
    lost: Arc<AtomicBool>,
}

impl Flaky {
    fn check(&self) -> Result<(), DeviceError> {
        if self.lost.load(Ordering::Relaxed) {
            Err(DeviceError::Io("connection reset".into()))
        } else {
            Ok(())
        }
    }
}

impl Device for Flaky {
    fn name(&self) -> String {
        "flaky".into()
    }
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.check()?;
        self.inner.snapshot()
    }
    fn captures(&self) -> u64 {
        self.inner.captures()
    }
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.check()?;
        self.inner.tap(x, y)
    }
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.check()?;
        self.inner.long_press(x, y)
    }
    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        self.check()?;
        self.inner.input_text(text)
    }
    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        self.check()?;
        self.inner.press_key(key)
    }
    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        self.check()?;
        self.inner.launch_app(app_id, mode)
    }
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        self.check()?;
        self.inner.screenshot()
    }
}

#[test]
fn a_lost_device_is_a_device_failure_not_a_failed_step() {
    let f = Fixture::new("t");
    let project = f.project();
    let lost = Arc::new(AtomicBool::new(false));
    let device = Flaky {
        inner: project.sim_device("t").expect("sim"),
        lost: lost.clone(),
    };
    let s = project
        .open_session(
            "t",
            SessionOptions {
                device: Some(Box::new(device)),
                ..SessionOptions::default()
            },
        )
        .expect("session");
    // Control: a step the device refuses is a failed step, not a device failure.
    let refused = s
        .call("launchApp", json!({ "appId": "com.example.unknown" }))
        .expect_err("unknown app");
    assert!(matches!(refused, CallError::Failed { .. }), "{refused:?}");
    assert!(!refused.is_device_failure());
    s.call("tapOnPoint", json!({ "x": 1, "y": 1 }))
        .expect("works while connected");
    lost.store(true, Ordering::Relaxed);
    for (tool, args) in [
        ("tapOnPoint", json!({ "x": 1, "y": 1 })),
        ("snapshot", json!({})),
        ("tap", json!({ "ref": "a000" })),
    ] {
        let err = s.call(tool, args).expect_err("the device is gone");
        assert!(err.is_device_failure(), "{tool}: {err:?}");
        assert!(
            err.to_string()
                .contains("the device failed: device I/O: connection reset"),
            "{err}"
        );
    }
}

/// The simulated device, each tap taking 50 ms: device time, not script time.
struct Slow(Box<dyn Device>);

impl Device for Slow {
    fn name(&self) -> String {
        "slow".into()
    }
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.0.snapshot()
    }
    fn captures(&self) -> u64 {
        self.0.captures()
    }
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        std::thread::sleep(std::time::Duration::from_millis(50));
        self.0.tap(x, y)
    }
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.0.long_press(x, y)
    }
    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        self.0.input_text(text)
    }
    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        self.0.press_key(key)
    }
    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        self.0.launch_app(app_id, mode)
    }
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        self.0.screenshot()
    }
}

#[test]
fn device_time_counts_against_the_wall_clock_not_the_script_clock() {
    let f = Fixture::new("t");
    f.tool(
        "taps",
        "import { trailblaze } from \"@trailblaze/scripting\";\nexport const taps = trailblaze.tool<{ n: number }, {}>(async (input, ctx) => { for (let i = 0; i < input.n; i++) await ctx.tools.tapOnPoint({ x: 1, y: 1 }); return {}; });\nexport const busy = trailblaze.tool<{}, {}>(async () => { const t = Date.now(); while (Date.now() - t < 1500) {} return {}; });\n",
    );
    let project = f.project();
    let limits = |wall_ms: u64| trailblaze::Settings {
        limits: trailblaze::Limits {
            timeout: std::time::Duration::from_millis(600),
            wall_timeout: std::time::Duration::from_millis(wall_ms),
            ..trailblaze::Limits::default()
        },
        ..trailblaze::Settings::default()
    };
    let open = |wall_ms: u64| {
        project
            .open_session(
                "t",
                SessionOptions {
                    device: Some(Box::new(Slow(project.sim_device("t").expect("sim")))),
                    settings: limits(wall_ms),
                    ..SessionOptions::default()
                },
            )
            .expect("session")
    };
    // 20 taps × 50 ms = 1 s of device time: past the 600 ms script clock, which does not count it.
    let s = open(60_000);
    s.call("taps", json!({ "n": 20 }))
        .expect("device time is not script time");
    // Control: the same 600 ms are enforced on JS that runs.
    let err = s.call("busy", json!({})).expect_err("script time").to_string();
    assert_eq!(err, "busy: exceeded its time limit of 600 ms");
    // The wall clock counts the device: 1 s of taps under a 700 ms wall-clock budget stops.
    let s = open(700);
    let err = s.call("taps", json!({ "n": 20 })).expect_err("wall clock").to_string();
    assert!(
        err.contains("exceeded its wall-clock limit of 700 ms (device time included)"),
        "{err}"
    );
}
