//! The original's `web_*` tools on a real page (`--device web`), with its argument names and
//! meanings. An element is named by `nodeSelector` (what recordings hold) or `ref`: a snapshot ref
//! (`k123`), an ARIA descriptor (`button "Submit"`), `css=...`, or the original's own `eN` element
//! ids. Every action waits, within its timeout, for its element to be attached, visible, stable and
//! enabled (Playwright's actionability); every verify retries until its timeout; a failure says what
//! was waited for and what was seen. Without this crate the core still declares them (in
//! `tool/platform.rs`) and refuses them.

mod act;
mod locate;
mod page_tools;
mod verify;

use std::time::Instant;

use serde_json::Value;

use crate::device::WebDevice;
use trailblaze_core::device::DeviceError;
use trailblaze_core::tool::{BuiltinEntry, Outcome, ToolCx, ToolFailure};

/// How often a wait on the page looks again (a capture costs a few milliseconds).
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// What every `web_*` tool returns: a line saying what happened (a URL, a JSON text), as the original.
fn done(message: impl Into<String>) -> Result<Outcome, ToolFailure> {
    Ok(Outcome::Done(Value::String(message.into())))
}

/// Runs `f` on the session's page.
fn page<R>(cx: &ToolCx<'_>, f: impl FnOnce(&mut WebDevice) -> Result<R, DeviceError>) -> Result<R, ToolFailure> {
    Ok(cx
        .screen
        .with_device(|d| match d.as_any().and_then(|a| a.downcast_mut::<WebDevice>()) {
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
