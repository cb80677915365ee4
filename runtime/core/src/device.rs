//! The `Device` a session drives: snapshot (view tree), tap, long press, input text, press key,
//! launch app, screenshot, and the platform's extras (a shell, the clipboard, app data, files, ...,
//! in `extras`). `sim` is the built-in simulated device; `adb` drives Android.

pub mod extras;
pub mod limits;
pub mod sim;
pub mod spec;
pub mod trace;
mod web_node;

pub use extras::{Broadcast, ExtraValue, InstalledApp};
pub use spec::DeviceSpec;
pub use web_node::{WebHandle, WebNode};

use serde::{Deserialize, Serialize};

/// A rectangle in device pixels: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Bounds {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Bounds {
    /// The centre, computed wide: no pair of coordinates can overflow (a device's numbers are
    /// checked against `limits::MAX_COORD`, but a `Bounds` may come from anywhere).
    pub fn center(&self) -> (i32, i32) {
        let mid = |a: i32, b: i32| ((i64::from(a) + i64::from(b)) / 2) as i32;
        (mid(self.left, self.right), mid(self.top, self.bottom))
    }

    /// Where to touch the node: the centre of its part inside the screen (`width` × `height`), or
    /// `None` when nothing of it is on the screen (off screen, empty or inverted bounds). A tap
    /// never lands outside the node or the screen.
    pub fn tap_point(&self, width: i32, height: i32) -> Option<(i32, i32)> {
        let shown = Bounds {
            left: self.left.max(0),
            top: self.top.max(0),
            right: self.right.min(width),
            bottom: self.bottom.min(height),
        };
        (shown.left < shown.right && shown.top < shown.bottom).then(|| shown.center())
    }
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }
}

/// One node of the device's view tree, in the shape Android's accessibility tree uses.
/// A password field's `text` is already masked by the device; the tree never holds a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ViewNode {
    pub class_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_description: Option<String>,
    pub bounds: Bounds,
    pub enabled: bool,
    pub clickable: bool,
    pub editable: bool,
    pub focused: bool,
    pub checked: Option<bool>,
    pub password: bool,
    /// Selected (a tab, a list item); uiautomator's `selected`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
    /// Scrolls its content; uiautomator's `scrollable`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scrollable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ViewNode>,
    /// What a web page tells beyond these fields (`--device web`); `None` on phones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<Box<WebNode>>,
}

/// What an iOS device's node types start with (`XCUIElementTypeButton`): its nodes are the ones
/// `iosMaestro` selectors match, and Android's do not.
pub const IOS_TYPE_PREFIX: &str = "XCUIElementType";

impl ViewNode {
    /// Whether the node is an iOS element (WebDriverAgent names every type `XCUIElementType*`).
    pub fn is_ios(&self) -> bool {
        self.class_name.starts_with(IOS_TYPE_PREFIX)
    }
}

/// The device's current view tree and the app in the foreground.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewTree {
    pub app_id: Option<String>,
    pub width: i32,
    pub height: i32,
    pub root: ViewNode,
}

/// The keys `pressKey` accepts (Android key codes by their Trailblaze names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KeyCode {
    Back,
    Enter,
    Home,
    Backspace,
    Tab,
    Escape,
}

/// How `launchApp` starts the app; Trailblaze's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LaunchMode {
    /// Clear the app's data, then start it fresh.
    #[default]
    Reinstall,
    /// Stop the app and start it again, keeping its data.
    ForceRestart,
    /// Bring the app to the foreground as it was.
    Resume,
}

/// What kind of device a session drives: which of the original's platform tools apply to it
/// (`android_*` on Android, `web_*` on a browser, `compose_*` on a desktop app).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Android,
    Ios,
    Web,
    Desktop,
}

impl Platform {
    /// The name trails and tool specs use (`supportedPlatforms: [android]`, a recording key).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Android => "android",
            Platform::Ios => "ios",
            Platform::Web => "web",
            Platform::Desktop => "desktop",
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The app definition (e.g. `app.yaml`) is invalid.
    #[error("{0}")]
    App(String),
    /// An action the device refused: no focused field, unknown app, ...
    #[error("{0}")]
    Action(String),
    /// The device could not be reached or answered nonsense.
    #[error("device I/O: {0}")]
    Io(String),
}

pub trait Device: Send {
    /// A short name for logs and reports (`sim:com.example.demo`, `adb:emulator-5554`).
    fn name(&self) -> String;
    /// The platform its tools are chosen by. The simulated device models an Android app.
    fn platform(&self) -> Platform {
        Platform::Android
    }
    /// The device classifier recordings and `config.skip` are keyed by before its platform
    /// (`ios-iphone`, `ios-ipad`), when the device tells one.
    fn classifier(&self) -> Option<String> {
        None
    }
    /// Whether the screen may change with no tool acting on it (an animation, a network reply). Waits
    /// and not-visible assertions poll a device that does; the simulated app does not, so they
    /// answer from one capture.
    fn changes_on_its_own(&self) -> bool {
        true
    }
    /// The running call's wall-clock deadline, told before each use of the device (`None`
    /// between calls). A device that can wait on its own (a phone behind adb) stops waiting for an
    /// answer there, so a device that stopped answering cannot hold a call past its budget.
    fn set_deadline(&mut self, until: Option<std::time::Instant>) {
        let _ = until;
    }
    /// Captures the current view tree. Every call is one capture (see `captures`).
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError>;
    /// How many times `snapshot` has captured the screen: tests assert on this, never on timing.
    fn captures(&self) -> u64;
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError>;
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError>;
    /// Types into the focused field.
    fn input_text(&mut self, text: &str) -> Result<(), DeviceError>;
    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError>;
    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError>;
    /// Drags a finger from `from` to `to` over `millis` milliseconds (scrolls a list, pages a
    /// pager). A device that cannot swipe refuses it (a failed step).
    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        let _ = (from, to, millis);
        Err(DeviceError::Action(format!("{} cannot swipe", self.name())))
    }
    /// A picture of the screen for reports: PNG bytes, or SVG for the simulated device.
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError>;
    /// A picture of the screen for a trace's frame, where a cheaper one than `screenshot` will do
    /// (a browser's JPEG); the same rules for secret fields hold.
    fn trace_picture(&mut self) -> Result<Screenshot, DeviceError> {
        self.screenshot()
    }

    // The platform's extras. Each default refuses, naming the device, so a device that has no such
    // thing (an embedder's, the simulated one) fails the step clearly instead of pretending.

    /// Runs `argv[0]` with the rest as its arguments in the device's shell, each passed as one
    /// argument whatever it holds (never interpreted by the shell); its output (stdout, then
    /// stderr). A non-zero exit is an `Action` error.
    fn shell(&mut self, argv: &[String]) -> Result<String, DeviceError> {
        let _ = argv;
        Err(refused(self.name(), "run shell commands"))
    }
    /// Sends a broadcast intent.
    fn send_broadcast(&mut self, broadcast: &Broadcast) -> Result<(), DeviceError> {
        let _ = broadcast;
        Err(refused(self.name(), "send broadcasts"))
    }
    /// Grants a runtime permission (`android.permission.CAMERA`); `false` when the device had
    /// nothing to grant (the app does not declare it), which is not an error.
    fn grant_permission(&mut self, app_id: &str, permission: &str) -> Result<bool, DeviceError> {
        let _ = (app_id, permission);
        Err(refused(self.name(), "grant permissions"))
    }
    /// Allows an AppOps operation (`MANAGE_EXTERNAL_STORAGE`) for an app.
    fn grant_app_op(&mut self, app_id: &str, op: &str) -> Result<bool, DeviceError> {
        let _ = (app_id, op);
        Err(refused(self.name(), "grant AppOps permissions"))
    }
    /// Turns the status bar's demo mode (a fixed clock, full signal and battery) on or off.
    fn demo_mode(&mut self, enable: bool) -> Result<(), DeviceError> {
        let _ = enable;
        Err(refused(self.name(), "switch demo mode"))
    }
    /// Clears an app's data (as a fresh install has none); the app stops.
    fn clear_app_data(&mut self, app_id: &str) -> Result<(), DeviceError> {
        let _ = app_id;
        Err(refused(self.name(), "clear app data"))
    }
    /// Stops an app's process (`am force-stop`); the launcher or the app below shows.
    fn stop_app(&mut self, app_id: &str) -> Result<(), DeviceError> {
        let _ = app_id;
        Err(refused(self.name(), "stop apps"))
    }
    /// Every installed app, with what the device tells about each.
    fn installed_apps(&mut self) -> Result<Vec<InstalledApp>, DeviceError> {
        Err(refused(self.name(), "list installed apps"))
    }
    /// The ids of the installed apps (a device may answer this more cheaply than `installed_apps`).
    fn installed_app_ids(&mut self) -> Result<Vec<String>, DeviceError> {
        Ok(self.installed_apps()?.into_iter().map(|a| a.app_id).collect())
    }
    /// Puts text on the clipboard.
    fn set_clipboard(&mut self, text: &str) -> Result<(), DeviceError> {
        let _ = text;
        Err(refused(self.name(), "use a clipboard"))
    }
    /// The clipboard's text; `None` when it holds none.
    fn clipboard(&mut self) -> Result<Option<String>, DeviceError> {
        Err(refused(self.name(), "use a clipboard"))
    }
    /// Hides the on-screen keyboard; `false` when none was shown.
    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        Err(refused(self.name(), "hide a keyboard"))
    }
    /// Opens a URL with the app the device chooses for it (a browser, or the app of a deep link).
    fn open_url(&mut self, url: &str) -> Result<(), DeviceError> {
        let _ = url;
        Err(refused(self.name(), "open URLs"))
    }
    /// Connects the device to the network, or takes it offline (airplane mode).
    fn set_network(&mut self, connected: bool) -> Result<(), DeviceError> {
        let _ = connected;
        Err(refused(self.name(), "switch its network"))
    }
    /// A secret was just typed into the focused field: a device that pictures its screen itself (a
    /// browser) hides that field in its screenshots from now on. Most devices need nothing.
    fn secret_typed(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }
    /// Whether the device's own pictures hide the fields a secret was typed into (a browser does,
    /// told by `secret_typed`); otherwise the session paints over them in its PNGs.
    fn pictures_hide_secrets(&self) -> bool {
        false
    }
    /// The device's extra information for a report step (a page's URL, console errors, failed
    /// requests, dialogs answered since the last call); `None` for devices that have none.
    fn step_notes(&mut self) -> Option<serde_json::Value> {
        None
    }
    /// Starts keeping what a trace holds besides screens (requests, console, the device's log, a
    /// video), until [`Device::trace_end`]. A device that keeps none of it does nothing; one that
    /// cannot keep what it was asked says why in its trace's `notes`, never failing the trail.
    fn trace_begin(&mut self, opts: &trace::TraceOptions) {
        let _ = opts;
    }
    /// Stops keeping and hands over what was kept since [`Device::trace_begin`] (empty when nothing
    /// began). Bounded by [`trace::MAX_LINES`], [`trace::MAX_REQUESTS`], [`trace::MAX_BODY_BYTES`].
    fn trace_end(&mut self) -> trace::DeviceTrace {
        trace::DeviceTrace::default()
    }
    /// The device as its own type, for the tools of its kind (the `web_*` tools reach a page
    /// through it); `None` for a device that offers none.
    fn as_any(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
    /// Writes `bytes` to the absolute `path`, creating its folders and replacing any file there.
    fn write_file(&mut self, path: &str, bytes: &[u8]) -> Result<(), DeviceError> {
        let _ = (path, bytes);
        Err(refused(self.name(), "write files"))
    }
}

/// The error a device's default gives for an extra it does not have.
fn refused(device: String, what: &str) -> DeviceError {
    DeviceError::Action(format!("{device} cannot {what}"))
}

#[derive(Debug, Clone)]
pub struct Screenshot {
    /// `image/png` or `image/svg+xml`.
    pub mime: &'static str,
    pub bytes: Vec<u8>,
}
