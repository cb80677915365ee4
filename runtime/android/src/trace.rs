//! A trail's trace on an Android device: the phone's own log for the window (`logcat -d -v epoch
//! -T <start>`, the start in the phone's clock) and, when asked, a video (`screenrecord` on its
//! own adb connection, stopped with SIGINT so it finishes the mp4, then pulled over sync and
//! deleted). Nothing here fails a trail: what could not be kept is a note. Reference:
//! docs/android.md, "Traces".

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use adb_client::ADBDeviceExt;
use adb_client::server_device::ADBServerDevice;
use trailblaze_core::device::trace::{DeviceTrace, MAX_LINES, TraceLine, TraceOptions, Video, unix_ms_now};

use super::transport::{Keep, Sink};
use super::{AdbDevice, DeviceError, quote, with_timeout};

/// The most of the log's output read (its end): 20 000 lines are ~3 MB, so this keeps all of them
/// on a normal phone and bounds a chatty or hostile one.
pub(super) const LOG_BYTES: usize = 8 << 20;
/// The most of one log line's text kept (logcat's own payload limit is ~4 KB).
const MAX_TEXT: usize = 8 * 1024;
/// The most bytes of a video pulled: 180 s at [`BIT_RATE`] is ~90 MB.
const MAX_VIDEO_BYTES: usize = 160 << 20;
/// `screenrecord --bit-rate`: 4 Mbit/s is plenty for an app's screen and keeps the file small.
const BIT_RATE: u32 = 4_000_000;
/// screenrecord's own longest recording, in seconds.
pub const SCREENRECORD_MAX_S: u32 = 180;
/// How long a recording has to finish its mp4 after SIGINT.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// What a running trace window holds.
#[derive(Debug)]
pub(super) struct Window {
    /// The start in the phone's clock, as logcat's `-T` takes it (`sssss.mmm`).
    since: String,
    since_ms: f64,
    /// The phone's clock minus the host's, in ms.
    skew_ms: f64,
    video: Option<Recording>,
    notes: Vec<String>,
}

#[derive(Debug)]
struct Recording {
    path: String,
    started_unix_ms: f64,
    started: Instant,
    limit_s: u32,
    /// The recording shell's process id (it `exec`s screenrecord), once it printed it.
    pid: mpsc::Receiver<String>,
    /// What the recording printed, when its connection ended (screenrecord exited).
    done: mpsc::Receiver<Result<String, String>>,
}

/// Sends the first line written to it, keeping (a little of) everything for the end.
struct FirstLine {
    all: Vec<u8>,
    tx: Option<mpsc::Sender<String>>,
}

impl Write for FirstLine {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = 4096usize.saturating_sub(self.all.len());
        self.all.extend_from_slice(&data[..data.len().min(room)]);
        if let Some(end) = self.all.iter().position(|&b| b == b'\n')
            && let Some(tx) = self.tx.take()
        {
            let _ = tx.send(String::from_utf8_lossy(&self.all[..end]).trim().to_owned());
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A file name no other recording on the phone has.
fn recording_path() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "/data/local/tmp/trailblaze-trace-{}-{}-{}.mp4",
        std::process::id(),
        unix_ms_now() as u64,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl AdbDevice {
    pub(super) fn begin_trace(&mut self, opts: &TraceOptions) {
        if self.trace.is_some() {
            // A window left open: close it (stopping and deleting its recording) and start anew.
            let _ = self.end_trace();
        }
        let mut notes = Vec::new();
        let (since_ms, skew_ms) = match self.phone_clock() {
            Ok(clock) => clock,
            Err(e) => {
                notes.push(format!(
                    "the phone's clock could not be read ({e}): the log window starts at the host's time"
                ));
                (unix_ms_now(), 0.0)
            }
        };
        let since_ms = since_ms.floor();
        let since = format!(
            "{}.{:03}",
            (since_ms / 1000.0).floor() as u64,
            (since_ms % 1000.0) as u64
        );
        let video = if opts.video {
            match self.start_recording() {
                Ok(r) => Some(r),
                Err(e) => {
                    notes.push(format!("screenrecord could not be started: {e}: no video"));
                    None
                }
            }
        } else {
            None
        };
        self.trace = Some(Window {
            since,
            since_ms,
            skew_ms,
            video,
            notes,
        });
    }

    pub(super) fn end_trace(&mut self) -> DeviceTrace {
        let Some(mut w) = self.trace.take() else {
            return DeviceTrace::default();
        };
        let mut notes = std::mem::take(&mut w.notes);
        if self.until.is_some_and(|u| u <= Instant::now()) {
            // Every call would fail at once and count the phone as stuck: none is sent.
            notes.push("the call's wall-clock budget had run out when the trace ended: no device log".into());
            if let Some(r) = w.video {
                notes.push(format!(
                    "the recording was not stopped: {} stays on the phone until screenrecord's limit ends it",
                    r.path
                ));
            }
            return DeviceTrace {
                notes,
                ..DeviceTrace::default()
            };
        }
        let device_log = self.read_log(&w, &mut notes);
        let video = w.video.take().and_then(|r| self.finish_recording(r, &mut notes));
        DeviceTrace {
            device_log,
            video,
            notes,
            ..DeviceTrace::default()
        }
    }

    /// The phone's time now (Unix ms) and its clock minus the host's.
    fn phone_clock(&self) -> Result<(f64, f64), String> {
        let before = unix_ms_now();
        let out = self.run("date +%s.%N".into(), "date").map_err(|e| e.to_string())?;
        let after = unix_ms_now();
        let text = out.text();
        match parse_epoch(text.trim()) {
            Some(phone) if !out.failed() => Ok((phone, phone - (before + after) / 2.0)),
            _ => Err(format!("`date` printed {:?}", super::dump::first_line(&text))),
        }
    }

    fn read_log(&self, w: &Window, notes: &mut Vec<String>) -> Vec<TraceLine> {
        let cmd = format!("logcat -d -v epoch -T {}", quote(&w.since));
        let out = match self.run_keeping(cmd, "logcat", Keep::Tail(LOG_BYTES)) {
            Ok(out) => out,
            Err(e) => {
                notes.push(format!("the device log could not be read: {}", reason(&e)));
                return Vec::new();
            }
        };
        if out.failed() {
            notes.push(format!(
                "logcat refused ({}): no device log",
                super::dump::first_line(&out.text())
            ));
            return Vec::new();
        }
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.dropped > 0 {
            // The kept bytes start inside a line: that partial line goes too.
            let cut = text.find('\n').map_or(text.len(), |i| i + 1);
            text.drain(..cut);
            notes.push(format!(
                "the device log printed more than {} MiB for this trail: its first {} bytes are left out",
                LOG_BYTES >> 20,
                out.dropped
            ));
        }
        let mut lines = parse_logcat(&text, w.since_ms, w.skew_ms);
        if lines.len() > MAX_LINES {
            let extra = lines.len() - MAX_LINES;
            lines.drain(..extra);
            notes.push(format!(
                "the device log had {} lines for this trail: the last {MAX_LINES} are kept",
                extra + MAX_LINES
            ));
        }
        lines
    }

    /// Starts `screenrecord` on its own connection and thread: the shell prints its process id and
    /// `exec`s screenrecord, so `kill -INT <pid>` stops exactly this recording.
    fn start_recording(&self) -> Result<Recording, String> {
        if self.silent.get() {
            return Err("the device stopped answering earlier in this session".into());
        }
        let path = recording_path();
        let limit_s = self.opts.video_limit_s.clamp(1, SCREENRECORD_MAX_S);
        let cmd = format!(
            "echo $$; exec screenrecord --bit-rate {BIT_RATE} --time-limit {limit_s} {}",
            quote(&path)
        );
        let (pid_tx, pid) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let (serial, server) = (self.serial.clone(), self.server);
        std::thread::Builder::new()
            .name("adb-screenrecord".into())
            .spawn(move || {
                let mut device = ADBServerDevice::new(serial, Some(server));
                let mut out = FirstLine {
                    all: Vec::new(),
                    tx: Some(pid_tx),
                };
                let ran = device.shell_command(&cmd, Some(&mut out), None);
                let text = String::from_utf8_lossy(&out.all).into_owned();
                let _ = done_tx.send(ran.map(|_| text).map_err(|e| e.to_string()));
            })
            .map_err(|e| format!("no thread for it: {e}"))?;
        Ok(Recording {
            path,
            started_unix_ms: unix_ms_now(),
            started: Instant::now(),
            limit_s,
            pid,
            done,
        })
    }

    /// Stops the recording (SIGINT: screenrecord then writes the mp4's index), pulls the file and
    /// deletes it from the phone.
    fn finish_recording(&self, r: Recording, notes: &mut Vec<String>) -> Option<Video> {
        let pid = r.pid.recv_timeout(self.wait_limit().0.min(STOP_WAIT)).ok();
        // Ended by itself: never started, failed, or reached its time limit.
        let ended = r.done.try_recv().ok();
        let ran_s = r.started.elapsed().as_secs();
        let mut keep = true;
        match (&ended, &pid) {
            (Some(Err(e)), _) => {
                notes.push(format!("screenrecord's connection failed: {e}: no video"));
                keep = false;
            }
            (Some(Ok(text)), _) if missing(text) => {
                notes.push(NO_SCREENRECORD.into());
                return None;
            }
            (Some(Ok(_)), _) if ran_s + 1 >= u64::from(r.limit_s) => notes.push(format!(
                "the trail ran {ran_s} s, longer than screenrecord's {} s limit: the video covers its first {} s",
                r.limit_s, r.limit_s
            )),
            (Some(Ok(text)), _) => {
                notes.push(format!(
                    "screenrecord stopped early: {}",
                    super::dump::first_line(text.lines().nth(1).unwrap_or("(no output)"))
                ));
            }
            (None, None) => {
                notes.push("screenrecord never started (it printed nothing): no video".into());
                keep = false;
            }
            (None, Some(pid)) => keep = self.stop_recording(pid, &r, notes),
        }
        let video = if keep { self.pull_video(&r, notes) } else { None };
        if let Err(e) = self.checked(&format!("rm -f {}", quote(&r.path)), "rm (recording)") {
            notes.push(format!(
                "the recording {} was not deleted from the phone: {}",
                r.path,
                reason(&e)
            ));
        }
        video
    }

    /// `kill -INT`, then waits for screenrecord to finish its file; `false` when it did not.
    fn stop_recording(&self, pid: &str, r: &Recording, notes: &mut Vec<String>) -> bool {
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            notes.push(format!(
                "screenrecord's shell printed {pid:?}, not a process id: no video"
            ));
            return false;
        }
        if let Err(e) = self.run(format!("kill -INT {pid}"), "kill -INT screenrecord") {
            notes.push(format!("screenrecord could not be stopped: {}: no video", reason(&e)));
            return false;
        }
        match r.done.recv_timeout(self.wait_limit().0.min(STOP_WAIT)) {
            Ok(Ok(text)) if missing(&text) => {
                notes.push(NO_SCREENRECORD.into());
                false
            }
            Ok(Ok(_)) => true,
            Ok(Err(e)) => {
                notes.push(format!("screenrecord's connection failed: {e}: no video"));
                false
            }
            Err(_) => {
                // A recording that will not finish is cut off so it does not run on in the background.
                let _ = self.run(format!("kill -KILL {pid}"), "kill -KILL screenrecord");
                notes.push(format!(
                    "screenrecord did not finish within {} s of SIGINT: no video",
                    STOP_WAIT.as_secs()
                ));
                false
            }
        }
    }

    /// The recording's bytes over sync (as `adb pull`), when they are a finished mp4.
    fn pull_video(&self, r: &Recording, notes: &mut Vec<String>) -> Option<Video> {
        let (serial, server, path) = (self.serial.clone(), self.server, r.path.clone());
        let pulled = with_timeout(self.wait_limit().0, move || {
            let mut device = ADBServerDevice::new(serial, Some(server));
            let mut bytes = Vec::new();
            let pulled = device
                .pull(&path, &mut Sink::new(&mut bytes, Keep::Head(MAX_VIDEO_BYTES)))
                .map_err(|e| e.to_string());
            pulled.map(|()| bytes)
        });
        let bytes = match pulled {
            Some(Ok(bytes)) => bytes,
            Some(Err(e)) if e.contains("output limit") => {
                notes.push(format!("the video is over {} MiB: left out", MAX_VIDEO_BYTES >> 20));
                return None;
            }
            Some(Err(e)) => {
                notes.push(format!("the video could not be pulled from the phone: {e}"));
                return None;
            }
            None => {
                notes.push("pulling the video did not finish in time: left out".into());
                return None;
            }
        };
        if !mp4_finished(&bytes) {
            notes.push("the recording is not a finished mp4 (no index): left out".into());
            return None;
        }
        Some(Video::File {
            mime: "video/mp4".into(),
            bytes,
            started_unix_ms: r.started_unix_ms,
        })
    }
}

const NO_SCREENRECORD: &str = "screenrecord is not on this device: no video";

/// Whether the shell said it has no `screenrecord` (mksh: "inaccessible or not found").
fn missing(output: &str) -> bool {
    output.contains("screenrecord") && output.contains("not found")
}

/// A device error as a note's reason.
fn reason(e: &DeviceError) -> String {
    e.to_string()
}

/// `sssss.fff…` (as `date +%s.%N` prints it) as Unix ms. A `date` without `%N` prints it as is
/// (`1700000000.N`): whole seconds then.
pub(super) fn parse_epoch(s: &str) -> Option<f64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if secs.is_empty() || secs.len() > 12 || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: f64 = secs.parse().ok()?;
    let digits: String = frac.chars().take_while(char::is_ascii_digit).take(9).collect();
    let frac = if digits.is_empty() {
        0.0
    } else {
        digits.parse::<f64>().ok()? / 10f64.powi(digits.len() as i32)
    };
    Some((secs + frac) * 1000.0)
}

/// One `-v epoch` line: `  1700000000.123  1234  1256 I Tag     : text` → (phone ms, level, tag,
/// text).
fn parse_line(line: &str) -> Option<(f64, char, &str, &str)> {
    let mut rest = line.trim_start();
    let mut field = || {
        let (f, r) = rest.split_once(' ')?;
        rest = r.trim_start_matches(' ');
        Some(f)
    };
    let time = field()?;
    let (_, frac) = time.split_once('.')?;
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms = parse_epoch(time)?;
    let (pid, tid) = (field()?, field()?);
    if !(pid.bytes().all(|b| b.is_ascii_digit()) && tid.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let level = field()?;
    let level = match level.as_bytes() {
        [l @ (b'V' | b'D' | b'I' | b'W' | b'E' | b'F')] => char::from(*l),
        _ => return None,
    };
    let (tag, text) = rest.split_once(": ").or_else(|| Some((rest.strip_suffix(':')?, "")))?;
    Some((ms, level, tag.trim_end(), text))
}

fn capped(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// logcat's `-v epoch` output as trace lines in host time (`skew_ms`: the phone's clock minus the
/// host's), leaving out lines before `since_ms` (the phone's clock) and the buffers' `---------
/// beginning of main` headers. A line without the header (logcat's own messages) is kept as its
/// text, level `I`, at the time of the line before it.
pub(super) fn parse_logcat(text: &str, since_ms: f64, skew_ms: f64) -> Vec<TraceLine> {
    let mut lines = Vec::new();
    let mut last_ms = since_ms;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with("--------- ") {
            continue;
        }
        match parse_line(line) {
            Some((ms, _, _, _)) if ms < since_ms => {}
            Some((ms, level, tag, text)) => {
                last_ms = ms;
                lines.push(TraceLine {
                    unix_ms: ms - skew_ms,
                    level: level.to_string(),
                    source: capped(tag),
                    text: capped(text),
                });
            }
            None => lines.push(TraceLine {
                unix_ms: last_ms - skew_ms,
                level: "I".into(),
                source: String::new(),
                text: capped(line),
            }),
        }
    }
    lines
}

/// Whether `bytes` are an mp4 with its index (`moov`), which screenrecord writes as it finishes:
/// a recording cut off has `ftyp` and `mdat` only, and plays nowhere.
pub(super) fn mp4_finished(bytes: &[u8]) -> bool {
    if bytes.get(4..8) != Some(b"ftyp") {
        return false;
    }
    let mut at = 0usize;
    // Top-level boxes: 4-byte size (1: a 64-bit size follows the type; 0: to the end), 4-byte type.
    for _ in 0..10_000 {
        let Some(head) = bytes.get(at..at + 8) else {
            return false;
        };
        if &head[4..8] == b"moov" {
            return true;
        }
        let size = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let size = match size {
            0 => return false,
            1 => match bytes.get(at + 8..at + 16) {
                Some(b) => u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
                None => return false,
            },
            s => s,
        };
        if size < 8 {
            return false;
        }
        match usize::try_from(size).ok().and_then(|s| at.checked_add(s)) {
            Some(next) => at = next,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
