//! The script engine: one QuickJS runtime and context per session, on the session's thread.
//!
//! Modules are loaded by name relative to the trailmaps folder (`demo/tools/signIn.ts`), transpiled by
//! swc on the way in; `@trailblaze/scripting` is provided by the host. Each top-level call gets a
//! wall-clock deadline (the interrupt handler), and the runtime has a memory and a stack limit; hitting
//! one fails that call only. Bindings convert at the edge: the dispatcher sees `serde_json::Value`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Context, Ctx, Function, Module, Object, Promise, Runtime, Value};
use serde_json::Value as Json;

use super::convert;
use super::transpile::{Transpiled, Transpiler};
use crate::dispatch::{self, CallError};
use crate::session::SessionCore;
use crate::tool::ScriptedTool;

/// The module name scripts import the SDK by.
pub const SDK_MODULE: &str = "@trailblaze/scripting";
const SDK_SOURCE: &str = include_str!("scripting.js");

/// The engine's limits, in one place.
#[derive(Debug, Clone)]
pub struct EngineLimits {
    /// Wall-clock time a top-level call may run scripts for.
    pub timeout: Duration,
    /// Memory the session's JS heap may hold.
    pub memory_bytes: usize,
    /// Native stack JS may use (recursion depth).
    pub stack_bytes: usize,
}

impl Default for EngineLimits {
    fn default() -> Self {
        EngineLimits {
            timeout: Duration::from_secs(10),
            memory_bytes: 256 << 20,
            stack_bytes: 4 << 20,
        }
    }
}

/// Stack for the session thread: the JS stack limit plus room for the Rust frames between re-entrant
/// calls (16 levels of dispatcher, binding and engine).
pub fn thread_stack_bytes(limits: &EngineLimits) -> usize {
    limits.stack_bytes + (32 << 20)
}

/// The deadline the interrupt handler checks; shared with the handler, which must be `Send`.
#[derive(Debug)]
struct Deadline {
    base: Instant,
    /// Nanoseconds after `base`; 0 means none.
    at: AtomicU64,
    fired: AtomicBool,
}

impl Deadline {
    fn expired(&self) -> bool {
        let at = self.at.load(Ordering::Relaxed);
        if at != 0 && self.base.elapsed().as_nanos() as u64 >= at {
            self.fired.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// The engine state a session keeps beside its QuickJS context.
pub struct ScriptState {
    pub limits: EngineLimits,
    pub transpiler: Arc<Transpiler>,
    /// Transpiled modules by name, for mapping error positions back to `.ts` lines.
    modules: Rc<RefCell<HashMap<String, Arc<Transpiled>>>>,
    /// Why the last module failed to load (swc's message with file:line:col), read when an import fails.
    load_error: Rc<RefCell<Option<String>>>,
    deadline: Arc<Deadline>,
    /// Depth of the innermost running scripted tool: calls from scripts never go shallower than this.
    active_depth: Cell<Option<u32>>,
}

impl ScriptState {
    /// Starts the clock for one top-level call.
    pub fn begin_call(&self) {
        let at = self.deadline.base.elapsed() + self.limits.timeout;
        self.deadline.fired.store(false, Ordering::Relaxed);
        self.deadline.at.store(at.as_nanos().max(1) as u64, Ordering::Relaxed);
    }

    /// Ends a top-level call: runs what jobs it left behind while its deadline still holds (an
    /// interrupted script leaves some), drops any exception they raised, then stops the clock. Without
    /// this a failure of one call would surface in the next.
    pub fn end_call(&self, ctx: &Ctx<'_>) {
        while ctx.execute_pending_job() {}
        if ctx.has_exception() {
            ctx.catch();
        }
        self.deadline.at.store(0, Ordering::Relaxed);
    }
}

/// A session's QuickJS runtime and context, created on the session's thread.
pub struct Engine {
    // Field order matters: the context must go before its runtime.
    pub context: Context,
    pub runtime: Runtime,
}

/// Creates the runtime and context with the limits and loader; bindings come later ([`install`]),
/// once the session core exists.
pub fn create(
    limits: EngineLimits,
    transpiler: Arc<Transpiler>,
    root: PathBuf,
) -> rquickjs::Result<(Engine, ScriptState)> {
    let runtime = Runtime::new()?;
    runtime.set_memory_limit(limits.memory_bytes);
    runtime.set_max_stack_size(limits.stack_bytes);
    let deadline = Arc::new(Deadline {
        base: Instant::now(),
        at: AtomicU64::new(0),
        fired: AtomicBool::new(false),
    });
    let d = deadline.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || d.expired())));
    let modules = Rc::new(RefCell::new(HashMap::new()));
    let load_error = Rc::new(RefCell::new(None));
    runtime.set_loader(
        ScriptResolver,
        ScriptLoader {
            root,
            transpiler: transpiler.clone(),
            modules: modules.clone(),
            load_error: load_error.clone(),
        },
    );
    let context = Context::full(&runtime)?;
    let state = ScriptState {
        limits,
        transpiler,
        modules,
        load_error,
        deadline,
        active_depth: Cell::new(None),
    };
    Ok((Engine { context, runtime }, state))
}

/// Installs the raw bindings and evaluates the SDK module, which captures them and hides them.
pub fn install(engine: &Engine, core: Rc<SessionCore>) -> rquickjs::Result<()> {
    engine.context.with(|ctx| {
        let globals = ctx.globals();
        globals.set("__trailblazeTool", binding(&ctx, core.clone(), Binding::Tool)?)?;
        globals.set("__trailblazeToolNames", core.catalog.tool_names())?;
        globals.set("__trailblazeHostNames", core.catalog.host_names())?;
        globals.set("__trailblazeHost", binding(&ctx, core, Binding::Host)?)?;
        let promise = Module::import(&ctx, SDK_MODULE)?;
        promise.finish::<Value>()?;
        Ok(())
    })
}

#[derive(Clone, Copy)]
enum Binding {
    Tool,
    Host,
}

/// `(name, args, depth) -> envelope`: the raw binding behind `ctx.tools` or `ctx.host`.
fn binding<'js>(ctx: &Ctx<'js>, s: Rc<SessionCore>, kind: Binding) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: String, args: Value<'js>, depth: u32| -> rquickjs::Result<Value<'js>> {
            let depth = s.script.floor_depth(depth);
            let result = match kind {
                Binding::Tool => tool_binding(&s, &ctx, &name, &args, depth),
                Binding::Host => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::host::call_from_script(&s, &ctx, &name, &args, depth)
                }))
                .unwrap_or_else(|_| Err(format!("host function {name} panicked"))),
            };
            // The value itself, or a thrown error the SDK turns into TrailblazeToolError /
            // TrailblazeHostError. (Not an `{ok, value}` envelope object: allocating one per call cost
            // a fifth of a host call's budget; the subprocess callback keeps the JSON envelope.)
            match result {
                Ok(v) => convert::to_js(&ctx, &v),
                Err(message) => Err(rquickjs::Exception::throw_message(&ctx, &message)),
            }
        },
    )
}

impl ScriptState {
    fn floor_depth(&self, depth: u32) -> u32 {
        match self.active_depth.get() {
            Some(active) => depth.max(active + 1),
            None => depth,
        }
    }
}

fn tool_binding<'js>(
    s: &SessionCore,
    ctx: &Ctx<'js>,
    name: &str,
    args: &Value<'js>,
    depth: u32,
) -> Result<Json, String> {
    let args = convert::to_json(args).map_err(|e| format!("{name}: arguments: {e}"))?;
    // A panic must not unwind through QuickJS's C frames.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dispatch::call(s, ctx, name, args, depth)
    }))
    .unwrap_or_else(|_| Err(CallError::Panicked { tool: name.to_string() }))
    .map_err(|e| e.to_string())
}

/// What a scripted tool's run produced, and whether its spec declared it read-only.
pub struct ScriptOutcome {
    pub value: Json,
    pub read_only: bool,
}

/// Runs scripted tool `name` (the export of `script.module`) with `args` at `depth`.
pub fn run_tool<'js>(
    s: &SessionCore,
    ctx: &Ctx<'js>,
    script: &ScriptedTool,
    name: &str,
    args: Json,
    depth: u32,
) -> Result<ScriptOutcome, CallError> {
    let fail = |message: String| CallError::Script {
        tool: name.to_string(),
        message,
    };
    let tool = load_tool(s, ctx, script, name).map_err(fail)?;
    let read_only = tool
        .get::<_, Option<Object>>("spec")
        .ok()
        .flatten()
        .and_then(|spec| spec.get::<_, Option<bool>>("readOnly").ok().flatten())
        .unwrap_or(false);
    let run: Function = ctx.globals().get("__trailblazeRun").map_err(|e| fail(e.to_string()))?;
    let input = convert::to_js(ctx, &args).map_err(|e| fail(e.to_string()))?;
    let outer = s.script.active_depth.replace(Some(depth));
    let result = run
        .call::<_, Promise>((tool, input, depth))
        .and_then(|p| p.finish::<Value>());
    s.script.active_depth.set(outer);
    let value = result.map_err(|e| fail(describe_error(s, ctx, e)))?;
    let value = convert::to_json(&value).map_err(|e| fail(format!("its result: {e}")))?;
    Ok(ScriptOutcome { value, read_only })
}

/// Imports the module and finds the `trailblaze.tool(...)` export named `name`.
fn load_tool<'js>(s: &SessionCore, ctx: &Ctx<'js>, script: &ScriptedTool, name: &str) -> Result<Object<'js>, String> {
    s.script.load_error.borrow_mut().take();
    let ns = Module::import(ctx, script.module.as_str()).and_then(|p| p.finish::<Object>());
    let ns = match ns {
        Ok(ns) => ns,
        Err(e) => {
            let described = describe_error(s, ctx, e);
            return Err(s.script.load_error.borrow_mut().take().unwrap_or(described));
        }
    };
    let export: Option<Object> = ns.get(name).ok().flatten();
    match export {
        Some(obj) if obj.get::<_, Option<bool>>("__trailblazeTool").ok().flatten() == Some(true) => Ok(obj),
        _ => Err(format!(
            "{} does not export `{name}` as `export const {name} = trailblaze.tool(...)`",
            script.module
        )),
    }
}

/// Turns an engine error into a message: the limit that was hit, or the script's own error with its
/// `.ts` position.
fn describe_error<'js>(s: &SessionCore, ctx: &Ctx<'js>, e: rquickjs::Error) -> String {
    let limits = &s.script.limits;
    if s.script.deadline.fired.load(Ordering::Relaxed) {
        return format!("exceeded its time limit of {} ms", limits.timeout.as_millis());
    }
    let (message, stack) = match e {
        rquickjs::Error::Exception => exception_text(&ctx.catch()),
        rquickjs::Error::WouldBlock => (
            "its promise never settled (an await that nothing resolves)".into(),
            None,
        ),
        rquickjs::Error::Allocation => ("out of memory".into(), None),
        other => (other.to_string(), None),
    };
    if s.script.deadline.fired.load(Ordering::Relaxed) {
        return format!("exceeded its time limit of {} ms", limits.timeout.as_millis());
    }
    if message.contains("out of memory") {
        return format!("exceeded its memory limit of {} MiB", limits.memory_bytes >> 20);
    }
    if message.contains("stack overflow") || message.contains("Maximum call stack size exceeded") {
        return format!(
            "exceeded its stack limit of {} KiB (unbounded recursion?)",
            limits.stack_bytes >> 10
        );
    }
    match stack
        .as_deref()
        .and_then(|st| ts_location(&s.script.modules.borrow(), st))
    {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

/// The message of a thrown value and its stack, if any. A `TrailblazeToolError` is a failed inner call
/// whose message already says what failed; it passes through as it is.
fn exception_text(v: &Value<'_>) -> (String, Option<String>) {
    if let Some(obj) = v.as_object() {
        let name: Option<String> = obj.get("name").ok().flatten();
        let message: Option<String> = obj.get("message").ok().flatten();
        let stack: Option<String> = obj.get("stack").ok().flatten();
        if let Some(message) = message {
            return match name.as_deref() {
                Some("TrailblazeToolError") => (message, None),
                Some(n) => (format!("{n}: {message}"), stack),
                None => (message, stack),
            };
        }
    }
    let text = v
        .as_string()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "a non-Error value was thrown".to_string());
    (format!("threw {text}"), None)
}

/// Finds the first stack frame in a loaded `.ts` module and maps it to the source line.
fn ts_location(modules: &HashMap<String, Arc<Transpiled>>, stack: &str) -> Option<String> {
    for line in stack.lines() {
        for (module, t) in modules {
            let Some(pos) = line.find(&format!("{module}:")) else {
                continue;
            };
            let rest = &line[pos + module.len() + 1..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let out_line: u32 = digits.parse().ok()?;
            let src = t.source_line(out_line).unwrap_or(out_line);
            return Some(format!("{module}:{src}"));
        }
    }
    None
}

/// Resolves `@trailblaze/scripting` and relative imports (`./shared`, `../x.ts`) to module names relative
/// to the trailmaps folder; nothing may resolve outside it.
struct ScriptResolver;

impl Resolver for ScriptResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attrs: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if name == SDK_MODULE {
            return Ok(name.to_string());
        }
        let joined = if name.starts_with("./") || name.starts_with("../") {
            Path::new(base).parent().unwrap_or(Path::new("")).join(name)
        } else if !name.starts_with('/') && name.ends_with(".ts") && !name.contains(':') {
            // A module name the host itself imports (`demo/tools/signIn.ts`).
            PathBuf::from(name)
        } else {
            return Err(rquickjs::Error::new_resolving_message(
                base,
                name,
                "only `@trailblaze/scripting` and relative `.ts` files can be imported",
            ));
        };
        let mut parts: Vec<String> = Vec::new();
        for c in joined.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(rquickjs::Error::new_resolving_message(
                            base,
                            name,
                            "the import leaves the trailmaps folder",
                        ));
                    }
                }
                Component::CurDir => {}
                _ => {
                    return Err(rquickjs::Error::new_resolving_message(
                        base,
                        name,
                        "absolute imports are not allowed",
                    ));
                }
            }
        }
        let mut module = parts.join("/");
        // `./x.js` is how NodeNext-style TypeScript names a sibling `x.ts`.
        if let Some(stem) = module.strip_suffix(".js") {
            module = format!("{stem}.ts");
        } else if !module.ends_with(".ts") {
            module.push_str(".ts");
        }
        Ok(module)
    }
}

struct ScriptLoader {
    root: PathBuf,
    transpiler: Arc<Transpiler>,
    modules: Rc<RefCell<HashMap<String, Arc<Transpiled>>>>,
    load_error: Rc<RefCell<Option<String>>>,
}

impl Loader for ScriptLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attrs: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if name == SDK_MODULE {
            return Module::declare(ctx.clone(), name, SDK_SOURCE);
        }
        let fail = |msg: String| {
            *self.load_error.borrow_mut() = Some(msg.clone());
            rquickjs::Error::new_loading_message(name, msg)
        };
        let source =
            std::fs::read_to_string(self.root.join(name)).map_err(|e| fail(format!("cannot read {name}: {e}")))?;
        let t = self
            .transpiler
            .transpile(name, &source)
            .map_err(|e| fail(e.to_string()))?;
        self.modules.borrow_mut().insert(name.to_string(), t.clone());
        Module::declare(ctx.clone(), name, t.code.as_str())
    }
}
