//! `setActiveToolSets`: which toolsets' tools the LLM is offered for the rest of the session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results;
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Chooses the tool sets whose tools you are offered from now on, replacing the current choice (the
/// always-enabled ones, such as `core_interaction` and `meta`, stay). Call it with the ids you need
/// (e.g. `navigation`, `verification`, `memory`); an empty list resets to the always-enabled ones.
/// The tool list you see is updated after the call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SetActiveToolSets {
    /// The tool set ids to activate, e.g. `["navigation", "memory"]`.
    pub tool_set_ids: Vec<String>,
}

/// The tool sets active after the call.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActiveToolSets {
    /// Every active tool set id (the always-enabled ones included), sorted.
    pub active: Vec<String>,
}

impl BuiltinTool for SetActiveToolSets {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<ActiveToolSets>()
    }
    const NAME: &'static str = "setActiveToolSets";
    // Offered to the LLM (it is how it reaches the other tool sets), never recorded: a trail
    // replays tool calls, not the choice of what an LLM was shown. It changes nothing on the screen.
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: true,
        is_recordable: false,
        read_only: true,
    };
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let platform = cx.screen.platform();
        cx.toolsets.check_request(platform, &self.tool_set_ids)?;
        let active = cx.toolsets.effective(platform, &self.tool_set_ids);
        *cx.active_toolsets.borrow_mut() = active.clone();
        results::done(ActiveToolSets {
            active: active.into_iter().collect(),
        })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![BuiltinEntry::of::<SetActiveToolSets>()]
}
