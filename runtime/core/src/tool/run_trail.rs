//! `runTrail`: another trail's recorded calls, replayed in this session (a shared sign-in, a
//! navigation to a known screen). The dispatcher reads the trail ([`Outcome::Trail`]) and runs each
//! call as its own step; no LLM is involved.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Runs every recorded step of another trail file (its trailhead first), in order, stopping at the
/// first failure: for deterministic setup such as launching and signing in. Every step must have a
/// recording for this device.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunTrail {
    /// The trail file (`trail.yaml`, `<name>.trail.yaml` or `blaze.yaml`), relative to the current
    /// folder.
    pub path: String,
}

impl BuiltinTool for RunTrail {
    const NAME: &'static str = "runTrail";
    // Hidden from the LLM: a model or an MCP client must not make the host read files by name.
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const DELEGATES: bool = true;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Ok(Outcome::Trail(std::path::PathBuf::from(self.path)))
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![BuiltinEntry::of::<RunTrail>()]
}
