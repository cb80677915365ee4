//! One warm Node worker: the process (its own process group), the pipes it speaks JSON lines on, and
//! the two threads that read them into the session's channel. Stdout carries the protocol (requests
//! and results); stderr console lines, end-of-run fences and raw output. The worker's exit is
//! reported once its stdout closes and it has been reaped, so a killed worker leaves no zombie.
//!
//! On Unix, `ctx.host` calls have their own line ([`super::sync`]), read by the session's thread
//! itself; [`Worker::receive`] waits on both.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

#[cfg(unix)]
use super::sync::Waker;

/// No `ctx.host` line here: nothing waits on a wake-up.
#[cfg(not(unix))]
struct Waker;

#[cfg(not(unix))]
impl Waker {
    fn wake(&self) {}
    fn try_clone(&self) -> std::io::Result<Waker> {
        Ok(Waker)
    }
}

/// The longest stderr line read whole; the rest of a longer line is skipped (the host keeps 8 KiB).
const MAX_STDERR_LINE: usize = 1 << 20;

/// How long the session's thread looks for the next `ctx.host` request before it sleeps.
/// Spinning only pays with a second CPU for the worker to run on meanwhile.
#[cfg(unix)]
const HOST_SPIN: Duration = Duration::from_micros(200);

/// What the reader threads hand the session's thread.
pub(super) enum Msg {
    /// A protocol line from stdout: `{"request":..}` or `{"result":..}`.
    Line(Value),
    /// A stderr line: a `console.*` call of run `run`, or raw output (`run` unknown).
    Console {
        run: Option<u64>,
        level: String,
        text: String,
    },
    /// Run `run` has written all its stderr lines.
    Fence(u64),
    /// The process ended (stdout closed, reaped); `None` for a signal.
    Exited(Option<i32>),
}

/// A running worker, shared by the runs it serves (nested runs share it; a replaced one is dropped
/// by the last run holding it).
pub(super) struct Worker {
    /// Its process id, which is also its process group's id.
    pub pid: u32,
    stdin: RefCell<ChildStdin>,
    /// The `ctx.host` line (Unix; elsewhere those calls go over stdio with the rest).
    #[cfg(unix)]
    host_line: super::sync::HostLine,
    /// When the last `ctx.host` request was read (a short spin for the next one follows it).
    host_request_at: Cell<Option<Instant>>,
    pub inbox: mpsc::Receiver<Msg>,
    /// Set once its exit has been read from the inbox: every run waiting on it fails.
    pub exit: Cell<Option<Option<i32>>>,
    /// Results and fences read while another run was being waited for.
    pub results: RefCell<HashMap<u64, Value>>,
    pub fences: RefCell<HashSet<u64>>,
}

impl Worker {
    /// Starts `node` on the runner in `dir` with the environment `cmd` was given.
    pub fn start(mut cmd: Command, node: &Path) -> Result<Worker, String> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        #[cfg(unix)]
        let (host_line, waker, worker_ends) =
            super::sync::setup(&mut cmd).map_err(|e| format!("the Node.js worker's `ctx.host` pipes: {e}"))?;
        #[cfg(unix)]
        let waker = Some(waker);
        #[cfg(not(unix))]
        let waker: Option<Waker> = None;
        let spawned = cmd.spawn();
        // The worker has its own copies now (or none: it did not start).
        #[cfg(unix)]
        drop(worker_ends);
        let mut child = spawned.map_err(|e| {
            format!(
                "`runtime: subprocess` needs Node.js 20.6 or later: cannot start `{}`: {e} (install Node.js or set TRAILBLAZE_NODE)",
                node.display()
            )
        })?;
        let pid = child.id();
        let (tx, inbox) = mpsc::channel();
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(pid);
            let _ = child.wait();
            return Err("the Node.js worker's pipes were not made".into());
        };
        let to_session = Notify {
            tx: tx.clone(),
            waker: waker.as_ref().and_then(|w| w.try_clone().ok()),
        };
        let tx = Notify { tx, waker };
        let (stderr_done, stderr_read) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            forward_stderr(stderr, &to_session);
            let _ = stderr_done.send(());
        });
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!(lines.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                // A line that is not the runner's JSON is nobody's message.
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(Msg::Line(v)).is_err()
                {
                    break;
                }
                buf.clear();
            }
            let status = child.wait().ok().and_then(|s| s.code());
            // Its last stderr lines reach the session before its exit does (bounded: a process it
            // left behind may hold stderr open).
            let _ = stderr_read.recv_timeout(std::time::Duration::from_secs(1));
            let _ = tx.send(Msg::Exited(status));
        });
        Ok(Worker {
            pid,
            stdin: RefCell::new(stdin),
            #[cfg(unix)]
            host_line,
            host_request_at: Cell::new(None),
            inbox,
            exit: Cell::new(None),
            results: RefCell::new(HashMap::new()),
            fences: RefCell::new(HashSet::new()),
        })
    }

    /// Writes one protocol line; a worker that has died shows up as its exit.
    pub fn send(&self, msg: &Value) -> Result<(), String> {
        write_line(&mut *self.stdin.borrow_mut(), msg)
    }

    /// Writes the reply to a `ctx.host` call where the worker's blocked thread reads it.
    pub fn send_sync_reply(&self, msg: &Value) -> Result<(), String> {
        #[cfg(unix)]
        return self
            .host_line
            .reply(line_of(msg).as_bytes())
            .map_err(|e| format!("the Node.js worker did not take the reply: {e}"));
        #[cfg(not(unix))]
        self.send(msg)
    }

    /// The next message from the worker: queued by a reader thread, or a `ctx.host` request read
    /// here; waits up to `slice` (not at all for zero).
    pub fn receive(&self, slice: Duration) -> Result<Msg, mpsc::RecvTimeoutError> {
        #[cfg(unix)]
        {
            let line = &self.host_line;
            let until = Instant::now() + slice;
            // Right after a `ctx.host` request the next one tends to follow within ~100 µs (a
            // script's loop): looking again, rather than sleeping, saves the wake-up of this
            // thread and the worker's write the cost of waking it (a third of a call on a VM).
            // Yielding in between leaves the CPU to the worker where they share one.
            let spin_until = self
                .host_request_at
                .take()
                .map(|at| at + HOST_SPIN)
                .filter(|_| crate::cores::second());
            loop {
                match self.inbox.try_recv() {
                    Ok(msg) => return Ok(msg),
                    Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvTimeoutError::Disconnected),
                    Err(mpsc::TryRecvError::Empty) => {}
                }
                if let Some(request) = line.request() {
                    self.host_request_at.set(Some(Instant::now()));
                    return Ok(Msg::Line(request));
                }
                let now = Instant::now();
                let left = until.saturating_duration_since(now);
                if left.is_zero() {
                    return Err(mpsc::RecvTimeoutError::Timeout);
                }
                if spin_until.is_some_and(|s| now < s) {
                    std::thread::yield_now();
                    continue;
                }
                if !line.wait(left) {
                    // Nothing can wake that line any more: the channel alone says the rest.
                    return self.inbox.recv_timeout(left);
                }
            }
        }
        #[cfg(not(unix))]
        {
            if slice.is_zero() {
                return self.inbox.try_recv().map_err(|e| match e {
                    mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
                    mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
                });
            }
            self.inbox.recv_timeout(slice)
        }
    }
}

fn line_of(msg: &Value) -> String {
    let mut line = msg.to_string();
    line.push('\n');
    line
}

fn write_line(to: &mut impl Write, msg: &Value) -> Result<(), String> {
    to.write_all(line_of(msg).as_bytes())
        .map_err(|e| format!("the Node.js worker did not take the call: {e}"))
}

/// A reader thread's way to the session: the channel, and a wake-up for a session thread that
/// waits on the `ctx.host` line too (sent after the message, so it is there when the session looks).
struct Notify {
    tx: mpsc::Sender<Msg>,
    waker: Option<Waker>,
}

impl Notify {
    fn send(&self, msg: Msg) -> Result<(), mpsc::SendError<Msg>> {
        self.tx.send(msg)?;
        if let Some(w) = &self.waker {
            w.wake();
        }
        Ok(())
    }
}

/// Reads the worker's stderr into the session: `{"console":level,"text","run"}` lines as that run's
/// console lines, `{"fence":run}` as the end of a run's lines, anything else (Node's own warnings, a
/// tool's raw writes) as an `error` line of the run in progress.
fn forward_stderr(stderr: std::process::ChildStderr, to_session: &Notify) {
    let mut r = BufReader::new(stderr);
    loop {
        let mut buf = Vec::new();
        match (&mut r).take(MAX_STDERR_LINE as u64).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() != Some(&b'\n') && buf.len() >= MAX_STDERR_LINE && r.skip_until(b'\n').is_err() {
            return;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let parsed = serde_json::from_str::<Value>(line).ok();
        let msg = match parsed.as_ref() {
            Some(v) if v.get("fence").is_some_and(Value::is_u64) => Msg::Fence(v["fence"].as_u64().unwrap_or(0)),
            Some(v)
                if v.get("console").is_some_and(Value::is_string) && v.get("text").is_some_and(Value::is_string) =>
            {
                Msg::Console {
                    run: v.get("run").and_then(Value::as_u64),
                    level: v["console"].as_str().unwrap_or("log").to_string(),
                    text: v["text"].as_str().unwrap_or("").to_string(),
                }
            }
            _ => Msg::Console {
                run: None,
                level: "error".to_string(),
                text: line.to_string(),
            },
        };
        if to_session.send(msg).is_err() {
            return;
        }
    }
}

/// Kills a worker's whole process group (the process was started as its leader).
pub(super) fn kill_group(pid: u32) {
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
