//! `trailblaze run`: replays trails on a device through the one dispatcher, step by step, and writes
//! `report.json`, `report.html` and `junit.xml` beside each trail's session log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::agent::{Agent, AgentConfig};
use crate::check::target_of;
use crate::device::DeviceSpec;
use crate::device::Screenshot;
use crate::dispatch::CallError;
use crate::project::{Project, ProjectError, SessionOptions};
use crate::session::{Pending, PendingCall, Session, Settings};
use crate::state::log::StepRecord;
use crate::trail::model::ToolCall;
use crate::trail::report::{Point, ReportFiles, Screens};
use crate::trail::{self, CallReport, Outcome, RunReport, Step, StepReport, Trail, TrailReport};

mod agent_step;
mod interim;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Reports and session logs go to `<out>/<run id>/`; `<out>/latest` points at the newest run.
    pub out: PathBuf,
    pub settings: Settings,
    /// Write this run's folder exactly here instead of `<out>/run-<stamp>` (CI keeps a fixed path).
    pub report_dir: Option<PathBuf>,
    /// Also write `junit.xml` at this path.
    pub junit: Option<PathBuf>,
    /// Values for `{{args.NAME}}`; they win over the defaults a trail declares under `config.args`.
    pub args: BTreeMap<String, String>,
    /// The device every trail runs on (each trail gets a fresh session on it).
    pub device: DeviceSpec,
    /// Which steps keep a picture of the screen in the report.
    pub screenshots: ScreenshotPolicy,
    /// Run steps with no recording (and, with self-heal, recorded steps that fail) through an LLM,
    /// and write what it did back as their recordings.
    pub agent: Option<AgentConfig>,
}

/// Which steps keep a screenshot: every step, the failed ones (a slow phone spends ~1 s per
/// `screencap`), or none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScreenshotPolicy {
    #[default]
    All,
    Failures,
    None,
}

impl ScreenshotPolicy {
    fn wants(self, outcome: &Outcome) -> bool {
        match self {
            ScreenshotPolicy::All => *outcome != Outcome::NotRecorded,
            ScreenshotPolicy::Failures => matches!(outcome, Outcome::Failed | Outcome::Error),
            ScreenshotPolicy::None => false,
        }
    }
}

/// Where a run wrote its files.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub report: RunReport,
    /// `report.json`, `report.html` and `junit.xml` in the run folder.
    pub files: ReportFiles,
    /// The extra `junit.xml` [`RunOptions::junit`] asked for.
    pub junit: Option<PathBuf>,
    /// `<run>/screens/`: each distinct screen once, `<sha256>.svg`.
    pub screens: PathBuf,
    /// Each trail's `log.jsonl`, in the report's order (`None` for a trail that never started a session).
    pub logs: Vec<Option<PathBuf>>,
    /// `<out>/latest`, when it could be pointed at this run.
    pub latest: Option<PathBuf>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Runs `files` in order. `progress` receives one line per trail and per step as they finish.
pub fn run_trails(
    project: &Project,
    files: &[PathBuf],
    opts: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<RunOutput, ProjectError> {
    let started = Instant::now();
    let dir = match &opts.report_dir {
        Some(d) => d.clone(),
        None => opts.out.join(format!("run-{}-{}", now_ms(), std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| ProjectError::Usage(format!("{}: {e}", dir.display())))?;
    let latest = point_latest(&opts.out, &dir);
    let mut report = RunReport {
        started_unix_ms: now_ms(),
        duration_ms: 0.0,
        device: opts.device.label(),
        trails: Vec::new(),
    };
    let mut used_ids: Vec<String> = Vec::new();
    let secrets = crate::secret::Redaction::new(&project.secrets.values_to_redact());
    let mut screens = Screens::new(&dir, secrets.clone());
    // One agent for the run: its token budget is the run's.
    let mut agent = opts
        .agent
        .as_ref()
        .map(|c| Agent::new(c, &project.secrets.values_to_redact(), project.secrets.names()));
    // The reports so far, after every trail (a run killed by a CI timeout still leaves the trails
    // that finished reported), written on a thread of their own.
    let mut interim = interim::InterimReports::start(&report, &dir);
    for file in files {
        let mut t = run_one(
            project,
            file,
            (&dir, opts, &mut used_ids),
            (&mut screens, agent.as_mut(), &secrets),
            progress,
        );
        t.redact(&secrets);
        report.trails.push(t);
        if report.trails.len() < files.len() {
            report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            interim.trail_finished(&report);
        }
    }
    let interim_writes = interim.finish();
    tracing::debug!(interim_writes, trails = files.len(), "reports kept current");
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    let written = trail::report::write_all(&report, &dir)
        .map_err(|e| ProjectError::Output(format!("cannot write the reports in {}: {e}", dir.display())))?;
    let junit = match &opts.junit {
        Some(path) => Some(write_junit_at(&report, path)?),
        None => None,
    };
    let logs = report
        .trails
        .iter()
        .map(|t| t.log.as_ref().map(|l| dir.join(l)))
        .collect();
    Ok(RunOutput {
        screens: screens.dir().to_path_buf(),
        dir,
        report,
        files: written,
        junit,
        logs,
        latest,
    })
}

fn write_junit_at(report: &RunReport, path: &Path) -> Result<PathBuf, ProjectError> {
    let fail = |e: std::io::Error| ProjectError::Output(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, trail::report::render_junit(report)).map_err(fail)?;
    Ok(path.to_path_buf())
}

/// Points `<out>/latest` at `run_dir` (relative when it is inside `out`), replacing the old link
/// atomically (a new link renamed over it). Best effort: a run never fails because of it.
#[cfg(unix)]
fn point_latest(out: &Path, run_dir: &Path) -> Option<PathBuf> {
    let target = match run_dir.strip_prefix(out) {
        Ok(rel) if rel.components().count() == 1 => rel.to_path_buf(),
        _ => std::path::absolute(run_dir).ok()?,
    };
    std::fs::create_dir_all(out).ok()?;
    let link = out.join("latest");
    let tmp = out.join(format!(".latest-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&target, &tmp).ok()?;
    match std::fs::rename(&tmp, &link) {
        Ok(()) => Some(link),
        Err(e) => {
            // `latest` is a real folder, or the file system refuses: leave it, say why once.
            tracing::warn!(path = %link.display(), error = %e, "cannot point `latest` at this run");
            let _ = std::fs::remove_file(&tmp);
            None
        }
    }
}

#[cfg(not(unix))]
fn point_latest(_out: &Path, _run_dir: &Path) -> Option<PathBuf> {
    None
}

fn failed_trail(file: &Path, error: String) -> TrailReport {
    TrailReport {
        file: file.display().to_string(),
        id: None,
        title: None,
        outcome: Outcome::Failed,
        duration_ms: 0.0,
        steps: Vec::new(),
        error: Some(error),
        log: None,
        written: None,
    }
}

fn run_one(
    project: &Project,
    file: &Path,
    (dir, opts, used_ids): (&Path, &RunOptions, &mut Vec<String>),
    (screens, mut agent, secrets): (&mut Screens, Option<&mut Agent>, &crate::secret::Redaction),
    progress: &mut dyn FnMut(&str),
) -> TrailReport {
    let trail = match trail::load_trail(file) {
        Ok(t) => t,
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            progress(&format!("✗ {}: does not parse\n{}", file.display(), text.join("\n")));
            return failed_trail(file, text.join("\n"));
        }
    };
    let mut report = TrailReport {
        file: file.display().to_string(),
        id: trail.config.id.clone(),
        title: trail.config.title.clone().or(trail.config.description.clone()),
        outcome: Outcome::Passed,
        duration_ms: 0.0,
        steps: Vec::new(),
        error: None,
        log: None,
        written: None,
    };
    if let Some(reason) = trail.config.skip_reason(opts.device.platform_key(), None) {
        progress(&format!("- {} skipped: {reason}", file.display()));
        report.outcome = Outcome::Skipped {
            reason: reason.to_string(),
        };
        return report;
    }
    // Every `{{args.NAME}}` is resolved before the first call: a missing value fails the trail whole.
    let steps = match trail.with_args(&opts.args) {
        Ok(steps) => steps,
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            progress(&format!("✗ {}: {}", file.display(), text.join("\n")));
            return TrailReport {
                error: Some(text.join("\n")),
                outcome: Outcome::Failed,
                ..report
            };
        }
    };
    // No target, or one that is no loaded trailmap (an app's package id): the built-ins alone.
    let target = target_of(project, &trail)
        .filter(|id| project.trailmaps.get(id).is_some())
        .unwrap_or_else(|| crate::project::NO_TARGET.to_string());
    let session = match start_session(project, &target, &trail, dir, opts, used_ids) {
        Ok(s) => s,
        Err(e) => {
            progress(&format!("✗ {}: {e}", file.display()));
            // A device that cannot be reached is the infrastructure's failure, not the trail's.
            let unreachable = matches!(e, ProjectError::Device(crate::device::DeviceError::Io(_)));
            return TrailReport {
                error: Some(e.to_string()),
                outcome: if unreachable { Outcome::Error } else { Outcome::Failed },
                ..report
            };
        }
    };
    report.log = session.dir().map(|_| format!("{}/log.jsonl", session.id()));
    progress(&format!(
        "trail {} ({})",
        trail.config.id.as_deref().unwrap_or("-"),
        file.display()
    ));
    let started = Instant::now();
    let mut stopped: Option<String> = None;
    let mut last_seq = 0;
    let catalog = match (&agent, project.catalog(&target)) {
        (Some(_), Ok(c)) => Some(c),
        _ => None,
    };
    let mut edits = Vec::new();
    let mut ahead = Sent::default();
    // An agent may take any step over: nothing is sent ahead of it.
    let overlapping = agent.is_none();
    for (index, step) in steps.iter().enumerate() {
        if let Some(why) = &stopped {
            report.steps.push(step_report(
                step,
                Outcome::Skipped { reason: why.clone() },
                Vec::new(),
                None,
            ));
            continue;
        }
        let original = trail.all_steps().nth(index).unwrap_or(step);
        let mut sr = match (agent.as_deref_mut(), &catalog, &opts.agent) {
            (Some(a), Some(c), Some(cfg)) => {
                let mut at = agent_step::At {
                    agent: a,
                    catalog: c,
                    session: &session,
                    trail: &trail,
                    last_seq: &mut last_seq,
                };
                agent_step::run(&mut at, cfg, (step, original), &mut edits, progress)
            }
            _ => {
                let overlap = Overlap {
                    next: steps.get(index + 1).map(|n| &**n),
                    keep_passed: opts.screenshots.wants(&Outcome::Passed),
                };
                let overlap = Some(overlap).filter(|_| overlapping);
                let (sr, sent) =
                    run_with_retries(&session, (step, ahead.call.take(), overlap), &mut last_seq, progress);
                ahead = sent;
                sr
            }
        };
        keep_screen(&session, (&mut sr, ahead.screen.take()), screens, opts.screenshots);
        sr.page = session.step_notes().and_then(|n| serde_json::from_value(n).ok());
        let mark = match sr.outcome {
            Outcome::Passed => "✓",
            Outcome::Failed => "✗",
            Outcome::NotRecorded => "∅",
            Outcome::Skipped { .. } => "-",
            Outcome::Error => "!",
        };
        // `+ 0.0`: an empty sum is -0.0, which would print as "-0.0 ms".
        let ms: f64 = sr.calls.iter().map(|c| c.duration_ms).sum::<f64>() + 0.0;
        let tail = sr.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        let mut tries = if sr.attempts > 1 {
            format!(", attempt {}", sr.attempts)
        } else {
            String::new()
        };
        if let Some(a) = &sr.agent {
            tries.push_str(&format!(
                ", agent: {} turn(s), {} tokens",
                a.turns.len(),
                a.input_tokens + a.output_tokens
            ));
        }
        progress(&format!(
            "  {mark} {} {} ({ms:.1} ms{tries}){tail}",
            step.label(),
            step.text
        ));
        match sr.outcome {
            Outcome::Failed => {
                report.outcome = Outcome::Failed;
                stopped = Some(format!("{} failed", step.label()));
            }
            Outcome::NotRecorded => {
                if report.outcome == Outcome::Passed {
                    report.outcome = Outcome::NotRecorded;
                }
                stopped = Some(format!("{} is not recorded", step.label()));
            }
            Outcome::Error => {
                report.outcome = Outcome::Error;
                stopped = Some("the device failed".to_string());
            }
            _ => {}
        }
        report.steps.push(sr);
    }
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(cfg) = &opts.agent
        && !edits.is_empty()
    {
        report.written = agent_step::write_back(&trail.file, &edits, cfg.write_back, secrets, progress);
    }
    report
}

fn start_session(
    project: &Project,
    target: &str,
    trail: &Trail,
    dir: &Path,
    opts: &RunOptions,
    used_ids: &mut Vec<String>,
) -> Result<Session, ProjectError> {
    let stem = session_stem(&trail.file);
    let mut id = stem.clone();
    let mut n = 1;
    while used_ids.contains(&id) {
        n += 1;
        id = format!("{stem}-{n}");
    }
    used_ids.push(id.clone());
    project.open_session(
        target,
        SessionOptions {
            device: Some(project.device(target, &opts.device.for_trail(&trail.file))?),
            out_dir: Some(dir.to_path_buf()),
            settings: opts.settings.clone(),
            id: Some(id),
            ..SessionOptions::default()
        },
    )
}

/// The session folder's name for a trail file: its stem, cut to characters that are safe in a path,
/// and never `.`/`..` or empty (`...trail.yaml` must not write its log outside the run folder).
fn session_stem(file: &Path) -> String {
    let safe: String = trail::trail_stem(file)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if safe.trim_matches('.').is_empty() {
        "trail".to_string()
    } else {
        safe
    }
}

fn step_report(step: &Step, outcome: Outcome, calls: Vec<CallReport>, error: Option<String>) -> StepReport {
    StepReport {
        number: step.number,
        kind: step.kind.keyword().to_string(),
        text: step.text.clone(),
        line: step.pos.line,
        outcome,
        attempts: 1,
        retried: Vec::new(),
        calls,
        error,
        screen: None,
        screen_size: None,
        agent: None,
        page: None,
    }
}

/// Runs a step, and again after a failure while its `maxRetries` allows (each attempt's calls are
/// logged steps). `ahead` is the step's first call if it was sent already; with `overlap`, what
/// follows a passed step is sent before it is reported (see [`run_step`]) and returned.
fn run_with_retries(
    session: &Session,
    (step, ahead, overlap): (&Step, Option<PendingCall>, Option<Overlap>),
    last_seq: &mut u64,
    progress: &mut dyn FnMut(&str),
) -> (StepReport, Sent) {
    let retries = step.max_retries.unwrap_or(0);
    let mut retried = Vec::new();
    let (mut sr, mut sent) = run_step(session, (step, ahead, overlap), last_seq);
    while sr.outcome == Outcome::Failed && (retried.len() as u32) < retries {
        let error = sr.error.take().unwrap_or_default();
        progress(&format!(
            "  ↻ {} attempt {} failed, retrying: {error}",
            step.label(),
            retried.len() + 1
        ));
        retried.push(error);
        (sr, sent) = run_step(session, (step, None, overlap), last_seq);
    }
    sr.attempts = retried.len() as u32 + 1;
    sr.retried = retried;
    (sr, sent)
}

/// Saves the screen after a step, as the policy says: the one `run_step` asked for already, or one
/// taken now.
fn keep_screen(
    session: &Session,
    (sr, sent): (&mut StepReport, Option<Pending<Result<Screenshot, String>>>),
    screens: &mut Screens,
    policy: ScreenshotPolicy,
) {
    // A step that named its screen (`takeSnapshot`) keeps it whatever the policy: the trail asked.
    let named = sr.calls.iter().any(|c| c.tool == "takeSnapshot" && c.ok);
    let shot = match sent {
        Some(p) => p.wait().map_err(|e| e.to_string()).and_then(|r| r),
        None if named || policy.wants(&sr.outcome) => session.screenshot(),
        None => return,
    };
    if let Ok(shot) = shot
        && let Some(saved) = screens.save(shot.mime, &shot.bytes)
    {
        sr.screen = Some(saved.path);
        sr.screen_size = saved.size;
    }
}

/// Where a call tapped, from its result (`{"tapped": {"x": .., "y": ..}}`).
fn tap_of(result: &serde_json::Value) -> Option<Point> {
    let p = result.get("tapped")?;
    Some(Point {
        x: p.get("x")?.as_i64()?,
        y: p.get("y")?.as_i64()?,
    })
}

/// What a call ran inside it, nested, from the records it logged. The call's own record is the root
/// at depth 0; a delegating tool logs only what it expanded to.
fn nested_calls(tool: &str, records: &[StepRecord]) -> Vec<CallReport> {
    let mut nested = trail::report::nest_calls(records);
    if records.first().is_some_and(|r| r.depth == 0 && r.tool == tool) && !nested.is_empty() {
        let mut own = nested.remove(0).calls;
        own.append(&mut nested);
        nested = own;
    }
    nested
}

/// Runs one step's recorded calls (the sim answers to `android` recordings), stopping at the first
/// failure; a step with nothing recorded for this device is reported as not recorded. Each call's
/// nested calls come from the session's step records.
///
/// With `overlap`, once the step's last call has passed, the screen it keeps (if any) and then the
/// first call of the next step are sent before this step is reported, so that the session's
/// thread works meanwhile (a replay was half bookkeeping). The session runs jobs in order, so the
/// screen is the one this step left.
fn run_step(
    session: &Session,
    (step, mut ahead, overlap): (&Step, Option<PendingCall>, Option<Overlap>),
    last_seq: &mut u64,
) -> (StepReport, Sent) {
    let Some(calls) = step.calls_for(session.platform().as_str(), None) else {
        let report = step_report(
            step,
            Outcome::NotRecorded,
            Vec::new(),
            Some("no recording for this device".into()),
        );
        return (report, Sent::default());
    };
    let mut sent = Sent::default();
    let mut reports = Vec::new();
    let mut error = None;
    let mut device_failed = false;
    for (i, call) in calls.iter().enumerate() {
        // The call and the steps it logged, in one trip to the session's thread.
        let pending = match ahead.take() {
            Some(p) => p,
            None => session.send_call_with_steps(&call.tool, call.args.clone(), *last_seq),
        };
        let (result, records, took) = pending.wait_timed();
        *last_seq = records.last().map_or(*last_seq, |r| r.seq);
        if i + 1 == calls.len()
            && result.is_ok()
            && let Some(o) = overlap
        {
            sent = o.send(session, calls, *last_seq);
        }
        let nested = nested_calls(&call.tool, &records);
        let ok = result.is_ok();
        device_failed |= result.as_ref().is_err_and(CallError::is_device_failure);
        let tap = result.as_ref().ok().and_then(tap_of);
        let err = result.err().map(|e| e.to_string());
        reports.push(CallReport {
            tool: call.tool.clone(),
            // A secret by its meaning (`web_fillSecret`'s value) is shown as `***`, as the log shows it.
            args: crate::dispatch::secret_arguments_masked(&call.tool, &call.args).unwrap_or_else(|| call.args.clone()),
            ok,
            error: err.clone(),
            duration_ms: took.as_secs_f64() * 1000.0,
            line: Some(call.pos.line),
            tap,
            calls: nested,
        });
        if !ok {
            error = err;
            break;
        }
    }
    let outcome = match (&error, device_failed) {
        (Some(_), true) => Outcome::Error,
        (Some(_), false) => Outcome::Failed,
        (None, _) => Outcome::Passed,
    };
    (step_report(step, outcome, reports, error), sent)
}

/// What may start before a passed step is reported.
#[derive(Clone, Copy)]
struct Overlap<'a> {
    /// The step after it.
    next: Option<&'a Step>,
    /// The policy keeps a passed step's screen.
    keep_passed: bool,
}

/// What was sent ahead: the screen the step keeps, the next step's first call.
#[derive(Default)]
struct Sent {
    screen: Option<Pending<Result<Screenshot, String>>>,
    call: Option<PendingCall>,
}

impl Overlap<'_> {
    /// Sends, after a step whose `calls` all passed, its screen (when kept) and then the next
    /// step's first call.
    fn send(self, session: &Session, calls: &[ToolCall], last_seq: u64) -> Sent {
        let named = calls.iter().any(|c| c.tool == "takeSnapshot");
        let screen = (self.keep_passed || named)
            .then(|| {
                session
                    .submit(|core, _| core.screen.screenshot(&core.redact).map_err(|e| e.to_string()))
                    .ok()
            })
            .flatten();
        let call = self
            .next
            .and_then(|n| n.calls_for(session.platform().as_str(), None))
            .and_then(|c| c.first())
            .map(|first| session.send_call_with_steps(&first.tool, first.args.clone(), last_seq));
        Sent { screen, call }
    }
}

/// The summary line a CLI prints after a run.
pub fn summary_line(report: &RunReport) -> String {
    let s = report.summary();
    let mut line = format!("{} passed, {} failed", s.passed, s.failed);
    if s.skipped > 0 {
        line.push_str(&format!(", {} skipped", s.skipped));
    }
    if s.not_recorded > 0 {
        line.push_str(&format!(", {} not recorded", s.not_recorded));
    }
    if s.errors > 0 {
        line.push_str(&format!(", {} stopped by a device error", s.errors));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_folder_never_leaves_the_run_folder() {
        for (file, want) in [
            ("trails/...trail.yaml", "trail"),
            ("trails/..trail.yaml", "trail"),
            ("trails/.trail.yaml", "trail"),
            ("trails/a/../b/sign in.trail.yaml", "sign-in"),
            ("trails/x/trail.yaml", "x"),
            ("trail.yaml", "trail"),
            ("trails/../trail.yaml", "trail"),
            ("trails/ok_1.trail.yaml", "ok_1"),
        ] {
            assert_eq!(session_stem(Path::new(file)), want, "{file}");
        }
    }
}
