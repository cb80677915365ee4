//! A run's report rebuilt from its folder (`trailblaze report`): `report.html` again from
//! `report.json`, each trail's `trace.js` from its `trace.json` when missing or older, and for a
//! session folder (an MCP or `shell` session: its `log.jsonl` and `trace.json`, no `report.json`)
//! a report of that one session made from its trace. docs/trace.md describes the files.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{RunReport, TrailReport};

/// What [`rebuild`] could not do, said so a person can act on it.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error("{0}: no such folder")]
    Missing(PathBuf),
    #[error("{0} is neither a run folder (no report.json) nor a session folder with a trace (no trace.json){1}")]
    Neither(PathBuf, &'static str),
    #[error("{path}:{line}:{col}: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// What [`rebuild`] wrote.
#[derive(Debug)]
pub struct Rebuilt {
    pub html: PathBuf,
    /// The `trace.js` files written (the others were current).
    pub trace_js: Vec<PathBuf>,
    /// The trails whose trace is named but missing or unreadable, with why.
    pub skipped: Vec<String>,
    /// A session folder's report (made from its trace), not a run's.
    pub session: bool,
    pub report: RunReport,
}

/// The most a `trace.json` may be: a long trail's trees are megabytes, not gigabytes.
const MAX_TRACE_BYTES: u64 = 512 << 20;
/// The most a `report.json` may be.
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// (Re)builds `dir`'s `report.html`: a run folder's from its `report.json`, a session folder's from
/// its `trace.json`; and the `trace.js` of each trace it names, when missing or older than its JSON.
pub fn rebuild(dir: &Path) -> Result<Rebuilt, RebuildError> {
    if !dir.is_dir() {
        return Err(RebuildError::Missing(dir.to_path_buf()));
    }
    let (report, session) = if dir.join("report.json").is_file() {
        (read_report(&dir.join("report.json"))?, false)
    } else if dir.join("trace.json").is_file() {
        (session_report(dir)?, true)
    } else {
        let hint = if dir.join("log.jsonl").is_file() {
            ": it has a session log but no trace was kept (`--trace on` keeps one)"
        } else {
            ""
        };
        return Err(RebuildError::Neither(dir.to_path_buf(), hint));
    };
    let mut trace_js = Vec::new();
    let mut skipped = Vec::new();
    for t in &report.trails {
        let Some(trace) = &t.trace else { continue };
        let Some(path) = inside(dir, trace) else {
            skipped.push(format!("{}: the trace path {trace:?} leaves the run folder", t.file));
            continue;
        };
        match write_trace_js_if_stale(&path) {
            Ok(Some(js)) => trace_js.push(js),
            Ok(None) => {}
            Err(e) => skipped.push(format!("{}: {e}", t.file)),
        }
    }
    let html = super::write_report_html(&report, dir).map_err(|e| RebuildError::Io(dir.join("report.html"), e))?;
    Ok(Rebuilt {
        html,
        trace_js,
        skipped,
        session,
        report,
    })
}

/// `rel` under `dir`, when it stays there: relative, no `..`, no root nor drive.
pub fn inside(dir: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    let plain = p.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    (plain && !rel.is_empty()).then(|| dir.join(p))
}

/// A `report.json`, its errors placed at file:line:col.
pub fn read_report(path: &Path) -> Result<RunReport, RebuildError> {
    let text = read(path, MAX_REPORT_BYTES)?;
    serde_json::from_slice(&text).map_err(|e| RebuildError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        col: e.column(),
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
    })
}

/// A trace read as JSON, its errors placed at file:line:col.
pub fn read_trace(path: &Path) -> Result<Value, RebuildError> {
    let text = read(path, MAX_TRACE_BYTES)?;
    let v: Value = serde_json::from_slice(&text).map_err(|e| RebuildError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        col: e.column(),
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
    })?;
    if !v.is_object() {
        return Err(RebuildError::Bad {
            path: path.to_path_buf(),
            message: "a trace is a JSON object (docs/trace.md)".into(),
        });
    }
    Ok(v)
}

fn read(path: &Path, max: u64) -> Result<Vec<u8>, RebuildError> {
    let io = |e| RebuildError::Io(path.to_path_buf(), e);
    let (file, meta) = crate::files::open_bounded(path, max).map_err(io)?;
    crate::files::read_bounded(file, &meta, max).map_err(io)
}

/// Writes `trace.js` beside `trace_json` when it is missing or older; its path when written.
pub fn write_trace_js_if_stale(trace_json: &Path) -> Result<Option<PathBuf>, RebuildError> {
    let js = trace_json.with_file_name("trace.js");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let source = modified(trace_json).ok_or_else(|| {
        RebuildError::Io(
            trace_json.to_path_buf(),
            std::io::Error::new(std::io::ErrorKind::NotFound, "the trace is missing"),
        )
    })?;
    if modified(&js).is_some_and(|m| m >= source) {
        return Ok(None);
    }
    write_trace_js(trace_json).map(Some)
}

/// Writes `trace.js` beside `trace_json`: `trailblazeTrace("<session>", {...});` for a page on
/// file://, which can load a script but not fetch a file. The JSON is parsed and written again, so
/// whatever the file holds, the script is one call with one value (never code of the file's).
pub fn write_trace_js(trace_json: &Path) -> Result<PathBuf, RebuildError> {
    let trace = read_trace(trace_json)?;
    let session = trace_json
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let js = trace_json.with_file_name("trace.js");
    let body = serde_json::to_string(&trace).map_err(|e| RebuildError::Bad {
        path: trace_json.to_path_buf(),
        message: e.to_string(),
    })?;
    let text = format!(
        "trailblazeTrace({}, {body});\n",
        serde_json::to_string(&session).unwrap_or_else(|_| "\"\"".into())
    );
    crate::files::write_atomically(&js, text.as_bytes()).map_err(|e| RebuildError::Io(js.clone(), e))?;
    Ok(js)
}

/// A session folder's report: one trail, made from its `trace.json` (steps, their calls nested,
/// the screen after each), whose trace is that file.
pub fn session_report(dir: &Path) -> Result<RunReport, RebuildError> {
    let path = dir.join("trace.json");
    let t = read_trace(&path)?;
    let bad = |message: String| RebuildError::Bad {
        path: path.clone(),
        message,
    };
    let start = t["started_unix_ms"].as_f64().unwrap_or(0.0);
    let steps: Vec<Value> = t["steps"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|s| step_json(&t, s, start))
        .collect();
    let trail = &t["trail"];
    let outcome = t.get("outcome").cloned().unwrap_or(json!({ "status": "failed" }));
    let log = dir.join("log.jsonl").is_file().then_some("log.jsonl");
    let trail = json!({
        "file": trail["file"].as_str().or(t["session"].as_str()).unwrap_or("session"),
        "id": trail["id"], "title": trail["title"], "outcome": outcome,
        "duration_ms": t["duration_ms"].as_f64().unwrap_or(0.0),
        "steps": steps, "error": null, "log": log, "device": t["device"], "trace": "trace.json",
    });
    let trail: TrailReport =
        serde_json::from_value(trail).map_err(|e| bad(format!("not a trace docs/trace.md describes: {e}")))?;
    Ok(RunReport {
        started_unix_ms: start.max(0.0) as u64,
        duration_ms: trail.duration_ms,
        device: t["device"].as_str().unwrap_or_default().to_string(),
        shard: None,
        suite: None,
        trails: vec![trail],
        llm: None,
    })
}

/// One step of a trace as a report's step: its calls nested by `parent`, its screen the last one
/// captured after a call.
fn step_json(t: &Value, s: &Value, start: f64) -> Value {
    let seqs: Vec<i64> = s["calls"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    let calls: Vec<&Value> = t["calls"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| c["seq"].as_i64().is_some_and(|q| seqs.contains(&q)))
                .collect()
        })
        .unwrap_or_default();
    let frame = calls
        .iter()
        .rev()
        .find_map(|c| c["after"].as_u64())
        .and_then(|i| t["frames"].get(i as usize));
    let outcome = s.get("outcome").filter(|o| o.is_object()).cloned();
    json!({
        "number": s["number"].as_u64().unwrap_or(0), "kind": s["kind"].as_str().unwrap_or("step"),
        "text": s["text"].as_str().unwrap_or_default(), "line": s["line"].as_u64().unwrap_or(0),
        "outcome": outcome.unwrap_or(json!({ "status": "failed" })),
        "started_ms": (s["started_unix_ms"].as_f64().unwrap_or(start) - start).max(0.0),
        "duration_ms": s["duration_ms"].as_f64().unwrap_or(0.0),
        "calls": nested(&calls), "error": s["error"],
        "screen": frame.and_then(|f| f["screen"].as_str()),
        "screen_size": frame.map(|f| &f["size"]).filter(|z| z.is_object()),
    })
}

/// The step's calls nested by `parent` (one whose parent is not among them is top-level). Built
/// from the last: a call's children (made after it) are done before it, and no recursion grows
/// with a deep composition.
fn nested(calls: &[&Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut built: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    for c in calls.iter().rev() {
        let seq = c["seq"].as_i64().unwrap_or(-1);
        let mut children = built.remove(&seq).unwrap_or_default();
        children.reverse();
        let v = json!({
            "tool": c["tool"].as_str().unwrap_or_default(), "args": c["args"],
            "ok": c["ok"].as_bool().unwrap_or(false), "error": c["error"],
            "duration_ms": c["duration_ms"].as_f64().unwrap_or(0.0),
            "tap": c["point"].as_object().map(|_| &c["point"]), "calls": children,
        });
        match c["parent"].as_i64() {
            Some(p) if calls.iter().any(|x| x["seq"].as_i64() == Some(p)) => built.entry(p).or_default().push(v),
            _ => out.push(v),
        }
    }
    out.reverse();
    out
}

/// One step's picture for an export: its number, its text and its screen after it (relative to
/// the trace's folder).
#[derive(Debug, Clone, PartialEq)]
pub struct StepScreen {
    pub number: u64,
    pub text: String,
    pub screen: String,
}

/// Each step's screen after it, in order (a step with none is left out). The paths are checked to
/// stay in the trace's folder.
pub fn step_screens(t: &Value) -> Vec<StepScreen> {
    let empty = Vec::new();
    let calls = t["calls"].as_array().unwrap_or(&empty);
    let mut out = Vec::new();
    for s in t["steps"].as_array().unwrap_or(&empty) {
        let seqs: Vec<i64> = s["calls"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let after = calls
            .iter()
            .filter(|c| c["seq"].as_i64().is_some_and(|q| seqs.contains(&q)))
            .filter_map(|c| c["after"].as_u64())
            .next_back();
        let screen = after
            .and_then(|i| t["frames"].get(i as usize))
            .and_then(|f| f["screen"].as_str())
            .filter(|p| inside(Path::new(""), p).is_some());
        if let Some(screen) = screen {
            out.push(StepScreen {
                number: s["number"].as_u64().unwrap_or(0),
                text: s["text"].as_str().unwrap_or_default().to_string(),
                screen: screen.to_string(),
            });
        }
    }
    out
}
