//! A live session's own process (`trailblaze session serve`, started by `session start`): it opens
//! the device once and answers requests on its socket, one call at a time, until `session stop`,
//! a signal or the idle timeout ends it — then it frees the device, writes the trace and removes
//! its files. It is handed its settings, secrets included, on stdin: nothing secret is in its
//! arguments or environment.

use std::io::{BufRead, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use trailblaze::CallError;

use super::place::{self, Files, Meta};
use super::wire::{self, Request};
use crate::cli::live::{self, Live, Refused};
use crate::cli::{Failure, MapArg, SessionArgs};

/// What `session start` hands the process on stdin.
#[derive(Serialize, Deserialize)]
pub struct Config {
    pub name: String,
    pub idle_secs: u64,
    pub trailmaps: Option<PathBuf>,
    pub map: MapArg,
    pub session: SessionArgs,
    pub llm: Option<crate::cli::llm::LlmArgs>,
    pub trace: bool,
    /// The secrets as (name, value) pairs, read by `session start` from its environment and file.
    pub secrets: Vec<(String, String)>,
}

/// What `session list` and `info` read while a call runs.
#[derive(Default, Clone, Serialize)]
struct Status {
    calls: u64,
    steps: usize,
    last_active_unix_ms: u64,
    busy: bool,
}

/// The write end of the pipe a signal is told on (async-signal-safe: one `write`).
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) on a pipe is async-signal-safe; the buffer is static.
        unsafe {
            libc::write(fd, b"x".as_ptr().cast(), 1);
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs the session until it ends; what went wrong before it was ready is said on stdout, for
/// `session start` to print.
pub fn serve(name: &str) -> Result<(), Failure> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| anyhow!("reading the session's settings on stdin failed: {e}"))?;
    let config: Config =
        serde_json::from_str(&line).map_err(|e| anyhow!("the session's settings on stdin do not read: {e}"))?;
    if config.name != name {
        return Err(Failure::Usage(anyhow!("the settings are for another session")));
    }
    let (live, listener, files) = match open(&config) {
        Ok(opened) => opened,
        Err(e) => {
            let text = match &e {
                Failure::Failed(e) | Failure::Usage(e) => crate::cli::error_text(e),
                Failure::Reported(_) => "the session could not start (see its log)".into(),
            };
            ready(&json!({ "error": text }));
            return Err(e);
        }
    };
    ready(&json!({ "ready": true }));
    let ended = run(live, listener, Duration::from_secs(config.idle_secs.max(1)));
    files.remove(true);
    tracing::info!("session {name} ended: {ended}");
    Ok(())
}

/// Tells `session start` the outcome, then points stdout at the log (the reader is gone after it).
fn ready(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
    // SAFETY: dup2 of stderr (the log) onto stdout: both descriptors are open for our whole life.
    unsafe {
        libc::dup2(2, 1);
    }
}

fn open(config: &Config) -> Result<(Live, UnixListener, Files), Failure> {
    let root = place::private_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
    let files = Files::of(&root, &config.name);
    let located = crate::cli::locate_in(config.trailmaps.as_deref())?;
    let project = crate::cli::open_located(&located, None)?.with_secrets(
        trailblaze_host_functions::SecretStore::from_pairs(config.secrets.clone()),
    );
    crate::cli::output::set_secrets(project.secrets.values_to_redact());
    let spec = config.session.device.spec()?;
    let shared = live::open_shared_with(
        project,
        &located,
        spec,
        &config.map,
        &config.session,
        config.llm.as_ref(),
        config.trace,
    )?;
    // Another process of this name answering: refused; a socket left by a dead one: replaced.
    if files.socket.exists() {
        if UnixStream::connect(&files.socket).is_ok() {
            return Err(Failure::Usage(anyhow!("session `{}` is already running", config.name)));
        }
        let _ = std::fs::remove_file(&files.socket);
    }
    let listener =
        UnixListener::bind(&files.socket).map_err(|e| anyhow!("cannot listen on {}: {e}", files.socket.display()))?;
    let _ = std::fs::set_permissions(&files.socket, std::fs::Permissions::from_mode(0o600));
    let cancel = Arc::new(Mutex::new(None));
    let mut live = Live::new(shared, cancel);
    let dir = match live.session() {
        Ok(s) => s
            .dir()
            .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf())),
        Err(e) => {
            let _ = std::fs::remove_file(&files.socket);
            return Err(Failure::Usage(anyhow!("the device did not start: {e}")));
        }
    };
    let shared = live.shared();
    let meta = Meta {
        name: config.name.clone(),
        pid: std::process::id(),
        device: config
            .session
            .device
            .device
            .first()
            .cloned()
            .unwrap_or_else(|| "sim".into()),
        trailmap: shared.trailmap().to_string(),
        trailmaps: std::path::absolute(&located.trailmaps).unwrap_or(located.trailmaps.clone()),
        started_unix_ms: now_ms(),
        idle_secs: config.idle_secs,
        dir,
    };
    files
        .write_meta(&meta)
        .map_err(|e| anyhow!("cannot write {}: {e}", files.meta.display()))?;
    Ok((live, listener, files))
}

/// A request for the session's thread, and where its reply goes (none for a signal's stop).
type Job = (Request, Option<UnixStream>);

/// Serves until a stop; says why it ended.
fn run(mut live: Live, listener: UnixListener, idle: Duration) -> String {
    let (tx, rx) = mpsc::channel::<Job>();
    let status = Arc::new(Mutex::new(Status {
        last_active_unix_ms: now_ms(),
        ..Status::default()
    }));
    let cancel = live.cancel_handle();
    watch_signals(tx.clone(), cancel.clone());
    {
        let status = status.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (tx, status, cancel) = (tx.clone(), status.clone(), cancel.clone());
                // A client that connects and says nothing holds up no one.
                std::thread::spawn(move || take(conn, &tx, &status, &cancel));
            }
        });
    }
    let mut last = Instant::now();
    loop {
        let (req, conn) = match rx.recv_timeout(idle.saturating_sub(last.elapsed())) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => return format!("idle for {} s", idle.as_secs()),
            Err(mpsc::RecvTimeoutError::Disconnected) => return "its socket closed".into(),
        };
        if let Request::Stop { why } = &req {
            let why = why.clone();
            // The trace is written and the device freed before the stop is answered: the caller
            // then finds nothing left behind.
            drop(live);
            if let Some(c) = conn {
                wire::write_reply(&c, &json!({ "ok": true, "text": "stopped" }));
            }
            return why;
        }
        set(&status, |s| s.busy = true);
        let reply = handle(&mut live, req);
        let reply = match serde_json::to_string(&reply) {
            Ok(text) => serde_json::from_str(&live.redact(&text)).unwrap_or(reply),
            Err(_) => reply,
        };
        if let Some(c) = conn {
            wire::write_reply(&c, &reply);
        }
        last = Instant::now();
        let steps = live.recording().steps().len();
        set(&status, |s| {
            s.busy = false;
            s.calls += 1;
            s.steps = steps;
            s.last_active_unix_ms = now_ms();
        });
    }
}

fn set(status: &Mutex<Status>, f: impl FnOnce(&mut Status)) {
    if let Ok(mut s) = status.lock() {
        f(&mut s);
    }
}

/// One connection: its request answered here when it needs no session (status, cancel), else
/// handed to the session's thread with the connection to reply on.
fn take(conn: UnixStream, tx: &mpsc::Sender<Job>, status: &Mutex<Status>, cancel: &live::Canceller) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    match wire::read_request(&conn) {
        Ok(Request::Info) => {
            let s = status.lock().map(|s| s.clone()).unwrap_or_default();
            wire::write_reply(&conn, &json!({ "ok": true, "status": s }));
        }
        Ok(Request::Cancel) => {
            cancel.cancel();
            wire::write_reply(&conn, &json!({ "ok": true }));
        }
        Ok(req) => {
            let _ = conn.set_read_timeout(None);
            if tx.send((req, Some(conn))).is_err() {
                // The session is ending: the connection closes unanswered, which the client reads
                // as the process having gone.
            }
        }
        Err(e) => wire::write_reply(&conn, &wire::error(e, true)),
    }
}

/// SIGTERM, SIGINT and SIGHUP end the session as `session stop` does (the running call cancelled).
fn watch_signals(tx: mpsc::Sender<Job>, cancel: live::Canceller) {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills the two descriptors it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    SIGNAL_PIPE.store(fds[1], Ordering::Relaxed);
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only writes one byte to a pipe.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
    let read_fd = fds[0];
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        // SAFETY: reads into a one-byte buffer from the pipe we own.
        let n = unsafe { libc::read(read_fd, byte.as_mut_ptr().cast(), 1) };
        if n == 1 {
            cancel.cancel();
            let _ = tx.send((Request::Stop { why: "a signal".into() }, None));
        }
    });
}

/// One request on the session's thread.
fn handle(live: &mut Live, req: Request) -> Value {
    match req {
        Request::Tool { name, pairs, step } => tool(live, &name, &pairs, step.as_deref()),
        Request::Call { name, args } => {
            let r = live.call(&name, args);
            json!({ "ok": !r.is_error, "text": r.text })
        }
        Request::Offered => {
            let mut tools: Vec<Value> = live
                .offered()
                .into_iter()
                .map(|d| json!({ "name": d.name, "description": d.description, "inputSchema": d.input_schema }))
                .collect();
            tools.extend(
                live::session_tool_definitions(live.has_llm())
                    .into_iter()
                    .map(|(n, d, s)| json!({ "name": n, "description": d, "inputSchema": s })),
            );
            json!({ "ok": true, "tools": tools })
        }
        Request::OfferMayChange { name } => json!({ "ok": true, "value": live.offer_may_change(&name) }),
        Request::Steps => json!({ "ok": true, "text": live::steps_text(live.recording()) }),
        Request::Words { kind, text } => words(live, &kind, text),
        Request::Save { path, title, overwrite } => match live.save_to(&path, title, overwrite) {
            Ok(p) => json!({ "ok": true, "path": p, "steps": live.recording().steps().len() }),
            Err(e) => wire::error(e.to_string(), false),
        },
        Request::Trace => match live.write_trace() {
            Ok(Some(p)) => json!({ "ok": true, "path": p }),
            Ok(None) => wire::error("this session records no trace (it was started with --trace off)", true),
            Err(e) => wire::error(format!("the trace could not be written: {e}"), false),
        },
        Request::Screenshot { path } => screenshot(live, &path),
        Request::Info | Request::Cancel | Request::Stop { .. } => wire::error("not asked here", true),
    }
}

/// `tool NAME key=value ...`: the arguments read with the catalog's schema, as `trailblaze tool`
/// reads them.
fn tool(live: &mut Live, name: &str, pairs: &[String], step: Option<&str>) -> Value {
    let args = match live.read_pairs(name, pairs) {
        Ok(a) => a,
        Err(e) => return wire::error(e, true),
    };
    let called = live.call_in_step(name, args, step);
    let log = live.session().ok().and_then(|s| s.dir()).map(|d| d.join("log.jsonl"));
    let (error, usage) = match &called.result {
        Ok(_) => (None, false),
        Err(Refused::NotRun(why)) => (Some(why.clone()), true),
        Err(Refused::Call(e)) => (
            Some(e.to_string()),
            matches!(
                e,
                CallError::Args { .. }
                    | CallError::UnknownTool { .. }
                    | CallError::Platform { .. }
                    | CallError::Device { .. }
            ),
        ),
    };
    json!({
        "ok": called.result.is_ok(),
        "result": called.result.as_ref().ok(),
        "error": error,
        "usage": usage,
        "steps": called.steps,
        "log": log,
    })
}

/// `snapshot --screenshot FILE` in the session: its device's picture, written at `path`.
fn screenshot(live: &mut Live, path: &std::path::Path) -> Value {
    let shot = match live.session().and_then(|s| s.screenshot()) {
        Ok(s) => s,
        Err(e) => return wire::error(format!("--screenshot: {e}"), false),
    };
    match crate::cli::snapshot_out::write_screenshot(path, shot.mime, &shot.bytes) {
        Ok(()) => json!({ "ok": true, "path": path, "mime": shot.mime }),
        Err(f @ Failure::Usage(_)) => wire::error(failure_text(f), true),
        Err(f) => wire::error(failure_text(f), false),
    }
}

fn failure_text(f: Failure) -> String {
    match f {
        Failure::Failed(e) | Failure::Usage(e) => e.to_string(),
        Failure::Reported(_) => "refused".into(),
    }
}

/// `step`, `ask`, `verify`: the session's LLM, through the same session tools MCP serves.
fn words(live: &mut Live, kind: &str, text: String) -> Value {
    if !live.has_llm() {
        return wire::error(
            format!("{kind}: this session has no LLM (start it with `trailblaze session start --llm-model NAME`)"),
            true,
        );
    }
    let name = match kind {
        "step" => live::BLAZE,
        "ask" => live::ASK,
        _ => live::VERIFY,
    };
    let r = live.call(name, json!({ "text": text }));
    json!({ "ok": !r.is_error, "text": r.text })
}
