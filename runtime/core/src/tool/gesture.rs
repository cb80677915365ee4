//! The original's gestures beside `tap` and `swipe`: tapping a selector at a point within its node,
//! long presses and drags by ref (the LLM's forms) and by points (what recordings hold), relative
//! swipes, BACK, and clearing the focused field.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::llm::tap_expansion;
use super::results::{self, Erased, Point, Swiped, Tapped};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::{Bounds, KeyCode};
use crate::selector::TrailblazeNodeSelector;

/// LLM-visible, never recorded: a tool that picks by ref and expands into what recordings hold.
const BY_REF: ToolFlags = ToolFlags {
    surface_to_llm: true,
    is_recordable: false,
    read_only: false,
};

/// The longest drag or swipe: a minute (a typo of a unit must not hold a finger down for hours).
const MAX_GESTURE_MS: u64 = 60_000;

/// Taps (or long-presses) the one node the selector matches, at its centre or at `relativePoint`
/// within its bounds. No match, or several, is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOn {
    /// The node to tap; it must match exactly one node.
    pub selector: TrailblazeNodeSelector,
    /// Where within the node, as `"x%,y%"` of its width and height (e.g. `"90%,50%"`); its centre
    /// when absent.
    #[serde(default)]
    pub relative_point: Option<String>,
    /// Hold the press instead of tapping.
    #[serde(default)]
    pub long_press: bool,
}

impl BuiltinTool for TapOn {
    fn result_schema() -> Option<Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOn";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.check_selector(&self.selector)?;
        let snap = cx.screen.snapshot()?;
        let bounds = match self.selector.resolve(&snap).as_slice() {
            [one] => snap.nodes[*one].bounds,
            [] => return Err("no node on the screen matches `selector`".into()),
            many => {
                return Err(format!(
                    "`selector` matches {} nodes: add a relation (`childOf`, `below`, ...) or an `index` so it names one",
                    many.len()
                )
                .into());
            }
        };
        let (x, y) = match &self.relative_point {
            None => bounds.center(),
            Some(p) => point_in(bounds, p)?,
        };
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

/// `"x%,y%"` (the `%` optional, each clamped to 0–100) as a point within `b`, rounded to a tenth of
/// a percent as the original records it.
fn point_in(b: Bounds, p: &str) -> Result<(i32, i32), ToolFailure> {
    let (x, y) = parse_percent_pair(p).ok_or("`relativePoint` must read `x%,y%`, e.g. `90%,50%`")?;
    let at = |start: i32, span: i32, pct: f64| {
        let tenths = (pct * 10.0).round().clamp(0.0, 1000.0) as i64;
        start + ((i64::from(span) * tenths + 500) / 1000) as i32
    };
    Ok((at(b.left, b.right - b.left, x), at(b.top, b.bottom - b.top, y)))
}

fn parse_percent_pair(p: &str) -> Option<(f64, f64)> {
    let (x, y) = p.trim().split_once(',')?;
    let pct = |s: &str| {
        s.trim()
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| v.clamp(0.0, 100.0))
    };
    Some((pct(x)?, pct(y)?))
}

/// Presses and holds an element by its ref from the snapshot (e.g. `y778` from `[y778]`): to open a
/// context menu, reveal drag handles, enter multi-select, or any press-and-hold. Recorded as the
/// long press on the element's selector.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LongPress {
    /// The element's ref from the snapshot, e.g. `y778`.
    pub r#ref: String,
    /// Why (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for LongPress {
    const NAME: &'static str = "longPress";
    const FLAGS: ToolFlags = BY_REF;
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Ok(Outcome::Delegate(tap_expansion(cx, &self.r#ref, true)?))
    }
}

/// Drags an element to another element or to a point, in one continuous press-move-release: give
/// the source `ref`, then `toRef` (onto another element) or both `toX` and `toY` (a screen point),
/// never both. For reordering list items, moving a card onto a target, dragging a slider. Recorded
/// as a drag between points.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DragTo {
    /// The element to drag, by its ref from the snapshot.
    pub r#ref: String,
    /// The element to drop it on, by ref. Give this or `toX` and `toY`.
    #[serde(default)]
    pub to_ref: Option<String>,
    /// The x of the point to drop it at (with `toY`).
    #[serde(default)]
    pub to_x: Option<i32>,
    /// The y of the point to drop it at (with `toX`).
    #[serde(default)]
    pub to_y: Option<i32>,
    /// How long the drag takes, in milliseconds (default 1000: slow enough to read as a drag).
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Why (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for DragTo {
    const NAME: &'static str = "dragTo";
    const FLAGS: ToolFlags = BY_REF;
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let duration = self.duration_ms.unwrap_or(1000);
        if duration == 0 {
            return Err("`durationMs` must be above 0".into());
        }
        let snap = cx.screen.snapshot()?;
        let centre = |r: &str| -> Result<(i32, i32), ToolFailure> {
            let i = snap.by_ref(r).ok_or_else(|| {
                format!("unknown ref `{r}`: take a fresh snapshot (refs change when the screen does)")
            })?;
            Ok(snap.nodes[i].bounds.center())
        };
        let from = centre(&self.r#ref)?;
        let to = match (&self.to_ref, self.to_x, self.to_y) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err("give the destination as `toRef` or as `toX` and `toY`, not both".into());
            }
            (Some(r), None, None) => centre(r)?,
            (None, Some(x), Some(y)) => (x, y),
            (None, Some(_), None) | (None, None, Some(_)) => return Err("`toX` and `toY` go together".into()),
            (None, None, None) => return Err("give a destination: `toRef`, or `toX` and `toY`".into()),
        };
        Ok(Outcome::Delegate(vec![(
            "dragByPoints".into(),
            json!({ "startX": from.0, "startY": from.1, "endX": to.0, "endY": to.1, "durationMs": duration }),
        )]))
    }
}

/// Drags between two points on the screen, in device pixels: what a recorded `dragTo` holds.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DragByPoints {
    pub start_x: i32,
    pub start_y: i32,
    pub end_x: i32,
    pub end_y: i32,
    /// How long the drag takes, in milliseconds (default 1000).
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

impl BuiltinTool for DragByPoints {
    fn result_schema() -> Option<Value> {
        results::schema::<Swiped>()
    }
    const NAME: &'static str = "dragByPoints";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let ms = self.duration_ms.unwrap_or(1000);
        if ms == 0 || ms > MAX_GESTURE_MS {
            return Err(format!("`durationMs` must be between 1 and {MAX_GESTURE_MS}").into());
        }
        let snap = cx.screen.snapshot()?;
        let inside = |x: i32, y: i32| (0..snap.width).contains(&x) && (0..snap.height).contains(&y);
        if !inside(self.start_x, self.start_y) || !inside(self.end_x, self.end_y) {
            return Err(format!("a point is off the screen ({}×{} pixels)", snap.width, snap.height).into());
        }
        let (from, to) = ((self.start_x, self.start_y), (self.end_x, self.end_y));
        cx.screen.with_device(|d| d.swipe(from, to, ms as u32))?;
        results::done(Swiped {
            from: Point { x: from.0, y: from.1 },
            to: Point { x: to.0, y: to.1 },
        })
    }
}

/// Swipes between two points given as percentages of the screen (`"50%,80%"` to `"50%,20%"`), or
/// of the bounds of the node whose text is `swipeOnElementText` when given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SwipeWithRelativeCoordinates {
    /// Where the finger goes down, `"x%,y%"`.
    pub start_relative: String,
    /// Where it lifts, `"x%,y%"`.
    pub end_relative: String,
    /// A pattern for the text of the node whose bounds the percentages are of.
    #[serde(default)]
    pub swipe_on_element_text: Option<String>,
    /// How long the swipe takes, in milliseconds (default 400).
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

impl BuiltinTool for SwipeWithRelativeCoordinates {
    fn result_schema() -> Option<Value> {
        results::schema::<Swiped>()
    }
    const NAME: &'static str = "swipeWithRelativeCoordinates";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let ms = self.duration_ms.unwrap_or(400);
        if ms == 0 || ms > MAX_GESTURE_MS {
            return Err(format!("`durationMs` must be between 1 and {MAX_GESTURE_MS}").into());
        }
        let snap = cx.screen.snapshot()?;
        let area = match &self.swipe_on_element_text {
            None => Bounds {
                left: 0,
                top: 0,
                right: snap.width - 1,
                bottom: snap.height - 1,
            },
            Some(text) => {
                let sel = TrailblazeNodeSelector {
                    android_accessibility: Some(crate::selector::AndroidAccessibilityMatch {
                        text_regex: Some(text.clone()),
                        ..Default::default()
                    }),
                    ..Default::default()
                };
                cx.check_selector(&sel)
                    .map_err(|_| ToolFailure::from("`swipeOnElementText` is no valid pattern"))?;
                let i = sel
                    .resolve(&snap)
                    .into_iter()
                    .next()
                    .ok_or("no node on the screen has a text matching `swipeOnElementText`")?;
                snap.nodes[i].bounds
            }
        };
        let from = point_in(area, &self.start_relative).map_err(|_| "`startRelative` must read `x%,y%`")?;
        let to = point_in(area, &self.end_relative).map_err(|_| "`endRelative` must read `x%,y%`")?;
        cx.screen.with_device(|d| d.swipe(from, to, ms as u32))?;
        results::done(Swiped {
            from: Point { x: from.0, y: from.1 },
            to: Point { x: to.0, y: to.1 },
        })
    }
}

/// Goes back one screen (the system BACK key). Use `wait` after it if the app loads the screen.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressBack {}

impl BuiltinTool for PressBack {
    const NAME: &'static str = "pressBack";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    const DELEGATES: bool = true;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Ok(Outcome::Delegate(vec![(
            "pressKey".into(),
            json!({ "keyCode": "BACK" }),
        )]))
    }
}

/// Clears all the text of the focused field (its length read from the screen), before `inputText`
/// replaces a value. Prefer it to `eraseText`, which removes a given number of characters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearText {}

/// When the screen shows no focused field's text, this many characters go (any real value).
const FALLBACK_ERASE: u32 = 500;

impl BuiltinTool for ClearText {
    fn result_schema() -> Option<Value> {
        results::schema::<Erased>()
    }
    const NAME: &'static str = "clearText";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let snap = cx.screen.snapshot()?;
        // The innermost focused node with text: the field, not a focused container around it.
        let focused = snap.nodes.iter().rev().find(|n| n.focused && n.text.is_some());
        let n = match focused {
            Some(node) => node.text.as_deref().map_or(0, |t| t.chars().count() as u32),
            None if snap.nodes.iter().any(|n| n.focused && n.editable) => 0,
            None => FALLBACK_ERASE,
        };
        cx.screen
            .with_device(|d| (0..n).try_for_each(|_| d.press_key(KeyCode::Backspace)))?;
        results::done(Erased { erased: n })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<TapOn>(),
        BuiltinEntry::of::<LongPress>(),
        BuiltinEntry::of::<DragTo>(),
        BuiltinEntry::of::<DragByPoints>(),
        BuiltinEntry::of::<SwipeWithRelativeCoordinates>(),
        BuiltinEntry::of::<PressBack>(),
        BuiltinEntry::of::<ClearText>(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_point_is_within_the_bounds_and_clamped() {
        let b = Bounds {
            left: 100,
            top: 200,
            right: 300,
            bottom: 400,
        };
        assert_eq!(point_in(b, "90%,50%").unwrap(), (280, 300));
        assert_eq!(point_in(b, " 0 , 100 ").unwrap(), (100, 400));
        assert_eq!(point_in(b, "150%,-5%").unwrap(), (300, 200));
        assert_eq!(point_in(b, "50.05%,0%").unwrap(), (200, 200));
        for bad in ["50%", "a%,b%", "", "NaN,1"] {
            assert!(point_in(b, bad).is_err(), "{bad}");
        }
    }
}
