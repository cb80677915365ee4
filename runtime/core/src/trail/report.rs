//! The run report: what the replay fills in, and its three renderings under the run's folder:
//! `report.json` (machines), `report.html` (people: self-contained, no network) and `junit.xml` (CI).
//!
//! The report holds what the session log holds: placeholders (`{{secret:NAME}}`), never secret values;
//! [`RunReport::redact`] scrubs known secret values once more before anything is written. Screens are
//! not held: each is written once to `screens/<sha256>.svg` ([`Screens`]) and the report keeps its path.
//! docs/report.md describes `report.json`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::judge::LlmCost;

/// How a trail or a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// Not run: the trail's `config.skip`, or a step after a failure.
    Skipped {
        reason: String,
    },
    /// Nothing recorded for this device and no agent to run it: never a pass.
    NotRecorded,
    /// The device failed (unreachable, lost): an infrastructure error, neither a pass nor a failure
    /// of the trail.
    Error,
}

impl Outcome {
    /// Whether the trail or step passed, or was skipped (nothing in it failed): what
    /// `--trace retain-on-failure` lets go.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Skipped { .. })
    }

    /// The word reports show.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped { .. } => "skipped",
            Outcome::NotRecorded => "not recorded",
            Outcome::Error => "error",
        }
    }

    /// A CSS class name.
    fn class(&self) -> &'static str {
        match self {
            Outcome::NotRecorded => "not-recorded",
            other => other.word(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub started_unix_ms: u64,
    pub duration_ms: f64,
    /// The device the run used (`sim`, an adb serial, ...).
    pub device: String,
    /// `--shard I/N`: which part of the suite this run is ([`merge`] puts the parts together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// What the run was a part of: a digest of every trail selected before sharding, so that
    /// [`merge`] can refuse runs of different suites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    pub trails: Vec<TrailReport>,
    /// What the run's trails spent on an LLM, in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmCost>,
}

/// Shard `index` (1-based) of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrailReport {
    /// The trail file, as the run names it.
    pub file: String,
    pub id: Option<String>,
    pub title: Option<String>,
    pub outcome: Outcome,
    pub duration_ms: f64,
    /// The trailhead (number 0) first, then the `trail` steps.
    pub steps: Vec<StepReport>,
    /// Why the trail failed when no single step did (it did not parse, the device was lost, ...).
    pub error: Option<String>,
    /// The trail's session log, relative to the run folder (`sign-in/log.jsonl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Where the agent's recordings were written (the trail itself, or its `.healed.yaml` copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
    /// The device that ran it (`sim`, `android:SERIAL`, `web`); `None` when it ran on none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The devices lost while running it, in order: each time it ran again on another device of
    /// the pool (`--jobs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_devices: Vec<String>,
    /// The trail's screens as an animated GIF, relative to the run folder (`sign-in/storyboard.gif`),
    /// written at the end of the run; `None` when no step kept a screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storyboard: Option<String>,
    /// The trail's trace (docs/trace.md), relative to the run folder (`sign-in/trace.json`); `None`
    /// when none was kept (`--trace off`, or a trail that passed under `retain-on-failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// What the trail's steps spent on an LLM, in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmCost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// 0 for the trailhead, 1.. for the `trail` steps.
    pub number: usize,
    /// `step` or `verify`.
    pub kind: String,
    pub text: String,
    /// The step's line in the trail file (1-based; 0 when unknown).
    #[serde(default)]
    pub line: usize,
    pub outcome: Outcome,
    /// When the step started, in milliseconds after the trail's first step did (the timeline).
    #[serde(default)]
    pub started_ms: f64,
    /// How long the step ran, its retries and the agent's turns included (its screenshot not).
    #[serde(default)]
    pub duration_ms: f64,
    /// How many times the step ran: 1, or more when `maxRetries` re-ran it after a failure.
    #[serde(default = "one")]
    pub attempts: u32,
    /// The errors of the attempts before the last, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<String>,
    /// The last attempt's calls.
    pub calls: Vec<CallReport>,
    pub error: Option<String>,
    /// The screen after the step, relative to the run folder (`screens/<sha256>.svg`).
    pub screen: Option<String>,
    /// The screen's size in device pixels, when the image says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_size: Option<Point>,
    /// The agent ran this step (it had no recording, or self-heal re-ran it): `calls` are the
    /// model's tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentReport>,
    /// What the step spent on an LLM: the agent's turns and any `assertWithAi`/`rememberWithAi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmCost>,
    /// What a web page said by the end of the step: its URL, console errors, failed requests and
    /// the dialogs answered (`--device web`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageNotes>,
}

/// A web page's state and messages during one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageNotes {
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_requests: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialogs: Vec<String>,
}

/// What the agent did for a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReport {
    /// `openai` or `anthropic`.
    pub provider: String,
    pub model: String,
    /// Why it ran: `not recorded`, or `self-heal` after the recording failed.
    pub reason: String,
    /// Self-heal: the recorded attempt's calls, which failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recorded_calls: Vec<CallReport>,
    /// Self-heal: the recorded attempt's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_error: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Each model turn: what it said (secrets scrubbed) and how many calls it made.
    pub turns: Vec<AgentTurn>,
    /// `objectiveStatus`'s explanation, when the model concluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// The recording written back for this step: `(tool, args)` as the trail now holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recording: Vec<CallReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTurn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    pub calls: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What the trace keeps of the turn (docs/trace.md); not in report.json.
    #[serde(skip)]
    pub trace: Option<Box<TurnTrace>>,
}

/// A model turn as a trace keeps it: what was sent (scrubbed), the picture with it, what came back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnTrace {
    pub unix_ms: f64,
    pub duration_ms: f64,
    /// The texts of the message the turn answered (the objective, the screen, tool results),
    /// capped.
    pub request: String,
    /// The screen's picture sent with it: its type and bytes.
    pub image: Option<(String, Vec<u8>)>,
    /// The calls the model made: `{ "tool": …, "args": … }`, secrets scrubbed.
    pub tool_calls: Vec<Value>,
}

fn one() -> u32 {
    1
}

/// A point or a size in device pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub x: i64,
    pub y: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallReport {
    pub tool: String,
    /// As called: placeholders, never secret values.
    pub args: Value,
    pub ok: bool,
    pub error: Option<String>,
    pub duration_ms: f64,
    /// The recorded call's line in the trail file (top-level calls only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Where it tapped, when its result says (`{"tapped": {"x", "y"}}`). Only a top-level call's
    /// result is known: the session's step records keep no results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tap: Option<Point>,
    /// The calls it made (a scripted or composed tool's steps), in order, nested as they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallReport>,
}

/// Counts of trails by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub not_recorded: usize,
    /// Trails the device failed under.
    pub errors: usize,
}

impl Summary {
    /// True when nothing failed and nothing went unrecorded (skips are fine).
    pub fn ok(&self) -> bool {
        self.failed == 0 && self.not_recorded == 0 && self.errors == 0
    }
}

impl RunReport {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            total: self.trails.len(),
            ..Summary::default()
        };
        for t in &self.trails {
            match t.outcome {
                Outcome::Passed => s.passed += 1,
                Outcome::Failed => s.failed += 1,
                Outcome::Skipped { .. } => s.skipped += 1,
                Outcome::NotRecorded => s.not_recorded += 1,
                Outcome::Error => s.errors += 1,
            }
        }
        s
    }

    /// Replaces every occurrence of each value (resolved secrets) in every text of the report with
    /// `***`, as the session log does. A defence in depth: the replay should never have put one there.
    pub fn redact(&mut self, values: &[String]) {
        let redaction = crate::secret::Redaction::new(values);
        for t in &mut self.trails {
            t.redact(&redaction);
        }
    }
}

impl TrailReport {
    /// [`RunReport::redact`] for one trail.
    pub fn redact(&mut self, redaction: &crate::secret::Redaction) {
        self.redact_head(redaction);
        for s in &mut self.steps {
            s.redact(redaction);
        }
    }

    /// [`TrailReport::redact`] of the trail's own texts, not its steps': for a report whose steps
    /// were each redacted as they ended (a replay's), by `redaction` or one that covers it.
    pub(crate) fn redact_head(&mut self, redaction: &crate::secret::Redaction) {
        if redaction.is_empty() {
            return;
        }
        self.error.iter_mut().for_each(|s| scrub(redaction, s));
        if let Outcome::Skipped { reason } = &mut self.outcome {
            scrub(redaction, reason);
        }
    }
}

impl StepReport {
    /// [`TrailReport::redact`] for one step (idempotent). A replay redacts each step as it ends,
    /// and then only the trail's own texts.
    pub fn redact(&mut self, redaction: &crate::secret::Redaction) {
        if redaction.is_empty() {
            return;
        }
        let s = self;
        scrub(redaction, &mut s.text);
        if let Some(p) = &mut s.page {
            scrub(redaction, &mut p.url);
            let lines = p
                .console_errors
                .iter_mut()
                .chain(&mut p.failed_requests)
                .chain(&mut p.dialogs);
            lines.for_each(|l| scrub(redaction, l));
        }
        s.error.iter_mut().for_each(|e| scrub(redaction, e));
        s.retried.iter_mut().for_each(|e| scrub(redaction, e));
        if let Outcome::Skipped { reason } = &mut s.outcome {
            scrub(redaction, reason);
        }
        let mut calls: Vec<&mut CallReport> = s.calls.iter_mut().collect();
        if let Some(a) = &mut s.agent {
            let texts = a.turns.iter_mut().flat_map(|t| t.reasoning.iter_mut());
            texts
                .chain(a.conclusion.iter_mut())
                .chain(a.recorded_error.iter_mut())
                .for_each(|e| scrub(redaction, e));
            calls.extend(a.recorded_calls.iter_mut());
            calls.extend(a.recording.iter_mut());
        }
        // Nested calls too, without recursion (a deep composition cannot overflow the stack).
        while let Some(c) = calls.pop() {
            c.error.iter_mut().for_each(|e| scrub(redaction, e));
            redaction.value(&mut c.args);
            calls.extend(c.calls.iter_mut());
        }
    }
}

/// One redactor for every output: it knows the escaped forms (the SVG holds text XML-escaped).
fn scrub(redaction: &crate::secret::Redaction, s: &mut String) {
    if let std::borrow::Cow::Owned(r) = redaction.text(s) {
        *s = r;
    }
}

/// The files [`write_all`] wrote.
#[derive(Debug, Clone)]
pub struct ReportFiles {
    pub json: PathBuf,
    pub html: PathBuf,
    pub junit: PathBuf,
}

/// Writes `report.json`, `report.html` and `junit.xml` into `dir` (created if missing).
pub fn write_all(report: &RunReport, dir: &Path) -> std::io::Result<ReportFiles> {
    // The three are independent, and a long run's are megabytes each: the page is rendered on a
    // second core meanwhile (a short run's take less than starting a thread would).
    let steps: usize = report.trails.iter().map(|t| t.steps.len()).sum();
    if steps < 200 {
        return Ok(ReportFiles {
            json: write_report_json(report, dir)?,
            html: write_report_html(report, dir)?,
            junit: write_junit_xml(report, dir)?,
        });
    }
    std::fs::create_dir_all(dir)?;
    let (html, json, junit) = std::thread::scope(|scope| {
        let html = scope.spawn(|| write_report_html(report, dir));
        let json = write_report_json(report, dir);
        let junit = write_junit_xml(report, dir);
        let html = html
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("rendering report.html failed")));
        (html, json, junit)
    });
    Ok(ReportFiles {
        json: json?,
        html: html?,
        junit: junit?,
    })
}

fn write_report_json(report: &RunReport, dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join("report.json");
    crate::files::write_atomically_with(&path, |f| write_json(report, f))?;
    Ok(path)
}

fn write_report_html(report: &RunReport, dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join("report.html");
    crate::files::write_atomically_with(&path, |f| {
        // Handed to the file a buffer at a time: a long run's page is megabytes.
        let mut out = String::with_capacity(crate::files::CHUNK * 2);
        html::render_html_into(&mut out, report, &mut |part: &str| f.write_all(part.as_bytes()))?;
        f.write_all(out.as_bytes())
    })?;
    Ok(path)
}

pub fn write_junit_xml(report: &RunReport, dir: &Path) -> std::io::Result<PathBuf> {
    write(dir, "junit.xml", render_junit(report))
}

/// Written beside and renamed, so a reader never sees half a report (and a full disk leaves none).
fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> std::io::Result<PathBuf> {
    let path = dir.join(name);
    crate::files::write_atomically(&path, text.as_ref())?;
    Ok(path)
}

/// `report.json`: the summary, then the report itself, whole (the tests read it).
#[cfg(test)]
pub(crate) fn render_json(report: &RunReport) -> String {
    // Serializing plain structs and JSON values cannot fail, and serde_json writes UTF-8; keep the
    // error paths anyway.
    let mut out = Vec::new();
    match write_json(report, &mut out) {
        Ok(()) => String::from_utf8(out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n")),
        Err(e) => format!("{{\"error\": \"{e}\"}}\n"),
    }
}

/// `report.json`: the summary, then the report itself, onto `w`.
fn write_json(report: &RunReport, w: &mut impl std::io::Write) -> std::io::Result<()> {
    #[derive(Serialize)]
    struct WithSummary<'a> {
        summary: Summary,
        #[serde(flatten)]
        report: &'a RunReport,
    }
    let doc = WithSummary {
        summary: report.summary(),
        report,
    };
    let mut json = serde_json::Serializer::with_formatter(&mut *w, pretty::Pretty::default());
    doc.serialize(&mut json).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// Escapes text for XML and (XHTML-compatible) HTML, text and attributes alike; the control
/// characters XML cannot hold become U+FFFD (an error message may carry terminal colour codes).
pub fn xml_escape(s: &str) -> String {
    crate::markup::escape(s, crate::markup::Dialect::XmlAndHtml)
}

/// `junit.xml`: one `<testsuite>` for the run, one `<testcase>` per trail. A failed or not-recorded
/// trail is a `<failure>` (CI must not read "not recorded" as a pass); a skipped one `<skipped>`.
pub fn render_junit(report: &RunReport) -> String {
    let s = report.summary();
    let e = xml_escape;
    let secs = |ms: f64| format!("{:.3}", ms.max(0.0) / 1000.0);
    let failures = s.failed + s.not_recorded;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{}\" skipped=\"{}\" time=\"{}\"",
        s.total,
        s.errors,
        s.skipped,
        secs(report.duration_ms)
    );
    let _ = writeln!(out, "<testsuites name=\"trailblaze\" {counts}>");
    let _ = writeln!(
        out,
        "  <testsuite name=\"trailblaze ({})\" {counts} timestamp=\"{}\">",
        e(&report.device),
        utc(report.started_unix_ms, 'T')
    );
    for t in &report.trails {
        let name = t.title.as_deref().or(t.id.as_deref()).unwrap_or(&t.file);
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{}\"",
            e(t.id.as_deref().unwrap_or(&t.file)),
            e(name),
            e(&t.file),
            secs(t.duration_ms)
        );
        match &t.outcome {
            Outcome::Passed => out.push_str("/>\n"),
            Outcome::Skipped { reason } => {
                let _ = writeln!(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>", e(reason));
            }
            Outcome::Failed | Outcome::NotRecorded | Outcome::Error => {
                let (kind, message) = failure_line(t);
                // JUnit tells a failed test (`failure`) from one that could not run (`error`).
                let element = if t.outcome == Outcome::Error {
                    "error"
                } else {
                    "failure"
                };
                let _ = writeln!(
                    out,
                    ">\n      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n    </testcase>",
                    e(&message),
                    e(&step_lines(t))
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// The failure's type and one-line message: the first step that did not pass.
fn failure_line(t: &TrailReport) -> (&'static str, String) {
    let kind = match t.outcome {
        Outcome::NotRecorded => "NotRecorded",
        Outcome::Error => "DeviceFailed",
        _ => "StepFailed",
    };
    let bad = t
        .steps
        .iter()
        .find(|s| matches!(s.outcome, Outcome::Failed | Outcome::NotRecorded | Outcome::Error));
    let message = match (bad, &t.error) {
        (Some(s), _) => {
            let what = format!("{} {}: {}", step_name(s), s.outcome.word(), s.text);
            // One line: a newline in an attribute reads back as a space; the body has the rest.
            match s.error.as_deref().and_then(|e| e.lines().next()) {
                Some(err) => format!("{what}: {err}"),
                None => what,
            }
        }
        (None, Some(err)) => err.lines().next().unwrap_or_default().to_string(),
        (None, None) => t.outcome.word().to_string(),
    };
    (kind, message)
}

/// Every step with its outcome, for the failure's body.
fn step_lines(t: &TrailReport) -> String {
    let mut out = String::new();
    if let Some(err) = &t.error {
        let _ = writeln!(out, "{err}");
    }
    for s in &t.steps {
        let _ = writeln!(out, "[{}] {} ({}): {}", s.outcome.word(), step_name(s), s.kind, s.text);
        if let Some(err) = &s.error {
            let _ = writeln!(out, "    {err}");
        }
    }
    out
}

fn step_name(s: &StepReport) -> String {
    let mut name = String::new();
    write_step_name(&mut name, s, false);
    name
}

/// [`step_name`] appended to `out`, `Capitalised` at a line's start when `capital`.
fn write_step_name(out: &mut String, s: &StepReport, capital: bool) {
    match (s.number, capital) {
        (0, false) => out.push_str("trailhead"),
        (0, true) => out.push_str("Trailhead"),
        (n, false) => {
            let _ = write!(out, "step {n}");
        }
        (n, true) => {
            let _ = write!(out, "Step {n}");
        }
    }
}

/// `unix_ms` as `YYYY-MM-DD<sep>HH:MM:SS`, UTC.
pub(crate) fn utc(unix_ms: u64, sep: char) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = crate::device::trace::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}{sep}{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

mod html;
mod merge;
mod nest;
mod pretty;
mod screens;
pub mod storyboard;
mod timeline;
pub mod trace_files;
pub mod traces;
pub mod viewer;
#[cfg(test)]
pub(crate) use html::render_html;
pub use merge::{MergeError, Merged, merge, suite_digest};
pub use nest::nest_calls;
pub use screens::Screens;

#[cfg(test)]
mod tests;
