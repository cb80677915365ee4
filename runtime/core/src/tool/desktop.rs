//! `playwright_desktop_launchGoose`: the original's check that its Goose desktop app (Electron,
//! driven over Playwright) is up, which a trailhead of its own workspace calls. A web device serves
//! it (it reads the connected page's address and title); on any other device it is refused naming
//! the platform, as every web tool is.

use serde_json::json;

use super::{ToolDescriptor, ToolFlags, ToolKind};
use crate::device::Platform;

pub const LAUNCH_GOOSE: &str = "playwright_desktop_launchGoose";

/// The tool, typed and checked; a web device that knows it runs it.
pub fn tools() -> Vec<ToolDescriptor> {
    vec![ToolDescriptor {
        name: LAUNCH_GOOSE.to_string(),
        description: "Checks that the Goose desktop app is running and connected, and returns the page's \
                      address and title (web only: the Goose app is an Electron page)."
            .into(),
        flags: ToolFlags {
            surface_to_llm: false,
            is_recordable: true,
            read_only: true,
        },
        input_schema: json!({
            "type": "object",
            "properties": {
                "reasoning": { "type": "string", "description": "Why (it changes nothing)." }
            },
            "required": [],
            "additionalProperties": false,
        })
        .into(),
        output_schema: Some(json!({ "type": "string" })).into(),
        kind: ToolKind::Foreign(Platform::Web),
        trailmap: None,
    }]
}
