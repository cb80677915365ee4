//! The subprocess runtime: a scripted tool whose spec says `runtime: subprocess` runs under Node.js,
//! with the same SDK build the embedded engine serves, calling back into the same dispatcher.
//!
//! One warm worker per session ([`worker`]): a Node process started on the session's first
//! subprocess call, in its own process group, speaking JSON lines over its stdin and stdout (no
//! socket, so no token: only this process holds the pipes). Each call runs in a fresh `vm` context
//! in it (the runner, `runner.mjs`) whose every global is made there for that call (`realm*.js`,
//! served by `host.mjs`), so nothing one call changes is seen by the next and no call reaches the
//! runner. The worker is killed, group and all, when a call's deadline passes or the call is
//! cancelled, when it writes what the protocol does not allow (a line past its cap), and when the
//! session ends; a worker that dies (killed, crashed, out of memory) fails the calls it was serving
//! and the next call starts a new one. Why per session and not per project: a session's calls are
//! serial on its thread and its callbacks reach its own state; a shared worker would need a router
//! and would let one session's runaway call kill another's.
//!
//! While a tool runs the session's thread waits here, serving the worker's requests (`call_tool`,
//! `call_host`, `fetch`, and `load_module` for its imports) in order, on the session's own state.

mod env;
mod lines;
mod place;
#[cfg(unix)]
mod sync;
mod worker;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::rc::Rc;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::errors;
use super::port::{Callbacks, ScriptOutcome, ScriptRuntime, ScriptedTool};
use super::transpile::{Transpiled, Transpiler};
use crate::budget::{Deadline, Limits};
use worker::{Msg, Worker, kill_group};

/// Stderr lines of one run forwarded to the session; the rest is dropped (the session keeps 1,000
/// per call anyway).
const MAX_STDERR_LINES: u32 = 2_000;

/// How long a run's stderr may take to be read out after its result.
const STDERR_WAIT: Duration = Duration::from_secs(1);

/// How long a killed worker may take to be reaped before the call gives up waiting for it.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// Everything the runtime starts from.
pub struct SubprocessConfig {
    pub root: PathBuf,
    pub transpiler: Arc<Transpiler>,
    pub deadline: Arc<Deadline>,
    pub limits: Limits,
    /// Secret values; none may reach the tool's process environment.
    pub redact: Vec<String>,
}

/// A session's subprocess runtime.
pub struct Subprocess {
    cfg: SubprocessConfig,
    /// The warm worker, started on first use; `None` again once it died or was killed.
    worker: RefCell<Option<Rc<Worker>>>,
    next_run: Cell<u64>,
    /// Runs in progress with their tool's name and stderr lines forwarded so far, innermost last.
    active: RefCell<Vec<(u64, String, u32)>>,
    /// Modules served to the worker, for mapping stack frames back to `.ts` lines.
    modules: RefCell<HashMap<String, Arc<Transpiled>>>,
    /// Why the last module failed to load (swc's message with file:line:col).
    load_error: RefCell<Option<String>>,
}

impl Subprocess {
    pub fn new(cfg: SubprocessConfig) -> Subprocess {
        Subprocess {
            cfg,
            worker: RefCell::new(None),
            next_run: Cell::new(1),
            active: RefCell::new(Vec::new()),
            modules: RefCell::new(HashMap::new()),
            load_error: RefCell::new(None),
        }
    }

    /// The warm worker, started when there is none (first call, or the last one died).
    fn worker(&self, back: &dyn Callbacks) -> Result<Rc<Worker>, String> {
        let current = self.worker.borrow().clone();
        if let Some(w) = current {
            // What came in since the last call (a late request, or its death between calls: then
            // this call gets a new worker rather than failing for the old one).
            while let Ok(msg) = w.receive(Duration::ZERO) {
                self.take(back, &w, msg);
            }
            if w.exit.get().is_none() && w.broken.borrow().is_none() {
                return Ok(w);
            }
            // Killed for what it wrote: gone before the next one starts.
            reap(&w);
        }
        let dir = place::node_files(self.cfg.transpiler.cache_dir())?;
        let node = std::env::var_os("TRAILBLAZE_NODE").unwrap_or_else(|| "node".into());
        let mut cmd = Command::new(&node);
        // First: it clears the environment, then the runner's own variable is added below.
        env::inherit_only_the_harmless(&mut cmd, std::env::vars_os(), &self.cfg.redact);
        cmd.arg(format!(
            "--max-old-space-size={}",
            (self.cfg.limits.memory_bytes >> 20).max(16)
        ))
        // `vm.SourceTextModule`: a fresh module instance per call, in the call's own context.
        .arg("--experimental-vm-modules")
        .arg(dir.join("runner.mjs"))
        .env("TRAILBLAZE_ROOT", &self.cfg.root);
        let w = Rc::new(Worker::start(cmd, Path::new(&node))?);
        *self.worker.borrow_mut() = Some(w.clone());
        Ok(w)
    }

    /// Forgets `w` if it is the current worker (it died or was killed).
    fn retire(&self, w: &Rc<Worker>) {
        let mut slot = self.worker.borrow_mut();
        if slot.as_ref().is_some_and(|cur| Rc::ptr_eq(cur, w)) {
            *slot = None;
        }
    }

    /// Serves one callback on the session's thread.
    fn serve(&self, back: &dyn Callbacks, body: &Value) -> Result<Value, String> {
        let run = body.get("run").and_then(Value::as_u64);
        if !run.is_some_and(|r| self.active.borrow().iter().any(|(a, _, _)| *a == r)) {
            return Err("the call this request belongs to has ended".into());
        }
        let str_field = |k: &str| {
            body.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the request lacks `{k}`"))
        };
        let args = || body.get("args").cloned().unwrap_or_else(|| json!({}));
        match str_field("action")? {
            "call_tool" => back.call_tool(str_field("name")?, args()),
            "call_host" => back.call_host(str_field("name")?, args()),
            "fetch" => back.fetch(args()),
            "load_module" => self
                .load_module(str_field("module")?)
                .map(|code| json!({ "code": code })),
            other => Err(format!(
                "unknown action `{other}` (expected call_tool, call_host, fetch or load_module)"
            )),
        }
    }

    /// The JavaScript of module `name` (relative to the trailmaps folder), transpiled by swc.
    fn load_module(&self, name: &str) -> Result<String, String> {
        let fail = |msg: String| {
            *self.load_error.borrow_mut() = Some(msg.clone());
            Err(msg)
        };
        let relative = Path::new(name);
        if !name.ends_with(".ts") || relative.components().any(|c| !matches!(c, Component::Normal(_))) {
            return fail(format!(
                "{name}: only `.ts` files inside the trailmaps folder can be imported"
            ));
        }
        let source = match crate::files::read_text(&self.cfg.root.join(relative)) {
            Ok(s) => s,
            Err(e) => return fail(format!("cannot read {}: {e}", errors::shown_path(&self.cfg.root, name))),
        };
        match self.cfg.transpiler.transpile(name, &source) {
            Ok(t) => {
                let code = t.code.clone();
                self.modules.borrow_mut().insert(name.to_string(), t);
                Ok(code)
            }
            Err(e) => fail(errors::shown_in(&self.cfg.root, name, e.to_string())),
        }
    }

    /// Waits for run `run`'s result, serving the worker's requests meanwhile; kills the worker when
    /// the deadline passes.
    fn wait(&self, back: &dyn Callbacks, w: &Rc<Worker>, run: u64) -> Result<Value, String> {
        // The result, and when it came: its fence (all its stderr read) is waited for, bounded.
        let mut result: Option<(Value, Instant)> = None;
        loop {
            if result.is_none() {
                result = w.results.borrow_mut().remove(&run).map(|v| (v, Instant::now()));
            }
            if let Some((_, at)) = &result
                && (w.fences.borrow_mut().remove(&run) || at.elapsed() >= STDERR_WAIT)
            {
                return Ok(result.map(|(v, _)| v).unwrap_or(Value::Null));
            }
            if self.cfg.deadline.expired() {
                // Not when it is known dead (its pid may be someone else's by now).
                if w.exit.get().is_none() {
                    kill_group(w.pid);
                }
                self.retire(w);
                let message = self
                    .cfg
                    .deadline
                    .stop_message(&self.cfg.limits)
                    .unwrap_or_else(|| "stopped".into());
                reap(w);
                return Err(message);
            }
            // After the deadline check: an outer run whose worker was killed for an inner run's
            // deadline says the deadline, not the kill.
            let broken = w.broken.borrow().clone();
            if let Some(why) = broken {
                self.retire(w);
                reap(w);
                return Err(why);
            }
            if let Some(status) = w.exit.get() {
                self.retire(w);
                let status = status.map_or_else(|| "a signal".to_string(), |s| format!("status {s}"));
                return Err(format!("the Node.js process ended ({status}) before the tool returned"));
            }
            // Short waits, so a cancel from another thread is noticed promptly.
            let slice = self
                .cfg
                .deadline
                .remaining()
                .unwrap_or(Duration::from_millis(50))
                .min(Duration::from_millis(50));
            match w.receive(slice) {
                Ok(msg) => self.take(back, w, msg),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => w.exit.set(Some(None)),
            }
        }
    }

    /// Handles one message of the worker's, whichever run it belongs to.
    fn take(&self, back: &dyn Callbacks, w: &Worker, msg: Msg) {
        match msg {
            Msg::Line(v) => {
                if let Some(r) = v.get("result").and_then(Value::as_u64) {
                    w.results.borrow_mut().insert(r, v);
                } else if let Some(id) = v.get("request").and_then(Value::as_i64) {
                    let reply = match self.serve(back, &v) {
                        Ok(value) => json!({ "reply": id, "ok": true, "value": value }),
                        Err(error) => json!({ "reply": id, "ok": false, "error": error }),
                    };
                    // A worker that died meanwhile shows up as its exit. A `ctx.host` call (negative
                    // id) is waited for synchronously, on its own pipe.
                    let _ = if id < 0 {
                        w.send_sync_reply(&reply)
                    } else {
                        w.send(&reply)
                    };
                }
            }
            Msg::Console { run, level, text } => {
                // A raw line belongs to the run in progress; a console line to its own run.
                let mut active = self.active.borrow_mut();
                let entry = match run {
                    Some(r) => active.iter_mut().find(|(a, _, _)| *a == r),
                    None => active.last_mut(),
                };
                let Some((_, tool, sent)) = entry else { return };
                *sent += 1;
                if *sent > MAX_STDERR_LINES {
                    return;
                }
                let tool = tool.clone();
                drop(active);
                back.console(Some(&tool), &level, &text);
            }
            Msg::Fence(r) => {
                w.fences.borrow_mut().insert(r);
            }
            Msg::Exited(status) => w.exit.set(Some(status)),
            Msg::Broken(why) => {
                if w.exit.get().is_none() && w.broken.borrow().is_none() {
                    kill_group(w.pid);
                }
                w.broken.borrow_mut().get_or_insert(why);
            }
        }
    }

    /// The tool's outcome from the worker's result line.
    fn outcome(&self, result: &Value) -> Result<ScriptOutcome, String> {
        if result.get("ok") == Some(&Value::Bool(true)) {
            return Ok(ScriptOutcome {
                value: result.get("value").cloned().unwrap_or(Value::Null),
                read_only: result.get("readOnly") == Some(&Value::Bool(true)),
            });
        }
        let error = result.get("error").cloned().unwrap_or(Value::Null);
        let field = |k: &str| error.get(k).and_then(Value::as_str);
        if let Some(plain) = field("plain") {
            return Err(plain.to_string());
        }
        if let Some(unawaited) = error.get("unawaited") {
            let field = |k: &str| unawaited.get(k).and_then(Value::as_str);
            let message = match field("message") {
                Some(m) => errors::thrown_error(field("name"), m, None).0,
                None => errors::thrown_value(field("thrown")),
            };
            return Err(errors::unawaited(field("tool"), &message));
        }
        let Some(message) = field("message") else {
            return Err(errors::thrown_value(field("thrown")));
        };
        let (message, stack) = errors::thrown_error(field("name"), message, field("stack").map(str::to_string));
        // A failed import says why in swc's words, with file:line:col.
        if let Some(load) = self.load_error.borrow_mut().take() {
            return Err(load);
        }
        Err(errors::with_location(
            message,
            stack.as_deref(),
            &self.modules.borrow(),
            &self.cfg.root,
        ))
    }
}

impl ScriptRuntime for Subprocess {
    fn run_tool(
        &self,
        back: &dyn Callbacks,
        tool: &ScriptedTool,
        name: &str,
        args: &Value,
    ) -> Result<ScriptOutcome, String> {
        let w = self.worker(back)?;
        let run = self.next_run.get();
        self.next_run.set(run + 1);
        self.load_error.borrow_mut().take();
        self.active.borrow_mut().push((run, name.to_string(), 0));
        // A worker that died under the call shows up as its exit, read in `wait`.
        let _ = w.send(&json!({ "call": run, "module": tool.module, "name": name, "args": args }));
        let waited = self.wait(back, &w, run);
        self.active.borrow_mut().retain(|(r, _, _)| *r != run);
        self.outcome(&waited?)
    }
}

impl Drop for Subprocess {
    fn drop(&mut self) {
        // Nothing of the session's outlives it: the worker's whole process group.
        if let Some(w) = self.worker.borrow_mut().take()
            && w.exit.get().is_none()
        {
            kill_group(w.pid);
            // Reaped before the session is gone, not merely signalled.
            reap(&w);
        }
    }
}

/// After a kill: waits (bounded) for the worker to be reaped, so no process of it is left when the
/// call returns.
fn reap(w: &Worker) {
    if w.exit.get().is_some() {
        return;
    }
    let until = Instant::now() + REAP_WAIT;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match w.recv_timeout(left) {
            Ok(Msg::Exited(status)) => {
                w.exit.set(Some(status));
                return;
            }
            Ok(_) => {}
            Err(_) => return,
        }
    }
}
