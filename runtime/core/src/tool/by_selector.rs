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
    // Matched against the screen; a no-match error suggests no node for a secret selector.
    const SECRET_ARGS: &'static [&'static str] = &["nodeSelector"];
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let Some((x, y)) = cx.locate(&self.node_selector)? else {
            return Err(no_match(cx, &self.node_selector, "no node on the screen matches"));
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
    // Matched against the screen; a no-match error suggests no node for a secret selector.
    const SECRET_ARGS: &'static [&'static str] = &["nodeSelector"];
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        match cx.locate(&self.node_selector)? {
            Some(_) => results::done(Visibility { visible: true }),
            None => Err(no_match(
                cx,
                &self.node_selector,
                "not visible: no node on the screen matches",
            )),
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
    // Matched against the screen; a no-match error suggests no node for a secret selector.
    const SECRET_ARGS: &'static [&'static str] = &["nodeSelector"];
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

/// How many nodes a "no node matches" message suggests.
const NEAREST: usize = 3;

/// `<what> nodeSelector {…}; nearest on screen: [ref] Class "text", …`: the selector as the call wrote
/// it (a `{{secret:…}}` placeholder stays one: the redaction scrubs any resolved value) and the nodes
/// [`nearest`] finds.
fn no_match(cx: &ToolCx<'_>, sel: &TrailblazeNodeSelector, what: &str) -> ToolFailure {
    let written = serde_json::to_value(sel).unwrap_or_default();
    let selector = cx.redact.text(&written.to_string()).into_owned();
    if cx.secret_input {
        // Which nodes look most like a secret is itself derived from it: nothing is suggested.
        return format!("{what} `nodeSelector` {selector} (it holds a secret, so no similar node is suggested)").into();
    }
    let Ok(snap) = cx.screen.snapshot() else {
        return format!("{what} `nodeSelector` {selector}").into();
    };
    let nearest: Vec<String> = nearest(cx, sel, &snap, NEAREST).into_iter().map(|n| n.label).collect();
    if nearest.is_empty() {
        format!("{what} `nodeSelector` {selector}; the screen shows no node with a text, hint, description or id")
            .into()
    } else {
        format!(
            "{what} `nodeSelector` {selector}; nearest on screen: {}",
            nearest.join(", ")
        )
        .into()
    }
}

/// A node like the one a selector asked for.
pub(crate) struct Near {
    pub index: usize,
    pub score: f64,
    /// `[ref] Class "text" hint="…" desc="…" id="…"`, scrubbed.
    pub label: String,
}

/// The `n` nodes whose texts are most like the selector's strings, by Jaro-Winkler similarity, best
/// first (equal scores in screen order). A field's text is never used (it may hold what a secret
/// left behind): its hint and id are. Never called for a selector holding a secret.
pub(crate) fn nearest(
    cx: &ToolCx<'_>,
    sel: &TrailblazeNodeSelector,
    snap: &crate::snapshot::Snapshot,
    n: usize,
) -> Vec<Near> {
    let written = serde_json::to_value(sel).unwrap_or_default();
    let mut wanted = Vec::new();
    strings(&written, &mut wanted);
    nearest_to(cx, wanted, snap, n)
}

/// [`nearest`] for the strings `wanted` (a text tool's pattern and id).
pub(crate) fn nearest_to(cx: &ToolCx<'_>, wanted: Vec<&str>, snap: &crate::snapshot::Snapshot, n: usize) -> Vec<Near> {
    let norm = |s: &str| s.trim_matches(|c: char| "^$.*()\\".contains(c)).to_lowercase();
    let wanted: Vec<String> = wanted.into_iter().map(norm).filter(|w| !w.is_empty()).collect();
    let mut scored: Vec<Near> = Vec::new();
    for (index, node) in snap.nodes.iter().enumerate() {
        let text = node.text.as_deref().filter(|_| !node.editable && !node.password);
        let own: Vec<&str> = [
            text,
            node.hint_text.as_deref(),
            node.content_description.as_deref(),
            node.resource_id.as_deref(),
        ]
        .into_iter()
        .flatten()
        .filter(|t| !t.is_empty())
        .collect();
        if own.is_empty() {
            continue;
        }
        let score = own
            .iter()
            .flat_map(|o| wanted.iter().map(move |w| strsim::jaro_winkler(w, &norm(o))))
            .fold(0.0, f64::max);
        let class = node.class_name.rsplit('.').next().unwrap_or(&node.class_name);
        let mut label = format!("[{}] {class}", node.r#ref);
        let q = |s: &str| cx.redact.text(s).replace('"', "\\\"");
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            label.push_str(&format!(" \"{}\"", q(t)));
        }
        for (key, v) in [
            ("hint", &node.hint_text),
            ("desc", &node.content_description),
            ("id", &node.resource_id),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                label.push_str(&format!(" {key}=\"{}\"", q(v)));
            }
        }
        scored.push(Near { index, score, label });
    }
    // Best first; equal scores keep screen order (the sort is stable).
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
    scored.truncate(n);
    scored
}

/// Every string in a JSON value, in order.
fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
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
