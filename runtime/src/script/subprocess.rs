//! The subprocess runtime: a scripted tool whose spec says `runtime: subprocess` runs under Node.js,
//! with the same SDK build the embedded engine serves, calling back into the same dispatcher over a
//! loopback HTTP endpoint ([`server`]). One Node process per call: it starts in its own process group,
//! is killed (group and all) when the call's deadline passes or the call is cancelled, and exits as
//! soon as the tool returns, so nothing of a call outlives it.
//!
//! While a tool runs the session's thread waits here, serving the process's callbacks (`call_tool`,
//! `call_host`, and `load_module` for its imports) in order, on the session's own state.

mod env;
mod place;
mod server;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::errors;
use super::port::{Callbacks, ScriptOutcome, ScriptRuntime, ScriptedTool};
use super::transpile::{Transpiled, Transpiler};
use crate::budget::{Deadline, Limits};
use server::{Msg, Server};

/// The longest stderr line read whole; the rest of a longer line is skipped (the host keeps 8 KiB).
const MAX_STDERR_LINE: usize = 1 << 20;

/// Stderr lines of one process forwarded to the session; the rest is drained unread (the session
/// keeps 1,000 per call anyway).
const MAX_STDERR_LINES: u32 = 2_000;

/// How long a finished process's stderr may take to be read out before its exit is reported.
const STDERR_WAIT: Duration = Duration::from_secs(1);

/// How long a killed process may take to be reaped before the call gives up waiting for it.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// What a finished process left: its stdout and exit status.
type Exit = (Vec<u8>, Option<i32>);

/// What a run needs of the endpoint.
struct Wiring {
    url: String,
    token: String,
    /// Where the process's exit is reported.
    to_session: mpsc::Sender<Msg>,
    inbox: Rc<mpsc::Receiver<Msg>>,
}

/// Everything the runtime starts from.
pub struct SubprocessConfig {
    pub root: PathBuf,
    pub transpiler: Arc<Transpiler>,
    pub deadline: Arc<Deadline>,
    pub limits: Limits,
    /// Secret values; none may reach the tool's process environment.
    pub redact: Vec<String>,
}

/// The endpoint and its channel, started on first use.
struct Endpoint {
    server: Server,
    /// This session's bearer token (made with the endpoint: a session that never runs a subprocess
    /// tool reads no randomness).
    token: String,
    to_session: mpsc::Sender<Msg>,
    inbox: Rc<mpsc::Receiver<Msg>>,
}

/// A session's subprocess runtime.
pub struct Subprocess {
    cfg: SubprocessConfig,
    endpoint: RefCell<Option<Endpoint>>,
    next_run: Cell<u64>,
    /// Runs in progress, innermost last, with their process ids (= process group ids).
    active: RefCell<Vec<(u64, u32)>>,
    /// The same runs' ids, as the server checks them.
    shared_active: server::ActiveRuns,
    /// Exits of runs other than the one being waited for (an outer run whose process died early).
    exited: RefCell<HashMap<u64, Exit>>,
    /// Modules served to the processes, for mapping stack frames back to `.ts` lines.
    modules: RefCell<HashMap<String, Arc<Transpiled>>>,
    /// Why the last module failed to load (swc's message with file:line:col).
    load_error: RefCell<Option<String>>,
    /// The tool each run in progress runs, for its console lines.
    names: RefCell<HashMap<u64, String>>,
}

impl Subprocess {
    pub fn new(cfg: SubprocessConfig) -> Subprocess {
        Subprocess {
            cfg,
            endpoint: RefCell::new(None),
            next_run: Cell::new(1),
            active: RefCell::new(Vec::new()),
            shared_active: Default::default(),
            exited: RefCell::new(HashMap::new()),
            modules: RefCell::new(HashMap::new()),
            load_error: RefCell::new(None),
            names: RefCell::new(HashMap::new()),
        }
    }

    /// The callback URL and the inbox, starting the endpoint on first use.
    fn endpoint(&self) -> Result<Wiring, String> {
        let mut slot = self.endpoint.borrow_mut();
        if slot.is_none() {
            let (tx, rx) = mpsc::channel();
            let token = new_token();
            let server = Server::start(token.clone(), tx.clone(), self.shared_active.clone())?;
            *slot = Some(Endpoint {
                server,
                token,
                to_session: tx,
                inbox: Rc::new(rx),
            });
        }
        let e = slot.as_ref().ok_or("the callback endpoint did not start")?;
        Ok(Wiring {
            url: e.server.url(),
            token: e.token.clone(),
            to_session: e.to_session.clone(),
            inbox: e.inbox.clone(),
        })
    }

    fn spawn(&self, wiring: &Wiring, run: u64) -> Result<Child, String> {
        let dir = place::node_files(self.cfg.transpiler.cache_dir())?;
        let node = std::env::var_os("TRAILBLAZE_NODE").unwrap_or_else(|| "node".into());
        let mut cmd = Command::new(&node);
        // First: it clears the environment, then the runner's own variables are added below.
        env::inherit_only_the_harmless(&mut cmd, std::env::vars_os(), &self.cfg.redact);
        cmd.arg(format!(
            "--max-old-space-size={}",
            (self.cfg.limits.memory_bytes >> 20).max(16)
        ))
        .arg(dir.join("runner.mjs"))
        .env("TRAILBLAZE_CALLBACK_URL", &wiring.url)
        .env("TRAILBLAZE_TOKEN", &wiring.token)
        .env("TRAILBLAZE_RUN", run.to_string())
        .env("TRAILBLAZE_ROOT", &self.cfg.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd.spawn().map_err(|e| {
            format!(
                "`runtime: subprocess` needs Node.js 20.6 or later: cannot start `{}`: {e} (install Node.js or set TRAILBLAZE_NODE)",
                Path::new(&node).display()
            )
        })
    }

    /// Marks run `run` active (with its process id) or ended.
    fn set_active(&self, run: u64, pid: Option<u32>) {
        let mut shared = self.shared_active.lock().unwrap_or_else(|p| p.into_inner());
        match pid {
            Some(pid) => {
                self.active.borrow_mut().push((run, pid));
                shared.push(run);
            }
            None => {
                self.active.borrow_mut().retain(|(r, _)| *r != run);
                shared.retain(|r| *r != run);
            }
        }
    }

    /// Serves one callback on the session's thread.
    fn serve(&self, back: &dyn Callbacks, body: &Value) -> Result<Value, String> {
        let run = body.get("run").and_then(Value::as_u64);
        if !run.is_some_and(|r| self.active.borrow().iter().any(|(a, _)| *a == r)) {
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
            "load_module" => self
                .load_module(str_field("module")?)
                .map(|code| json!({ "code": code })),
            other => Err(format!(
                "unknown action `{other}` (expected call_tool, call_host or load_module)"
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

    /// Waits for run `run` to exit, serving callbacks meanwhile; kills it when the deadline passes.
    fn wait(&self, back: &dyn Callbacks, inbox: &mpsc::Receiver<Msg>, run: u64, pid: u32) -> Result<Exit, String> {
        loop {
            if let Some(done) = self.exited.borrow_mut().remove(&run) {
                return Ok(done);
            }
            if self.cfg.deadline.expired() {
                kill_group(pid);
                let message = self
                    .cfg
                    .deadline
                    .stop_message(&self.cfg.limits)
                    .unwrap_or_else(|| "stopped".into());
                self.reap(inbox, run);
                return Err(message);
            }
            // Short waits, so a cancel from another thread is noticed promptly.
            let slice = self
                .cfg
                .deadline
                .remaining()
                .unwrap_or(Duration::from_millis(50))
                .min(Duration::from_millis(50));
            match inbox.recv_timeout(slice) {
                Ok(Msg::Callback(req)) => {
                    let reply = self.serve(back, &req.body);
                    let _ = req.reply.send(reply);
                }
                Ok(Msg::Exited { run: r, stdout, status }) => {
                    if r == run {
                        return Ok((stdout, status));
                    }
                    self.exited.borrow_mut().insert(r, (stdout, status));
                }
                Ok(Msg::Console { run: r, level, text }) => {
                    // Attributed by run: a line may arrive after its process called another tool.
                    let tool = self.names.borrow().get(&r).cloned();
                    back.console(tool.as_deref(), &level, &text);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the callback endpoint stopped".into()),
            }
        }
    }

    /// After a kill: waits (bounded) for the process to be reaped, refusing its last callbacks.
    fn reap(&self, inbox: &mpsc::Receiver<Msg>, run: u64) {
        if self.exited.borrow_mut().remove(&run).is_some() {
            return;
        }
        let until = std::time::Instant::now() + REAP_WAIT;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match inbox.recv_timeout(left) {
                Ok(Msg::Callback(req)) => {
                    let _ = req.reply.send(Err("the call has ended".into()));
                }
                Ok(Msg::Exited { run: r, stdout, status }) => {
                    if r == run {
                        return;
                    }
                    self.exited.borrow_mut().insert(r, (stdout, status));
                }
                Ok(Msg::Console { .. }) => {}
                Err(_) => return,
            }
        }
    }

    /// The tool's outcome from the process's result line.
    fn outcome(&self, stdout: &[u8], status: Option<i32>) -> Result<ScriptOutcome, String> {
        let text = String::from_utf8_lossy(stdout);
        let line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        let Ok(result) = serde_json::from_str::<Value>(line) else {
            let status = status.map_or_else(|| "a signal".to_string(), |s| format!("status {s}"));
            return Err(format!("the Node.js process ended ({status}) before the tool returned"));
        };
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
        args: Value,
    ) -> Result<ScriptOutcome, String> {
        let wiring = self.endpoint()?;
        let run = self.next_run.get();
        self.next_run.set(run + 1);
        self.load_error.borrow_mut().take();
        let mut child = self.spawn(&wiring, run)?;
        let pid = child.id();
        let input = json!({ "module": tool.module, "name": name, "args": args }).to_string();
        if let Some(mut stdin) = child.stdin.take() {
            // A process that died at once shows up as its exit below.
            let _ = stdin.write_all(input.as_bytes());
        }
        // Stderr is read line by line into the session (console lines, scrubbed and bounded there),
        // and drained past that so a chatty script cannot block on a full pipe.
        let (stderr_done, stderr_read) = mpsc::channel::<()>();
        if let Some(stderr) = child.stderr.take() {
            let to_session = wiring.to_session.clone();
            std::thread::spawn(move || {
                forward_stderr(stderr, run, &to_session);
                let _ = stderr_done.send(());
            });
        }
        let to_session = wiring.to_session.clone();
        std::thread::spawn(move || {
            let mut stdout = Vec::new();
            if let Some(mut out) = child.stdout.take() {
                let _ = out.read_to_end(&mut stdout);
            }
            let status = child.wait().ok().and_then(|s| s.code());
            // Its last console lines reach the session before its exit does (bounded: a process it
            // left behind may hold stderr open).
            let _ = stderr_read.recv_timeout(STDERR_WAIT);
            let _ = to_session.send(Msg::Exited { run, stdout, status });
        });
        self.set_active(run, Some(pid));
        self.names.borrow_mut().insert(run, name.to_string());
        let inbox = wiring.inbox;
        let waited = self.wait(back, &inbox, run, pid);
        self.names.borrow_mut().remove(&run);
        self.set_active(run, None);
        if self.active.borrow().is_empty() {
            // Callbacks that raced the end of the last run: refused now, not left waiting.
            while let Ok(msg) = inbox.try_recv() {
                if let Msg::Callback(req) = msg {
                    let _ = req.reply.send(Err("the call this request belongs to has ended".into()));
                }
            }
        }
        // Anything the tool's process group left running dies with the call.
        kill_group(pid);
        let (stdout, status) = waited?;
        self.outcome(&stdout, status)
    }
}

impl Drop for Subprocess {
    fn drop(&mut self) {
        for (_, pid) in self.active.borrow().iter() {
            kill_group(*pid);
        }
    }
}

/// Reads a process's stderr into the session: each `{"console":level,"text":...}` line the runner
/// writes as that console line, any other line (Node's own warnings, raw writes) as an `error` line.
fn forward_stderr(stderr: std::process::ChildStderr, run: u64, to_session: &mpsc::Sender<Msg>) {
    let mut r = BufReader::new(stderr);
    let mut sent = 0u32;
    loop {
        let mut buf = Vec::new();
        match (&mut r).take(MAX_STDERR_LINE as u64).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() != Some(&b'\n') && buf.len() >= MAX_STDERR_LINE && r.skip_until(b'\n').is_err() {
            return;
        }
        if sent >= MAX_STDERR_LINES {
            continue;
        }
        sent += 1;
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let parsed = serde_json::from_str::<Value>(line).ok();
        let (level, text) = match parsed
            .as_ref()
            .and_then(|v| Some((v.get("console")?.as_str()?, v.get("text")?.as_str()?)))
        {
            Some((level, text)) => (level.to_string(), text.to_string()),
            None => ("error".to_string(), line.to_string()),
        };
        if to_session.send(Msg::Console { run, level, text }).is_err() {
            return;
        }
    }
}

/// Kills a run's whole process group (the process was started as its leader).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(pid) {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// A fresh bearer token: 32 random bytes as hex.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No /dev/urandom: hash what is unique to this moment and process instead.
        let mut h = Sha256::new();
        h.update(format!("{:?}{}", std::time::SystemTime::now(), std::process::id()));
        h.update((&bytes as *const _ as usize).to_le_bytes());
        bytes.copy_from_slice(&h.finalize());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
