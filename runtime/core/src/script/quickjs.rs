//! Embedded QuickJS: one runtime and context per session, on the session's thread; one
//! implementation of the script-runtime port.
//!
//! Modules are loaded by name relative to the trailmaps folder (`demo/tools/signIn.ts`), transpiled by
//! swc on the way in; `@trailblaze/scripting` is a build of the one SDK (`sdk-ts/src/index.ts`). Each
//! top-level call runs under the session's deadline (checked by the interrupt handler), and the
//! runtime has a memory and a stack limit; hitting one fails that call only. Values convert at the
//! edge: past this module everything is `serde_json::Value`.

mod bound;
mod bytecode;
mod convert;
mod harden;
mod loader;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use rquickjs::{Context, Ctx, Function, Module, Object, Promise, Runtime, Value};
use serde_json::Value as Json;
use trailblaze_host_functions::HostFunctionEntry;

use super::errors;
use super::port::{Callbacks, ScriptOutcome, ScriptRuntime, ScriptedTool};
use super::sdk::MODULE as SDK_MODULE;
use super::transpile::{Transpiled, Transpiler};
use crate::budget::{Deadline, Limits};
use loader::{ScriptLoader, ScriptResolver};

const BOOTSTRAP_MODULE: &str = "trailblaze:bootstrap";
const BOOTSTRAP_SOURCE: &str = include_str!("quickjs/bootstrap.js");
/// How `console.*` arguments become a line: shared with the Node runner.
const CONSOLE_MODULE: &str = "trailblaze:console";
const CONSOLE_SOURCE: &str = include_str!("console.mjs");

/// The bytecode of the engine's own modules, compiled once per process (see [`bytecode::declare`]).
static BOOTSTRAP_CODE: OnceLock<(String, Vec<u8>)> = OnceLock::new();
static SDK_CODE: OnceLock<(String, Vec<u8>)> = OnceLock::new();
static CONSOLE_CODE: OnceLock<(String, Vec<u8>)> = OnceLock::new();

/// Compiles the engine's own modules (the SDK, the console glue, the bootstrap) into this process's
/// bytecode, in a throwaway engine: the first session engine made afterwards loads them instead of
/// compiling them (~30 % of making it). A one-shot process (`trailblaze tool`) runs this on a
/// second thread while it loads the trailmaps. Returns whether it compiled anything (`false`: an
/// engine, or an earlier call, already had). Nothing is read from outside the process.
pub fn precompile() -> Result<bool, String> {
    if BOOTSTRAP_CODE.get().is_some() && SDK_CODE.get().is_some() && CONSOLE_CODE.get().is_some() {
        return Ok(false);
    }
    let fail = |e: rquickjs::Error| format!("the script engine: {e}");
    let runtime = Runtime::new().map_err(fail)?;
    let context = Context::full(&runtime).map_err(fail)?;
    let sdk = super::sdk::javascript().map_err(|e| e.to_string())?;
    context
        .with(|ctx| -> rquickjs::Result<()> {
            bytecode::declare(&ctx, SDK_MODULE, sdk, &SDK_CODE)?;
            bytecode::declare(&ctx, CONSOLE_MODULE, CONSOLE_SOURCE, &CONSOLE_CODE)?;
            bytecode::declare(&ctx, BOOTSTRAP_MODULE, BOOTSTRAP_SOURCE, &BOOTSTRAP_CODE)?;
            Ok(())
        })
        .map_err(fail)?;
    Ok(true)
}

/// Stack for the session thread: the JS stack limit plus room for the Rust frames between re-entrant
/// calls (16 levels of dispatcher, binding and engine).
pub fn thread_stack_bytes(limits: &Limits) -> usize {
    limits.stack_bytes + (32 << 20)
}

/// Which namespace a script called through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Callback {
    Tool,
    Host,
}

/// The [`Callbacks`] of the innermost [`ScriptRuntime::run_tool`] under way: the bindings call the
/// dispatcher through it. Set for the duration of that call and restored after it (a scripted tool
/// that calls another nests one run in the other); empty between calls, when a script left queued
/// can no longer reach the dispatcher.
#[derive(Default)]
struct CurrentCallbacks(std::cell::Cell<Option<std::ptr::NonNull<dyn Callbacks + 'static>>>);

impl CurrentCallbacks {
    /// Runs `f` with `back` as the current callbacks.
    fn with<R>(&self, back: &dyn Callbacks, f: impl FnOnce() -> R) -> R {
        // SAFETY: only the lifetime is erased. The pointer is used (in `get`) only while it is the
        // current one, which it stops being when `_restore` drops at the end of this scope — also
        // on a panic — so it never outlives the borrow it came from.
        let erased: &'static dyn Callbacks =
            unsafe { std::mem::transmute::<&dyn Callbacks, &'static dyn Callbacks>(back) };
        let before = self.0.replace(Some(std::ptr::NonNull::from(erased)));
        struct Restore<'a>(&'a CurrentCallbacks, Option<std::ptr::NonNull<dyn Callbacks + 'static>>);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.0.set(self.1);
            }
        }
        let _restore = Restore(self, before);
        f()
    }

    /// Calls `f` with the current callbacks, or says that no call is under way.
    fn get<R>(&self, f: impl FnOnce(&dyn Callbacks) -> Result<R, String>) -> Result<R, String> {
        match self.0.get() {
            // SAFETY: set by `with` from a borrow that lives until it is unset (see there).
            Some(p) => f(unsafe { p.as_ref() }),
            None => {
                Err("no tool call is under way: a script left running after its call ended cannot call the host".into())
            }
        }
    }
}

/// What the engine keeps beside its QuickJS context.
struct EngineState {
    limits: Limits,
    deadline: Arc<Deadline>,
    /// Transpiled modules by name, for mapping error positions back to `.ts` lines.
    modules: Rc<RefCell<HashMap<String, Arc<Transpiled>>>>,
    /// Every module loaded, to the engine's end: their bytecode is loaded in place, not copied.
    kept: Rc<RefCell<Vec<Arc<Transpiled>>>>,
    /// Why the last module failed to load (swc's message with file:line:col), read when an import fails.
    load_error: Rc<RefCell<Option<String>>>,
    /// The trailmaps folder module names are relative to (for showing positions).
    root: PathBuf,
    /// Promises rejected with no handler yet, as the rejection tracker reports them.
    rejections: Rc<RefCell<Rejections>>,
    /// What the bindings call: the dispatcher's callbacks of the call under way.
    back: CurrentCallbacks,
    /// A script ran since the memory limit was last set (true at first, so the first call sets it).
    heap_changed: std::cell::Cell<bool>,
}

/// Rejected promises nothing handled (yet), by object address, in the order they were rejected.
#[derive(Default)]
struct Rejections {
    next: u64,
    /// (sequence number, promise address, the inner tool if a `ctx.tools` call, message)
    open: Vec<(u64, usize, Option<String>, String)>,
}

/// The address of an object, as identity (the tracker gets no handle it could keep).
fn address(v: &Value<'_>) -> usize {
    if !v.is_object() {
        return 0;
    }
    // SAFETY: the value is an object, so its JSValue holds a pointer; it is only compared, never
    // dereferenced.
    unsafe { rquickjs::qjs::JS_VALUE_GET_PTR(v.as_raw()) as usize }
}

/// One QuickJS runtime and context with the bindings installed.
struct Engine {
    // Field order matters: the context must go before its runtime.
    context: Context,
    runtime: Runtime,
    state: Rc<EngineState>,
}

/// A session's embedded engine, created on the session's thread. When a call leaves work behind that
/// does not stop (a microtask loop QuickJS's interrupt check does not reach), the engine is replaced
/// by a fresh one: nothing of a call outlives it, and no later call inherits it.
pub struct Embedded {
    config: EmbeddedConfig,
    engine: RefCell<Engine>,
}

/// Everything the engine starts from.
#[derive(Clone)]
pub struct EmbeddedConfig {
    pub limits: Limits,
    pub deadline: Arc<Deadline>,
    pub transpiler: Arc<Transpiler>,
    /// Module names are relative to this folder (the trailmaps folder).
    pub root: PathBuf,
    pub tool_names: Vec<String>,
    pub host_names: Vec<String>,
    /// Bound as `ctx.host`'s members; a name in `host_names` without one goes through `callHost`.
    pub host_functions: Vec<Arc<HostFunctionEntry>>,
}

/// Jobs a returned call may leave queued and still have them run out (with the deadline closed, so
/// they can no longer dispatch anything); past this the engine is replaced.
const MAX_LEFTOVER_JOBS: usize = 10_000;

impl Embedded {
    /// Creates the engine: see [`Engine::create`].
    pub fn create(config: EmbeddedConfig) -> rquickjs::Result<Embedded> {
        let engine = Engine::create(config.clone())?;
        Ok(Embedded {
            config,
            engine: RefCell::new(engine),
        })
    }

    /// Runs `f` with this engine entered: `f` gets the engine as a script runtime. Afterwards the
    /// call's deadline is closed and what it left queued runs out without reaching the dispatcher
    /// (an interrupted script leaves some); any exception it raised is dropped, so a failure of one
    /// call never surfaces in the next. Work that does not run out replaces the engine.
    pub fn enter<R>(&self, f: impl FnOnce(&dyn ScriptRuntime) -> R) -> R {
        let (r, clean) = {
            let engine = self.engine.borrow();
            // Rejections left from an earlier call are no concern of this one.
            engine.state.rejections.borrow_mut().open.clear();
            // The memory limit is per call: see `limit_memory`.
            if engine.state.heap_changed.replace(false) {
                engine.limit_memory(self.config.limits.memory_bytes);
            }
            engine.context.with(|ctx| {
                let here = Entered {
                    ctx: &ctx,
                    state: &engine.state,
                };
                let r = f(&here);
                engine.state.deadline.close();
                let mut drained = 0;
                while drained < MAX_LEFTOVER_JOBS && ctx.execute_pending_job() {
                    drained += 1;
                }
                let clean = drained < MAX_LEFTOVER_JOBS;
                if ctx.has_exception() {
                    ctx.catch();
                }
                (r, clean)
            })
        };
        if !clean {
            tracing::warn!("a scripted tool left endless work queued; the script engine was restarted");
            match Engine::create(self.config.clone()) {
                Ok(fresh) => *self.engine.borrow_mut() = fresh,
                Err(e) => tracing::error!(error = %e, "the script engine could not be restarted"),
            }
        }
        r
    }
}

impl Engine {
    /// Creates the runtime and context with the limits and loader, installs the bindings and evaluates
    /// the SDK and the bootstrap that builds `ctx`.
    fn create(config: EmbeddedConfig) -> rquickjs::Result<Engine> {
        let runtime = Runtime::new()?;
        runtime.set_memory_limit(config.limits.memory_bytes);
        // No collection while the realm is built: it is all live, and each pass walked all of it.
        runtime.set_gc_threshold(usize::MAX);
        runtime.set_max_stack_size(config.limits.stack_bytes);
        let d = config.deadline.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || d.expired())));
        let state = Rc::new(EngineState {
            limits: config.limits,
            deadline: config.deadline,
            modules: Rc::new(RefCell::new(HashMap::new())),
            load_error: Rc::new(RefCell::new(None)),
            kept: Rc::default(),
            root: config.root.clone(),
            rejections: Rc::new(RefCell::new(Rejections::default())),
            back: CurrentCallbacks::default(),
            heap_changed: std::cell::Cell::new(false),
        });
        let tracked = state.rejections.clone();
        runtime.set_host_promise_rejection_tracker(Some(Box::new(move |ctx, promise, reason, handled| {
            let at = address(&promise);
            if handled {
                tracked.borrow_mut().open.retain(|(_, a, _, _)| *a != at);
            } else {
                // Read before borrowing: reading the reason may run a getter that rejects another
                // promise, which re-enters this tracker.
                let (tool, message) = rejection_text(&ctx, &reason);
                let mut r = tracked.borrow_mut();
                r.next += 1;
                let seq = r.next;
                r.open.push((seq, at, tool, message));
            }
        })));
        runtime.set_loader(
            ScriptResolver,
            ScriptLoader {
                root: config.root,
                transpiler: config.transpiler,
                modules: state.modules.clone(),
                load_error: state.load_error.clone(),
                kept: state.kept.clone(),
            },
        );
        let context = Context::full(&runtime)?;
        context.with(|ctx| -> rquickjs::Result<()> {
            let b = Object::new(ctx.clone())?;
            b.set("callTool", binding(&ctx, &state, Callback::Tool)?)?;
            b.set("callHost", binding(&ctx, &state, Callback::Host)?)?;
            b.set("toolNames", config.tool_names)?;
            let direct = Object::new(ctx.clone())?;
            for entry in config.host_functions {
                direct.set(&*entry.name, bound::host_function(&ctx, &state, entry.clone())?)?;
            }
            b.set("hostFunctions", direct)?;
            b.set("adoptHostError", Function::new(ctx.clone(), adopt_host_error)?)?;
            b.set("hostNames", config.host_names)?;
            b.set("console", console_binding(&ctx, &state)?)?;
            b.set("fetch", fetch_binding(&ctx, &state)?)?;
            ctx.globals().set("__trailblazeBindings", b)?;
            let (boot, done) = bytecode::declare(&ctx, BOOTSTRAP_MODULE, BOOTSTRAP_SOURCE, &BOOTSTRAP_CODE)?.eval()?;
            done.finish::<()>()?;
            harden::harden(&ctx, boot.get("roots")?)?;
            Ok(())
        })?;
        let engine = Engine {
            context,
            runtime,
            state,
        };
        // What a session's engine holds from the start is measured here, where a warm engine is
        // made, not in its first call.
        let held = engine.limit_memory(engine.state.limits.memory_bytes);
        // As QuickJS sets it after a collection: the next comes once the heap has grown by half.
        engine.runtime.set_gc_threshold(held + held / 2);
        Ok(engine)
    }
}

impl Engine {
    /// Sets the memory limit, per call as promised: a call may allocate its budget on top of what
    /// earlier calls left in the session's globals (up to four budgets in all, after which the
    /// session's heap is simply full). Returns what the heap holds. Measuring walks the heap's
    /// objects, so it is done only when the heap may have changed: after a call that ran a script
    /// (most calls of a trail, taps and assertions, run none). Never on the host-call path.
    fn limit_memory(&self, limit: usize) -> usize {
        let held = usize::try_from(self.runtime.memory_usage().malloc_size).unwrap_or(0);
        self.runtime.set_memory_limit(held.min(3 * limit).saturating_add(limit));
        held
    }
}

/// The engine while entered: the script runtime the dispatcher sees.
struct Entered<'a, 'js> {
    ctx: &'a Ctx<'js>,
    state: &'a EngineState,
}

impl ScriptRuntime for Entered<'_, '_> {
    /// Calls the script makes reach the dispatcher through `back`, for the duration of this call.
    fn run_tool(
        &self,
        back: &dyn Callbacks,
        tool: &ScriptedTool,
        name: &str,
        args: &Json,
    ) -> Result<ScriptOutcome, String> {
        self.state.heap_changed.set(true);
        self.state
            .back
            .with(back, || run_tool(self.state, self.ctx, tool, name, args))
    }

    fn run_inline(&self, back: &dyn Callbacks, source: &str, input: Json) -> Result<Json, String> {
        self.state.heap_changed.set(true);
        // `trailblaze.execute` reaches the dispatcher through the same port as a tool's `ctx.tools`.
        self.state
            .back
            .with(back, || run_inline(self.state, self.ctx, source, input))
    }
}

/// Compiles `source` as the body of `function (input, trailblaze)` and runs it through the
/// bootstrap's `__trailblazeInline`; a returned promise is driven to its end.
fn run_inline<'js>(s: &EngineState, ctx: &Ctx<'js>, source: &str, input: Json) -> Result<Json, String> {
    let wrapped = format!("(function (input, trailblaze) {{ \"use strict\";\n{source}\n}})");
    let body: Function = ctx.eval(wrapped).map_err(|e| describe_error(s, ctx, e))?;
    let inline: Function = ctx.globals().get("__trailblazeInline").map_err(|e| e.to_string())?;
    let input = convert::to_js(ctx, &input).map_err(|e| e.to_string())?;
    let out: Value = inline.call((body, input)).map_err(|e| describe_error(s, ctx, e))?;
    let out = match out.as_promise() {
        Some(p) => drive::<Value>(ctx, p, &s.deadline).map_err(|e| describe_error(s, ctx, e))?,
        None => out,
    };
    convert::to_json(&out).map_err(|e| format!("its result: {e}"))
}

/// `(name, args) -> value`, or a thrown Error the SDK turns into `TrailblazeToolError` /
/// `TrailblazeHostError`: the raw binding behind `ctx.tools` or `ctx.host`.
fn binding<'js>(ctx: &Ctx<'js>, state: &Rc<EngineState>, kind: Callback) -> rquickjs::Result<Function<'js>> {
    let state = state.clone();
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String, args: Value<'js>| {
        reenter(&ctx, &state, kind, &name, args)
    })
}

/// `(level, line) -> undefined`: the binding behind `console.*` (the line already formatted).
fn console_binding<'js>(ctx: &Ctx<'js>, state: &Rc<EngineState>) -> rquickjs::Result<Function<'js>> {
    let state = state.clone();
    Function::new(ctx.clone(), move |level: String, line: String| {
        // A sink that panics must not unwind through QuickJS's C frames; a lost line is all it costs.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            state.back.get(|back| {
                back.console(None, &level, &line);
                Ok(())
            })
        }));
    })
}

/// `(request) -> response`: the binding behind `ctx.fetch` (the SDK builds the request and the
/// `Response`-like object); the host makes the exchange, synchronously, within the call's deadline.
fn fetch_binding<'js>(ctx: &Ctx<'js>, state: &Rc<EngineState>) -> rquickjs::Result<Function<'js>> {
    let state = state.clone();
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, request: Value<'js>| {
        let result = convert::to_json(&request)
            .map_err(|e| format!("fetch: the request: {e}"))
            .and_then(|request| {
                // A panic must not unwind through QuickJS's C frames.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    state.back.get(|back| back.fetch(request))
                }))
                .unwrap_or_else(|_| Err("fetch panicked".into()))
            });
        match result {
            Ok(v) => convert::to_js(&ctx, &v),
            Err(message) => Err(rquickjs::Exception::throw_message(&ctx, &message)),
        }
    })
}

/// The SDK's `TrailblazeHostError`, which a host function's binding throws itself (the SDK then
/// adds no wrapper frame around each call). Kept as the runtime's userdata, which rquickjs drops
/// before it frees the runtime.
struct HostErrorClass<'js>(rquickjs::Constructor<'js>);

// SAFETY: the only lifetime is `'js`, replaced as the trait asks.
unsafe impl<'js> rquickjs::JsLifetime<'js> for HostErrorClass<'js> {
    type Changed<'to> = HostErrorClass<'to>;
}

/// `adoptHostError(class)`: called once, by the SDK's `makeContext`, while the engine starts.
fn adopt_host_error<'js>(ctx: Ctx<'js>, class: rquickjs::Constructor<'js>) -> rquickjs::Result<()> {
    ctx.store_userdata(HostErrorClass(class))
        .map(drop)
        .map_err(|_| rquickjs::Error::new_from_js("value", "the host error class"))
}

/// Throws `TrailblazeHostError(message, name)` (a plain `Error` if the SDK never handed its class).
fn throw_host_error(ctx: &Ctx<'_>, name: &str, message: &str) -> rquickjs::Error {
    let class = ctx.userdata::<HostErrorClass>().map(|c| c.0.clone());
    match class.map(|c| c.construct::<_, Value>((message, name))) {
        Some(Ok(error)) => ctx.throw(error),
        _ => rquickjs::Exception::throw_message(ctx, message),
    }
}

/// One call from a script into the dispatcher: the value itself, or a thrown error. (Not an
/// `{ok, value}` envelope object: allocating one per call cost a fifth of a host call's budget; the
/// subprocess callback keeps the JSON envelope.)
fn reenter<'js>(
    ctx: &Ctx<'js>,
    state: &EngineState,
    kind: Callback,
    name: &str,
    args: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    if kind == Callback::Host {
        return host_call(ctx, state, name, None, args);
    }
    let result = convert::to_json(&args)
        .map_err(|e| format!("{name}: arguments: {e}"))
        .and_then(|args| {
            // A panic must not unwind through QuickJS's C frames.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                state.back.get(|back| back.call_tool(name, args))
            }))
            .unwrap_or_else(|_| Err(format!("tool {name} panicked")))
        });
    match result {
        Ok(v) => convert::to_js(ctx, &v),
        Err(message) => Err(rquickjs::Exception::throw_message(ctx, &message)),
    }
}

/// A host call on the script's own values: the arguments decode straight from `args` and the
/// result is built straight in `ctx`, no JSON in between (the hot path of `ctx.host`).
fn host_call<'js>(
    ctx: &Ctx<'js>,
    state: &EngineState,
    name: &str,
    bound: Option<&HostFunctionEntry>,
    args: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let mut args = Some(args);
    let mut value = None;
    // A panic must not unwind through QuickJS's C frames.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        state.back.get(|back| {
            back.call_host_in_place(name, bound, &mut |entry, cx, check| {
                let args = args.take().unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                let (result, took) = entry.invoke_js(ctx, args, cx, check);
                (result.map(|v| value = Some(v)).map_err(|e| e.to_string()), took)
            })
        })
    }))
    .unwrap_or_else(|_| Err(format!("host function {name} panicked")));
    match (result, value) {
        (Ok(()), Some(v)) => Ok(v),
        (Ok(()), None) => Ok(Value::new_undefined(ctx.clone())),
        (Err(message), _) => Err(throw_host_error(ctx, name, &message)),
    }
}

/// Runs scripted tool `name` (the export of `script.module`) with `args`.
fn run_tool<'js>(
    s: &EngineState,
    ctx: &Ctx<'js>,
    script: &ScriptedTool,
    name: &str,
    args: &Json,
) -> Result<ScriptOutcome, String> {
    let tool = load_tool(s, ctx, script, name)?;
    let read_only = tool
        .get::<_, Option<Object>>("spec")
        .ok()
        .flatten()
        .and_then(|spec| spec.get::<_, Option<bool>>("readOnly").ok().flatten())
        .unwrap_or(false);
    let run: Function = ctx.globals().get("__trailblazeRun").map_err(|e| e.to_string())?;
    let input = convert::to_js(ctx, args).map_err(|e| e.to_string())?;
    let mark = s.rejections.borrow().next;
    let p = run
        .call::<_, Promise>((tool, input))
        .map_err(|e| describe_error(s, ctx, e))?;
    let settled = drive::<Value>(ctx, &p, &s.deadline);
    let unawaited = take_rejections(s, mark, address(p.as_value()));
    let value = settled.map_err(|e| describe_error(s, ctx, e))?;
    if let Some((tool, message)) = unawaited {
        return Err(errors::unawaited(tool.as_deref(), &message));
    }
    let value = convert::to_json(&value).map_err(|e| format!("its result: {e}"))?;
    Ok(ScriptOutcome { value, read_only })
}

/// Removes the rejections nothing handled that happened since `mark` (this call's, its inner calls
/// having taken theirs) and returns the first one that is not the call's own result.
fn take_rejections(s: &EngineState, mark: u64, own: usize) -> Option<(Option<String>, String)> {
    let mut r = s.rejections.borrow_mut();
    let mut first = None;
    r.open.retain(|(seq, at, tool, message)| {
        if *seq <= mark {
            return true;
        }
        if *at != own && first.is_none() {
            first = Some((tool.clone(), message.clone()));
        }
        false
    });
    first
}

/// What a rejection reason says: the inner tool when it is a `TrailblazeToolError`, and its message.
fn rejection_text<'js>(ctx: &Ctx<'js>, reason: &Value<'js>) -> (Option<String>, String) {
    let (tool, name) = match reason.as_object() {
        Some(obj) => (
            obj.get::<_, Option<String>>("tool").ok().flatten(),
            obj.get::<_, Option<String>>("name").ok().flatten(),
        ),
        None => (None, None),
    };
    let (message, _) = exception_text(reason);
    // Reading a property may have run a getter that threw: that must not stay pending.
    if ctx.has_exception() {
        ctx.catch();
    }
    let tool = tool.filter(|_| name.as_deref() == Some("TrailblazeToolError"));
    (tool, message)
}

/// Runs the job queue until `p` settles, like `Promise::finish`, but never past the call's deadline:
/// QuickJS checks its interrupt handler only every so many function calls, and a queue that keeps
/// refilling itself (a microtask loop, a chain a tool left behind) could otherwise hold the call.
fn drive<'js, T: rquickjs::FromJs<'js>>(ctx: &Ctx<'js>, p: &Promise<'js>, deadline: &Deadline) -> rquickjs::Result<T> {
    loop {
        if let Some(settled) = p.result::<T>() {
            return settled;
        }
        if deadline.expired() {
            // `describe_error` words it from the deadline.
            return Err(rquickjs::Error::WouldBlock);
        }
        if !ctx.execute_pending_job() {
            return Err(rquickjs::Error::WouldBlock);
        }
    }
}

/// Imports the module and finds the `trailblaze.tool(...)` export named `name`.
fn load_tool<'js>(s: &EngineState, ctx: &Ctx<'js>, script: &ScriptedTool, name: &str) -> Result<Object<'js>, String> {
    s.load_error.borrow_mut().take();
    let mark = s.rejections.borrow().next;
    let ns = Module::import(ctx, script.module.as_str()).and_then(|p| drive::<Object>(ctx, &p, &s.deadline));
    // A failed import rejects its own promise: the import's failure, reported below, not the tool's.
    s.rejections.borrow_mut().open.retain(|(seq, ..)| *seq <= mark);
    let ns = match ns {
        Ok(ns) => ns,
        Err(e) => {
            let described = describe_error(s, ctx, e);
            return Err(s.load_error.borrow_mut().take().unwrap_or(described));
        }
    };
    let export: Option<Object> = ns.get(name).ok().flatten();
    // The original's `.js` tools export a plain `function name(args, ctx)`, described by a `.yaml`.
    if let Some(f) = export.as_ref().and_then(|o| o.as_function()) {
        let tool = Object::new(ctx.clone()).map_err(|e| e.to_string())?;
        tool.set("handler", f.clone()).map_err(|e| e.to_string())?;
        return Ok(tool);
    }
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
fn describe_error<'js>(s: &EngineState, ctx: &Ctx<'js>, e: rquickjs::Error) -> String {
    let limits = &s.limits;
    if let Some(stop) = s.deadline.stop_message(limits) {
        return stop;
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
    if let Some(stop) = s.deadline.stop_message(limits) {
        return stop;
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
    errors::with_location(message, stack.as_deref(), &s.modules.borrow(), &s.root)
}

/// The message of a thrown value and its stack, if any.
fn exception_text(v: &Value<'_>) -> (String, Option<String>) {
    if let Some(obj) = v.as_object() {
        let name: Option<String> = obj.get("name").ok().flatten();
        let message: Option<String> = obj.get("message").ok().flatten();
        let stack: Option<String> = obj.get("stack").ok().flatten();
        if let Some(message) = message {
            return errors::thrown_error(name.as_deref(), &message, stack);
        }
    }
    let text = v.as_string().and_then(|s| s.to_string().ok());
    (errors::thrown_value(text.as_deref()), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `precompile` leaves the engine's own modules compiled under their names, once; a session
    /// engine made afterwards loads them and runs a scripted tool.
    #[test]
    fn the_engines_modules_compile_once_ahead_and_a_session_engine_loads_them() {
        // Whether this call compiles depends on the tests this process ran before it.
        assert!(precompile().is_ok());
        // Control: nothing is left to compile.
        assert_eq!(precompile(), Ok(false));
        for (cell, name) in [
            (&SDK_CODE, SDK_MODULE),
            (&CONSOLE_CODE, CONSOLE_MODULE),
            (&BOOTSTRAP_CODE, BOOTSTRAP_MODULE),
        ] {
            let (compiled_as, bytes) = cell.get().expect("compiled");
            assert_eq!(compiled_as, name);
            assert!(!bytes.is_empty(), "{name}");
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps");
        let project = crate::Project::open(&root, crate::ProjectOptions::default()).expect("the demo opens");
        let session = project
            .open_session("demo", crate::SessionOptions::default())
            .expect("a session starts");
        // On the sign-in screen: no message subjects, read through `ctx.tools.snapshot`.
        let subjects = session.call("inboxSubjects", serde_json::json!({}));
        assert_eq!(subjects.ok(), Some(serde_json::json!({ "subjects": [] })));
    }
}
