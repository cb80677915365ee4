//! The original's tools that find a node by its text, as its Maestro driver does: a pattern is tried
//! against a node's text, its accessibility text (content description) and its hint, whole-value, as
//! a regular expression and as the literal text; `id` is a pattern for the resource id, whole or the
//! part after `:id/`; `index` picks among the matches in screen order. Recorded as they are (the
//! original's recordings hold them), never offered to the LLM, which picks by ref.

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{self, Point, Tapped, Visibility};
use super::verify::{NOT_VISIBLE_WAIT, poll};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::Platform;
use crate::snapshot::Snapshot;

const HIDDEN_READ_ONLY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};

/// A whole-value pattern, matched as a selector's `*Regex` field is (`selector::text_matches`:
/// its regex reading, or its literal text).
struct Pattern(String);

impl Pattern {
    fn new(p: &str) -> Pattern {
        Pattern(p.to_string())
    }

    fn hits(&self, value: Option<&str>) -> bool {
        value.is_some_and(|v| crate::selector::text_matches(&self.0, Some(v)))
    }
}

/// What a Maestro-style element selector asks of a node.
struct Find {
    text: Option<Pattern>,
    id: Option<Pattern>,
    enabled: Option<bool>,
    selected: Option<bool>,
    index: usize,
}

impl Find {
    fn new(text: Option<&str>, id: Option<&str>, enabled: Option<bool>, selected: Option<bool>, index: usize) -> Find {
        Find {
            text: text.map(Pattern::new),
            id: id.map(Pattern::new),
            enabled,
            selected,
            index,
        }
    }

    /// The node picked on `snap`, if any: the `index`th match in tree order, a field that matches
    /// only by what was typed into it coming after the rest (after typing `John` into a search
    /// field, a tap on `John` means the result the screen shows, not the field being typed in).
    fn pick(&self, snap: &Snapshot) -> Option<usize> {
        let mut hits: Vec<usize> = (0..snap.nodes.len()).filter(|&i| self.holds(snap, i)).collect();
        hits.sort_by_key(|&i| self.only_typed(&snap.nodes[i]));
        hits.get(self.index).copied()
    }

    /// Whether node `n` is a field whose typed text is all that matches.
    fn only_typed(&self, n: &crate::snapshot::SnapNode) -> bool {
        n.editable
            && self.text.as_ref().is_some_and(|p| {
                p.hits(n.text.as_deref())
                    && !p.hits(n.content_description.as_deref())
                    && !p.hits(n.hint_text.as_deref())
            })
    }

    fn holds(&self, snap: &Snapshot, i: usize) -> bool {
        let n = &snap.nodes[i];
        let text_ok = self.text.as_ref().is_none_or(|p| {
            [
                n.text.as_deref(),
                n.content_description.as_deref(),
                n.hint_text.as_deref(),
            ]
            .into_iter()
            .any(|v| p.hits(v))
        });
        let id_ok = self.id.as_ref().is_none_or(|p| {
            let id = n.resource_id.as_deref();
            p.hits(id) || p.hits(id.and_then(|i| i.split_once(":id/")).map(|(_, short)| short))
        });
        text_ok && id_ok && self.enabled.is_none_or(|e| e == n.enabled) && self.selected.is_none_or(|s| s == n.selected)
    }

    /// The centre of the picked node, or the failure that names the field it was looked for by.
    fn locate(&self, cx: &ToolCx<'_>, field: &str) -> Result<(i32, i32), ToolFailure> {
        let snap = cx.screen.snapshot()?;
        let picked = self.pick(&snap);
        if cx.traced() {
            self.note(cx, &snap, picked);
        }
        match picked {
            Some(i) => Ok(snap.nodes[i].bounds.center()),
            None => Err(self.missing(field).into()),
        }
    }

    /// Notes for the trace what was looked for and what it found, or the nodes most like it.
    fn note(&self, cx: &ToolCx<'_>, snap: &Snapshot, picked: Option<usize>) {
        let wanted: Vec<&str> = [&self.text, &self.id]
            .into_iter()
            .flatten()
            .map(|p| p.0.as_str())
            .collect();
        let selector = serde_json::json!({
            "text": self.text.as_ref().map(|p| &p.0), "id": self.id.as_ref().map(|p| &p.0), "index": self.index,
        });
        let near = match picked {
            None if !cx.secret_input => super::by_selector::nearest_to(cx, wanted, snap, 5),
            _ => Vec::new(),
        };
        cx.note_found(selector, snap, picked, near);
    }

    /// Waits (on a device whose screen changes by itself) for the node to show.
    fn wait_visible(&self, cx: &ToolCx<'_>, field: &str) -> Result<Outcome, ToolFailure> {
        if poll(cx, NOT_VISIBLE_WAIT, |snap| self.pick(snap).is_some())? {
            results::done(Visibility { visible: true })
        } else {
            if cx.traced()
                && let Ok(snap) = cx.screen.snapshot()
            {
                self.note(cx, &snap, None);
            }
            Err(format!("not visible: {}", self.missing(field)).into())
        }
    }

    fn missing(&self, field: &str) -> String {
        let nth = if self.index > 0 {
            format!(" (index {}: fewer match)", self.index)
        } else {
            String::new()
        };
        format!("no node on the screen has a text, description or hint matching `{field}` with the other fields{nth}")
    }
}

/// `index` as the original's string-typed tools write it.
fn index_of(index: &Option<String>) -> Result<usize, ToolFailure> {
    match index.as_deref().map(str::trim) {
        None | Some("") => Ok(0),
        Some(s) => s
            .parse::<usize>()
            .map_err(|_| "`index` must be a whole number of 0 or more, written as text".into()),
    }
}

fn tap(cx: &ToolCx<'_>, at: (i32, i32), long: bool) -> Result<Outcome, ToolFailure> {
    cx.screen.with_device(|d| {
        if long {
            d.long_press(at.0, at.1)
        } else {
            d.tap(at.0, at.1)
        }
    })?;
    results::done(Tapped {
        tapped: Point { x: at.0, y: at.1 },
    })
}

/// Taps the first node whose text, description or hint contains `text` (as text, not a pattern).
/// The other fields only tell apart nodes with the same text.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOnElementWithText {
    /// Text the node shows; it may appear anywhere in the node's text.
    pub text: String,
    /// 0-based index among the nodes that match every other field.
    #[serde(default)]
    pub index: u32,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for TapOnElementWithText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnElementWithText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let contains = format!(".*{}.*", regex::escape(&self.text));
        let find = Find::new(
            Some(&contains),
            self.id.as_deref(),
            self.enabled,
            self.selected,
            self.index as usize,
        );
        let at = find.locate(cx, "text")?;
        tap(cx, at, false)
    }
}

/// Taps the node with this accessibility text (a whole-value pattern), e.g. an icon or an avatar
/// with no text of its own.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOnElementWithAccessibilityText {
    /// The node's whole accessibility text.
    pub accessibility_text: String,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    /// 0-based index among the matches, written as text (`"1"`).
    #[serde(default)]
    pub index: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for TapOnElementWithAccessibilityText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnElementWithAccessibilityText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let index = index_of(&self.index)?;
        let find = Find::new(
            Some(&self.accessibility_text),
            self.id.as_deref(),
            self.enabled,
            self.selected,
            index,
        );
        let at = find.locate(cx, "accessibilityText")?;
        tap(cx, at, false)
    }
}

/// Long-presses the node whose text, description or hint is `text` (a whole-value pattern).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LongPressOnElementWithText {
    /// The node's whole text.
    pub text: String,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    /// 0-based index among the matches, written as text (`"1"`).
    #[serde(default)]
    pub index: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for LongPressOnElementWithText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "longPressOnElementWithText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let index = index_of(&self.index)?;
        let find = Find::new(Some(&self.text), self.id.as_deref(), self.enabled, self.selected, index);
        let at = find.locate(cx, "text")?;
        tap(cx, at, true)
    }
}

/// Long-presses the node with this accessibility text (a whole-value pattern).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LongPressElementWithAccessibilityText {
    /// The node's whole accessibility text.
    pub accessibility_text: String,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    /// 0-based index among the matches, written as text (`"1"`).
    #[serde(default)]
    pub index: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for LongPressElementWithAccessibilityText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "longPressElementWithAccessibilityText";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let index = index_of(&self.index)?;
        let find = Find::new(
            Some(&self.accessibility_text),
            self.id.as_deref(),
            self.enabled,
            self.selected,
            index,
        );
        let at = find.locate(cx, "accessibilityText")?;
        tap(cx, at, true)
    }
}

/// Asserts that a node whose text, description or hint is `text` (a whole-value pattern) is on the
/// screen, waiting up to 5 seconds on a device whose screen changes by itself.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertVisibleWithText {
    /// The node's whole text.
    pub text: String,
    /// 0-based index among the nodes that match every other field.
    #[serde(default)]
    pub index: u32,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for AssertVisibleWithText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertVisibleWithText";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Find::new(
            Some(&self.text),
            self.id.as_deref(),
            self.enabled,
            self.selected,
            self.index as usize,
        )
        .wait_visible(cx, "text")
    }
}

/// Asserts that a node with this accessibility text (a whole-value pattern) is on the screen,
/// waiting up to 5 seconds on a device whose screen changes by itself.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertVisibleWithAccessibilityText {
    /// The node's whole accessibility text.
    pub accessibility_text: String,
    /// A regular expression for the node's resource id.
    #[serde(default)]
    pub id: Option<String>,
    /// 0-based index among the nodes that match every other field.
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for AssertVisibleWithAccessibilityText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertVisibleWithAccessibilityText";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Find::new(
            Some(&self.accessibility_text),
            self.id.as_deref(),
            self.enabled,
            self.selected,
            self.index as usize,
        )
        .wait_visible(cx, "accessibilityText")
    }
}

/// Asserts that a node with this resource id (a whole-value pattern, e.g. `com.example:id/total`
/// or `total`) is on the screen, waiting up to 5 seconds on a device whose screen changes by itself.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertVisibleWithResourceId {
    /// The node's resource id.
    pub resource_id: String,
    /// A pattern for the node's accessibility text, to tell apart nodes with the same id.
    #[serde(default)]
    pub accessibility_text: Option<String>,
    /// 0-based index among the nodes that match every other field.
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub selected: Option<bool>,
}

impl BuiltinTool for AssertVisibleWithResourceId {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertVisibleWithResourceId";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let find = Find::new(
            self.accessibility_text.as_deref(),
            Some(&self.resource_id),
            self.enabled,
            self.selected,
            self.index as usize,
        );
        if poll(cx, NOT_VISIBLE_WAIT, |snap| find.pick(snap).is_some())? {
            results::done(Visibility { visible: true })
        } else {
            Err(
                "not visible: no node on the screen has a resource id matching `resourceId` with the other fields"
                    .into(),
            )
        }
    }
}

/// Taps an Android accessibility node by its content description (or text), with its class and
/// resource id to tell nodes apart: for canvas widgets whose buttons have no text (PIN pads,
/// palettes). Never falls back to a point: no match is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapOnAccessibilityNode {
    /// A pattern for the node's content description. Give this, `textRegex`, or both.
    #[serde(default)]
    pub content_description_regex: Option<String>,
    /// A pattern for the node's text. Give this, `contentDescriptionRegex`, or both.
    #[serde(default)]
    pub text_regex: Option<String>,
    /// A pattern for the node's class.
    #[serde(default)]
    pub class_name_regex: Option<String>,
    /// A pattern for the node's resource id.
    #[serde(default)]
    pub resource_id_regex: Option<String>,
    /// Hold the press instead of tapping.
    #[serde(default)]
    pub long_press: bool,
}

impl BuiltinTool for TapOnAccessibilityNode {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Tapped>()
    }
    const NAME: &'static str = "tapOnAccessibilityNode";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = &[Platform::Android];
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
        if blank(&self.content_description_regex) && blank(&self.text_regex) {
            return Err("give `contentDescriptionRegex` or `textRegex` (or both)".into());
        }
        let sel = crate::selector::TrailblazeNodeSelector {
            android_accessibility: Some(crate::selector::AndroidAccessibilityMatch {
                content_description_regex: self.content_description_regex.clone(),
                text_regex: self.text_regex.clone(),
                class_name_regex: self.class_name_regex.clone(),
                resource_id_regex: self.resource_id_regex.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let at = cx
            .locate(&sel)?
            .ok_or("no node on the screen matches `contentDescriptionRegex` / `textRegex` with the other fields")?;
        tap(cx, at, self.long_press)
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<TapOnElementWithText>(),
        BuiltinEntry::of::<TapOnElementWithAccessibilityText>(),
        BuiltinEntry::of::<LongPressOnElementWithText>(),
        BuiltinEntry::of::<LongPressElementWithAccessibilityText>(),
        BuiltinEntry::of::<AssertVisibleWithText>(),
        BuiltinEntry::of::<AssertVisibleWithAccessibilityText>(),
        BuiltinEntry::of::<AssertVisibleWithResourceId>(),
        BuiltinEntry::of::<TapOnAccessibilityNode>(),
    ]
}
