//! The executable built-ins that drive a device directly. These are what recordings hold.

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{self, Launched, Point, Pressed, SnapshotResult, Swiped, Tapped, Typed};
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
    /// Why the caller did this (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for TapOnPoint {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnPoint";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        // A recording (or a script) may hold any point: one outside the screen is refused, never
        // handed to the device, which may wrap or clamp it somewhere else.
        let snap = cx.screen.snapshot()?;
        if !(0..snap.width).contains(&self.x) || !(0..snap.height).contains(&self.y) {
            return Err(format!(
                "the point ({}, {}) is outside the screen ({}×{})",
                self.x, self.y, snap.width, snap.height
            )
            .into());
        }
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
    /// Why the caller did this (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// Hide the soft keyboard after typing.
    #[serde(default)]
    pub hide_keyboard_after: bool,
}

impl BuiltinTool for InputText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Typed>()
    }
    const NAME: &'static str = "inputText";
    // The text goes to the device; the selector is matched against the screen, and its errors
    // name no node for a selector holding a secret.
    const SECRET_ARGS: &'static [&'static str] = &["text", "nodeSelector"];
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut field = None;
        if let Some(sel) = &self.node_selector {
            let (x, y) = cx.find(sel)?;
            // The field found is the one typed into (an editable node takes the focus its tap gives).
            let snap = cx.screen.snapshot()?;
            field = sel
                .resolve(&snap)
                .first()
                .map(|&i| &snap.nodes[i])
                .filter(|n| n.editable)
                .map(|n| n.r#ref.clone());
            cx.screen.with_device(|d| d.tap(x, y))?;
        }
        let typed = type_text(cx, &self.text, field)?;
        if self.hide_keyboard_after {
            cx.screen.with_device(|d| d.hide_keyboard())?;
        }
        results::done(Typed { typed })
    }
}

/// Types `text` into the focused field and returns the length the caller wrote (each secret counted
/// as its `***`: never a secret's length). When `text` holds a secret, the field it went into reads
/// `***` from then on: `field` when the caller knows it, else the focused one in the cached snapshot,
/// else the focused one at the next capture (which costs this step nothing).
pub(crate) fn type_text(cx: &mut ToolCx<'_>, text: &str, field: Option<String>) -> Result<usize, ToolFailure> {
    let redacted = cx.redact.text(text);
    let secret = matches!(redacted, std::borrow::Cow::Owned(_));
    let typed = redacted.chars().count();
    let field = field.or_else(|| secret.then(|| cx.screen.cached_focused_field()).flatten());
    cx.screen.with_device(|d| d.input_text(text))?;
    if secret {
        // A browser pictures the field itself: it masks it in its screenshots from now on.
        cx.screen.with_device(|d| d.secret_typed())?;
        match field {
            Some(f) => cx.screen.taint(&f),
            None => cx.screen.taint_focused(),
        }
    }
    Ok(typed)
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
    /// Why the caller did this (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
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
pub struct Snapshot {
    // `trailblaze snapshot --bounds/--offscreen/--all`, kept out of the schema the LLM is sent
    // (its text stays the compact list; `requestDetailedViewHierarchy` gives it the whole tree).
    #[serde(default)]
    #[schemars(skip)]
    bounds: bool,
    #[serde(default)]
    #[schemars(skip)]
    offscreen: Option<bool>,
    #[serde(default)]
    #[schemars(skip)]
    all: bool,
}

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
        let mut v = snap.to_json(cx.redact);
        let opts = crate::snapshot::RenderOptions {
            bounds: self.bounds,
            offscreen: self.offscreen,
            all: self.all,
        };
        if opts != crate::snapshot::RenderOptions::default() {
            v["text"] = serde_json::Value::String(snap.render_with(cx.redact, &opts));
        }
        // The snapshot names the waypoint it is on, so the LLM (and a person) knows where it stands.
        let here = cx.waypoints.matching(&snap, cx.screen.platform());
        if !here.is_empty() {
            let text = v["text"].as_str().unwrap_or_default();
            v["text"] = serde_json::Value::String(format!("waypoint: {}\n{text}", here.join(", ")));
            v["waypoints"] = serde_json::json!(here);
        }
        Ok(Outcome::Done(v))
    }
}

/// Which way the finger moves.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum SwipeDirection {
    Up,
    #[default]
    Down,
    Left,
    Right,
}

/// Swipes the screen in a direction, e.g. to move through a long list or pages.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Swipe {
    /// The finger's direction, not the content's: UP shows what is below, DOWN what is above. Default DOWN.
    #[serde(default)]
    pub direction: SwipeDirection,
    /// Swipe on the element with this text (a regex); the screen's centre when absent.
    #[serde(default)]
    pub swipe_on_element_text: Option<String>,
    /// Why the caller swiped (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)] // accepted so those recordings parse; nothing reads it
    pub reasoning: Option<String>,
}

/// How long a swipe takes, in milliseconds: slow enough to scroll, not to fling.
const SWIPE_MS: u32 = 400;

impl BuiltinTool for Swipe {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Swiped>()
    }
    const NAME: &'static str = "swipe";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let snap = cx.screen.snapshot()?;
        let (w, h) = (snap.width, snap.height);
        let from = match &self.swipe_on_element_text {
            Some(text) => cx
                .locate(&TrailblazeNodeSelector {
                    android_accessibility: Some(crate::selector::AndroidAccessibilityMatch {
                        text_regex: Some(text.clone()),
                        ..Default::default()
                    }),
                    ..Default::default()
                })?
                .ok_or("no node on the screen has a text matching `swipeOnElementText`")?,
            None => (w / 2, h / 2),
        };
        // A fifth of the screen, the distance a finger travels to scroll one stretch.
        let (dx, dy) = (w / 5, h / 5);
        let to = match self.direction {
            SwipeDirection::Up => (from.0, (from.1 - dy).max(0)),
            SwipeDirection::Down => (from.0, (from.1 + dy).min(h - 1)),
            SwipeDirection::Left => ((from.0 - dx).max(0), from.1),
            SwipeDirection::Right => ((from.0 + dx).min(w - 1), from.1),
        };
        cx.screen.with_device(|d| d.swipe(from, to, SWIPE_MS))?;
        results::done(Swiped {
            from: Point { x: from.0, y: from.1 },
            to: Point { x: to.0, y: to.1 },
        })
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
        BuiltinEntry::of::<Swipe>(),
    ]
}
