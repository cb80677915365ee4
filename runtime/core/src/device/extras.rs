//! The values the device extras exchange: an installed app as the device reports it, and a broadcast
//! intent with typed extras.

use schemars::JsonSchema;
use serde::Serialize;

/// An installed app. Only `appId` and `isSystemApp` are always known; the rest is what the device
/// reports (adb's `dumpsys package` has no display name, so `label` is absent there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstalledApp {
    /// The package name (`com.example.app`).
    pub app_id: String,
    /// A platform app (Android's `SYSTEM` flag, updated system apps included).
    pub is_system_app: bool,
    /// The name the launcher shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The version people see (Android's `versionName`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The build number behind it (Android's `versionCode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_number: Option<String>,
    /// Where the app is installed on the device (its APK folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_path: Option<String>,
}

impl InstalledApp {
    /// An app known only by its id and kind.
    pub fn new(app_id: impl Into<String>, is_system_app: bool) -> InstalledApp {
        InstalledApp {
            app_id: app_id.into(),
            is_system_app,
            label: None,
            version: None,
            build_number: None,
            install_path: None,
        }
    }
}

/// A broadcast intent: an action, optionally a component that receives it, and typed extras.
#[derive(Debug, Clone, PartialEq)]
pub struct Broadcast {
    pub action: String,
    /// (package, class); a class starting with `.` is relative to the package.
    pub component: Option<(String, String)>,
    pub extras: Vec<(String, ExtraValue)>,
}

/// One extra's value, typed as `Intent.putExtra` takes it.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtraValue {
    String(String),
    Bool(bool),
    Int(i32),
    Long(i64),
    Float(f32),
}

impl ExtraValue {
    /// `am`'s flag for the type (`--es`, `--ez`, `--ei`, `--el`, `--ef`) and the value as `am` reads it.
    pub fn am_flag(&self) -> (&'static str, String) {
        match self {
            ExtraValue::String(s) => ("--es", s.clone()),
            ExtraValue::Bool(b) => ("--ez", b.to_string()),
            ExtraValue::Int(i) => ("--ei", i.to_string()),
            ExtraValue::Long(l) => ("--el", l.to_string()),
            ExtraValue::Float(f) => ("--ef", f.to_string()),
        }
    }
}

/// Where Android's public folders are for the shell user.
pub const DOWNLOADS: &str = "/storage/emulated/0/Download";
pub const PICTURES: &str = "/sdcard/Pictures";

/// Whether `id` is a valid Android package name (`com.example.app`): checked before it reaches a
/// command, although it is quoted there too.
pub fn is_package_name(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
