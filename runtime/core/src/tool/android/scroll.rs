//! `scrollUntilTextIsVisible`: swipe, capture, look, until the node is on the screen or the list
//! stops moving. Bounded by a number of swipes, never by time, so a replay is deterministic.

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{Position, ScrolledTo};
use crate::device::Bounds;
use crate::selector::{AndroidAccessibilityMatch, TrailblazeNodeSelector};
use crate::snapshot::Snapshot;
use crate::tool::{BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags, results};

/// The most swipes one call makes before it gives up.
pub const MAX_SWIPES: u32 = 20;
/// How many extra swipes bring a found node to the middle of the screen (`centerElement`).
const CENTER_TRIES: u32 = 3;
/// How long each swipe takes: slow enough to scroll, not to fling.
const SWIPE_MS: u32 = 400;

// Which way the content scrolls (not the finger). A `//` comment: the field says it, once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ScrollDirection {
    #[serde(alias = "up")]
    Up,
    #[default]
    #[serde(alias = "down")]
    Down,
    #[serde(alias = "right")]
    Right,
    #[serde(alias = "left")]
    Left,
}

// The part of the screen the finger swipes across.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ScrollStartPosition {
    #[default]
    Center,
    Top,
    Bottom,
}

/// Scrolls until a node with the given text or id is visible. Give `text` (in the node's text),
/// `textRegex` (its whole text) or `id`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScrollUntilTextIsVisible {
    /// Text the node's text contains, taken literally.
    #[serde(default)]
    pub text: String,
    /// A regular expression for the node's whole text; wins over `text`.
    #[serde(default)]
    pub text_regex: Option<String>,
    /// The node's resource id (a regular expression), e.g. `email`.
    #[serde(default)]
    pub id: Option<String>,
    /// Which match, from 0 top to bottom.
    #[serde(default)]
    pub index: u32,
    /// Which way the content moves: DOWN (default) shows what is below.
    #[serde(default)]
    pub direction: ScrollDirection,
    /// Percent of the node that must be on the screen (1–100).
    #[serde(default = "full")]
    pub visibility_percentage: u32,
    /// Keep scrolling until the node is near the middle.
    #[serde(default)]
    pub center_element: bool,
    /// Where the finger swipes: CENTER (default), TOP or BOTTOM.
    #[serde(default)]
    pub scroll_start_position: ScrollStartPosition,
    /// Why the caller scrolled (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)] // accepted so those recordings parse; nothing reads it
    pub reasoning: Option<String>,
}

fn full() -> u32 {
    100
}

impl BuiltinTool for ScrollUntilTextIsVisible {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<ScrolledTo>()
    }
    const NAME: &'static str = "scrollUntilTextIsVisible";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if !(1..=100).contains(&self.visibility_percentage) {
            return Err("`visibilityPercentage` must be between 1 and 100".into());
        }
        let selector = self.selector()?;
        let mut swipes = 0;
        let mut centering = 0;
        let mut snap = cx.screen.snapshot()?;
        loop {
            let screen = (snap.width, snap.height);
            let found = selector
                .resolve(&snap)
                .first()
                .map(|&i| snap.nodes[i].bounds)
                .filter(|b| visible_percent(*b, screen) >= self.visibility_percentage);
            let done = |b: Bounds, swipes| {
                let (x, y) = b.center();
                results::done(ScrolledTo {
                    found: Position { x, y },
                    swipes,
                })
            };
            if let Some(b) = found {
                if !self.center_element || near_center(b, screen, self.direction) || centering >= CENTER_TRIES {
                    return done(b, swipes);
                }
                // Found but off-centre: one swipe by its distance from the middle.
                centering += 1;
                let (from, to) = centring_swipe(b, screen, self.direction);
                cx.screen.with_device(|d| d.swipe(from, to, SWIPE_MS))?;
            } else {
                if swipes >= MAX_SWIPES {
                    return Err(self.not_found(&format!("after {MAX_SWIPES} swipes")));
                }
                let (from, to) = swipe_for(self.direction, self.scroll_start_position, screen);
                cx.screen.with_device(|d| d.swipe(from, to, SWIPE_MS))?;
            }
            swipes += 1;
            cx.screen.invalidate();
            let next = cx.screen.snapshot()?;
            if same_screen(&snap, &next) {
                // Nothing moved: the end of what scrolls (a found node stays where it could get).
                return match found {
                    Some(b) => done(b, swipes),
                    None => Err(self.not_found("the screen stopped moving: the end of what scrolls")),
                };
            }
            snap = next;
        }
    }
}

impl ScrollUntilTextIsVisible {
    /// The selector the text, pattern or id stand for; at least one must say something.
    fn selector(&self) -> Result<TrailblazeNodeSelector, ToolFailure> {
        let pattern = match (self.text_regex.as_deref().filter(|p| !p.is_empty()), self.text.as_str()) {
            (Some(p), _) => Some(p.to_owned()),
            (None, "") => None,
            (None, text) => Some(format!(".*{}.*", regex::escape(text))),
        };
        let id = self
            .id
            .as_deref()
            .filter(|i| !i.is_empty())
            .map(|i| format!("(?:.*:id/)?(?:{i})"));
        if pattern.is_none() && id.is_none() {
            return Err("give `text`, `textRegex` or `id`: with none, every node would match".into());
        }
        for (field, p) in [("textRegex", &self.text_regex), ("id", &self.id)] {
            if let Some(why) = p.as_deref().and_then(|p| crate::selector::check_pattern(p).err()) {
                return Err(format!("`{field}`: {why}").into());
            }
        }
        Ok(TrailblazeNodeSelector {
            android_accessibility: Some(AndroidAccessibilityMatch {
                text_regex: pattern,
                resource_id_regex: id,
                ..Default::default()
            }),
            index: (self.index > 0).then_some(self.index),
            ..Default::default()
        })
    }

    fn not_found(&self, why: &str) -> ToolFailure {
        let which = match (&self.text_regex, &self.id) {
            (Some(_), _) => "`textRegex`",
            (None, Some(_)) if self.text.is_empty() => "`id`",
            _ => "`text`",
        };
        let direction = format!("{:?}", self.direction).to_uppercase();
        ToolFailure::Failed(format!(
            "no node matching {which} is visible after scrolling {direction} ({why}); if scrolling the other \
             way finds nothing either, it is not on this screen"
        ))
    }
}

/// How much of `b` lies on the screen, in percent (a node with no area counts as fully visible).
fn visible_percent(b: Bounds, (w, h): (i32, i32)) -> u32 {
    let area = i64::from(b.right - b.left) * i64::from(b.bottom - b.top);
    if area <= 0 {
        return 100;
    }
    let (l, t) = (b.left.max(0), b.top.max(0));
    let (r, bo) = (b.right.min(w), b.bottom.min(h));
    let shown = i64::from((r - l).max(0)) * i64::from((bo - t).max(0));
    ((shown * 100) / area) as u32
}

/// Whether the node's centre is in the middle third of the screen along the scrolling axis.
fn near_center(b: Bounds, (w, h): (i32, i32), dir: ScrollDirection) -> bool {
    let (cx, cy) = b.center();
    match dir {
        ScrollDirection::Up | ScrollDirection::Down => (cy - h / 2).abs() <= h / 6,
        ScrollDirection::Left | ScrollDirection::Right => (cx - w / 2).abs() <= w / 6,
    }
}

/// A swipe that moves the content by the node's distance from the middle of the screen.
fn centring_swipe(b: Bounds, (w, h): (i32, i32), dir: ScrollDirection) -> ((i32, i32), (i32, i32)) {
    let (cx, cy) = b.center();
    match dir {
        ScrollDirection::Up | ScrollDirection::Down => {
            let d = (cy - h / 2).clamp(-(h / 3), h / 3);
            ((w / 2, h / 2 + d / 2), (w / 2, h / 2 - d / 2))
        }
        ScrollDirection::Left | ScrollDirection::Right => {
            let d = (cx - w / 2).clamp(-(w / 3), w / 3);
            ((w / 2 + d / 2, h / 2), (w / 2 - d / 2, h / 2))
        }
    }
}

/// The finger's path for one scroll: across 30–40% of the screen in the chosen part, against the
/// content's direction (content DOWN: the finger moves up).
fn swipe_for(dir: ScrollDirection, start: ScrollStartPosition, (w, h): (i32, i32)) -> ((i32, i32), (i32, i32)) {
    let at = |fx: f64, fy: f64| ((f64::from(w) * fx) as i32, (f64::from(h) * fy) as i32);
    // (start, end) along the axis for a finger moving towards the top or the left.
    let (a, b) = match start {
        ScrollStartPosition::Center => (0.7, 0.3),
        ScrollStartPosition::Top => (0.45, 0.15),
        ScrollStartPosition::Bottom => (0.85, 0.55),
    };
    let across = match start {
        ScrollStartPosition::Center => 0.5,
        ScrollStartPosition::Top => 0.25,
        ScrollStartPosition::Bottom => 0.75,
    };
    match dir {
        ScrollDirection::Down => (at(0.5, a), at(0.5, b)),
        ScrollDirection::Up => (at(0.5, b), at(0.5, a)),
        ScrollDirection::Right => (at(0.8, across), at(0.2, across)),
        ScrollDirection::Left => (at(0.2, across), at(0.8, across)),
    }
}

/// Whether two captures show the same nodes in the same places (a list at its end).
fn same_screen(a: &Snapshot, b: &Snapshot) -> bool {
    a.nodes.len() == b.nodes.len()
        && a.nodes
            .iter()
            .zip(&b.nodes)
            .all(|(x, y)| x.r#ref == y.r#ref && x.bounds == y.bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: (i32, i32) = (1000, 2000);

    #[test]
    fn swipes_move_the_finger_against_the_content() {
        let ((_, y0), (_, y1)) = swipe_for(ScrollDirection::Down, ScrollStartPosition::Center, SCREEN);
        assert!(y1 < y0, "content down: the finger goes up");
        let ((_, y0), (_, y1)) = swipe_for(ScrollDirection::Up, ScrollStartPosition::Top, SCREEN);
        assert!(
            y1 > y0 && y0 < 1000,
            "content up from the top part: the finger goes down"
        );
        let ((x0, _), (x1, _)) = swipe_for(ScrollDirection::Right, ScrollStartPosition::Bottom, SCREEN);
        assert!(x1 < x0);
    }

    #[test]
    fn visibility_counts_the_part_on_the_screen() {
        let b = |top, bottom| Bounds {
            left: 0,
            top,
            right: 100,
            bottom,
        };
        assert_eq!(visible_percent(b(100, 200), SCREEN), 100);
        assert_eq!(visible_percent(b(1950, 2050), SCREEN), 50);
        assert_eq!(visible_percent(b(2100, 2200), SCREEN), 0);
        assert!(near_center(b(950, 1050), SCREEN, ScrollDirection::Down));
        assert!(!near_center(b(100, 200), SCREEN, ScrollDirection::Down));
    }

    #[test]
    fn a_call_with_no_target_is_refused_and_text_is_literal() {
        let call = |v: serde_json::Value| -> ScrollUntilTextIsVisible {
            serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
        };
        let err = call(serde_json::json!({})).selector().expect_err("nothing to look for");
        assert!(matches!(err, ToolFailure::Failed(m) if m.contains("`textRegex`")));
        let sel = call(serde_json::json!({"text": "a.b (1)"})).selector().expect("text");
        let re = sel.android_accessibility.and_then(|a| a.text_regex).unwrap_or_default();
        assert_eq!(re, r".*a\.b \(1\).*");
        // Control: `textRegex` wins and is used as written; lowercase directions are accepted.
        let sel = call(serde_json::json!({"text": "x", "textRegex": "a.b", "direction": "up"}));
        assert_eq!(sel.direction, ScrollDirection::Up);
        let re = sel
            .selector()
            .expect("regex")
            .android_accessibility
            .and_then(|a| a.text_regex);
        assert_eq!(re.as_deref(), Some("a.b"));
    }
}
