//! `script`: the original's inline JavaScript tool. Its `source` is the body of a function of
//! `(input, trailblaze)`: `input.memory` holds what the session remembered, `input.params` the
//! call's `params`, and `trailblaze.execute(name, params)` calls a tool at once, answering
//! `{ isError, message }`. What it returns — YAML of tool calls, or nothing — runs after it, each
//! call a step of its own. The embedded engine runs it ([`Outcome::Script`]), under the call's
//! time and memory limits.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Runs a JavaScript function body that may call tools (`trailblaze.execute(name, params)`) and
/// returns YAML of further tool calls, which then run in order. For trails and scripts; never
/// offered to the LLM. A live session's recording holds the calls it made, not the script.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Script {
    /// The function body; `return` a YAML list of tool calls (`- launchApp: {appId: ...}`) or
    /// nothing.
    pub source: String,
    /// Values the body reads as `input.params`.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
}

impl BuiltinTool for Script {
    const NAME: &'static str = "script";
    // A trail may hold it (the original's are written by hand); it is never a step itself, so a
    // recording of a live session holds the calls it made instead.
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let input = json!({ "memory": cx.memory.borrow().values(), "params": self.params });
        Ok(Outcome::Script {
            source: self.source,
            input,
        })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![BuiltinEntry::of::<Script>()]
}
