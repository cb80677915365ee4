//! `ctx.host`: host functions through the dispatcher. A host call never writes a step, never
//! invalidates the snapshot and never resolves a tool's name; it takes one place on the session's
//! depth stack (the same check as a tool call), and the function's own tool calls go one level deeper.

use serde_json::Value as Json;
use trailblaze_host_functions::{DecodeError, HostCallError, HostContext, HostEnv, HostFunctionEntry};

use super::{CallError, call};
use crate::script::port::{HostInvoke, ScriptRuntime};
use crate::state::SessionCore;
use crate::state::log::Event;

/// What a host function sees: the session's environment and the dispatcher, one level deeper.
struct Host<'a> {
    core: &'a SessionCore,
    runtime: &'a dyn ScriptRuntime,
}

impl HostContext for Host<'_> {
    fn call_tool(&mut self, name: &str, args: Json) -> Result<Json, String> {
        call(self.core, self.runtime, name, args).map_err(|e| e.to_string())
    }

    fn env(&self) -> &HostEnv {
        &self.core.host_env
    }
}

/// Calls host function `name` with JSON arguments: the value, or the message for the script's
/// `TrailblazeHostError`. (The embedded engine calls [`call_host_with`] on its own values.)
pub fn call_host(s: &SessionCore, rt: &dyn ScriptRuntime, name: &str, args: Json) -> Result<Json, String> {
    let mut args = Some(args);
    let mut value = None;
    call_host_with(s, rt, name, None, &mut |entry, cx, check| {
        let args = args.take().unwrap_or_default();
        // An embedder's function has no Rust type to decode into: its schema is held as strictly.
        // `ctx.host.f()` sends null: checked as `{}`, as the invoker will pass it.
        if entry.is_dynamic() {
            let empty = Json::Object(Default::default());
            if let Some(source) = check(if args.is_null() { &empty } else { &args }) {
                let e = HostCallError::Decode {
                    name: entry.name.to_string(),
                    source,
                };
                return (Err(e.to_string()), Default::default());
            }
        }
        let (result, took) = entry.invoke_timed(args, cx);
        (result.map(|v| value = Some(v)).map_err(|e| e.to_string()), took)
    })?;
    Ok(value.unwrap_or_default())
}

/// Calls host function `name` through `invoke`, which runs it (on JSON, or on a script engine's own
/// values) and keeps its result. Takes the call's place on the depth stack, finds the function, and
/// tallies the call in the session's log.
/// `bound`: the entry, found when the engine started (one of the catalog's `host_functions`, so
/// looking `name` up again would find it).
pub fn call_host_with(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    bound: Option<&HostFunctionEntry>,
    invoke: &mut HostInvoke<'_>,
) -> Result<(), String> {
    let _guard = s
        .enter_call(name)
        .map_err(|(cap, name)| CallError::Depth { cap, name }.to_string())?;
    let Some(entry) = bound.or_else(|| s.catalog.host_function(name)) else {
        return Err(HostCallError::unknown(name, &s.catalog.host_names()).to_string());
    };
    let schema = entry.args_schema.as_value();
    let check = |args: &Json| -> Option<DecodeError> {
        crate::surface::check_value(schema, None, args)
            .first()
            .map(|f| f.to_decode_error())
    };
    let mut cx = Host { core: s, runtime: rt };
    let (result, took) = invoke(entry, &mut cx, &check);
    s.log.borrow_mut().append(Event::HostCall {
        name,
        ok: result.is_ok(),
        took,
    });
    result
}
