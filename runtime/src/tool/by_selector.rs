//! Executable tools that find their node by `TrailblazeNodeSelector`: what recordings hold. Hidden
//! from the LLM, which picks nodes by ref (see `llm`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{self, Erased, Point, Tapped, Visibility};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::KeyCode;
use crate::selector::TrailblazeNodeSelector;

const HIDDEN_READ_ONLY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};

/// Taps the first node the selector matches.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOnElementBySelector {
    /// The node to tap.
    pub node_selector: TrailblazeNodeSelector,
    /// Hold the press instead of tapping.
    #[serde(default)]
    pub long_press: bool,
    /// Why this step exists, for people reading the trail.
    #[serde(default)]
    #[allow(dead_code)]
    pub reason: Option<String>,
}

impl BuiltinTool for TapOnElementBySelector {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnElementBySelector";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let (x, y) = cx.find(&self.node_selector)?;
        cx.screen.with_device(|d| {
            if self.long_press {
                d.long_press(x, y)
            } else {
                d.tap(x, y)
            }
        })?;
        results::done(Tapped { tapped: Point { x, y } })
    }
}

/// Passes when a node matching the selector is on the screen.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertVisibleBySelector {
    /// The node that must be visible.
    pub node_selector: TrailblazeNodeSelector,
    /// Why this check exists, for people reading the trail.
    #[serde(default)]
    #[allow(dead_code)]
    pub reason: Option<String>,
}

impl BuiltinTool for AssertVisibleBySelector {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertVisibleBySelector";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        match cx.locate(&self.node_selector)? {
            Some(_) => results::done(Visibility { visible: true }),
            None => Err("not visible: no node on the screen matches `nodeSelector`".into()),
        }
    }
}

/// Passes when no node matching the selector is on the screen.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertNotVisibleBySelector {
    /// The node that must not be visible.
    pub node_selector: TrailblazeNodeSelector,
    /// Why this check exists, for people reading the trail.
    #[serde(default)]
    #[allow(dead_code)]
    pub reason: Option<String>,
}

impl BuiltinTool for AssertNotVisibleBySelector {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertNotVisibleBySelector";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        // A device that fails is an error here too, never a pass.
        match cx.locate(&self.node_selector)? {
            Some(_) => Err("visible: a node on the screen matches `nodeSelector`".into()),
            None => results::done(Visibility { visible: false }),
        }
    }
}

/// Deletes characters from the focused field by pressing BACKSPACE.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EraseText {
    /// How many characters to delete (default 50, at most 1000).
    #[serde(default)]
    pub characters_to_erase: Option<u32>,
}

impl BuiltinTool for EraseText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Erased>()
    }
    const NAME: &'static str = "eraseText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let n = self.characters_to_erase.unwrap_or(50).min(1000);
        cx.screen
            .with_device(|d| (0..n).try_for_each(|_| d.press_key(KeyCode::Backspace)))?;
        results::done(Erased { erased: n })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<TapOnElementBySelector>(),
        BuiltinEntry::of::<AssertVisibleBySelector>(),
        BuiltinEntry::of::<AssertNotVisibleBySelector>(),
        BuiltinEntry::of::<EraseText>(),
    ]
}
