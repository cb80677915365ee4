//! One shell command on the device: run on a worker thread with a deadline (adb_client's sockets
//! have none), its output capped, its exit status read from a marker echoed after it.

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use adb_client::ADBDeviceExt;
use adb_client::server_device::ADBServerDevice;

use super::{AdbDevice, DeviceError, dump};

/// Runs `f` on a worker thread; `None` when it did not finish within `timeout` (the thread is left
/// to end when its socket does).
pub(super) fn with_timeout<T: Send + 'static>(timeout: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("adb-call".into()).spawn(move || {
        let _ = tx.send(f());
    });
    if spawned.is_err() {
        return None;
    }
    rx.recv_timeout(timeout).ok()
}

/// Printed after every command with its exit status. adb_client's shell v2 reader drops the exit
/// status at the end of the stream, and shell v1 has none: the marker gives both, and its absence
/// means the connection ended before the command did.
const EXIT_MARKER: &str = "__trailblaze_exit=";

/// Strips `<EXIT_MARKER><code>\n` from the end of `stdout`; `None` when it is not there.
pub(super) fn take_exit_marker(stdout: &mut Vec<u8>) -> Option<u8> {
    let tail_start = stdout.len().saturating_sub(EXIT_MARKER.len() + 6);
    let tail = stdout.get(tail_start..)?;
    let at = tail
        .windows(EXIT_MARKER.len())
        .rposition(|w| w == EXIT_MARKER.as_bytes())?;
    let code = std::str::from_utf8(&tail[at + EXIT_MARKER.len()..]).ok()?;
    let code: u8 = code.trim_end_matches(['\r', '\n']).parse().ok()?;
    stdout.truncate(tail_start + at);
    Some(code)
}

/// What one shell command gave.
#[derive(Debug, Default)]
pub(super) struct Output {
    pub(super) stdout: Vec<u8>,
    /// Empty when the device has no shell protocol v2 (then stderr is merged into stdout).
    pub(super) stderr: Vec<u8>,
    pub(super) exit: u8,
    /// Bytes left out at the front of stdout by [`Keep::Tail`].
    pub(super) dropped: usize,
}

/// How much of a command's output is kept.
#[derive(Debug, Clone, Copy)]
pub(super) enum Keep {
    /// Up to this many bytes; more fails the command (a screenshot cut short is no screenshot).
    Head(usize),
    /// The last this-many bytes (a log: its end matters); the rest is dropped as it arrives.
    Tail(usize),
}

impl Output {
    pub(super) fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.stdout).into_owned();
        s.push_str(&String::from_utf8_lossy(&self.stderr));
        s
    }
    pub(super) fn failed(&self) -> bool {
        self.exit != 0
    }
}

/// Where a command's output goes: at most `Keep::Head` bytes (more is an error, so a runaway
/// command cannot fill memory), or the last `Keep::Tail` bytes (holding at most twice that while
/// it reads).
pub(super) struct Sink<'a> {
    buf: &'a mut Vec<u8>,
    keep: Keep,
    /// Bytes dropped from the front (`Keep::Tail`).
    dropped: usize,
}

impl<'a> Sink<'a> {
    pub(super) fn new(buf: &'a mut Vec<u8>, keep: Keep) -> Self {
        Sink { buf, keep, dropped: 0 }
    }

    /// Drops the front past the last `cap` bytes; the bytes dropped in all.
    pub(super) fn finish(mut self) -> usize {
        if let Keep::Tail(cap) = self.keep {
            self.trim(cap);
        }
        self.dropped
    }

    fn trim(&mut self, cap: usize) {
        let extra = self.buf.len().saturating_sub(cap);
        self.buf.drain(..extra);
        self.dropped += extra;
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        match self.keep {
            Keep::Head(cap) if self.buf.len() + data.len() > cap => {
                return Err(std::io::Error::other("the command printed more than the output limit"));
            }
            Keep::Head(_) => {}
            // Trimming only past twice the cap keeps the copying linear.
            Keep::Tail(cap) if self.buf.len() + data.len() > cap.saturating_mul(2) => {
                self.buf.extend_from_slice(data);
                self.trim(cap);
                return Ok(data.len());
            }
            Keep::Tail(_) => {}
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl AdbDevice {
    /// How long the next call may wait: the call timeout, or less when the running call's
    /// wall-clock deadline comes first (`true` then).
    pub(super) fn wait_limit(&self) -> (Duration, bool) {
        // The call's wall clock bounds the wait too: a phone that stopped answering fails the call
        // at its budget (and leaves a pool), not 30 s later.
        let left = self
            .until
            .map(|u| u.saturating_duration_since(std::time::Instant::now()));
        match left {
            Some(l) if l < self.opts.call_timeout => (l, true),
            _ => (self.opts.call_timeout, false),
        }
    }

    /// Runs `cmd` in the device's shell. `what` names it in errors and traces: never the command
    /// itself, which may hold typed text.
    pub(super) fn run(&self, cmd: String, what: &str) -> Result<Output, DeviceError> {
        self.run_keeping(cmd, what, Keep::Head(self.opts.max_output))
    }

    /// [`AdbDevice::run`], keeping as much of the output as `keep` says.
    pub(super) fn run_keeping(&self, cmd: String, what: &str, keep: Keep) -> Result<Output, DeviceError> {
        let _span = tracing::debug_span!("adb", call = what).entered();
        if self.silent.get() {
            return Err(DeviceError::Io(format!(
                "adb:{}: `{what}` not sent: the device stopped answering earlier in this session",
                self.serial
            )));
        }
        let (serial, server) = (self.serial.clone(), self.server);
        let (timeout, by_budget) = self.wait_limit();
        let ran = with_timeout(timeout, move || {
            let mut device = ADBServerDevice::new(serial, Some(server));
            let cmd = format!("{cmd}; echo {EXIT_MARKER}$?");
            let mut out = Output::default();
            let mut stderr = Vec::new();
            let code = {
                let mut o = Sink::new(&mut out.stdout, keep);
                let mut e = Sink::new(&mut stderr, keep);
                let code = device.shell_command(&cmd, Some(&mut o), Some(&mut e));
                out.dropped = o.finish();
                e.finish();
                code
            };
            out.stderr = stderr;
            code.map(|_| out).map_err(|e| e.to_string())
        });
        if ran.is_none() {
            tracing::debug!(serial = %self.serial, call = what, waited_ms = timeout.as_millis() as u64, "adb command unanswered");
            self.silent.set(true);
        }
        match ran {
            Some(Ok(mut out)) => match take_exit_marker(&mut out.stdout) {
                Some(code) => Ok(Output { exit: code, ..out }),
                None => Err(DeviceError::Io(format!(
                    "adb:{}: the connection closed during `{what}`: the device is gone",
                    self.serial
                ))),
            },
            Some(Err(e)) => Err(DeviceError::Io(format!("adb:{}: `{what}` failed: {e}", self.serial))),
            None if by_budget => Err(DeviceError::Io(format!(
                "adb:{}: `{what}` did not answer before the call's wall-clock budget ran out ({:.1}s left): the device is gone or stuck",
                self.serial,
                timeout.as_secs_f32()
            ))),
            None => Err(DeviceError::Io(format!(
                "adb:{}: `{what}` did not answer within {}s: the device is gone or stuck",
                self.serial,
                self.opts.call_timeout.as_secs_f32()
            ))),
        }
    }

    /// Whether the device runs a trivial command within `within` (a pool asks this of a phone whose
    /// trail failed: one that stopped answering leaves the pool).
    pub fn answers(&mut self, within: Duration) -> bool {
        let until = self.until.replace(std::time::Instant::now() + within);
        let ok = self.run("true".into(), "true").is_ok_and(|o| !o.failed());
        self.until = until;
        ok
    }

    /// `shell`, and a non-zero exit is an `Action` error with the command's first line of output.
    pub(super) fn checked(&self, cmd: &str, what: &str) -> Result<Output, DeviceError> {
        let out = self.run(cmd.to_owned(), what)?;
        if out.failed() {
            return Err(DeviceError::Action(format!(
                "adb:{}: `{what}` failed: {}",
                self.serial,
                dump::first_line(&out.text())
            )));
        }
        Ok(out)
    }
}
