//! The `web_*` tools, declared once: each one's arguments (its schema and description come from the
//! Rust type), flags and result. The web device's crate (`trailblaze-web`) runs them; a project
//! without it has no web device, so a call is refused for its platform before it runs.

use serde_json::{Value, json};

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::Platform;
use crate::selector::TrailblazeNodeSelector;

mod actions;
mod checks;
mod page;

pub use actions::*;
pub use checks::*;
pub use page::*;

/// Every `web_*` tool runs on a page only.
const WEB: &[Platform] = &[Platform::Web];

/// Hidden from the LLM (which uses `tap`/`type` on refs), recorded, changes the page.
const ACTION: ToolFlags = ToolFlags::HIDDEN;
/// Hidden, recorded, leaves the page as it was (checks and queries).
const QUERY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};
/// Hidden and never recorded (the original's `web_evaluate`, `web_requestDetails`).
const UNRECORDED: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: false,
    read_only: false,
};

/// What every `web_*` tool returns: a line saying what happened (a URL, a JSON text), as the original.
fn string_result() -> Option<Value> {
    Some(json!({ "type": "string" }))
}

/// A `web_*` tool with no runner: the project has no web device's part.
fn needs_a_page(name: &str) -> ToolFailure {
    ToolFailure::Failed(format!(
        "{name} drives a web page, and this build of trailblaze has no web device (it was built without the `web` feature)"
    ))
}

/// The declarations, each refusing to run until the web device's crate gives it its runner.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebClick>(),
        BuiltinEntry::of::<WebHover>(),
        BuiltinEntry::of::<WebType>(),
        BuiltinEntry::of::<WebFillSecret>(),
        BuiltinEntry::of::<WebSelectOption>(),
        BuiltinEntry::of::<WebScroll>(),
        BuiltinEntry::of::<WebPressKey>(),
        BuiltinEntry::of::<WebNavigate>(),
        BuiltinEntry::of::<WebWait>(),
        BuiltinEntry::of::<WebWaitForUrl>(),
        BuiltinEntry::of::<WebCurrentUrl>(),
        BuiltinEntry::of::<WebResize>(),
        BuiltinEntry::of::<WebSnapshot>(),
        BuiltinEntry::of::<WebRequestDetails>(),
        BuiltinEntry::of::<WebEvaluate>(),
        BuiltinEntry::of::<WebApplyCookies>(),
        BuiltinEntry::of::<WebGetStorageState>(),
        BuiltinEntry::of::<WebVerifyTextVisible>(),
        BuiltinEntry::of::<WebVerifyElementVisible>(),
        BuiltinEntry::of::<WebVerifyValue>(),
        BuiltinEntry::of::<WebVerifyListVisible>(),
        BuiltinEntry::of::<WebAssertNetworkEvent>(),
    ]
}
