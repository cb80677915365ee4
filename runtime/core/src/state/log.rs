//! The session log: `<out>/<session>/log.jsonl`, one JSON object per event, appended and flushed per
//! event, so a killed run leaves every finished step readable.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trailblaze_host_functions::clock::Ticks;

/// One entry of the log. `seq` numbers steps within the session.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    StepStarted {
        seq: u64,
        depth: u32,
        tool: &'a str,
        args: &'a Value,
        /// An argument was shown as `***` (a secret by its meaning given literally): the step
        /// cannot be recorded as it ran.
        masked: bool,
    },
    StepFinished {
        seq: u64,
        tool: &'a str,
        ok: bool,
        result: Option<&'a Value>,
        error: Option<&'a str>,
        millis: f64,
    },
    /// A host call is tallied, never logged with arguments or results: each step's start and finish
    /// first write a `host_calls` summary of the calls since the last one (name, count, failures, time).
    HostCall { name: &'a str, ok: bool, took: Ticks },
    /// One `ctx.fetch` exchange: method, origin, status (`None`: refused or failed before a
    /// response), time. Never a header, a body or the URL's path.
    Fetch {
        method: &'a str,
        origin: &'a str,
        status: Option<u16>,
        error: Option<&'a str>,
        millis: f64,
    },
    /// A line a script printed with `console.*` (already scrubbed and bounded).
    Console {
        tool: &'a str,
        level: &'a str,
        text: &'a str,
    },
}

/// A step as the session remembers it (what the CLI prints and reports show).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LogEntry {
    pub seq: u64,
    pub depth: u32,
    pub tool: String,
    /// The arguments as called: placeholders, never resolved secrets.
    pub args: Value,
    /// `None` while the step runs.
    pub ok: Option<bool>,
    /// Its arguments read `***` somewhere (a secret in a form its placeholder cannot stand for):
    /// what it typed is not in `args`, so it must not be recorded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub masked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub millis: f64,
}

pub struct SessionLog {
    path: PathBuf,
    records: Vec<LogEntry>,
    /// Whether an append already failed (and was reported).
    write_failed: bool,
    out: Option<BufWriter<File>>,
    /// Values that must never be written (resolved secrets); every string is scrubbed of them.
    redact: crate::secret::Redaction,
    steps: u64,
    /// Host calls since the last summary, by name: calls, failures, milliseconds.
    host_calls: std::collections::BTreeMap<String, (u64, u64, Ticks)>,
    /// Steps under way whose record takes its arguments at the step's end ([`Self::give_args`]).
    awaiting: Vec<u64>,
}

impl SessionLog {
    /// Opens `<dir>/log.jsonl` afresh (creating `dir`): a session's log is its own, so a session
    /// under an id an earlier one had (a fixed `--report-dir`) replaces that log, as the run's
    /// reports are replaced, instead of interleaving two runs' steps.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("log.jsonl");
        let file = OpenOptions::new().create(true).write(true).truncate(true).open(&path)?;
        Ok(SessionLog {
            path,
            out: Some(BufWriter::new(file)),
            records: Vec::new(),
            write_failed: false,
            redact: Default::default(),
            steps: 0,
            host_calls: Default::default(),
            awaiting: Vec::new(),
        })
    }

    /// A log that writes nothing (embedding without an output folder).
    pub fn discard() -> Self {
        SessionLog {
            path: PathBuf::new(),
            out: None,
            records: Vec::new(),
            write_failed: false,
            redact: Default::default(),
            steps: 0,
            host_calls: Default::default(),
            awaiting: Vec::new(),
        }
    }

    /// Values to scrub from everything written from now on.
    pub fn set_redactions(&mut self, redaction: crate::secret::Redaction) {
        self.redact = redaction;
    }

    pub fn next_seq(&mut self) -> u64 {
        self.steps += 1;
        self.steps
    }

    /// The most recent steps (at most [`MAX_RECORDS`]; `log.jsonl` holds them all).
    pub fn records(&self) -> &[LogEntry] {
        &self.records
    }

    pub fn append(&mut self, event: Event<'_>) {
        if let Event::HostCall { name, ok, took } = event {
            // The hot path of `ctx.host`: a tally, no allocation after a name's first call.
            let tally = match self.host_calls.get_mut(name) {
                Some(t) => t,
                None => self.host_calls.entry(name.to_string()).or_default(),
            };
            tally.0 += 1;
            tally.1 += u64::from(!ok);
            tally.2 += took;
            return;
        }
        self.flush_host_calls();
        self.write(event);
    }

    /// Writes the `host_calls` summary of the calls tallied since the last one, if any.
    pub fn flush_host_calls(&mut self) {
        if self.host_calls.is_empty() {
            return;
        }
        let rate = trailblaze_host_functions::clock::rate();
        let calls: Vec<Value> = std::mem::take(&mut self.host_calls)
            .into_iter()
            .map(|(name, (calls, failed, took))| {
                let ms = rate.duration(took).as_secs_f64() * 1000.0;
                json!({ "name": name, "calls": calls, "failed": failed, "ms": round(ms) })
            })
            .collect();
        self.write_line(json!({ "event": "host_calls", "calls": calls }));
    }

    /// Writes one event as a line (a host call is tallied by `append`, never written here).
    fn write(&mut self, event: Event<'_>) {
        let line = match event {
            Event::StepStarted {
                seq,
                depth,
                tool,
                args,
                masked,
            } => return self.write_started(seq, depth, tool, args, masked),
            Event::StepFinished {
                seq,
                tool,
                ok,
                result: Some(result),
                error,
                millis,
            } => return self.write_finished(seq, tool, ok, result, error, millis),
            Event::StepFinished {
                seq,
                tool,
                ok,
                result: None,
                error,
                millis,
            } => json!({
                "event": "step_finished", "seq": seq, "tool": tool, "ok": ok,
                "result": Value::Null, "error": error, "ms": round(millis),
            }),
            Event::Console { tool, level, text } => {
                json!({ "event": "console", "tool": tool, "level": level, "text": text })
            }
            Event::Fetch {
                method,
                origin,
                status,
                error,
                millis,
            } => json!({
                "event": "fetch", "method": method, "origin": origin, "status": status,
                "error": error, "ms": round(millis),
            }),
            Event::HostCall { .. } => return,
        };
        self.write_line(line);
    }

    /// A step's start: serialized straight from the caller's arguments when no secret is in them.
    fn write_started(&mut self, seq: u64, depth: u32, tool: &str, args: &Value, masked: bool) {
        let fast = StartedLine {
            event: "step_started",
            seq,
            depth,
            tool,
            args,
        };
        if let Some(bytes) = self.clean_line(&fast) {
            // The arguments are the caller's until the step ends (`give_args`): a copy
            // here was a step's largest allocation.
            self.record_started(seq, depth, tool, Value::Null, masked);
            self.awaiting.push(seq);
            return self.write_bytes(bytes);
        }
        let line = json!({ "event": "step_started", "seq": seq, "depth": depth, "tool": tool, "args": args });
        self.write_step_started(line, masked);
    }

    /// A step's end with its result.
    fn write_finished(&mut self, seq: u64, tool: &str, ok: bool, result: &Value, error: Option<&str>, millis: f64) {
        // A result can be large (a snapshot's tree, on every `snapshot` call): serialized
        // once, straight from the caller's value, not copied into the line and walked again.
        let ms = round(millis);
        let fast = FinishedHead {
            event: "step_finished",
            seq,
            tool,
            ok,
            error,
            ms,
        };
        if let Some(head) = self.clean_line(&fast) {
            let raw = self.result_bytes(result);
            self.record_finished(seq, ok, error, ms);
            return self.write_bytes(joined(head, "result", &raw));
        }
        let head = json!({
            "event": "step_finished", "seq": seq, "tool": tool, "ok": ok,
            "error": error, "ms": round(millis),
        });
        let raw = self.result_bytes(result);
        self.write_line_raw(head, Some(("result", raw)));
    }

    fn write_line(&mut self, line: Value) {
        self.write_line_raw(line, None);
    }

    /// A step's start; whether the scrub changed its arguments is remembered with the step.
    fn write_step_started(&mut self, mut line: Value, masked: bool) {
        let scrubbed = line.get_mut("args").is_some_and(|args| self.redact.scrub(args));
        let masked = masked || scrubbed;
        self.write_line_raw(line, None);
        if masked && let Some(r) = self.records.last_mut() {
            r.masked = true;
        }
    }

    /// `result` as the log writes it: serialized once, capped, scrubbed. The dispatcher hands over
    /// results already redacted, so the scrub normally finds nothing and the bytes stand; when it
    /// does find a secret, the value is scrubbed field by field (a secret's JSON escaping differs).
    fn result_bytes(&self, result: &Value) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(result).unwrap_or_else(|_| b"null".to_vec());
        if bytes.len() > MAX_LOGGED_BYTES {
            let note =
                json!({ "notLogged": format!("{} bytes, more than the log keeps ({MAX_LOGGED_BYTES})", bytes.len()) });
            return serde_json::to_vec(&note).unwrap_or_default();
        }
        if !self.redact.is_empty() {
            // serde_json writes UTF-8: read in place, no copy on every step (and should it not be,
            // the value is scrubbed field by field all the same).
            let found = std::str::from_utf8(&bytes).map_or(true, |text| self.redact.finds(text));
            if found {
                let mut v = result.clone();
                self.redact.value(&mut v);
                bytes = serde_json::to_vec(&v).unwrap_or_default();
            }
        }
        bytes
    }

    /// Writes `line`, with `extra` (a key and its value, already serialized) appended to it.
    fn write_line_raw(&mut self, mut line: Value, extra: Option<(&str, Vec<u8>)>) {
        self.redact.value(&mut line);
        // Serialized once: no field of a line within the cap can be past it, so the fields are
        // measured (and the line serialized again) only for a line that is.
        let mut buf = serde_json::to_vec(&line).unwrap_or_default();
        if buf.len() > MAX_LOGGED_BYTES {
            cap(&mut line);
            buf = serde_json::to_vec(&line).unwrap_or_default();
        }
        self.remember(&line);
        if let Some((key, raw)) = extra {
            buf = joined(buf, key, &raw);
        }
        self.write_bytes(buf);
    }

    /// `line` serialized, when it can be written as it is: within the cap and holding no secret
    /// (a step's line nearly always). `None`: it is built as a `Value`, scrubbed and capped.
    fn clean_line(&self, line: &impl serde::Serialize) -> Option<Vec<u8>> {
        let bytes = serde_json::to_vec(line).ok()?;
        let clean = bytes.len() <= MAX_LOGGED_BYTES
            && (self.redact.is_empty() || std::str::from_utf8(&bytes).is_ok_and(|t| !self.redact.finds(t)));
        clean.then_some(bytes)
    }

    /// Appends one serialized line and flushes it.
    fn write_bytes(&mut self, mut buf: Vec<u8>) {
        if let Some(out) = self.out.as_mut() {
            buf.push(b'\n');
            // A log line that cannot be written must not fail the step; the run's report says so.
            let ok = out.write_all(&buf).is_ok() && out.flush().is_ok();
            // Said once per session, not once per event (a full disk would repeat it for every step).
            if !ok && !self.write_failed {
                self.write_failed = true;
                tracing::warn!(path = %self.path.display(), "cannot append to the session log (said once per session; later failures are silent)");
            }
        }
    }
}

/// Step records kept in memory per session.
pub const MAX_RECORDS: usize = 10_000;

/// The most a step's arguments, result or error may take in the log (and in the session's memory):
/// beyond it the value is replaced by a note of its size. A real step is a few kilobytes.
pub const MAX_LOGGED_BYTES: usize = 256 << 10;

/// Replaces each of `args`, `result` and `error` that serializes past [`MAX_LOGGED_BYTES`] by a note.
fn cap(line: &mut Value) {
    for field in ["args", "result", "error"] {
        let Some(v) = line.get_mut(field) else { continue };
        if v.is_null() {
            continue;
        }
        let size = serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0);
        if size > MAX_LOGGED_BYTES {
            *v = json!({ "notLogged": format!("{size} bytes, more than the log keeps ({MAX_LOGGED_BYTES})") });
        }
    }
}

impl Drop for SessionLog {
    fn drop(&mut self) {
        self.flush_host_calls();
    }
}

impl SessionLog {
    /// Keeps the step a line written through a `Value` tells of (as scrubbed).
    fn remember(&mut self, line: &Value) {
        let seq = line["seq"].as_u64().unwrap_or(0);
        match line["event"].as_str() {
            Some("step_started") => {
                let depth = line["depth"].as_u64().unwrap_or(0) as u32;
                let tool = line["tool"].as_str().unwrap_or_default();
                self.record_started(seq, depth, tool, line["args"].clone(), false);
            }
            Some("step_finished") => {
                let ok = line["ok"].as_bool().unwrap_or(false);
                let ms = line["ms"].as_f64().unwrap_or(0.0);
                self.record_finished(seq, ok, line["error"].as_str(), ms);
            }
            _ => {}
        }
    }

    fn record_started(&mut self, seq: u64, depth: u32, tool: &str, args: Value, masked: bool) {
        if self.records.len() >= MAX_RECORDS {
            // The file keeps every step; memory keeps the recent ones (a long session would
            // otherwise grow by a step record per call for as long as it lives).
            self.records.drain(..MAX_RECORDS / 2);
            let first = self.records.first().map_or(u64::MAX, |r| r.seq);
            self.awaiting.retain(|&s| s >= first);
        }
        self.records.push(LogEntry {
            seq,
            depth,
            tool: tool.to_string(),
            args,
            ok: None,
            masked,
            error: None,
            millis: 0.0,
        })
    }

    /// Step `seq`'s arguments, as its start logged them, for its record: given at the step's end
    /// by the caller, who worked from them meanwhile. Only a record that waits for them takes them
    /// (a start whose line held a secret recorded its scrubbed arguments there and then).
    pub fn give_args(&mut self, seq: u64, args: Value) {
        let Some(at) = self.awaiting.iter().rposition(|&s| s == seq) else {
            return;
        };
        self.awaiting.remove(at);
        if let Some(r) = self.records.iter_mut().rev().find(|r| r.seq == seq) {
            r.args = args;
        }
    }

    fn record_finished(&mut self, seq: u64, ok: bool, error: Option<&str>, millis: f64) {
        if let Some(r) = self.records.iter_mut().rev().find(|r| r.seq == seq) {
            r.ok = Some(ok);
            r.error = error.map(str::to_string);
            r.millis = millis;
        }
    }
}

/// A step's line, in the order its `Value` form has its keys.
#[derive(serde::Serialize)]
struct StartedLine<'a> {
    event: &'static str,
    seq: u64,
    depth: u32,
    tool: &'a str,
    args: &'a Value,
}

/// A finished step's line but its result (appended to it already serialized).
#[derive(serde::Serialize)]
struct FinishedHead<'a> {
    event: &'static str,
    seq: u64,
    tool: &'a str,
    ok: bool,
    error: Option<&'a str>,
    ms: f64,
}

/// Serialized object `line` with `key: raw` (already serialized) added last.
fn joined(mut line: Vec<u8>, key: &str, raw: &[u8]) -> Vec<u8> {
    if line.last() == Some(&b'}') {
        line.pop();
        if line.len() > 1 {
            line.push(b',');
        }
        line.extend_from_slice(&serde_json::to_vec(key).unwrap_or_default());
        line.push(b':');
        line.extend_from_slice(raw);
        line.push(b'}');
    }
    line
}

fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(dir: &Path) -> Vec<Value> {
        std::fs::read_to_string(dir.join("log.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Starts a step (its arguments not masked) and returns its seq.
    fn start(log: &mut SessionLog, depth: u32, tool: &str, args: &Value) -> u64 {
        let seq = log.next_seq();
        log.append(Event::StepStarted {
            seq,
            depth,
            tool,
            args,
            masked: false,
        });
        seq
    }

    /// `values` as the secrets the log scrubs.
    fn redacting(log: &mut SessionLog, values: &[&str]) {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        log.set_redactions(crate::secret::Redaction::new(&values));
    }

    fn finish(log: &mut SessionLog, result: &Value) {
        let seq = start(log, 0, "t", &json!({}));
        log.append(Event::StepFinished {
            seq,
            tool: "t",
            ok: true,
            result: Some(result),
            error: None,
            millis: 1.0,
        });
    }

    /// A step's lines written straight from its fields (nothing to scrub) are the lines the
    /// `Value` path writes, and the steps remembered are the same; a secret anywhere in a line
    /// still sends it through the scrub.
    #[test]
    fn a_clean_line_is_written_as_the_value_path_would_write_it() {
        let args = json!({"text": "héllo \"q\"", "n": [1, 2.5, null], "o": {"k": true}});
        let step = |log: &mut SessionLog, error: Option<&str>, result: Option<&Value>| {
            let seq = start(log, 2, "tapOn", &args);
            log.give_args(seq, args.clone());
            log.append(Event::StepFinished {
                seq,
                tool: "tapOn",
                ok: error.is_none(),
                result,
                error,
                millis: 1.23456,
            });
        };
        let write_all = |redact: &[&str]| {
            let dir = tempfile::tempdir().unwrap();
            let mut log = SessionLog::create(dir.path()).unwrap();
            redacting(&mut log, redact);
            step(&mut log, None, Some(&json!({"found": 1})));
            step(&mut log, Some("no such node"), None);
            let records = serde_json::to_value(log.records()).unwrap();
            drop(log);
            (std::fs::read_to_string(dir.path().join("log.jsonl")).unwrap(), records)
        };
        // `tapOn` as a "secret" sends every line through the `Value` path (and is scrubbed there).
        let (fast, fast_records) = write_all(&[]);
        let (slow, slow_records) = write_all(&["tapOn"]);
        assert_eq!(fast.replace("tapOn", "***"), slow);
        assert_eq!(
            serde_json::to_string(&fast_records).unwrap().replace("tapOn", "***"),
            serde_json::to_string(&slow_records).unwrap()
        );
        assert!(fast.contains(r#"{"event":"step_started","seq":1,"depth":2,"tool":"tapOn","args":"#));
        assert!(fast.contains(r#""ok":false,"result":null,"error":"no such node","ms":1.235}"#));
        // A secret in an argument or an error is scrubbed on the fast path's fallback.
        let (scrubbed, _) = write_all(&["héllo", "such"]);
        assert!(!scrubbed.contains("héllo") && !scrubbed.contains("such"), "{scrubbed}");
        assert!(scrubbed.contains("no *** node"));
    }

    #[test]
    fn a_record_takes_its_arguments_at_the_steps_end_unless_its_start_scrubbed_them() {
        let record_args = |redact: &[&str], args: Value| {
            let mut log = SessionLog::discard();
            redacting(&mut log, redact);
            let seq = start(&mut log, 0, "inputText", &args);
            // A nested step in between takes its own, not the outer one's.
            let inner = start(&mut log, 1, "tapOn", &json!({"inner": true}));
            log.give_args(inner, json!({"inner": true}));
            log.give_args(seq, args.clone());
            // Given twice (a caller's mistake): the first stands.
            log.give_args(seq, json!({"again": true}));
            let records: Vec<Value> = log.records().iter().map(|r| r.args.clone()).collect();
            (records, log.records()[0].masked)
        };
        let args = json!({"text": "hunter2-secret", "n": 1});
        // A clean start: the record holds what was given at the end.
        let (clean, masked) = record_args(&[], args.clone());
        assert_eq!(clean, vec![args.clone(), json!({"inner": true})]);
        assert!(!masked);
        // A start whose line held a secret recorded it scrubbed: the value given later (the
        // caller's own, secret and all) must not replace it.
        let (scrubbed, masked) = record_args(&["hunter2-secret"], args.clone());
        assert_eq!(scrubbed[0], json!({"text": "***", "n": 1}));
        assert!(masked);
        assert_eq!(scrubbed[1], json!({"inner": true}));
    }

    #[test]
    fn a_result_is_written_whole_capped_when_huge_and_scrubbed_of_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path()).unwrap();
        log.set_redactions(crate::secret::Redaction::new(&["s3cr\"et-value".to_string()]));
        finish(&mut log, &json!({"text": "ok", "n": [1, 2]}));
        finish(&mut log, &json!({"leak": "x s3cr\"et-value y"}));
        finish(&mut log, &json!({"big": "a".repeat(MAX_LOGGED_BYTES + 1)}));
        finish(&mut log, &json!({}));
        drop(log);
        let l = lines(dir.path());
        assert_eq!(l[1]["result"], json!({"text": "ok", "n": [1, 2]}));
        assert_eq!(l[1]["seq"], 1);
        // The secret, with a quote JSON escapes, is scrubbed all the same.
        assert_eq!(l[3]["result"]["leak"], "x *** y");
        assert!(
            !std::fs::read_to_string(dir.path().join("log.jsonl"))
                .unwrap()
                .contains("et-value")
        );
        assert!(
            l[5]["result"]["notLogged"]
                .as_str()
                .unwrap()
                .contains("more than the log keeps")
        );
        assert_eq!(l[7]["result"], json!({}));
        assert_eq!(l[7]["event"], "step_finished");
    }
}
