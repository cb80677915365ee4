//! The executable built-ins that drive a device directly. These are what recordings hold.

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{self, Launched, Point, Pressed, SnapshotResult, Tapped, Typed};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::{KeyCode, LaunchMode};
use crate::selector::TrailblazeNodeSelector;

/// Taps the screen at a point, in device pixels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOnPoint {
    /// Horizontal position in pixels from the left edge.
    pub x: i32,
    /// Vertical position in pixels from the top edge.
    pub y: i32,
    /// Hold the press instead of tapping.
    #[serde(default)]
    pub long_press: bool,
}

impl BuiltinTool for TapOnPoint {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnPoint";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| {
            if self.long_press {
                d.long_press(self.x, self.y)
            } else {
                d.tap(self.x, self.y)
            }
        })?;
        results::done(Tapped {
            tapped: Point { x: self.x, y: self.y },
        })
    }
}

/// Types text into a field: the one `nodeSelector` matches (tapped first to focus it), or the
/// focused field when no selector is given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InputText {
    /// The text to type. May hold `{{secret:NAME}}` placeholders, resolved at the last moment.
    pub text: String,
    /// The field to type into; the focused field when absent.
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for InputText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Typed>()
    }
    const NAME: &'static str = "inputText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if let Some(sel) = &self.node_selector {
            let (x, y) = cx.find(sel)?;
            cx.screen.with_device(|d| d.tap(x, y))?;
        }
        cx.screen.with_device(|d| d.input_text(&self.text))?;
        let redacted = cx.redact.text(&self.text);
        if matches!(redacted, std::borrow::Cow::Owned(_)) {
            // A secret went in: the field stays masked until it is cleared.
            cx.screen.taint_focused()?;
        }
        // The length as the caller wrote it, each secret counted as its `***`: never a secret's length.
        results::done(Typed {
            typed: redacted.chars().count(),
        })
    }
}

/// Presses a key: BACK, ENTER, HOME, BACKSPACE, TAB or ESCAPE.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PressKey {
    /// The key to press.
    pub key_code: KeyCode,
}

impl BuiltinTool for PressKey {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Pressed>()
    }
    const NAME: &'static str = "pressKey";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.press_key(self.key_code))?;
        results::done(Pressed { pressed: self.key_code })
    }
}

/// Launches an app by its id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchApp {
    /// The app's id, e.g. `com.example.demo`.
    pub app_id: String,
    /// REINSTALL (default: fresh data), FORCE_RESTART (keep data) or RESUME.
    #[serde(default)]
    pub launch_mode: Option<LaunchMode>,
}

impl BuiltinTool for LaunchApp {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Launched>()
    }
    const NAME: &'static str = "launchApp";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mode = self.launch_mode.unwrap_or_default();
        cx.screen.with_device(|d| d.launch_app(&self.app_id, mode))?;
        results::done(Launched { launched: self.app_id })
    }
}

/// Returns the current screen: the view tree, from the cache when no tool changed the screen since.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {}

impl BuiltinTool for Snapshot {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<SnapshotResult>()
    }
    const NAME: &'static str = "snapshot";
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: true,
        is_recordable: false,
        read_only: true,
    };
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let snap = cx.screen.snapshot()?;
        Ok(Outcome::Done(snap.to_json(cx.redact)))
    }
}

/// Every executable device built-in.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<TapOnPoint>(),
        BuiltinEntry::of::<InputText>(),
        BuiltinEntry::of::<PressKey>(),
        BuiltinEntry::of::<LaunchApp>(),
        BuiltinEntry::of::<Snapshot>(),
    ]
}
