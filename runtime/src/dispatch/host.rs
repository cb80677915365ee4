//! `ctx.host`: host functions through the dispatcher. A host call never writes a step, never
//! invalidates the snapshot and never resolves a tool's name; it takes one place on the session's
//! depth stack (the same check as a tool call), and the function's own tool calls go one level deeper.

use serde_json::Value as Json;
use trailblaze_host_functions::{HostCallError, HostContext, HostEnv};

use super::{CallError, call};
use crate::script::port::ScriptRuntime;
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

/// Calls host function `name`: the value, or the message for the script's `TrailblazeHostError`.
pub fn call_host(s: &SessionCore, rt: &dyn ScriptRuntime, name: &str, args: Json) -> Result<Json, String> {
    let _guard = s
        .enter_call(name)
        .map_err(|(cap, name)| CallError::Depth { cap, name }.to_string())?;
    let Some(entry) = s.catalog.host_function(name) else {
        return Err(HostCallError::unknown(name, &s.catalog.host_names()).to_string());
    };
    // An embedder's function has no Rust type to decode into: its schema is held as strictly.
    if entry.is_dynamic() {
        // `ctx.host.f()` sends null: checked as `{}`, as the invoker will pass it.
        let empty = Json::Object(Default::default());
        let checked = if args.is_null() { &empty } else { &args };
        if let Some(f) = crate::surface::check_value(entry.args_schema.as_value(), None, checked).first() {
            return Err(HostCallError::Decode {
                name: name.to_string(),
                source: f.to_decode_error(),
            }
            .to_string());
        }
    }
    let mut cx = Host { core: s, runtime: rt };
    let (result, took) = entry.invoke_timed(args, &mut cx);
    let result = result.map_err(|e| e.to_string());
    s.log.borrow_mut().append(Event::HostCall {
        name,
        ok: result.is_ok(),
        millis: took.as_secs_f64() * 1000.0,
    });
    result
}
