//! The script-runtime port: what the dispatcher needs from a script runtime, and what a runtime
//! needs from the dispatcher. No engine value crosses: values go as JSON, except a host call's, which
//! the dispatcher hands back to the runtime as the function to run on its own values. Embedded QuickJS
//! ([`super::quickjs`]) and the Node.js subprocess ([`super::subprocess`]) implement it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// Which runtime runs a scripted tool (`runtime:` in its `<name>.tool.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeKind {
    /// QuickJS inside the session's thread.
    #[default]
    Embedded,
    /// Node.js in a child process, calling back over loopback HTTP.
    Subprocess,
}

/// A scripted tool: the export `name` of `module`, run by a script runtime.
#[derive(Debug, Clone)]
pub struct ScriptedTool {
    /// Absolute path of the `.ts` file.
    pub file: PathBuf,
    /// The module name runtimes load it under (`<trailmap>/tools/<name>.ts`), also shown in errors.
    pub module: String,
    pub runtime: RuntimeKind,
    /// The script time budget its tool.yaml sets (`timeoutMs`), used when it is the top-level call.
    pub timeout: Option<Duration>,
    /// `supportedPlatforms` from its spec or descriptor: a device of another platform refuses it.
    pub platforms: Option<Vec<String>>,
}

/// `<root>/demo/tools/signIn.ts` → `demo/tools/signIn.ts`: the name runtimes load and errors show.
pub fn module_name(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// What a scripted tool's run produced, and whether its spec declared it read-only.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOutcome {
    pub value: Value,
    pub read_only: bool,
}

/// The dispatcher, as a running script reaches it: `ctx.tools` and `ctx.host`. Both return the
/// value or the message the script's `TrailblazeToolError` / `TrailblazeHostError` carries.
pub trait Callbacks {
    fn call_tool(&self, name: &str, args: Value) -> Result<Value, String>;
    /// A host call with JSON arguments (the subprocess runtime's callback).
    fn call_host(&self, name: &str, args: Value) -> Result<Value, String>;
    /// A host call whose arguments stay in the engine: the dispatcher takes the call's place on the
    /// depth stack and finds `name` (unless the engine bound its entry at start: `bound`, one of the
    /// catalog's [`host_functions`](crate::Catalog::host_functions)), then `invoke` runs the function
    /// on the engine's own values
    /// ([`HostFunctionEntry::invoke_js`](trailblaze_host_functions::HostFunctionEntry::invoke_js))
    /// and keeps the result; it returns the error message, if any, and how long the function took.
    fn call_host_in_place(
        &self,
        name: &str,
        bound: Option<&trailblaze_host_functions::HostFunctionEntry>,
        invoke: &mut HostInvoke<'_>,
    ) -> Result<(), String>;
    /// A line scripted tool `tool` printed with `console.<level>` (formatted by the runtime, not yet
    /// scrubbed or bounded); `None`: the innermost running scripted tool.
    fn console(&self, tool: Option<&str>, level: &str, text: &str);
    /// `ctx.fetch`: one HTTP exchange the host makes (`{url, method?, headers?, body?}` in, the
    /// response as JSON out), held to the trailmap's `network` rules.
    fn fetch(&self, request: Value) -> Result<Value, String>;
}

/// What runs a host function found by the dispatcher: the function, its context, and the check of
/// an embedder's function's arguments against its schema.
pub type HostInvoke<'a> = dyn FnMut(
        &trailblaze_host_functions::HostFunctionEntry,
        &mut dyn trailblaze_host_functions::HostContext,
        &dyn Fn(&Value) -> Option<trailblaze_host_functions::DecodeError>,
    ) -> (Result<(), String>, trailblaze_host_functions::clock::Ticks)
    + 'a;

/// A script runtime: runs one scripted tool with arguments the dispatcher already decoded. Calls the
/// script makes go back through `back`, into the same dispatcher (and the same depth stack).
pub trait ScriptRuntime {
    fn run_tool(
        &self,
        back: &dyn Callbacks,
        tool: &ScriptedTool,
        name: &str,
        args: &Value,
    ) -> Result<ScriptOutcome, String>;

    /// Runs `source`, the body of a JavaScript function of `(input, trailblaze)` (the original's
    /// `script` tool), and returns what it returned. Only the embedded engine runs these.
    fn run_inline(&self, back: &dyn Callbacks, source: &str, input: Value) -> Result<Value, String> {
        let _ = (back, source, input);
        Err("this script runtime does not run inline scripts".into())
    }
}
