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
