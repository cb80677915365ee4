//! One warm Node worker: the process (its own process group), the pipes it speaks JSON lines on, and
//! the two threads that read them into the session's channel. Stdout carries the protocol (requests
//! and results); stderr console lines, end-of-run fences and raw output. The worker's exit is
//! reported once its stdout closes and it has been reaped, so a killed worker leaves no zombie.
//!
//! On Unix, `ctx.host` calls have their own line ([`super::sync`]), read by the session's thread
//! itself; [`Worker::receive`] waits on both.
//!
//! Nothing the worker writes can make this process hold more than a bounded amount of it: each
//! pipe's lines are capped ([`super::lines`]), and the reader threads queue at most
//! [`QUEUED_BYTES`] for the session's thread; past that they wait, and the worker with them on its
//! full pipe, until the session has taken what is queued (or killed the worker at its deadline).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lines::{self, MAX_PROTOCOL_LINE, MAX_STDERR_LINE, Read};

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

/// How many bytes of the worker's messages may wait for the session's thread.
const QUEUED_BYTES: usize = 8 << 20;

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
    /// It wrote what is not the protocol (a line past the cap) and must be stopped: why.
    Broken(String),
}

/// Why a worker that wrote a line past `cap` on `pipe` is stopped (never what it wrote).
pub(super) fn too_long(pipe: &str, cap: usize) -> String {
    format!(
        "the Node.js worker wrote a line longer than {} MiB on {pipe}, which the protocol does not allow; \
         it was stopped",
        cap >> 20
    )
}

/// The reader threads' allowance of queued bytes: a reader waits while the session's thread has
/// not taken what is queued.
#[derive(Default)]
struct Gate {
    /// Bytes queued, and whether the session is gone.
    state: Mutex<(usize, bool)>,
    room: Condvar,
}

impl Gate {
    /// Waits for room for `n` more bytes (a message bigger than the whole allowance passes when
    /// nothing else is queued). `false`: the session is gone.
    fn enter(&self, n: usize) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while !g.1 && g.0 > 0 && g.0 + n > QUEUED_BYTES {
            g = self.room.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        if g.1 {
            return false;
        }
        g.0 += n;
        true
    }

    fn leave(&self, n: usize) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.0 = g.0.saturating_sub(n);
        self.room.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        self.room.notify_all();
    }
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
    inbox: mpsc::Receiver<(Msg, usize)>,
    gate: Arc<Gate>,
    /// Set once its exit has been read from the inbox: every run waiting on it fails.
    pub exit: Cell<Option<Option<i32>>>,
    /// Set when it broke the protocol (and was killed): why. Every run waiting on it fails.
    pub broken: RefCell<Option<String>>,
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
        let gate = Arc::new(Gate::default());
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(pid);
            let _ = child.wait();
            return Err("the Node.js worker's pipes were not made".into());
        };
        let to_session = Notify {
            tx: tx.clone(),
            waker: waker.as_ref().and_then(|w| w.try_clone().ok()),
            gate: gate.clone(),
        };
        let tx = Notify {
            tx,
            waker,
            gate: gate.clone(),
        };
        let (stderr_done, stderr_read) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            forward_stderr(stderr, &to_session);
            let _ = stderr_done.send(());
        });
        std::thread::spawn(move || {
            read_protocol(stdout, &tx);
            let status = child.wait().ok().and_then(|s| s.code());
            // Its last stderr lines reach the session before its exit does (bounded: a process it
            // left behind may hold stderr open).
            let _ = stderr_read.recv_timeout(std::time::Duration::from_secs(1));
            let _ = tx.send(Msg::Exited(status), 0);
        });
        Ok(Worker {
            pid,
            stdin: RefCell::new(stdin),
            #[cfg(unix)]
            host_line,
            host_request_at: Cell::new(None),
            inbox,
            gate,
            exit: Cell::new(None),
            broken: RefCell::new(None),
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
                    Ok(msg) => return Ok(self.taken(msg)),
                    Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvTimeoutError::Disconnected),
                    Err(mpsc::TryRecvError::Empty) => {}
                }
                match line.request() {
                    Some(Ok(request)) => {
                        self.host_request_at.set(Some(Instant::now()));
                        return Ok(Msg::Line(request));
                    }
                    Some(Err(lines::TooLong)) => {
                        return Ok(Msg::Broken(too_long("its `ctx.host` pipe (fd 4)", MAX_PROTOCOL_LINE)));
                    }
                    None => {}
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
                    return self.recv_timeout(left);
                }
            }
        }
        #[cfg(not(unix))]
        {
            if slice.is_zero() {
                return self.inbox.try_recv().map(|m| self.taken(m)).map_err(|e| match e {
                    mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
                    mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
                });
            }
            self.recv_timeout(slice)
        }
    }

    /// The next message the reader threads queued, waiting up to `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Msg, mpsc::RecvTimeoutError> {
        self.inbox.recv_timeout(timeout).map(|m| self.taken(m))
    }

    /// A queued message taken: its bytes leave the allowance.
    fn taken(&self, (msg, bytes): (Msg, usize)) -> Msg {
        self.gate.leave(bytes);
        msg
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Reader threads waiting for room end: nobody will take what they hold.
        self.gate.close();
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
    tx: mpsc::Sender<(Msg, usize)>,
    waker: Option<Waker>,
    gate: Arc<Gate>,
}

/// The session is gone.
struct Gone;

impl Notify {
    /// Queues `msg`, which holds `bytes` of the worker's output, once there is room for it.
    fn send(&self, msg: Msg, bytes: usize) -> Result<(), Gone> {
        if !self.gate.enter(bytes) {
            return Err(Gone);
        }
        self.tx.send((msg, bytes)).map_err(|_| Gone)?;
        if let Some(w) = &self.waker {
            w.wake();
        }
        Ok(())
    }
}

/// Reads the worker's stdout: the runner's requests and results, one JSON line each. A line past
/// [`MAX_PROTOCOL_LINE`] stops the reading (the session kills the worker); the rest is read and
/// dropped, so the worker is not left blocked on a full pipe before it is killed.
fn read_protocol(stdout: std::process::ChildStdout, to_session: &Notify) {
    let mut r = BufReader::with_capacity(64 << 10, stdout);
    let mut buf = Vec::new();
    loop {
        match lines::read_line(&mut r, MAX_PROTOCOL_LINE, &mut buf) {
            Ok(Read::Line) => {
                // A line that is not the runner's JSON is nobody's message.
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && to_session.send(Msg::Line(v), buf.len()).is_err()
                {
                    return;
                }
            }
            Ok(Read::Long) => {
                let why = too_long("its stdout (the protocol's requests and results)", MAX_PROTOCOL_LINE);
                if to_session.send(Msg::Broken(why), 0).is_err() {
                    return;
                }
                while matches!(r.skip_until(b'\n'), Ok(n) if n > 0) {}
                return;
            }
            Ok(Read::Eof) | Err(_) => return,
        }
        // A long line's buffer is not kept for the short ones after it.
        if buf.capacity() > 1 << 20 {
            buf = Vec::new();
        }
    }
}

/// Reads the worker's stderr into the session: `{"console":level,"text","run"}` lines as that run's
/// console lines, `{"fence":run}` as the end of a run's lines, anything else (Node's own warnings and
/// crashes) as an `error` line of the run in progress. A line past [`MAX_STDERR_LINE`] is cut there
/// (the session keeps less of it anyway) and the rest skipped.
fn forward_stderr(stderr: std::process::ChildStderr, to_session: &Notify) {
    let mut r = BufReader::with_capacity(64 << 10, stderr);
    let mut buf = Vec::new();
    loop {
        let long = match lines::read_line(&mut r, MAX_STDERR_LINE, &mut buf) {
            Ok(Read::Line) => false,
            Ok(Read::Long) => true,
            Ok(Read::Eof) | Err(_) => return,
        };
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches('\r');
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
        if to_session.send(msg, buf.len()).is_err() || (long && !matches!(r.skip_until(b'\n'), Ok(n) if n > 0)) {
            return;
        }
        if buf.capacity() > 1 << 20 {
            buf = Vec::new();
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A stand-in for the runner: `node -e script`, with the worker's pipes.
    fn fake(script: &str) -> Worker {
        let mut cmd = Command::new("node");
        cmd.arg("-e")
            .arg(script)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        Worker::start(cmd, Path::new("node")).expect("node starts")
    }

    /// Receives until `want` takes a message (or `limit` passes); also the longest one receive took.
    fn until(w: &Worker, limit: Duration, mut want: impl FnMut(&Msg) -> bool) -> (Option<Msg>, Duration) {
        let started = Instant::now();
        let mut longest = Duration::ZERO;
        while started.elapsed() < limit {
            let t = Instant::now();
            let got = w.receive(Duration::from_millis(50));
            longest = longest.max(t.elapsed());
            match got {
                Ok(m) if want(&m) => return (Some(m), longest),
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        (None, longest)
    }

    fn started(m: &Msg) -> bool {
        matches!(m, Msg::Console { text, .. } if text == "started")
    }

    fn stop(w: &Worker) {
        kill_group(w.pid);
        let _ = until(w, Duration::from_secs(10), |m| matches!(m, Msg::Exited(_)));
    }

    /// 32 MiB with no newline on the `ctx.host` pipe (fd 4) or on stdout, then silence: the worker
    /// is found broken soon after it starts writing (the first 16 MiB), in words naming the pipe and
    /// the cap, and no look at the pipes keeps the session's thread (which must see its deadline)
    /// for long. Without the cap the line was read forever, and searched from its start on each read.
    #[test]
    fn an_endless_protocol_line_on_either_pipe_breaks_the_worker_at_the_cap_without_stalling() {
        for (fd, pipe) in [(4, "its `ctx.host` pipe (fd 4)"), (1, "its stdout")] {
            let w = fake(&format!(
                r#"const fs = require("fs");
fs.writeSync(2, '{{"console":"log","text":"started","run":1}}\n');
const chunk = Buffer.alloc(1 << 20, 120);
for (let i = 0; i < 32; i++) fs.writeSync({fd}, chunk);
setInterval(() => {{}}, 1000);"#
            ));
            let (marker, _) = until(&w, Duration::from_secs(60), started);
            assert!(marker.is_some(), "fd {fd}: the stand-in did not start");
            let writing = Instant::now();
            let (broken, longest) = until(&w, Duration::from_secs(60), |m| matches!(m, Msg::Broken(_)));
            let took = writing.elapsed();
            let Some(Msg::Broken(why)) = broken else {
                panic!("fd {fd}: never found broken");
            };
            assert!(why.contains(pipe) && why.contains("16 MiB"), "fd {fd}: {why}");
            assert!(!why.contains("xxxx"), "the content is never quoted: {why}");
            assert!(took < Duration::from_secs(10), "fd {fd}: found broken after {took:?}");
            assert!(
                longest < Duration::from_secs(2),
                "fd {fd}: one receive took {longest:?}"
            );
            stop(&w);
        }
    }

    /// A 32 MiB stderr line is cut at its cap and skipped, and what follows it still arrives: stderr
    /// is not the protocol, so it breaks nothing.
    #[test]
    fn an_endless_stderr_line_is_cut_and_the_lines_after_it_arrive() {
        let w = fake(
            r#"const fs = require("fs");
fs.writeSync(2, '{"console":"log","text":"started","run":1}\n');
const chunk = Buffer.alloc(1 << 20, 121);
for (let i = 0; i < 32; i++) fs.writeSync(2, chunk);
fs.writeSync(2, "\nafter\n");
fs.writeSync(1, '{"result":1,"ok":true}\n');
setInterval(() => {}, 1000);"#,
        );
        assert!(until(&w, Duration::from_secs(60), started).0.is_some());
        // The two pipes are read by two threads: the result may come before the stderr lines.
        let (mut texts, mut result) = (Vec::new(), false);
        let (done, _) = until(&w, Duration::from_secs(60), |m| {
            match m {
                Msg::Console { text, .. } => texts.push(text.clone()),
                Msg::Line(v) => result |= v["result"] == 1,
                Msg::Broken(why) => panic!("stderr broke the worker: {why}"),
                _ => {}
            }
            result && texts.last().is_some_and(|t| t == "after")
        });
        assert!(
            done.is_some(),
            "the result and the line after the long one arrived: {}",
            texts.len()
        );
        assert_eq!(texts.len(), 2, "the cut line and the next one");
        assert_eq!(texts[0].len(), MAX_STDERR_LINE);
        assert_eq!(texts[1], "after");
        stop(&w);
    }

    /// The reader threads' allowance: past it a reader waits until the session has taken what is
    /// queued, and a closed gate lets it go.
    #[test]
    fn a_reader_waits_for_the_session_past_its_allowance() {
        let gate = Arc::new(Gate::default());
        assert!(gate.enter(QUEUED_BYTES / 2 + 1));
        let (tx, rx) = mpsc::channel();
        let reader = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                let _ = tx.send(gate.enter(QUEUED_BYTES / 2 + 1));
                let _ = tx.send(gate.enter(QUEUED_BYTES));
            })
        };
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "past the allowance, the reader waits"
        );
        gate.leave(QUEUED_BYTES / 2 + 1);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)),
            Ok(true),
            "room made: it goes on"
        );
        gate.close();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)),
            Ok(false),
            "closed: it stops waiting"
        );
        reader.join().expect("reader");
        // Control: one message bigger than the whole allowance passes when nothing else is queued.
        let gate = Gate::default();
        assert!(gate.enter(QUEUED_BYTES * 2));
    }
}
