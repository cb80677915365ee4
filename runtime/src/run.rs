//! `trailblaze run`: replays trails on a device through the one dispatcher, step by step, and writes
//! `report.json`, `report.html` and `junit.xml` beside each trail's session log.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::check::target_of;
use crate::dispatch::CallError;
use crate::project::{Project, ProjectError, SessionOptions};
use crate::session::{Session, Settings};
use crate::trail::report::ReportFiles;
use crate::trail::{self, CallReport, Outcome, RunReport, Step, StepReport, Trail, TrailReport};

/// The platform the simulated device answers to when a recording is keyed by platform.
pub const SIM_PLATFORM: &str = "android";

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Reports and session logs go to `<out>/<run id>/`.
    pub out: PathBuf,
    pub settings: Settings,
}

/// Where a run wrote its files.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub report: RunReport,
    /// `report.json`, `report.html` and `junit.xml`.
    pub files: ReportFiles,
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
    let run_id = format!("run-{}-{}", now_ms(), std::process::id());
    let dir = opts.out.join(&run_id);
    std::fs::create_dir_all(&dir).map_err(|e| ProjectError::Usage(format!("{}: {e}", dir.display())))?;
    let mut report = RunReport {
        started_unix_ms: now_ms(),
        duration_ms: 0.0,
        device: "sim".into(),
        trails: Vec::new(),
    };
    let mut used_ids: Vec<String> = Vec::new();
    let secrets = crate::secret::Redaction::new(&project.secrets.values_to_redact());
    for file in files {
        let mut t = run_one(project, file, &dir, opts, &mut used_ids, progress);
        t.redact(&secrets);
        report.trails.push(t);
        // The reports so far, after every trail: a run killed by a CI timeout (SIGTERM, SIGKILL)
        // still leaves the trails that finished reported. Each file is replaced whole (renamed).
        if report.trails.len() < files.len() {
            report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            let _ = trail::report::write_all(&report, &dir);
        }
    }
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    let files = trail::report::write_all(&report, &dir)
        .map_err(|e| ProjectError::Usage(format!("writing the reports: {e}")))?;
    Ok(RunOutput { dir, report, files })
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
    }
}

fn run_one(
    project: &Project,
    file: &Path,
    dir: &Path,
    opts: &RunOptions,
    used_ids: &mut Vec<String>,
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
    };
    if let Some(reason) = trail.config.skip_reason(SIM_PLATFORM, None) {
        progress(&format!("- {} skipped: {reason}", file.display()));
        report.outcome = Outcome::Skipped {
            reason: reason.to_string(),
        };
        return report;
    }
    let Some(target) = target_of(project, &trail) else {
        let e = "no target: set `config.target` to a trailmap id, or keep the trail under trailmaps/<id>/".to_string();
        progress(&format!("✗ {}: {e}", file.display()));
        return TrailReport {
            error: Some(e),
            outcome: Outcome::Failed,
            ..report
        };
    };
    let session = match start_session(project, &target, &trail, dir, opts, used_ids) {
        Ok(s) => s,
        Err(e) => {
            progress(&format!("✗ {}: {e}", file.display()));
            return TrailReport {
                error: Some(e.to_string()),
                outcome: Outcome::Failed,
                ..report
            };
        }
    };
    progress(&format!(
        "trail {} ({})",
        trail.config.id.as_deref().unwrap_or("-"),
        file.display()
    ));
    let started = Instant::now();
    let mut stopped: Option<String> = None;
    for step in trail.all_steps() {
        if let Some(why) = &stopped {
            report.steps.push(step_report(
                step,
                Outcome::Skipped { reason: why.clone() },
                Vec::new(),
                None,
                None,
            ));
            continue;
        }
        let sr = run_step(&session, step);
        let mark = match sr.outcome {
            Outcome::Passed => "✓",
            Outcome::Failed => "✗",
            Outcome::NotRecorded => "∅",
            Outcome::Skipped { .. } => "-",
            Outcome::Error => "!",
        };
        let ms: f64 = sr.calls.iter().map(|c| c.duration_ms).sum();
        let tail = sr.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        progress(&format!("  {mark} {} {} ({ms:.1} ms){tail}", step.label(), step.text));
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

fn step_report(
    step: &Step,
    outcome: Outcome,
    calls: Vec<CallReport>,
    error: Option<String>,
    screen: Option<String>,
) -> StepReport {
    StepReport {
        number: step.number,
        kind: step.kind.keyword().to_string(),
        text: step.text.clone(),
        outcome,
        calls,
        error,
        screen_svg: screen,
    }
}

/// Runs one step's recorded calls (the sim answers to `android` recordings), stopping at the first
/// failure; a step with nothing recorded for this device is reported as not recorded.
fn run_step(session: &Session, step: &Step) -> StepReport {
    let Some(calls) = step.calls_for(SIM_PLATFORM, None) else {
        return step_report(
            step,
            Outcome::NotRecorded,
            Vec::new(),
            Some("no recording for this device".into()),
            None,
        );
    };
    let mut reports = Vec::new();
    let mut error = None;
    let mut device_failed = false;
    for call in calls {
        let t = Instant::now();
        let result = session.call(&call.tool, call.args.clone());
        let duration_ms = t.elapsed().as_secs_f64() * 1000.0;
        let ok = result.is_ok();
        device_failed |= result.as_ref().is_err_and(CallError::is_device_failure);
        let err = result.err().map(|e| e.to_string());
        reports.push(CallReport {
            tool: call.tool.clone(),
            args: call.args.clone(),
            ok,
            error: err.clone(),
            duration_ms,
        });
        if !ok {
            error = err;
            break;
        }
    }
    let screen = session
        .screenshot()
        .ok()
        .filter(|s| s.mime == "image/svg+xml")
        .and_then(|s| String::from_utf8(s.bytes).ok());
    let outcome = match (&error, device_failed) {
        (Some(_), true) => Outcome::Error,
        (Some(_), false) => Outcome::Failed,
        (None, _) => Outcome::Passed,
    };
    step_report(step, outcome, reports, error, screen)
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
            ("trails/x/trail.yaml", "trail"),
            ("trails/ok_1.trail.yaml", "ok_1"),
        ] {
            assert_eq!(session_stem(Path::new(file)), want, "{file}");
        }
    }
}
