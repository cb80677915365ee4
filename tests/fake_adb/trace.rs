//! What the fake phone answers for a trace: a clock (`date +%s.%N`, with a settable skew from the
//! host's), a log buffer served by `logcat -d -v epoch [-T sssss.mmm | -T count]`, `screenrecord`
//! (writes an mp4 that starts with an `ftyp` box and "records" until `kill -INT`, when it appends
//! the `moov` index as the real one does on SIGINT, or until its time limit), `kill` and `rm`.

use std::time::{Duration, Instant};

/// One entry of the phone's log.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// The phone's Unix time in ms.
    pub ms: i64,
    pub pid: u32,
    pub tid: u32,
    pub level: char,
    pub tag: String,
    pub msg: String,
    /// Print `msg` as it is, without logcat's header (a line no parser expects).
    pub raw: bool,
}

/// A running `screenrecord`.
#[derive(Debug, Clone)]
pub struct Recording {
    pub pid: u32,
    pub path: String,
    pub(super) started: Instant,
    pub(super) limit: Duration,
}

/// The phone's trace state: clock, log, recordings, and the switches that break them.
#[derive(Debug, Default)]
pub struct TraceState {
    /// The phone's clock minus the host's.
    pub clock_skew_ms: i64,
    pub log: Vec<LogEntry>,
    /// `logcat` fails (as with a policy that denies the shell the log).
    pub logcat_denied: bool,
    /// The phone has no `screenrecord` binary.
    pub no_screenrecord: bool,
    pub recordings: Vec<Recording>,
    /// Every `screenrecord` started: its file.
    pub recorded: Vec<String>,
    /// Every signal `kill` delivered: (pid, signal).
    pub signals: Vec<(u32, String)>,
    /// How each ended recording exited, by process id.
    pub exits: Vec<(u32, u8)>,
    pub(super) last_pid: u32,
}

/// The first bytes screenrecord writes: an `ftyp` box (isom, compatible isom and mp42), then the
/// start of `mdat`.
pub const MP4_HEAD: &[u8] = b"\0\0\0\x18ftypisom\0\0\x02\0isommp42\0\0\0\x10mdat\0\0\0\0\0\0\0\0";
/// What it writes when it finishes: the index. A file without it does not play.
pub const MP4_MOOV: &[u8] = b"\0\0\0\x08moov";

impl TraceState {
    /// A new process id.
    pub fn next_pid(&mut self) -> u32 {
        self.last_pid = self.last_pid.max(4000) + 1;
        self.last_pid
    }
}
