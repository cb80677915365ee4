//! An app with a long scrolling list and a search field, run by the simulated device and by the fake
//! phone, and sessions on either: what the Android built-ins' tests drive.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze::device::sim::SimDevice;
use trailblaze::{CallError, Project, Session, SessionOptions};
use trailblaze_host_functions::SecretStore;

use crate::Fixture;
use crate::fake_adb::FakeAdb;

pub const APP_ID: &str = "com.example.list";
pub const SERIAL: &str = "emulator-5554";
/// How many rows the list holds: far more than fit on the 2400-pixel screen.
pub const ROWS: usize = 30;

/// The app: a search field above a scrollable list of `ROWS` rows, each opening a detail screen.
pub fn app_yaml() -> String {
    let mut rows = String::new();
    for i in 1..=ROWS {
        rows.push_str(&format!(
            "          - {{ id: row{i}, class: android.widget.TextView, text: \"Item {i}\", tap: {{ goto: detail }} }}\n"
        ));
    }
    format!(
        "id: {APP_ID}\nstart: home\nscreens:\n  home:\n    title: Shop\n    back: null\n    nodes:\n      - {{ id: search, class: android.widget.EditText, hint: Search, editable: true }}\n      - id: list\n        class: androidx.recyclerview.widget.RecyclerView\n        scrollable: true\n        children:\n{rows}  detail:\n    title: Detail\n    nodes:\n      - {{ id: picked, class: android.widget.TextView, text: Picked }}\n"
    )
}

pub fn sim() -> SimDevice {
    SimDevice::from_app_yaml(&app_yaml(), Path::new("app.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

/// A trailmap `list` whose `app.yaml` is the app.
pub fn fixture() -> Fixture {
    let f = Fixture::new("list");
    f.file("app.yaml", &app_yaml());
    f
}

/// The fake phone running the app.
pub fn phone() -> FakeAdb {
    FakeAdb::start(SERIAL, sim())
}

/// A session on the fake phone (through `AdbDevice`), with `secrets` when given.
pub fn phone_session(f: &Fixture, fake: &FakeAdb, secrets: Option<SecretStore>) -> (Project, Session) {
    let device = AdbDevice::connect(fake.addr(), None, AdbOptions::default()).expect("connects to the fake");
    open(f, Some(Box::new(device)), secrets)
}

/// A session on the simulated device running the app.
pub fn sim_session(f: &Fixture, secrets: Option<SecretStore>) -> (Project, Session) {
    open(f, None, secrets)
}

fn open(
    f: &Fixture,
    device: Option<Box<dyn trailblaze::device::Device>>,
    secrets: Option<SecretStore>,
) -> (Project, Session) {
    let project = f.project();
    let session = project
        .open_session(
            &f.id,
            SessionOptions {
                device,
                out_dir: Some(f.out()),
                secrets: secrets.map(Arc::new),
                ..SessionOptions::default()
            },
        )
        .expect("session starts");
    session
        .call("launchApp", serde_json::json!({ "appId": APP_ID }))
        .expect("the app launches");
    (project, session)
}

/// Calls `tool` and expects a failed call (not a device failure); its message.
pub fn fails(s: &Session, tool: &str, args: Value) -> String {
    match s.call(tool, args) {
        Ok(v) => panic!("{tool} passed: {v}"),
        Err(e @ CallError::Device { .. }) => panic!("{tool}: a device failure, not a failed call: {e}"),
        Err(e) => e.to_string(),
    }
}

/// Calls `tool` and expects it to pass; its result.
pub fn passes(s: &Session, tool: &str, args: Value) -> Value {
    s.call(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The commands the fake phone received after the first `skip`.
pub fn commands_since(fake: &FakeAdb, skip: usize) -> Vec<String> {
    fake.phone().commands[skip..].to_vec()
}

/// Taps the search field (giving it focus and the keyboard).
pub fn focus_search(s: &Session) {
    passes(
        s,
        "tapOnElementBySelector",
        serde_json::json!({ "nodeSelector": { "androidAccessibility": { "resourceIdRegex": ".*:id/search" } } }),
    );
}
