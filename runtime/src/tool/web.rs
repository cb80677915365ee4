//! The original's `web_*` tools on a real page (`--device web`), with its argument names and
//! meanings. An element is named by `nodeSelector` (what recordings hold) or `ref`: a snapshot ref
//! (`k123`), an ARIA descriptor (`button "Submit"`), `css=...`, or the original's own `eN` element
//! ids. Every action waits, within its timeout, for its element to be attached, visible, stable and
//! enabled (Playwright's actionability); every verify retries until its timeout; a failure says what
//! was waited for and what was seen. Built only with the `web` feature: without it the tools stay
//! declared in `platform.rs` and are refused.

mod act;
mod locate;
mod page_tools;
mod verify;

use std::time::Instant;

use serde_json::{Value, json};

use super::{BuiltinEntry, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::web::WebDevice;
use crate::device::{DeviceError, Platform};

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
fn done(message: impl Into<String>) -> Result<Outcome, ToolFailure> {
    Ok(Outcome::Done(Value::String(message.into())))
}

fn string_result() -> Option<Value> {
    Some(json!({ "type": "string" }))
}

/// Runs `f` on the session's page.
fn page<R>(cx: &ToolCx<'_>, f: impl FnOnce(&mut WebDevice) -> Result<R, DeviceError>) -> Result<R, ToolFailure> {
    Ok(cx.screen.with_device(|d| match d.web() {
        Some(w) => f(w),
        None => Err(DeviceError::Action("this device is not a web page".into())),
    })?)
}

/// When the running action gives up: `ms` from now, or the page's timeout (waits also end when
/// the call's own time runs out: `cx.deadline`).
fn until(cx: &ToolCx<'_>, ms: Option<u64>) -> Result<Instant, ToolFailure> {
    let own = page(cx, |w| Ok(w.timeout()))?;
    Ok(Instant::now() + ms.map_or(own, std::time::Duration::from_millis))
}

pub fn entries() -> Vec<BuiltinEntry> {
    let mut all = act::entries();
    all.extend(page_tools::entries());
    all.extend(verify::entries());
    all
}
