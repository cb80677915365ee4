//! The session's memory: `remember*` store a value by name, later arguments use it as `{{name}}`
//! (resolved by the dispatcher when the call executes), and the `assert*` tools compare values.
//!
//! The original finds what a `prompt` describes with an LLM. Here a prompt that *names* a node is
//! found without one: a node whose resource id (whole, or the part after `:id/`), content
//! description or hint equals the prompt (case-insensitively), else the first node whose text
//! matches it as `assertNotVisibleWithText` matches text. A prompt in words (`the order total`)
//! needs an LLM: `rememberWithAi` asks the session's provider (`crate::judge`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::verify::{NEEDS_LLM, READ_ONLY, lenient_pattern};
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, results};
use crate::snapshot::Snapshot;

/// The text of the node `prompt` names on the current screen (`***` where a secret was typed).
fn value_for(cx: &ToolCx<'_>, tool: &str, prompt: &str) -> Result<String, ToolFailure> {
    let snap = cx.screen.snapshot()?;
    match named_node(&snap, prompt) {
        Some(i) => Ok(cx.redact.text(snap.nodes[i].text.as_deref().unwrap_or("")).into_owned()),
        None => Err(format!(
            "no node on the screen is named by `prompt` (a resource id, content description, hint or text); \
             {tool} finds nodes by name: to read the screen in words use rememberWithAi, which asks the LLM provider"
        )
        .into()),
    }
}

fn named_node(snap: &Snapshot, prompt: &str) -> Option<usize> {
    let p = prompt.trim();
    if p.is_empty() {
        return None;
    }
    let eq = |v: &Option<String>| v.as_deref().is_some_and(|v| v.eq_ignore_ascii_case(p));
    let id_eq = |v: &Option<String>| {
        v.as_deref()
            .is_some_and(|v| v == p || v.rsplit_once(":id/").is_some_and(|(_, short)| short == p))
    };
    if let Some(i) = snap
        .nodes
        .iter()
        .position(|n| id_eq(&n.resource_id) || eq(&n.content_description) || eq(&n.hint_text))
    {
        return Some(i);
    }
    // Matched as a selector's pattern is: built once per thread, without a full DFA.
    let lenient = lenient_pattern(p);
    snap.nodes.iter().position(|n| {
        n.text
            .as_deref()
            .is_some_and(|t| crate::selector::text_matches(&lenient, Some(t)))
    })
}

/// Stores `value` under `variable` and says so.
fn remember(cx: &ToolCx<'_>, variable: String, value: String) -> Result<Outcome, ToolFailure> {
    cx.memory.borrow_mut().remember(&variable, &value)?;
    results::done(Remembered { variable, value })
}

/// The first number in `text` (`$1,234.50` → 1234.5), as the original extracts one.
pub fn number_in(text: &str) -> Option<f64> {
    static NUMBER: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+").ok());
    NUMBER
        .as_ref()?
        .find_iter(text)
        .find_map(|m| m.as_str().replace(',', "").parse().ok())
}

/// Finds text on the current screen by the prompt and remembers it under the variable name; later
/// arguments use it as `{{variable}}`. The prompt names a node: its resource id, content
/// description, hint or text.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RememberText {
    /// What to find: a node's resource id (`order_total`), content description, hint or text.
    pub prompt: String,
    /// The name to remember the text under.
    pub variable: String,
}

/// What a `remember*` call stored.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Remembered {
    pub variable: String,
    pub value: String,
}

impl BuiltinTool for RememberText {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Remembered>()
    }
    const NAME: &'static str = "rememberText";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let value = value_for(cx, Self::NAME, &self.prompt)?;
        remember(cx, self.variable, value)
    }
}

/// Finds a number on the current screen by the prompt and remembers it under the variable name
/// (`$1,234.50` is remembered as `1234.5`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RememberNumber {
    /// What to find: a node's resource id, content description, hint or text.
    pub prompt: String,
    /// The name to remember the number under.
    pub variable: String,
}

impl BuiltinTool for RememberNumber {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Remembered>()
    }
    const NAME: &'static str = "rememberNumber";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let text = value_for(cx, Self::NAME, &self.prompt)?;
        let n = number_in(&text).ok_or("the node `prompt` names shows no number")?;
        remember(cx, self.variable, n.to_string())
    }
}

/// Remembers what an LLM reads off the current screen for the prompt (the screen's text, and its
/// screenshot where the model takes images), under the variable name; later arguments use it as
/// `{{variable}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RememberWithAi {
    /// What to read off the screen, in words, e.g. `the order total`.
    pub prompt: String,
    /// The name to remember it under.
    pub variable: String,
}

impl BuiltinTool for RememberWithAi {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Remembered>()
    }
    const NAME: &'static str = "rememberWithAi";
    const FLAGS: super::ToolFlags = NEEDS_LLM;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        // A bad name fails before any request is paid for.
        if !crate::memory::valid_name(&self.variable) {
            return Err("`variable` must be a name of letters, digits, `_`, `-` or `.`".into());
        }
        match super::judged::ask(cx, Self::NAME, crate::judge::JudgeKind::Read, &self.prompt)? {
            crate::judge::Verdict::Read { value } => remember(cx, self.variable, value),
            crate::judge::Verdict::Check { .. } => Err("the judge answered a verdict, not a value".into()),
        }
    }
}

/// Asserts that two values are equal, e.g. a remembered `{{total}}` and the text expected; both
/// may hold `{{name}}` tokens.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertEquals {
    /// The value found, usually a `{{name}}` token.
    pub actual: String,
    /// The value it must equal.
    pub expected: String,
}

/// An assertion that held.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Held {
    pub held: bool,
}

impl BuiltinTool for AssertEquals {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Held>()
    }
    const NAME: &'static str = "assertEquals";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        // The values are the point of the message; a secret among them is scrubbed by the dispatcher.
        if self.actual != self.expected {
            return Err(format!("expected `{}`, got `{}`", self.expected, self.actual).into());
        }
        results::done(Held { held: true })
    }
}

/// Asserts that two values differ; both may hold `{{name}}` tokens.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertNotEquals {
    /// The value found, usually a `{{name}}` token.
    pub actual: String,
    /// The value it must not equal.
    pub expected: String,
}

impl BuiltinTool for AssertNotEquals {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Held>()
    }
    const NAME: &'static str = "assertNotEquals";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.actual == self.expected {
            return Err(format!("expected a value other than `{}`", self.expected).into());
        }
        results::done(Held { held: true })
    }
}

/// Computes an arithmetic expression and asserts it equals the expected number (to 0.0001). The
/// expression may use `{{name}}` tokens and `[[prompt]]`, the number on the node the prompt names.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertMath {
    /// E.g. `{{subtotal}} * 1.08` or `[[item_price]] * 2`: `+ - * / % ^`, parentheses, functions.
    pub expression: String,
    /// The number it must come to.
    pub expected: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Computed {
    pub value: f64,
}

impl BuiltinTool for AssertMath {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Computed>()
    }
    const NAME: &'static str = "assertMath";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let expected: f64 = self.expected.trim().parse().map_err(|_| "`expected` is not a number")?;
        let mut expression = String::new();
        let mut rest = self.expression.as_str();
        while let Some(start) = rest.find("[[") {
            let Some(end) = rest[start..].find("]]") else { break };
            expression.push_str(&rest[..start]);
            let prompt = &rest[start + 2..start + end];
            let text = value_for(cx, Self::NAME, prompt)?;
            let n = number_in(&text).ok_or("a `[[prompt]]` in `expression` names a node that shows no number")?;
            expression.push_str(&format!("({n})"));
            rest = &rest[start + end + 2..];
        }
        expression.push_str(rest);
        let value = super::expr::eval(&expression).map_err(|e| format!("`expression`: {e}"))?;
        if (value - expected).abs() > 0.0001 {
            return Err(format!("`{expression}` is {value}, expected {expected}").into());
        }
        results::done(Computed { value })
    }
}

/// Shows every value the session remembers, by name: for debugging trails that remember on one
/// screen and compare on a later one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DumpMemory {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryDump {
    pub memory: std::collections::BTreeMap<String, String>,
}

impl BuiltinTool for DumpMemory {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<MemoryDump>()
    }
    const NAME: &'static str = "dumpMemory";
    const FLAGS: super::ToolFlags = READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        results::done(MemoryDump {
            memory: cx.memory.borrow().values().clone(),
        })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<RememberText>(),
        BuiltinEntry::of::<RememberNumber>(),
        BuiltinEntry::of::<RememberWithAi>(),
        BuiltinEntry::of::<AssertEquals>(),
        BuiltinEntry::of::<AssertNotEquals>(),
        BuiltinEntry::of::<AssertMath>(),
        BuiltinEntry::of::<DumpMemory>(),
    ]
}

#[cfg(test)]
mod tests {
    use super::number_in;

    #[test]
    fn the_first_number_in_a_text() {
        assert_eq!(number_in("$1,234.50 due"), Some(1234.5));
        assert_eq!(number_in("-3 items"), Some(-3.0));
        assert_eq!(number_in("7:30 AM"), Some(7.0));
        assert_eq!(number_in("no digits"), None);
    }
}
