//! The workspace of tests/fixtures/waypoints (an alarm app with waypoints, shortcuts, a trailhead
//! and a toolset), copied to a temp dir, and sessions on it: on the simulated device, and on the
//! fake phone behind the real adb protocol.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze::device::sim::SimDevice;
use trailblaze::{Project, ProjectOptions, Session, SessionOptions};

use crate::fake_adb::FakeAdb;
use crate::{Fixture, copy_dir, repo_root};

pub const APP_ID: &str = "com.example.alarms";
pub const MAP: &str = "alarms";

/// A copy of the workspace; `home` holds its `trails/` (generated files land in the copy).
pub struct Alarms {
    pub f: Fixture,
    pub home: PathBuf,
}

impl Alarms {
    pub fn new() -> Alarms {
        let f = Fixture::new("unused");
        let home = f.dir.path().join("ws");
        copy_dir(&repo_root().join("tests/fixtures/waypoints"), &home);
        Alarms { f, home }
    }

    pub fn map_dir(&self) -> PathBuf {
        self.home.join("trails/config/trailmaps/alarms")
    }

    pub fn app_file(&self) -> PathBuf {
        self.map_dir().join("app.yaml")
    }

    /// Writes `rel` (relative to the trailmap) with `content`.
    pub fn file(&self, rel: &str, content: &str) {
        let path = self.map_dir().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
    }

    pub fn project(&self) -> Project {
        trailblaze::open(
            &self.home.join("trails/config/trailmaps"),
            ProjectOptions {
                cache_dir: Some(self.f.cache()),
                ..ProjectOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A session on the simulated app, at its home screen.
    pub fn sim_session(&self) -> (Project, Session) {
        self.open(None)
    }

    /// The fake phone running the app.
    pub fn phone(&self) -> FakeAdb {
        let app = SimDevice::from_app_file(&self.app_file()).unwrap_or_else(|e| panic!("{e}"));
        FakeAdb::start("emulator-5554", app)
    }

    /// A session on the fake phone, the app launched at its home screen.
    pub fn phone_session(&self, fake: &FakeAdb) -> (Project, Session) {
        let device = AdbDevice::connect(fake.addr(), None, AdbOptions::default()).expect("connects to the fake");
        self.open(Some(Box::new(device)))
    }

    fn open(&self, device: Option<Box<dyn trailblaze::device::Device>>) -> (Project, Session) {
        let project = self.project();
        let session = project
            .open_session(
                MAP,
                SessionOptions {
                    device,
                    out_dir: Some(self.f.out()),
                    ..SessionOptions::default()
                },
            )
            .unwrap_or_else(|e| panic!("{e}"));
        session
            .call("launchApp", json!({ "appId": APP_ID, "launchMode": "FORCE_RESTART" }))
            .unwrap_or_else(|e| panic!("the app launches: {e}"));
        (project, session)
    }
}

impl Default for Alarms {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs `check` on a session of each device: the simulated app, then the fake phone (`Some`).
pub fn on_each_device(check: impl Fn(&Session, Option<&FakeAdb>)) {
    let a = Alarms::new();
    let (_p, s) = a.sim_session();
    check(&s, None);
    let fake = a.phone();
    let (_p, s) = a.phone_session(&fake);
    check(&s, Some(&fake));
}

/// The waypoints the screen is at, from the snapshot.
pub fn here(s: &Session) -> Vec<String> {
    let snap = s
        .call("snapshot", json!({}))
        .unwrap_or_else(|e| panic!("snapshot: {e}"));
    snap["waypoints"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The tools of the steps the session logged after `seq`.
pub fn tools_after(s: &Session, seq: u64) -> Vec<String> {
    s.steps_after(seq).into_iter().map(|r| r.tool).collect()
}

/// The last step's seq.
pub fn last_seq(s: &Session) -> u64 {
    s.steps().last().map_or(0, |r| r.seq)
}

/// The text of field `id` (`hour`) in the device's tree.
pub fn field(s: &Session, id: &str) -> Option<String> {
    crate::field_text(&crate::device_tree(s), id)
}

/// A file path as the tests write it into arguments.
pub fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Calls `tool` and expects it to pass; its result.
pub fn ok(s: &Session, tool: &str, args: Value) -> Value {
    s.call(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// Calls `tool` and expects a failed call (never a device failure); its message.
pub fn err(s: &Session, tool: &str, args: Value) -> String {
    match s.call(tool, args) {
        Ok(v) => panic!("{tool} passed: {v}"),
        Err(e) if e.is_device_failure() => panic!("{tool}: a device failure: {e}"),
        Err(e) => e.to_string(),
    }
}
