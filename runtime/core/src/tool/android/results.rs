//! The result types of the Android built-ins, typed in the generated `.d.ts` from the same structs
//! that produce the values (as `tool::results` does for the others).

use schemars::JsonSchema;
use serde::Serialize;

use crate::device::InstalledApp;

/// A point on the screen, in device pixels.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Position {
    pub x: i32,
    pub y: i32,
}

/// Where the node the scroll looked for is now, and how many swipes it took.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScrolledTo {
    /// The centre of the node.
    pub found: Position,
    pub swipes: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyboardHidden {
    /// Whether a keyboard was shown (and so was hidden).
    pub hidden: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Opened {
    pub opened: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Network {
    pub connected: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Cleared {
    pub cleared: String,
}

/// The installed apps' ids, sorted.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppIds {
    pub app_ids: Vec<String>,
}

/// The installed apps, sorted by id.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Apps {
    pub apps: Vec<InstalledApp>,
}

/// How long the text put on the clipboard is: each secret counted as the three characters of `***`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ClipboardSet {
    pub characters: usize,
}

/// A shell command's output: its stdout, then its stderr.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ShellOutput {
    pub output: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BroadcastSent {
    /// The intent's action.
    pub sent: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Granted {
    /// Whether the device granted it now; `false` when it had nothing to grant (the app does not
    /// declare the permission, or it was not changeable), which is not a failure.
    pub granted: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrantedAll {
    /// The permissions the device granted now, in the order given; the others it had nothing to grant.
    pub granted: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DemoMode {
    pub demo_mode: bool,
}

/// A file written on the device.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Written {
    pub path: String,
    pub bytes: usize,
}
