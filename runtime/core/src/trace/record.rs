//! The recorder a session holds while a trail is traced: calls as they start and end, frames of the
//! screen, the console. It lives on the session's thread; [`Recorder::finish`] turns it into
//! [`TraceData`], which may cross to the thread that writes it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Target, TraceSettings};
use crate::device::Screenshot;
use crate::device::trace::{DeviceTrace, MAX_LINES, TraceLine, unix_ms_now};
use crate::secret::Redaction;
use crate::snapshot::Snapshot;

/// The most calls a trace keeps (a trail that loops keeps its first ones, and says so).
const MAX_CALLS: usize = 20_000;
/// The most distinct frames a trace keeps pictures of.
const MAX_FRAMES: usize = 2_000;

/// Cloned to write a live session's trace so far without ending it.
#[derive(Clone)]
pub struct Recorder {
    pub(crate) settings: TraceSettings,
    started_unix_ms: f64,
    started: Instant,
    calls: Vec<CallTrace>,
    /// Indexes into `calls` of the calls running now, innermost last.
    open: Vec<usize>,
    frames: Vec<Frame>,
    /// The last frame's snapshot: a frame asked for while it is still the screen's is that frame.
    pub(crate) last_snap: Option<Arc<Snapshot>>,
    trees: Vec<Value>,
    tree_ids: HashMap<u64, usize>,
    /// Pictures by file name (`<sha256>.svg`), each once.
    pub(crate) images: HashMap<String, Screenshot>,
    console: Vec<TraceLine>,
    /// What the running built-in noted of the node it looked for.
    target: Option<Target>,
    /// Time spent sleeping in waits so far.
    waited: Duration,
    /// Time the trace itself spent capturing frames (left out of the calls' split), and the
    /// device time within it.
    pub(crate) overhead: Duration,
    pub(crate) overhead_busy: Duration,
    /// Captures stopped (the device failed one): the rest of the trail is not held up by more.
    pub(crate) captures_stopped: bool,
    pub(crate) notes: Vec<String>,
    dropped_calls: u64,
}

#[derive(Clone)]
struct CallTrace {
    seq: u64,
    parent: Option<u64>,
    depth: u32,
    tool: String,
    args: Value,
    scripted: bool,
    ok: Option<bool>,
    error: Option<String>,
    started_unix_ms: f64,
    duration_ms: f64,
    before: Option<usize>,
    after: Option<usize>,
    point: Option<(i64, i64)>,
    target: Option<Target>,
    // At its start: the device's busy time, the waits' and the trace's own, to split its time.
    busy_at: Duration,
    waited_at: Duration,
    overhead_at: (Duration, Duration),
    // Its nested calls' wall, device and wait time, for the script's own share.
    nested: (f64, f64, f64),
    split: (f64, f64, f64),
}

#[derive(Clone)]
pub(super) struct Frame {
    unix_ms: f64,
    tree: usize,
    screen: Option<String>,
    size: (i32, i32),
}

/// A finished trace, before it is written: plain data, sent from the session's thread.
pub struct TraceData {
    pub started_unix_ms: f64,
    pub calls: Vec<Value>,
    pub frames: Vec<Value>,
    pub trees: Vec<Value>,
    /// Pictures by file name, to write under `trace/`.
    pub images: Vec<(String, Screenshot)>,
    pub console: Vec<TraceLine>,
    pub device: DeviceTrace,
    pub notes: Vec<String>,
    pub settings: TraceSettings,
    /// A secret was typed on a device whose pictures do not hide it: a video of it is not kept.
    pub secret_on_screen: bool,
    /// What the trace's own frames cost the trail, in ms (left out of the calls' times).
    pub frames_ms: f64,
    /// The device's name (`sim:com.example.demo`).
    pub device_name: String,
}

impl Recorder {
    pub fn new(settings: TraceSettings) -> Recorder {
        Recorder {
            settings,
            started_unix_ms: unix_ms_now(),
            started: Instant::now(),
            calls: Vec::new(),
            open: Vec::new(),
            frames: Vec::new(),
            last_snap: None,
            trees: Vec::new(),
            tree_ids: HashMap::new(),
            images: HashMap::new(),
            console: Vec::new(),
            target: None,
            waited: Duration::ZERO,
            overhead: Duration::ZERO,
            overhead_busy: Duration::ZERO,
            captures_stopped: false,
            notes: Vec::new(),
            dropped_calls: 0,
        }
    }

    /// The time now on the trace's clock (Unix ms, monotonic within the trace).
    pub(crate) fn now(&self) -> f64 {
        self.started_unix_ms + self.started.elapsed().as_secs_f64() * 1000.0
    }

    pub(crate) fn last_frame(&self) -> Option<usize> {
        self.frames.len().checked_sub(1)
    }

    /// A call began, the screen as `before` showed it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_started(
        &mut self,
        seq: u64,
        depth: u32,
        tool: &str,
        args: Value,
        scripted: bool,
        before: Option<usize>,
        busy: Duration,
    ) {
        if self.calls.len() >= MAX_CALLS {
            self.dropped_calls += 1;
            return;
        }
        let parent = self.open.last().map(|&i| self.calls[i].seq);
        self.target = None;
        self.open.push(self.calls.len());
        self.calls.push(CallTrace {
            seq,
            parent,
            depth,
            tool: tool.to_string(),
            args,
            scripted,
            ok: None,
            error: None,
            started_unix_ms: self.now(),
            duration_ms: 0.0,
            before,
            after: None,
            point: None,
            target: None,
            busy_at: busy,
            waited_at: self.waited,
            overhead_at: (self.overhead, self.overhead_busy),
            nested: (0.0, 0.0, 0.0),
            split: (0.0, 0.0, 0.0),
        });
    }

    /// Call `seq` ended (its index, for [`Recorder::left`]).
    pub(crate) fn call_finished(
        &mut self,
        seq: u64,
        outcome: Result<&Value, &str>,
        millis: f64,
        busy: Duration,
    ) -> Option<usize> {
        let pos = self.open.iter().rposition(|&i| self.calls[i].seq == seq)?;
        let i = self.open.remove(pos);
        let target = self.target.take();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let c = &mut self.calls[i];
        // The trace's own captures inside the call are not the call's time.
        let overhead = ms(self.overhead - c.overhead_at.0);
        let overhead_busy = ms(self.overhead_busy - c.overhead_at.1);
        let duration = (millis - overhead).max(0.0);
        let device = (ms(busy - c.busy_at) - overhead_busy).max(0.0);
        let wait = ms(self.waited - c.waited_at);
        let script = if c.scripted {
            (duration - c.nested.0 - (device - c.nested.1) - (wait - c.nested.2)).max(0.0)
        } else {
            0.0
        };
        c.split = (device, script, wait);
        c.duration_ms = duration;
        c.target = target;
        match outcome {
            Ok(result) => {
                c.ok = Some(true);
                c.point = point_of(result);
            }
            Err(e) => {
                c.ok = Some(false);
                c.error = Some(e.to_string());
            }
        }
        if let Some(&p) = self.open.last() {
            let n = &mut self.calls[p].nested;
            n.0 += duration;
            n.1 += device;
            n.2 += wait;
        }
        Some(i)
    }

    /// The call at `index` left the screen as frame `after` shows it.
    pub(crate) fn left(&mut self, index: usize, after: Option<usize>) {
        if let Some(c) = self.calls.get_mut(index) {
            c.after = after;
        }
    }

    /// What the running built-in found of the node it looked for.
    pub fn note_target(&mut self, target: Target) {
        self.target = Some(target);
    }

    /// A wait slept `d`.
    pub fn waited(&mut self, d: Duration) {
        self.waited += d;
    }

    /// A console line of the running script (already scrubbed and bounded by the console gate).
    pub fn console(&mut self, source: &str, level: &str, text: &str) {
        if self.console.len() >= MAX_LINES {
            return;
        }
        let unix_ms = self.now();
        self.console.push(TraceLine {
            unix_ms,
            level: level.to_string(),
            source: source.to_string(),
            text: text.to_string(),
        });
    }

    /// A frame of `snap` (`text`: as the LLM reads it), pictured by `shot`; its tree is kept once
    /// however often it shows.
    pub(crate) fn add_frame(
        &mut self,
        snap: Arc<Snapshot>,
        text: String,
        shot: Option<Screenshot>,
        redact: &Redaction,
    ) -> Option<usize> {
        if self.frames.len() >= MAX_FRAMES {
            if !self.captures_stopped {
                self.notes.push(format!(
                    "the trail showed more than {MAX_FRAMES} screens: the rest are not kept"
                ));
            }
            self.captures_stopped = true;
            return self.last_frame();
        }
        let key = tree_key(&text, &snap);
        let tree = match self.tree_ids.get(&key) {
            Some(&t) => t,
            None => {
                self.trees
                    .push(json!({ "text": text, "nodes": nodes_of(&snap, redact) }));
                self.tree_ids.insert(key, self.trees.len() - 1);
                self.trees.len() - 1
            }
        };
        let screen = shot.map(|shot| {
            let name = image_name(&shot);
            self.images.entry(name.clone()).or_insert(shot);
            name
        });
        let unix_ms = self.now();
        self.frames.push(Frame {
            unix_ms,
            tree,
            screen,
            size: (snap.width, snap.height),
        });
        self.last_snap = Some(snap);
        self.last_frame()
    }

    /// The trace as plain data, with what the device kept.
    pub fn finish(mut self, device: DeviceTrace, device_name: String, secret_on_screen: bool) -> TraceData {
        // Calls still open (the session ended inside one) are ended as they stand.
        for i in std::mem::take(&mut self.open) {
            let c = &mut self.calls[i];
            c.ok.get_or_insert(false);
            c.error.get_or_insert_with(|| "did not end before the trace did".into());
        }
        if self.dropped_calls > 0 {
            self.notes.push(format!(
                "the trail made more than {MAX_CALLS} calls: {} are not in the trace",
                self.dropped_calls
            ));
        }
        let calls = self.calls.iter().map(call_json).collect();
        let frames = self
            .frames
            .iter()
            .map(|f| {
                json!({
                    "unix_ms": f.unix_ms, "tree": format!("t{}", f.tree),
                    "screen": f.screen.as_ref().map(|n| format!("trace/{n}")),
                    "size": { "x": f.size.0, "y": f.size.1 },
                })
            })
            .collect();
        TraceData {
            started_unix_ms: self.started_unix_ms,
            calls,
            frames,
            trees: self.trees,
            images: self.images.into_iter().collect(),
            console: self.console,
            device,
            notes: self.notes,
            settings: self.settings,
            secret_on_screen,
            frames_ms: self.overhead.as_secs_f64() * 1000.0,
            device_name,
        }
    }
}

fn call_json(c: &CallTrace) -> Value {
    let round = |v: f64| (v * 100.0).round() / 100.0;
    let mut v = json!({
        "seq": c.seq, "parent": c.parent, "depth": c.depth, "tool": c.tool, "args": c.args,
        "ok": c.ok.unwrap_or(false), "error": c.error,
        "started_unix_ms": round(c.started_unix_ms), "duration_ms": round(c.duration_ms),
        "time": { "device_ms": round(c.split.0), "script_ms": round(c.split.1), "wait_ms": round(c.split.2) },
        "before": c.before, "after": c.after,
    });
    if let Some((x, y)) = c.point {
        v["point"] = json!({ "x": x, "y": y });
    }
    if let Some(t) = &c.target {
        v["target"] = serde_json::to_value(t).unwrap_or(Value::Null);
    }
    v
}

/// Where a call acted, from its result: a tap's point, a swipe's start.
fn point_of(result: &Value) -> Option<(i64, i64)> {
    ["tapped", "point", "from", "at"].iter().find_map(|k| {
        let p = result.get(k)?;
        Some((p.get("x")?.as_i64()?, p.get("y")?.as_i64()?))
    })
}

/// The tree's nodes flat (depth first, each naming its parent's index).
fn nodes_of(snap: &Snapshot, redact: &Redaction) -> Value {
    let s = |t: &Option<String>| t.as_deref().map(|t| redact.text(t).into_owned());
    let nodes: Vec<Value> = snap
        .nodes
        .iter()
        .map(|n| {
            let mut v = json!({
                "ref": n.r#ref, "parent": n.parent, "class": n.class_name,
                "bounds": super::bounds_of(&n.bounds),
            });
            for (key, value) in [
                ("text", s(&n.text)),
                ("hint", s(&n.hint_text)),
                ("desc", s(&n.content_description)),
                ("id", n.resource_id.clone()),
            ] {
                if let Some(value) = value {
                    v[key] = Value::String(value);
                }
            }
            v
        })
        .collect();
    Value::Array(nodes)
}

/// What tells two trees apart: the text the LLM reads, and every node's ref and bounds (a layout
/// change the text does not show).
fn tree_key(text: &str, snap: &Snapshot) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(text.as_bytes());
    for n in &snap.nodes {
        feed(&[0xff]);
        feed(n.r#ref.as_bytes());
        for v in super::bounds_of(&n.bounds) {
            feed(&v.to_le_bytes());
        }
    }
    h
}

/// A picture's file name: its content's SHA-256 and its kind.
pub(crate) fn image_name(shot: &Screenshot) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(&shot.bytes);
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let ext = match shot.mime {
        "image/svg+xml" => "svg",
        "image/jpeg" => "jpg",
        _ => "png",
    };
    format!("{hex}.{ext}")
}
