//! The original's answer tools: the shapes its LLM answers a question about the screen in. A
//! recording or a script may hold them; here each does what its answer says: a false
//! `booleanAssertion` fails, a `stringEvaluation` returns its string, and an `elementRetriever`
//! finds its locator on the current screen.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::results;
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::selector::{AndroidAccessibilityMatch, TrailblazeNodeSelector};

/// Recorded and callable, never offered to the LLM: an agent that could answer its own check with
/// `booleanAssertion {result: true}` would pass any verify step.
const ANSWER: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};

/// Evaluates whether a statement about the current screen is true: `result` false fails the step
/// with `reason`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BooleanAssertion {
    /// Why the statement is true or false.
    pub reason: String,
    /// Whether the statement is true.
    pub result: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Verdict {
    pub result: bool,
    pub reason: String,
}

impl BuiltinTool for BooleanAssertion {
    fn result_schema() -> Option<Value> {
        results::schema::<Verdict>()
    }
    const NAME: &'static str = "booleanAssertion";
    const FLAGS: ToolFlags = ANSWER;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if !self.result {
            return Err(format!("the statement is false: {}", self.reason).into());
        }
        results::done(Verdict {
            result: true,
            reason: self.reason,
        })
    }
}

/// Extracts or evaluates a piece of text from the current screen: the answer is `result`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StringEvaluation {
    /// How the value was determined.
    pub reason: String,
    /// The value or answer.
    pub result: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    pub result: String,
    pub reason: String,
}

impl BuiltinTool for StringEvaluation {
    fn result_schema() -> Option<Value> {
        results::schema::<Answer>()
    }
    const NAME: &'static str = "stringEvaluation";
    const FLAGS: ToolFlags = ANSWER;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        results::done(Answer {
            result: self.result,
            reason: self.reason,
        })
    }
}

/// The kinds of locator an element retriever answers with (any letter case).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LocatorType {
    #[serde(alias = "resource_id", alias = "resourceId")]
    ResourceId,
    #[serde(alias = "content_description", alias = "contentDescription")]
    ContentDescription,
    #[serde(alias = "text")]
    Text,
}

/// Finds the element a natural-language description names by the locator an LLM chose for it
/// (resource id, content description or text, and an index among equals); fails when the answer
/// says no reliable locator exists or the locator matches nothing on the screen.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElementRetriever {
    /// The description of the element that was looked for.
    #[allow(dead_code)] // the question; the locator is the answer
    pub identifier: String,
    /// Which property `value` is: RESOURCE_ID, CONTENT_DESCRIPTION or TEXT.
    pub locator_type: LocatorType,
    /// The property's value as the view tree has it.
    pub value: String,
    /// 0-based index among the nodes with that value.
    #[serde(default)]
    pub index: u32,
    /// Whether a reliable locator was found (default true).
    #[serde(default = "yes")]
    pub success: bool,
    /// Why this locator, or why none.
    #[serde(default)]
    pub reason: String,
}

fn yes() -> bool {
    true
}

/// The element found: its ref and what identifies it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Retrieved {
    pub r#ref: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_description: Option<String>,
}

impl BuiltinTool for ElementRetriever {
    fn result_schema() -> Option<Value> {
        results::schema::<Retrieved>()
    }
    const NAME: &'static str = "elementRetriever";
    const FLAGS: ToolFlags = ANSWER;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if !self.success {
            return Err(format!("no reliable locator for `identifier`: {}", self.reason).into());
        }
        // The value as the tree has it, so matched as text, not as a pattern.
        let exact = Some(regex::escape(&self.value));
        let mut m = AndroidAccessibilityMatch::default();
        match self.locator_type {
            LocatorType::ResourceId => m.resource_id_regex = exact,
            LocatorType::ContentDescription => m.content_description_regex = exact,
            LocatorType::Text => m.text_regex = exact,
        }
        let sel = TrailblazeNodeSelector {
            android_accessibility: Some(m),
            ..Default::default()
        };
        let snap = cx.screen.snapshot()?;
        let found = sel.resolve(&snap);
        let Some(&i) = found.get(self.index as usize) else {
            return Err(format!(
                "no node on the screen has that `value` as its {:?} ({} found, `index` {})",
                self.locator_type,
                found.len(),
                self.index
            )
            .into());
        };
        let n = &snap.nodes[i];
        let shown = |v: &Option<String>| v.as_deref().map(|t| cx.redact.text(t).into_owned());
        results::done(Retrieved {
            r#ref: n.r#ref.clone(),
            text: shown(&n.text),
            resource_id: n.resource_id.clone(),
            content_description: shown(&n.content_description),
        })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<BooleanAssertion>(),
        BuiltinEntry::of::<StringEvaluation>(),
        BuiltinEntry::of::<ElementRetriever>(),
    ]
}
