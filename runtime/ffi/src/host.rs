//! Host functions from the embedder: a C callback ([`TbHostFunction`]) or a Java object, added to a
//! project before its sessions open, called by scripts as `ctx.host.<name>(args)`.
//!
//! The runtime checks the arguments against the function's schema before the callback runs (a bad
//! call never reaches the embedder) and turns a callback's error into the script's
//! `TrailblazeHostError`. Callbacks may run on any session's thread, and on two at once when two
//! sessions call: the embedder makes them thread-safe.

use std::ffi::c_void;
use std::sync::Arc;

use serde_json::Value;
use trailblaze_host_functions::{DynamicHostFn, HostFunctionEntry};

use crate::buf::TbSink;
use crate::ops::PROJECTS;
use crate::{FfiError, TbStatus};

/// A host function implemented in C.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TbHostFunction {
    /// Passed back to every callback as is.
    pub user_data: *mut c_void,
    /// Gets the arguments as JSON (`args_len` bytes, already checked against the schema); writes
    /// the result as JSON into `out` and returns 0, or writes an error message and returns
    /// non-zero. The arguments may hold a resolved secret: the embedder must not log them.
    pub call:
        Option<unsafe extern "C" fn(user_data: *mut c_void, args: *const u8, args_len: usize, out: *mut TbSink) -> i32>,
    /// Called once when the function is no longer used (its project, and every session, ended).
    pub drop: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
}

/// The C table, owned: dropped exactly once, with the last reference.
struct CHostFunction(TbHostFunction);

// SAFETY: the embedder's contract (see the module docs and the header): the callback may be called
// from any thread, concurrently, and `user_data` is usable there.
unsafe impl Send for CHostFunction {}
unsafe impl Sync for CHostFunction {}

impl Drop for CHostFunction {
    fn drop(&mut self) {
        if let Some(drop) = self.0.drop {
            // SAFETY: ownership was passed to us; this is its only drop.
            unsafe { drop(self.0.user_data) }
        }
    }
}

type Call = unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut TbSink) -> i32;

impl CHostFunction {
    // A method, so the closure holds the whole (Send + Sync) table, not its raw pointer field.
    fn invoke(&self, call: Call, args: &Value) -> Result<Value, String> {
        let text = args.to_string();
        let mut sink = TbSink { bytes: Vec::new() };
        // SAFETY: the embedder's callback, called as its contract says, with its own user_data.
        let code = unsafe { call(self.0.user_data, text.as_ptr(), text.len(), &mut sink as *mut TbSink) };
        answer(code == 0, sink.bytes)
    }
}

/// The C table as a host function: `Err` (and the table dropped) when `call` is missing.
pub(crate) fn c_host_function(table: TbHostFunction) -> Result<DynamicHostFn, FfiError> {
    let owned = CHostFunction(table);
    let Some(call) = owned.0.call else {
        return Err(FfiError::new(
            TbStatus::BadInput,
            "the host function has no `call` callback",
        ));
    };
    Ok(Arc::new(move |args: Value| owned.invoke(call, &args)))
}

/// A callback's answer: the result JSON, or its message as the error.
pub(crate) fn answer(ok: bool, bytes: Vec<u8>) -> Result<Value, String> {
    if !ok {
        let message = String::from_utf8_lossy(&bytes).into_owned();
        return Err(if message.is_empty() {
            "the host function failed".into()
        } else {
            message
        });
    }
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    // serde_json's message gives line and column, never the text.
    serde_json::from_slice(&bytes).map_err(|e| format!("the host function's result is not JSON: {e}"))
}

/// Adds `f` as host function `name` with argument schema `schema` to `project`.
pub(crate) fn add(project: u64, name: &str, schema: Value, f: DynamicHostFn) -> Result<(), FfiError> {
    let entry = HostFunctionEntry::dynamic(name, schema, serde_json::json!({}), f)
        .map_err(|e| FfiError::new(TbStatus::BadInput, e))?;
    PROJECTS.with_mut(project, |p| p.project.add_host_function(entry).map_err(FfiError::from))
}
