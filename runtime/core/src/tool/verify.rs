//! Assertions, waits and queries over the screen, and the agent's signals: read-only tools that never
//! act on the device. Names and arguments are the original's.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results::{self, Visibility};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::selector::{AndroidAccessibilityMatch, TrailblazeNodeSelector};
use crate::snapshot::Snapshot;

/// Read-only, recordable, offered to the LLM: assertions and signals.
pub(super) const READ_ONLY: ToolFlags = ToolFlags {
    surface_to_llm: true,
    is_recordable: true,
    read_only: true,
};

/// The AI-backed tools: recorded, checked and replayed (asking the session's LLM provider), but not
/// offered to the agent's model, which proves a check with an assertion a replay repeats for free.
pub(super) const NEEDS_LLM: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};

/// Read-only queries for script authors: they take selectors, so the LLM never sees them, and
/// they decide nothing, so recordings never hold them.
const AUTHOR_QUERY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: false,
    read_only: true,
};

/// How often a wait looks at the screen again.
const POLL: Duration = Duration::from_millis(500);
/// How long `assertNotVisibleWithText` gives a device's screen to lose the text.
pub(super) const NOT_VISIBLE_WAIT: Duration = Duration::from_secs(5);
/// The most a single wait may ask for (a day: a typo of a unit must not hang a CI job forever;
/// the call's wall-clock budget usually ends it sooner).
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// Polls `ready` on the screen, fresh captures after the first, until it holds or `budget` runs
/// out; returns whether it held. A device whose screen only changes when a tool acts on it (the
/// simulated app) is asked once.
pub(super) fn poll(
    cx: &ToolCx<'_>,
    budget: Duration,
    mut ready: impl FnMut(&Snapshot) -> bool,
) -> Result<bool, ToolFailure> {
    let moving = cx.screen.with_device(|d| Ok(d.changes_on_its_own()))?;
    let until = Instant::now() + if moving { budget.min(MAX_WAIT) } else { Duration::ZERO };
    let mut first = true;
    let held = crate::budget::poll(Some(cx.deadline), until, POLL, || {
        let snap = if std::mem::take(&mut first) {
            cx.screen.snapshot()?
        } else {
            cx.recapture()?
        };
        Ok::<_, ToolFailure>(ready(&snap).then_some(()))
    })?;
    Ok(held.is_some())
}

/// Asserts that no element with the provided text is visible on the screen. The text is matched
/// case-insensitively, as a regular expression and as the literal text alike (so `$5.00` needs no
/// escaping); a leading `(?-i)` makes it case-sensitive. On a device whose screen changes by
/// itself it waits up to 5 seconds for the text to go.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertNotVisibleWithText {
    /// The text that must not be shown.
    pub text: String,
    /// Among the nodes matching all other fields, the 0-based one that must not be shown.
    #[serde(default)]
    pub index: u32,
    /// A regular expression for the node's resource id, to tell apart nodes with the same text.
    #[serde(default)]
    pub id: Option<String>,
    /// Only nodes in this enabled state count.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Only nodes in this selected state count.
    #[serde(default)]
    pub selected: Option<bool>,
}

/// `text` as the lenient pattern: case-insensitive, its regex reading or its literal reading.
pub fn lenient_pattern(text: &str) -> String {
    let text = &crate::selector::java_quoting(text);
    let literal = regex::escape(text);
    // Asked of every assertion: `is_regex` builds no full DFA (one costs ~0.3 ms).
    if let Some(rest) = text.strip_prefix("(?-i)") {
        return match crate::selector::is_regex(rest) {
            true => format!("(?:{rest}|{})", regex::escape(rest)),
            false => regex::escape(rest),
        };
    }
    match crate::selector::is_regex(text) {
        true => format!("(?i)(?:{text}|{literal})"),
        false => format!("(?i){literal}"),
    }
}

impl BuiltinTool for AssertNotVisibleWithText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Visibility>()
    }
    const NAME: &'static str = "assertNotVisibleWithText";
    const FLAGS: ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let sel = TrailblazeNodeSelector {
            android_accessibility: Some(AndroidAccessibilityMatch {
                text_regex: Some(lenient_pattern(&self.text)),
                resource_id_regex: self.id.clone(),
                is_enabled: self.enabled,
                is_selected: self.selected,
                ..Default::default()
            }),
            index: (self.index > 0).then_some(self.index),
            ..Default::default()
        };
        if let Some((path, why)) = sel.invalid_pattern() {
            let field = if path.contains("resourceId") { "id" } else { "text" };
            return Err(format!("`{field}`: {why}").into());
        }
        if poll(cx, NOT_VISIBLE_WAIT, |snap| sel.resolve(snap).is_empty())? {
            results::done(Visibility { visible: false })
        } else {
            Err("visible: a node on the screen shows `text`".into())
        }
    }
}

/// Waits for a number of seconds, e.g. while a loading screen is shown; prefer it to pressing
/// BACK.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Wait {
    /// How long to wait, in seconds (default 5).
    #[serde(default)]
    pub time_to_wait_in_seconds: Option<u32>,
}

/// A wait's result: how long it waited.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Waited {
    pub waited_ms: u64,
}

impl BuiltinTool for Wait {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Waited>()
    }
    const NAME: &'static str = "wait";
    // Not read-only: the screen may have changed while it waited, so the next look captures anew.
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let secs = self.time_to_wait_in_seconds.unwrap_or(5);
        let d = Duration::from_secs(u64::from(secs)).min(MAX_WAIT);
        cx.sleep(d)?;
        results::done(Waited {
            waited_ms: d.as_millis() as u64,
        })
    }
}

/// Waits (up to `timeoutMs`) for the node `nodeSelector` matches to be gone, and says whether it
/// went: `true` when it is not (or no longer) visible, `false` when it still is. It never fails
/// on a visible node, so a script can branch on it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitUntilNotVisible {
    /// The node whose disappearance is awaited.
    pub node_selector: TrailblazeNodeSelector,
    /// How long to wait, in milliseconds (default 5000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl BuiltinTool for WaitUntilNotVisible {
    fn result_schema() -> Option<serde_json::Value> {
        Some(serde_json::json!({ "type": "boolean" }))
    }
    const NAME: &'static str = "waitUntilNotVisible";
    const FLAGS: ToolFlags = AUTHOR_QUERY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.check_selector(&self.node_selector)?;
        let budget = Duration::from_millis(self.timeout_ms.unwrap_or(5000));
        let gone = poll(cx, budget, |snap| self.node_selector.resolve(snap).is_empty())?;
        Ok(Outcome::Done(serde_json::Value::Bool(gone)))
    }
}

/// Every node `selector` matches on the current screen, each with its position in the tree, its
/// bounds, text and ids; an empty list when none does. With `timeoutMs` it waits up to that long
/// for a first match. It never fails for want of a match, so a script can branch on the count.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindMatches {
    /// The selector to match against the current screen.
    pub selector: TrailblazeNodeSelector,
    /// Wait up to this many milliseconds for a first match (default: look once).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// One node a selector matched: where it sits in the tree and what identifies it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchDescriptor {
    /// Child indexes from the root to the node (`[]` is the root); valid for this capture only.
    pub index_path: Vec<u32>,
    /// The node's ref in the snapshot (`y778`).
    pub r#ref: String,
    pub bounds: MatchBounds,
    /// The node's text (`***` where a secret was typed); absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_text: Option<String>,
    /// The content description, the accessibility id a screen reader uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accessibility_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
}

/// A node's rectangle in device pixels.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchBounds {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl BuiltinTool for FindMatches {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Vec<MatchDescriptor>>()
    }
    const NAME: &'static str = "findMatches";
    const FLAGS: ToolFlags = AUTHOR_QUERY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.check_selector(&self.selector)?;
        let budget = Duration::from_millis(self.timeout_ms.unwrap_or(0));
        poll(cx, budget, |snap| !self.selector.resolve(snap).is_empty())?;
        let snap = cx.screen.snapshot()?;
        let matches: Vec<MatchDescriptor> = self
            .selector
            .resolve(&snap)
            .into_iter()
            .map(|i| {
                let n = &snap.nodes[i];
                MatchDescriptor {
                    index_path: snap.index_path(i),
                    r#ref: n.r#ref.clone(),
                    bounds: MatchBounds {
                        left: n.bounds.left,
                        top: n.bounds.top,
                        right: n.bounds.right,
                        bottom: n.bounds.bottom,
                    },
                    matched_text: n.text.as_deref().map(|t| cx.redact.text(t).into_owned()),
                    accessibility_id: n.content_description.clone(),
                    resource_id: n.resource_id.clone(),
                }
            })
            .collect();
        results::done(matches)
    }
}

/// Takes a snapshot of the current screen and saves it under a screen name: the run's report keeps
/// that step's screen whatever `--screenshots` says.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TakeSnapshot {
    /// A name for the screen, e.g. `login_screen` or `payment_confirmation`.
    pub screen_name: String,
    /// What the snapshot captures or why it was taken.
    #[serde(default)]
    pub description: Option<String>,
}

/// A named screen: the name and the screen's node count when it was taken.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapped {
    pub screen_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub nodes: usize,
}

impl BuiltinTool for TakeSnapshot {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Snapped>()
    }
    const NAME: &'static str = "takeSnapshot";
    const FLAGS: ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.screen_name.trim().is_empty() {
            return Err("`screenName` is empty".into());
        }
        let snap = cx.screen.snapshot()?;
        results::done(Snapped {
            screen_name: self.screen_name,
            description: self.description,
            nodes: snap.nodes.len(),
        })
    }
}

/// How an objective stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ObjectiveState {
    InProgress,
    Completed,
    Failed,
}

/// Reports the status of the current objective: IN_PROGRESS while its goals are not all met,
/// COMPLETED when they are, FAILED only after every option was tried. A replayed FAILED fails the
/// step with the explanation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectiveStatus {
    /// What was done, or how far the objective got.
    pub explanation: String,
    /// IN_PROGRESS (still working), COMPLETED (fully done) or FAILED.
    pub status: ObjectiveState,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Objective {
    pub status: ObjectiveState,
}

impl BuiltinTool for ObjectiveStatus {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Objective>()
    }
    const NAME: &'static str = "objectiveStatus";
    const FLAGS: ToolFlags = READ_ONLY;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        match self.status {
            ObjectiveState::Failed => Err(format!("the objective failed: {}", self.explanation).into()),
            status => results::done(Objective { status }),
        }
    }
}

/// Verifies the current screen against a natural-language statement, judged by an LLM (the screen's
/// text, and its screenshot where the model takes images); fails with the model's explanation when
/// the statement does not hold.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertWithAi {
    /// The statement about the screen, e.g. `the cart shows two items`; `{{name}}` tokens resolve.
    pub prompt: String,
}

/// A judged statement: whether it holds, and the model's reason.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Judgement {
    pub holds: bool,
    pub explanation: String,
}

impl BuiltinTool for AssertWithAi {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Judgement>()
    }
    const NAME: &'static str = "assertWithAi";
    const FLAGS: ToolFlags = NEEDS_LLM;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        match super::judged::ask(cx, Self::NAME, crate::judge::JudgeKind::Check, &self.prompt)? {
            crate::judge::Verdict::Check {
                holds: true,
                explanation,
            } => results::done(Judgement {
                holds: true,
                explanation,
            }),
            crate::judge::Verdict::Check { explanation, .. } => {
                Err(format!("{}: {explanation}", crate::judge::DOES_NOT_HOLD).into())
            }
            crate::judge::Verdict::Read { .. } => Err("the judge answered a value, not a verdict".into()),
        }
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<AssertNotVisibleWithText>(),
        BuiltinEntry::of::<Wait>(),
        BuiltinEntry::of::<WaitUntilNotVisible>(),
        BuiltinEntry::of::<FindMatches>(),
        BuiltinEntry::of::<TakeSnapshot>(),
        BuiltinEntry::of::<ObjectiveStatus>(),
        BuiltinEntry::of::<AssertWithAi>(),
    ]
}
