//! What a web trace keeps while it runs ([`Keeper`]): requests as HAR entries, console lines,
//! screencast frames, fed from the connection's reader thread; `trace.rs` begins and ends it.
use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze_core::device::trace::{DeviceTrace, MAX_LINES, MAX_REQUESTS, TraceLine, Video, VideoFrame, unix_ms_now};

use super::cdp::{Connection, lock};
use super::har::{self, Body, Req, Resp};

/// The most failed requests whose bodies one trace asks for.
const MAX_BODIES: usize = 200;
/// How long the end of a trace waits for bodies still being fetched.
pub(super) const BODIES_WAIT: Duration = Duration::from_secs(3);
/// The most of one console line kept.
const LINE_BYTES: usize = 8 << 10;
/// A frame closer than this to the last one kept is skipped, unless the screen then stayed as it
/// shows for this long (the last frame is always kept).
const FRAME_GAP_MS: f64 = 100.0;
/// The screencast's caps: a long trail keeps its first ~10 minutes at 5 frames a second.
const MAX_FRAMES: usize = 3000;
const MAX_FRAME_BYTES: usize = 128 << 20;
/// How long before a secret field was marked its value may have been on the screen (typing it).
pub(super) const SECRET_MARGIN_MS: f64 = 1000.0;
/// How a frame is asked for: JPEG of quality 60, at most 1280 px wide.
pub(super) const SCREENCAST: (&str, u32, u32) = ("jpeg", 60, 1280);

/// What one trace keeps, shared by the device and each of its pages' listeners.
pub(crate) struct Keeper {
    pub(super) video: bool,
    conn: Weak<Connection>,
    pub(super) kept: Mutex<Kept>,
    /// Signalled when a body fetch is done.
    fetched: Condvar,
    /// Bodies to fetch, for the trace's thread; `None` once the trace ended.
    jobs: Mutex<Option<Sender<Job>>>,
}

pub(super) struct Kept {
    requests: Vec<Req>,
    /// The entry a request id (by session) stands for now: a redirect starts a new one.
    live: HashMap<(String, String), usize>,
    requests_dropped: usize,
    console: VecDeque<TraceLine>,
    lines_dropped: usize,
    frames: Vec<VideoFrame>,
    frame_bytes: usize,
    /// The newest frame not kept yet (its time, its base64 JPEG).
    held: Option<(f64, String)>,
    /// The time of the last frame kept (minus infinity before the first).
    last_kept_ms: f64,
    /// The screencast reached its cap at this time.
    frames_capped: Option<f64>,
    bodies_asked: usize,
    bodies_skipped: usize,
    bodies_pending: usize,
    /// When a secret was first typed into the page (a frame after it may show it).
    pub(super) secret_since: Option<f64>,
    pub(super) notes: Vec<String>,
}

struct Job {
    session: String,
    request: String,
    index: usize,
}

impl Keeper {
    /// A trace keeping from now, with its body-fetching thread.
    pub(super) fn start(conn: &Arc<Connection>, video: bool) -> Arc<Keeper> {
        let (tx, rx) = channel();
        let keeper = Arc::new(Keeper {
            video,
            conn: Arc::downgrade(conn),
            kept: Mutex::new(Kept::default()),
            fetched: Condvar::new(),
            jobs: Mutex::new(Some(tx)),
        });
        let weak = Arc::downgrade(&keeper);
        let spawned = std::thread::Builder::new()
            .name("trailblaze-trace".into())
            .spawn(move || fetch_bodies(weak, rx));
        if let Err(e) = spawned {
            lock(&keeper.jobs).take();
            lock(&keeper.kept)
                .notes
                .push(format!("no thread to fetch failed requests' bodies ({e}): none kept"));
        }
        keeper
    }

    /// Keeps what one event of a page's `session` tells. Runs on the reader thread: no waiting.
    pub(crate) fn on_event(&self, session: &str, method: &str, p: &Value) {
        match method {
            "Network.requestWillBeSent" => self.on_request(session, p),
            "Network.responseReceived" => {
                let resp = p.get("response").unwrap_or(&Value::Null);
                self.with_live(session, p, |r| r.response = Some(Resp::from_cdp(resp, mono(p))));
            }
            "Network.dataReceived" => {
                let n = p.get("dataLength").and_then(Value::as_u64).unwrap_or(0);
                self.with_live(session, p, |r| r.received += n);
            }
            "Network.loadingFinished" => self.on_finished(session, p),
            "Network.loadingFailed" => {
                let mut k = lock(&self.kept);
                let Some(i) = k.live.remove(&key(session, p)) else {
                    return;
                };
                if let Some(r) = k.requests.get_mut(i) {
                    r.end_mono = Some(mono(p));
                    let why = str_of(p, "errorText");
                    let canceled = p.get("canceled").and_then(Value::as_bool) == Some(true);
                    r.failure = Some(if canceled {
                        format!("canceled ({why})")
                    } else {
                        why.to_string()
                    });
                }
            }
            "Runtime.consoleAPICalled" => {
                let args = p
                    .get("args")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let text: Vec<String> = args.iter().take(16).map(describe).collect();
                let level = match str_of(p, "type") {
                    "error" | "assert" => "error",
                    "warning" => "warn",
                    "info" => "info",
                    "debug" => "debug",
                    _ => "log",
                };
                self.line(unix_of(p), level, "page", text.join(" "));
            }
            "Runtime.exceptionThrown" => {
                self.line(unix_of(p), "error", "exception", exception_text(p).to_string());
            }
            "Page.screencastFrame" => self.on_frame(session, p),
            _ => {}
        }
    }

    fn on_request(&self, session: &str, p: &Value) {
        let req = p.get("request").unwrap_or(&Value::Null);
        let url = str_of(req, "url");
        // A data: URL is no request over the wire, and can be megabytes long.
        if url.starts_with("data:") {
            return;
        }
        let at = mono(p);
        let key = key(session, p);
        let mut k = lock(&self.kept);
        // A redirect: the same id's last entry ends with the redirect's response.
        if let Some(redirect) = p.get("redirectResponse")
            && let Some(i) = k.live.remove(&key)
            && let Some(r) = k.requests.get_mut(i)
        {
            r.response = Some(Resp::from_cdp(redirect, at));
            r.end_mono = Some(at);
            r.redirect_to = Some(url.to_string());
        }
        if k.requests.len() >= MAX_REQUESTS {
            k.requests_dropped += 1;
            return;
        }
        let start_unix_ms = p
            .get("wallTime")
            .and_then(Value::as_f64)
            .map_or_else(unix_ms_now, |s| s * 1000.0);
        let post = req
            .get("postData")
            .and_then(Value::as_str)
            .map(|b| har::cut(b.to_string(), trailblaze_core::device::trace::MAX_BODY_BYTES));
        let index = k.requests.len();
        k.requests.push(Req {
            session: session.to_string(),
            id: key.1.clone(),
            start_unix_ms,
            start_mono: at,
            method: str_of(req, "method").to_string(),
            url: url.to_string(),
            headers: req.get("headers").cloned().unwrap_or(Value::Null),
            post,
            ..Req::default()
        });
        k.live.insert(key, index);
    }

    fn on_finished(&self, session: &str, p: &Value) {
        let job = {
            let mut k = lock(&self.kept);
            let Some(i) = k.live.remove(&key(session, p)) else {
                return;
            };
            let Some(r) = k.requests.get_mut(i) else { return };
            r.end_mono = Some(mono(p));
            r.encoded = p.get("encodedDataLength").and_then(Value::as_f64);
            if r.response.as_ref().is_none_or(|resp| resp.status < 400) {
                return;
            }
            let job = Job {
                session: r.session.clone(),
                request: r.id.clone(),
                index: i,
            };
            if k.bodies_asked >= MAX_BODIES {
                k.bodies_skipped += 1;
                return;
            }
            k.bodies_asked += 1;
            k.bodies_pending += 1;
            job
        };
        let sent = lock(&self.jobs).as_ref().is_some_and(|tx| tx.send(job).is_ok());
        if !sent {
            lock(&self.kept).bodies_pending -= 1;
        }
    }

    /// Runs `f` on the entry a request id stands for now, if it is kept.
    fn with_live(&self, session: &str, p: &Value, f: impl FnOnce(&mut Req)) {
        let mut k = lock(&self.kept);
        let Some(&i) = k.live.get(&key(session, p)) else { return };
        if let Some(r) = k.requests.get_mut(i) {
            f(r);
        }
    }

    fn line(&self, unix_ms: f64, level: &str, source: &str, text: String) {
        let line = TraceLine {
            unix_ms,
            level: level.to_string(),
            source: source.to_string(),
            text: har::cut(text, LINE_BYTES),
        };
        let mut k = lock(&self.kept);
        if k.console.len() >= MAX_LINES {
            k.console.pop_front();
            k.lines_dropped += 1;
        }
        k.console.push_back(line);
    }

    fn on_frame(&self, session: &str, p: &Value) {
        // Acked at once: the browser sends the next frame only after the last was acked.
        if let Some(c) = self.conn.upgrade() {
            let id = p.get("sessionId").cloned().unwrap_or(Value::Null);
            let _ = c.send(Some(session), "Page.screencastFrameAck", json!({ "sessionId": id }));
        }
        if !self.video {
            return;
        }
        let at = p
            .get("metadata")
            .and_then(|m| m.get("timestamp"))
            .and_then(Value::as_f64)
            .map_or_else(unix_ms_now, |s| s * 1000.0);
        let capped = lock(&self.kept).offer_frame(at, str_of(p, "data"));
        if capped && let Some(c) = self.conn.upgrade() {
            // Nothing more is kept: the browser need not encode more.
            let _ = c.send(Some(session), "Page.stopScreencast", json!({}));
        }
    }

    /// A secret is being typed into the page now.
    pub(crate) fn secret_typed(&self) {
        let now = unix_ms_now();
        lock(&self.kept).secret_since.get_or_insert(now);
    }

    /// Waits (until `deadline`) for the bodies still being fetched.
    pub(super) fn wait_for_bodies(&self, deadline: Instant) {
        let mut k = lock(&self.kept);
        while k.bodies_pending > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            k = match self.fetched.wait_timeout(k, deadline - now) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Stops keeping and hands over what was kept (redaction is the caller's).
    pub(super) fn finish(&self) -> DeviceTrace {
        lock(&self.jobs).take();
        let mut k = std::mem::take(&mut *lock(&self.kept));
        if let Some((at, data)) = k.held.take()
            && k.frames_capped.is_none()
        {
            k.keep_frame(at, &data);
        }
        let mut notes = std::mem::take(&mut k.notes);
        if k.requests_dropped > 0 {
            notes.push(format!(
                "{} requests after the first {MAX_REQUESTS} were not kept",
                k.requests_dropped
            ));
        }
        if k.lines_dropped > 0 {
            notes.push(format!(
                "{} console lines before the last {MAX_LINES} were not kept",
                k.lines_dropped
            ));
        }
        if k.bodies_skipped > 0 {
            notes.push(format!(
                "the bodies of {} failed requests were not kept (at most {MAX_BODIES} a trace)",
                k.bodies_skipped
            ));
        }
        if k.bodies_pending > 0 {
            notes.push(format!(
                "the bodies of {} failed requests did not arrive in time",
                k.bodies_pending
            ));
        }
        if let Some(at) = k.frames_capped {
            notes.push(format!(
                "the screencast reached its cap ({} frames, {} MiB) at {}: later frames were not kept",
                k.frames.len(),
                k.frame_bytes >> 20,
                har::iso8601(at)
            ));
        }
        let video = match (self.video, k.frames.is_empty()) {
            (false, _) => None,
            (true, false) => Some(Video::Frames(std::mem::take(&mut k.frames))),
            (true, true) => {
                notes.push("the page's screencast sent no frame: no video".into());
                None
            }
        };
        DeviceTrace {
            network: k.requests.iter().map(Req::entry).collect(),
            console: k.console.into(),
            device_log: Vec::new(),
            video,
            notes,
        }
    }
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            requests: Vec::new(),
            live: HashMap::new(),
            requests_dropped: 0,
            console: VecDeque::new(),
            lines_dropped: 0,
            frames: Vec::new(),
            frame_bytes: 0,
            held: None,
            last_kept_ms: f64::NEG_INFINITY,
            frames_capped: None,
            bodies_asked: 0,
            bodies_skipped: 0,
            bodies_pending: 0,
            secret_since: None,
            notes: Vec::new(),
        }
    }
}

impl Kept {
    /// A screencast frame (base64) at `at`: the frame held so far was the screen until this one;
    /// it is kept when it came a while after the last one kept or stayed a while, otherwise this
    /// one replaces it. True when the cap was reached just now.
    fn offer_frame(&mut self, at: f64, data: &str) -> bool {
        if self.frames_capped.is_some() {
            return false;
        }
        if let Some((held_at, held)) = self.held.take()
            && (held_at - self.last_kept_ms >= FRAME_GAP_MS || at - held_at >= FRAME_GAP_MS)
        {
            self.keep_frame(held_at, &held);
            if self.frames_capped.is_some() {
                return true;
            }
        }
        self.held = Some((at, data.to_string()));
        false
    }

    fn keep_frame(&mut self, at: f64, data: &str) {
        use base64::Engine;
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
            return;
        };
        if self.frames.len() >= MAX_FRAMES || self.frame_bytes + bytes.len() > MAX_FRAME_BYTES {
            self.frames_capped = Some(at);
            return;
        }
        self.frame_bytes += bytes.len();
        self.last_kept_ms = at;
        self.frames.push(VideoFrame {
            unix_ms: at,
            mime: "image/jpeg".into(),
            bytes,
        });
    }
}

/// The trace's thread: fetches failed requests' bodies until the trace ends (or is dropped).
fn fetch_bodies(keeper: Weak<Keeper>, jobs: Receiver<Job>) {
    while let Ok(job) = jobs.recv() {
        let Some(conn) = keeper.upgrade().and_then(|k| k.conn.upgrade()) else {
            return;
        };
        let answer = conn.call(
            Some(&job.session),
            "Network.getResponseBody",
            json!({ "requestId": job.request }),
            Instant::now() + BODIES_WAIT,
        );
        drop(conn);
        let Some(k) = keeper.upgrade() else { return };
        {
            let mut kept = lock(&k.kept);
            kept.bodies_pending = kept.bodies_pending.saturating_sub(1);
            if let (Ok(a), Some(r)) = (answer, kept.requests.get_mut(job.index)) {
                r.body = Some(Body::from_cdp(&a));
            }
        }
        k.fetched.notify_all();
    }
}

fn key(session: &str, p: &Value) -> (String, String) {
    (session.to_string(), str_of(p, "requestId").to_string())
}

/// An event's time on the protocol's monotonic clock, in seconds.
fn mono(p: &Value) -> f64 {
    p.get("timestamp").and_then(Value::as_f64).unwrap_or(0.0)
}

/// A `Runtime` event's time (already Unix ms), or now.
fn unix_of(p: &Value) -> f64 {
    p.get("timestamp").and_then(Value::as_f64).unwrap_or_else(unix_ms_now)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An uncaught exception's text (`Runtime.exceptionThrown`): its description (with its stack),
/// else the event's text.
pub(super) fn exception_text(p: &Value) -> &str {
    let d = p.get("exceptionDetails").unwrap_or(&Value::Null);
    d.get("exception")
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| d.get("text").and_then(Value::as_str).unwrap_or_default())
}

/// A console argument as text.
pub(super) fn describe(v: &Value) -> String {
    if let Some(x) = v.get("value") {
        return match x {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
    }
    v.get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(k: &mut Kept, at: f64) -> bool {
        use base64::Engine;
        k.offer_frame(at, &base64::engine::general_purpose::STANDARD.encode(at.to_string()))
    }

    fn kept_times(k: &Kept) -> Vec<f64> {
        k.frames.iter().map(|f| f.unix_ms).collect()
    }

    #[test]
    fn a_burst_of_frames_is_thinned_to_one_each_gap_and_a_screen_that_stayed_is_kept() {
        let mut k = Kept::default();
        // 60 frames a second for a second: about one kept each 100 ms.
        for i in 0..60 {
            frame(&mut k, 1000.0 + f64::from(i) * 16.0);
        }
        let burst = kept_times(&k);
        assert!((9..=11).contains(&burst.len()), "{burst:?}");
        assert!(burst.windows(2).all(|w| w[1] - w[0] >= FRAME_GAP_MS), "{burst:?}");
        // A frame 10 ms after the last kept one that then stays 5 s is kept; so is the last.
        let last = *burst.last().unwrap_or(&0.0);
        frame(&mut k, last + 10.0);
        frame(&mut k, last + 5000.0);
        let last_two = k.held.as_ref().map(|h| h.0);
        assert_eq!(kept_times(&k).last(), Some(&(last + 10.0)));
        assert_eq!(last_two, Some(last + 5000.0));
        // Control: a frame replaced within the gap is not kept.
        assert!(!kept_times(&k).contains(&(1000.0 + 16.0)), "{:?}", kept_times(&k));
    }

    #[test]
    fn the_frames_stop_at_their_cap() {
        let mut k = Kept::default();
        let mut capped_at = None;
        for i in 0..(MAX_FRAMES + 5) {
            if frame(&mut k, i as f64 * 200.0) {
                capped_at.get_or_insert(i);
            }
        }
        assert_eq!(k.frames.len(), MAX_FRAMES);
        assert_eq!(capped_at, Some(MAX_FRAMES + 1));
        // Control: nothing is offered after the cap.
        assert!(!frame(&mut k, 1e9) && k.frames.len() == MAX_FRAMES);
    }
}
