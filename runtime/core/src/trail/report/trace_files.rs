//! Writes a finished trace beside its trail's log: `trace.json`, `trace.js` (the same, for a report
//! read from `file://`), `network.har`, `trace/` pictures, a video. Every text is scrubbed of the
//! session's secret values first.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use crate::device::trace::Video;
use crate::secret::Redaction;
use crate::trace::TraceData;
use crate::trail::{StepReport, TrailReport};

/// What a trace knows of its trail besides what it recorded.
pub struct TrailInfo<'a> {
    pub report: &'a TrailReport,
    /// The session's folder name (`sign-in`).
    pub session: &'a str,
    pub device: String,
    pub platform: &'a str,
    /// When the trail's first step started (Unix ms): the report's step times count from it.
    pub started_unix_ms: f64,
    /// For each step of the report, the seqs of its calls (first, last), when it made any.
    pub step_calls: &'a [Option<(u64, u64)>],
}

/// The trace's files, written in `dir` (the session's folder). Returns the bytes written.
pub fn write(dir: &Path, info: &TrailInfo<'_>, data: TraceData, redact: &Redaction) -> io::Result<u64> {
    let mut written = 0u64;
    let pictures = dir.join("trace");
    std::fs::create_dir_all(&pictures)?;
    for (name, shot) in &data.images {
        written += write_new(&pictures.join(name), &shot.bytes)?;
    }
    let mut notes = data.notes.clone();
    notes.extend(data.device.notes.iter().cloned());
    let keep_video = data.settings.video.keeps(info.report.outcome.passed());
    let video = match data.device.video {
        Some(_) if !keep_video => Value::Null,
        // Pixels cannot be scrubbed: a video that may show a typed secret is not kept.
        Some(_) if data.secret_on_screen => {
            notes.push("a secret was typed into a field this device shows as it is: the video is not kept".into());
            Value::Null
        }
        Some(Video::File {
            mime,
            bytes,
            started_unix_ms,
        }) => {
            let ext = if mime.contains("webm") { "webm" } else { "mp4" };
            let name = format!("video.{ext}");
            written += write_new(&dir.join(&name), &bytes)?;
            json!({ "file": name, "mime": mime, "started_unix_ms": started_unix_ms })
        }
        Some(Video::Frames(frames)) if let Some(ffmpeg) = crate::trace::video::ffmpeg() => {
            match crate::trace::video::webm(&ffmpeg, &frames, &dir.join("video.webm")) {
                Ok(()) => {
                    written += std::fs::metadata(dir.join("video.webm")).map_or(0, |m| m.len());
                    let started = frames.first().map_or(0.0, |f| f.unix_ms);
                    json!({ "file": "video.webm", "mime": "video/webm", "started_unix_ms": started })
                }
                Err(e) => {
                    notes.push(format!(
                        "the screencast could not be made a video ({e}): its frames are kept"
                    ));
                    frames_json(&frames, &pictures, &mut written)?
                }
            }
        }
        Some(Video::Frames(frames)) => {
            notes.push("ffmpeg is not on PATH: the screencast is kept as its frames (trace/*.jpg), which the viewer shows in turn".into());
            frames_json(&frames, &pictures, &mut written)?
        }
        // The simulated device gives no video: its frames are its screens as they changed.
        None if keep_video => {
            let frames: Vec<Value> = data
                .frames
                .iter()
                .filter(|f| f["screen"].is_string())
                .map(|f| json!({ "unix_ms": f["unix_ms"], "file": f["screen"] }))
                .collect();
            if frames.is_empty() {
                Value::Null
            } else {
                json!({ "frames": frames })
            }
        }
        None => Value::Null,
    };
    let har = (!data.device.network.is_empty()).then(|| har_of(&data.device.network));
    let mut console: Vec<Value> = data
        .console
        .iter()
        .chain(&data.device.console)
        .filter_map(|l| serde_json::to_value(l).ok())
        .collect();
    console.sort_by(|a, b| {
        a["unix_ms"]
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&b["unix_ms"].as_f64().unwrap_or(0.0))
    });
    let r = info.report;
    let trees: serde_json::Map<String, Value> = data
        .trees
        .into_iter()
        .enumerate()
        .map(|(i, t)| (format!("t{i}"), t))
        .collect();
    let mut trace = json!({
        "version": 1,
        "trail": { "file": r.file, "id": r.id, "title": r.title },
        "session": info.session,
        "device": info.device,
        "platform": info.platform,
        "started_unix_ms": data.started_unix_ms,
        "duration_ms": r.duration_ms,
        "outcome": r.outcome,
        "steps": steps(info),
        "calls": data.calls,
        "frames": data.frames,
        "trees": trees,
        "console": console,
        "network": data.device.network,
        "device_log": data.device.device_log,
        "agent": agent_turns(&r.steps, &pictures, &mut written)?,
        "video": video,
        "notes": notes,
        "frames_ms": (data.frames_ms * 100.0).round() / 100.0,
    });
    if let Some(har) = &har {
        trace["har"] = Value::String("network.har".into());
        let mut har = har.clone();
        redact.value(&mut har);
        written += write_new(&dir.join("network.har"), &serde_json::to_vec_pretty(&har)?)?;
    }
    redact.value(&mut trace);
    let text = serde_json::to_string(&trace)?;
    written += write_new(&dir.join("trace.json"), text.as_bytes())?;
    let js = format!(
        "trailblazeTrace({}, {text});\n",
        serde_json::to_string(info.session).unwrap_or_default()
    );
    written += write_new(&dir.join("trace.js"), js.as_bytes())?;
    Ok(written)
}

/// A video's frames written as pictures under `trace/`, listed with their times.
fn frames_json(frames: &[crate::device::trace::VideoFrame], pictures: &Path, written: &mut u64) -> io::Result<Value> {
    let mut listed = Vec::with_capacity(frames.len());
    for f in frames {
        let shot = crate::device::Screenshot {
            mime: if f.mime == "image/jpeg" {
                "image/jpeg"
            } else {
                "image/png"
            },
            bytes: f.bytes.clone(),
        };
        let name = crate::trace::image_name(&shot);
        *written += write_new(&pictures.join(&name), &shot.bytes)?;
        listed.push(json!({ "unix_ms": f.unix_ms, "file": format!("trace/{name}") }));
    }
    Ok(json!({ "frames": listed }))
}

/// Writes `bytes` at `path` whole (a file of the same name is the same picture: left as it is).
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<u64> {
    std::fs::write(path, bytes)?;
    Ok(bytes.len() as u64)
}

fn steps(info: &TrailInfo<'_>) -> Vec<Value> {
    info.report
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let calls: Vec<u64> = match info.step_calls.get(i).copied().flatten() {
                Some((first, last)) if first <= last => (first..=last).collect(),
                _ => Vec::new(),
            };
            json!({
                "number": s.number, "kind": s.kind, "text": s.text, "line": s.line,
                "outcome": s.outcome, "error": s.error,
                "started_unix_ms": info.started_unix_ms + s.started_ms,
                "duration_ms": s.duration_ms,
                "calls": calls,
            })
        })
        .collect()
}

/// The agent's turns of each step it ran; the pictures it sent go to `pictures` (`trace/`).
fn agent_turns(steps: &[StepReport], pictures: &Path, written: &mut u64) -> io::Result<Vec<Value>> {
    let mut out = Vec::new();
    for s in steps {
        let Some(a) = s.agent.as_ref() else { continue };
        let mut turns = Vec::with_capacity(a.turns.len());
        for t in &a.turns {
            let mut turn = json!({
                "answer": { "text": t.reasoning, "calls": t.calls },
                "input_tokens": t.input_tokens, "output_tokens": t.output_tokens,
            });
            if let Some(tr) = &t.trace {
                turn["unix_ms"] = json!(tr.unix_ms);
                turn["duration_ms"] = json!(tr.duration_ms);
                turn["request"] = json!({ "text": tr.request });
                turn["answer"]["tool_calls"] = Value::Array(tr.tool_calls.clone());
                if let Some((mime, bytes)) = &tr.image {
                    let shot = crate::device::Screenshot {
                        mime: if mime == "image/jpeg" {
                            "image/jpeg"
                        } else {
                            "image/png"
                        },
                        bytes: bytes.clone(),
                    };
                    let name = crate::trace::image_name(&shot);
                    *written += write_new(&pictures.join(&name), &shot.bytes)?;
                    turn["request"]["image"] = Value::String(format!("trace/{name}"));
                }
            }
            turns.push(turn);
        }
        out.push(json!({
            "step": s.number, "provider": a.provider, "model": a.model, "reason": a.reason,
            "conclusion": a.conclusion, "turns": turns,
            "input_tokens": a.input_tokens, "output_tokens": a.output_tokens,
            "llm": s.llm,
        }));
    }
    Ok(out)
}

/// The requests as a HAR 1.2 file.
fn har_of(entries: &[Value]) -> Value {
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "trailblaze", "version": env!("CARGO_PKG_VERSION") },
            "pages": [],
            "entries": entries,
        }
    })
}
