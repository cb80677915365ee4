//! The Android-only tools that run device commands: a shell command, a broadcast, permission
//! grants and the status bar's demo mode.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{BroadcastSent, DemoMode, Granted, GrantedAll, ShellOutput};
use super::{ANDROID, HIDDEN_UNRECORDED};
use crate::device::extras::is_package_name;
use crate::device::{Broadcast, ExtraValue, Platform};
use crate::tool::{BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags, results};

/// Runs a command in the Android device's shell and returns its output (stdout, then stderr); a
/// non-zero exit fails the call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdbShell {
    /// The program and its arguments, e.g. `["am", "force-stop", "com.example.app"]`. Each element
    /// reaches the program as one argument, exactly as written: the shell interprets none of them.
    pub command: Vec<String>,
    /// Run as this app (`run-as <appId>`, for a debuggable app's private files).
    #[serde(default)]
    pub run_as: Option<String>,
}

impl BuiltinTool for AdbShell {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<ShellOutput>()
    }
    const NAME: &'static str = "android_adbShell";
    const FLAGS: ToolFlags = HIDDEN_UNRECORDED;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.command.first().is_none_or(|p| p.is_empty()) {
            return Err("`command` needs a program: its first element is empty or missing".into());
        }
        let argv = match &self.run_as {
            Some(app) if !is_package_name(app) => {
                return Err("`runAs` is not an Android package name (like com.example.app)".into());
            }
            Some(app) => [vec!["run-as".to_owned(), app.clone()], self.command].concat(),
            None => self.command,
        };
        let output = cx.screen.with_device(|d| d.shell(&argv))?;
        results::done(ShellOutput { output })
    }
}

/// One extra of a broadcast: a key, its value as text, and the type the value is sent as.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Extra {
    pub key: String,
    /// The value as text (`42`, `true`, `hello`), read as `type` says.
    pub value: String,
    /// `string` (default), `boolean`, `int`, `long` or `float`; also `am`'s `es`, `ez`, `ei`, `el`, `ef`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// Sends a broadcast intent to a component of an app on the Android device, with typed extras.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendBroadcast {
    /// The intent's action, e.g. `com.example.app.SET_MODE`.
    pub action: String,
    /// The receiving app's package; empty (with `componentClass`) for a broadcast to any receiver.
    pub component_package: String,
    /// The receiver's class, full or starting with `.` (relative to the package).
    pub component_class: String,
    /// The intent's extras; each key at most once.
    #[serde(default)]
    pub extras: Vec<Extra>,
}

impl BuiltinTool for SendBroadcast {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<BroadcastSent>()
    }
    const NAME: &'static str = "android_sendBroadcast";
    const FLAGS: ToolFlags = HIDDEN_UNRECORDED;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let broadcast = self.intent()?;
        cx.screen.with_device(|d| d.send_broadcast(&broadcast))?;
        results::done(BroadcastSent { sent: broadcast.action })
    }
}

impl SendBroadcast {
    /// The intent, every extra checked; errors name the extra by index, never its value.
    fn intent(&self) -> Result<Broadcast, ToolFailure> {
        if self.action.is_empty() {
            return Err("`action` is empty".into());
        }
        let component = match (self.component_package.is_empty(), self.component_class.is_empty()) {
            (true, true) => None,
            (false, false) => Some((self.component_package.clone(), self.component_class.clone())),
            _ => return Err("`componentPackage` and `componentClass` are given together or both left empty".into()),
        };
        let mut seen = HashSet::new();
        let mut extras = Vec::with_capacity(self.extras.len());
        for (i, e) in self.extras.iter().enumerate() {
            if e.key.trim().is_empty() {
                return Err(format!("`extras[{i}].key` is empty").into());
            }
            if !seen.insert(e.key.as_str()) {
                return Err(format!("`extras[{i}].key` repeats an earlier extra's key").into());
            }
            extras.push((e.key.clone(), typed(e, i)?));
        }
        Ok(Broadcast {
            action: self.action.clone(),
            component,
            extras,
        })
    }
}

/// An extra's value read as its type.
fn typed(e: &Extra, i: usize) -> Result<ExtraValue, ToolFailure> {
    let kind = e.kind.as_deref().unwrap_or("string").to_ascii_lowercase();
    let bad = |what: &str| ToolFailure::Failed(format!("`extras[{i}].value` is not {what}"));
    Ok(match kind.as_str() {
        "string" | "es" => ExtraValue::String(e.value.clone()),
        "boolean" | "ez" => match e.value.as_str() {
            "true" => ExtraValue::Bool(true),
            "false" => ExtraValue::Bool(false),
            _ => return Err(bad("`true` or `false`")),
        },
        "int" | "ei" => ExtraValue::Int(e.value.parse().map_err(|_| bad("a 32-bit integer"))?),
        "long" | "el" => ExtraValue::Long(e.value.parse().map_err(|_| bad("a 64-bit integer"))?),
        "float" | "ef" => match e.value.parse::<f32>() {
            Ok(f) if f.is_finite() => ExtraValue::Float(f),
            _ => return Err(bad("a finite number")),
        },
        _ => {
            return Err(format!(
                "`extras[{i}].type` must be string, boolean, int, long or float (or es, ez, ei, el, ef)"
            )
            .into());
        }
    })
}

/// Grants a runtime (`dangerous`) permission to an app with `pm grant`, e.g. before launching it so
/// no permission dialog appears. For AppOps operations use `android_grantAppOpsPermission`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrantPermission {
    /// The app's package, e.g. `com.example.app`.
    pub app_id: String,
    /// The permission's full name, e.g. `android.permission.CAMERA`. One the app does not declare
    /// is not granted and the call still succeeds (`granted: false`).
    pub permission: String,
}

impl BuiltinTool for GrantPermission {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Granted>()
    }
    const NAME: &'static str = "android_grantPermission";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let granted = cx
            .screen
            .with_device(|d| d.grant_permission(&self.app_id, &self.permission))?;
        results::done(Granted { granted })
    }
}

/// Grants several runtime permissions to an app in one call (`pm grant` for each, in order).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrantPermissions {
    /// The app's package, e.g. `com.example.app`.
    pub app_id: String,
    /// The permissions' full names; ones the app does not declare are skipped, not failures.
    pub permissions: Vec<String>,
}

impl BuiltinTool for GrantPermissions {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<GrantedAll>()
    }
    const NAME: &'static str = "android_grantPermissions";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut granted = Vec::new();
        for p in self.permissions {
            if cx.screen.with_device(|d| d.grant_permission(&self.app_id, &p))? {
                granted.push(p);
            }
        }
        results::done(GrantedAll { granted })
    }
}

/// Allows an AppOps operation for an app with `appops set <app> <op> allow` (MANAGE_EXTERNAL_STORAGE,
/// SYSTEM_ALERT_WINDOW, WRITE_SETTINGS, ...). For runtime permissions use `android_grantPermission`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrantAppOpsPermission {
    /// The app's package, e.g. `com.example.app`.
    pub app_id: String,
    /// The operation's AppOps name, e.g. `MANAGE_EXTERNAL_STORAGE` (not `android.permission.…`).
    pub permission: String,
}

impl BuiltinTool for GrantAppOpsPermission {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Granted>()
    }
    const NAME: &'static str = "android_grantAppOpsPermission";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let granted = cx
            .screen
            .with_device(|d| d.grant_app_op(&self.app_id, &self.permission))?;
        results::done(Granted { granted })
    }
}

/// Turns the status bar's demo mode on (a fixed 12:00 clock, full signal and battery, no
/// notification icons) so screens stay the same between runs, or off.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemUiDemoMode {
    /// `true` turns demo mode on, `false` off.
    #[serde(default = "yes")]
    pub enable: bool,
}

fn yes() -> bool {
    true
}

impl BuiltinTool for SystemUiDemoMode {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<DemoMode>()
    }
    const NAME: &'static str = "android_systemUiDemoMode";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.demo_mode(self.enable))?;
        results::done(DemoMode { demo_mode: self.enable })
    }
}
