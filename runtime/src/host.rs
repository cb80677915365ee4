//! `ctx.host`: the engine side of host functions. A host call never writes a step, never invalidates
//! the snapshot and never resolves a tool's name; it counts one level against the depth cap, and the
//! function's own tool calls go one level deeper.

use rquickjs::Ctx;
use serde_json::Value as Json;
use trailblaze_host_functions::{HostCallError, HostContext, HostEnv};

use crate::dispatch;
use crate::script::convert;
use crate::session::SessionCore;
use crate::session::log::Event;

/// What a host function sees: the trailmap's environment and the dispatcher, one level deeper.
struct ScriptHost<'a, 'js> {
    session: &'a SessionCore,
    js: &'a Ctx<'js>,
    depth: u32,
}

impl HostContext for ScriptHost<'_, '_> {
    fn call_tool(&mut self, name: &str, args: Json) -> Result<Json, String> {
        dispatch::call(self.session, self.js, name, args, self.depth + 1).map_err(|e| e.to_string())
    }

    fn env(&self) -> &HostEnv {
        &self.session.catalog.host_env
    }
}

/// The `__trailblazeHost(name, args, depth)` binding: the value, or the message for the script's
/// `TrailblazeHostError`.
pub fn call_from_script<'js>(
    s: &SessionCore,
    js: &Ctx<'js>,
    name: &str,
    args: &rquickjs::Value<'js>,
    depth: u32,
) -> Result<Json, String> {
    let cap = s.settings.depth_cap;
    if depth >= cap {
        return Err(format!("call depth {cap} reached; refusing {name}"));
    }
    let Some(entry) = s.catalog.host_function(name) else {
        return Err(HostCallError::unknown(name, &s.catalog.host_names()).to_string());
    };
    let args = convert::to_json(args).map_err(|e| format!("host function `{name}`: arguments: {e}"))?;
    let mut cx = ScriptHost { session: s, js, depth };
    let (result, took) = entry.invoke_timed(args, &mut cx);
    let result = result.map_err(|e| e.to_string());
    let millis = took.as_secs_f64() * 1000.0;
    s.log.borrow_mut().append(Event::HostCall {
        name,
        ok: result.is_ok(),
        millis,
    });
    result
}
