//! `trailblaze run`: opens a session per trail, [replays](crate::replay) it, and writes
//! `report.json`, `report.html` and `junit.xml` beside each trail's session log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::device::{DeviceSpec, Screenshot};
use crate::project::{Project, ProjectError, SessionOptions};
use crate::replay::{self, ReplayOptions, RunSink, ScreenshotPolicy};
use crate::session::{Session, Settings};
use crate::trail::report::{ReportFiles, Screens};
use crate::trail::{self, Outcome, RunReport, Step, StepReport, Trail, TrailReport};

mod interim;
mod lock;
mod pool;

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
    /// More phones besides `device` (`--device` given again, `android:all`): the run's device
    /// pool, one trail per phone at a time.
    pub pool: Vec<DeviceSpec>,
    /// `--shard I/N`, noted in the report for `merge`.
    pub shard: Option<crate::trail::report::Shard>,
    /// The suite this run is part of ([`crate::report::suite_digest`] of the trails before sharding).
    pub suite: Option<String>,
    /// How many trails run at once (`--jobs`), each on its own session and device: a simulated
    /// device or a browser context of its own per trail, a phone of the pool. 0: one per phone of the pool,
    /// else one per core (at most one per trail).
    pub jobs: usize,
    /// Which steps keep a picture of the screen in the report.
    pub screenshots: ScreenshotPolicy,
    /// Runs steps with no recording (and, with self-heal, recorded steps that fail) through an
    /// LLM, and writes what it did back as their recordings (`trailblaze::agent`). What
    /// `assertWithAi` asks is `settings.judge`.
    pub agent: Option<crate::replay::AgentHandle>,
    /// Which trails keep a trace and a video beside their log (`--trace`, `--video`; docs/trace.md).
    /// Off unless asked: the CLI asks `retain-on-failure`.
    pub trace: crate::trace::TraceSettings,
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

/// Runs `files` in order, each on a fresh session, telling `sink` what each replay does as it
/// goes; the reports are kept current after every trail and written whole at the end.
pub fn run_trails(
    project: &Project,
    files: &[PathBuf],
    opts: &RunOptions,
    sink: &mut dyn RunSink,
) -> Result<RunOutput, ProjectError> {
    let started = Instant::now();
    let (dir, _lock) = open_run_dir(opts)?;
    let latest = point_latest(&opts.out, &dir);
    let mut report = RunReport {
        started_unix_ms: now_ms(),
        duration_ms: 0.0,
        device: pool::label(opts),
        shard: opts.shard,
        suite: opts.suite.clone(),
        trails: Vec::new(),
        llm: None,
    };
    let secrets = crate::secret::Redaction::new(&project.secrets.values_to_redact());
    let mut screens = Screens::new(&dir, secrets.clone());
    let replay = ReplayOptions {
        args: opts.args.clone(),
        device_key: None,
        screenshots: opts.screenshots,
        agent: opts.agent.as_ref().map(|a| &*a.0),
        trace: opts.trace,
    };
    // The reports so far, after every trail (a run killed by a CI timeout still leaves the trails
    // that finished reported), written on a thread of their own.
    let mut interim = interim::InterimReports::start(&report, &dir);
    let ids = session_ids(files);
    // What the devices keep for a run (one Chromium for its web trails, each in a context of its own).
    let _held = project.parts().hold_for_run();
    let ctx = pool::Ctx {
        project,
        files,
        ids: &ids,
        dir: &dir,
        opts,
        replay: &replay,
        secrets: &secrets,
    };
    let slots = pool::slots(opts, files.len());
    report.trails = pool::run(&ctx, slots, &mut screens, sink, &mut |index, trail, so_far| {
        let header = RunReport {
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            trails: Vec::new(),
            ..report.clone()
        };
        interim.finished_at(index, trail, &header, || RunReport {
            trails: so_far(),
            ..header.clone()
        });
    });
    let interim_writes = interim.finish();
    tracing::debug!(interim_writes, trails = files.len(), "reports kept current");
    // Each trail's animated screens, once its screens are all on disk.
    for files in &project.parts().run_files {
        files.write(&mut report.trails, &dir);
    }
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    report.llm = crate::judge::LlmCost::total(report.trails.iter().map(|t| &t.llm));
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

/// The run's folder, made: `--report-dir` exactly (locked: another run may hold it), else a new
/// `<out>/run-<stamp>`.
fn open_run_dir(opts: &RunOptions) -> Result<(PathBuf, Option<lock::DirLock>), ProjectError> {
    let dir = match &opts.report_dir {
        Some(d) => d.clone(),
        None => {
            new_run_dir(&opts.out, now_ms()).map_err(|e| ProjectError::Usage(format!("{}: {e}", opts.out.display())))?
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| ProjectError::Usage(format!("{}: {e}", dir.display())))?;
    // A fixed folder may be another run's at this moment (a folder of our own naming is not).
    let held = match &opts.report_dir {
        Some(_) => Some(lock::lock(&dir).map_err(|e| ProjectError::Usage(e.to_string()))?),
        None => None,
    };
    Ok((dir, held))
}

fn write_junit_at(report: &RunReport, path: &Path) -> Result<PathBuf, ProjectError> {
    let fail = |e: std::io::Error| ProjectError::Output(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, trail::report::render_junit(report)).map_err(fail)?;
    Ok(path.to_path_buf())
}

/// Makes `<out>/run-2026-12-02T06-28-01Z/` for a run started at `unix_ms` (UTC, to the second):
/// `-2`, `-3`, ... follow when runs start in the same second, each folder made by one of them only.
fn new_run_dir(out: &Path, unix_ms: u64) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let stem = format!("run-{}Z", trail::report::utc(unix_ms, 'T').replace(':', "-"));
    for n in 1..=1000 {
        let dir = match n {
            1 => out.join(&stem),
            n => out.join(format!("{stem}-{n}")),
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "a thousand runs started in the second of {stem}"
    )))
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
        device: None,
        lost_devices: Vec::new(),
        llm: None,
        file: file.display().to_string(),
        id: None,
        title: None,
        outcome: Outcome::Failed,
        duration_ms: 0.0,
        steps: Vec::new(),
        error: Some(error),
        log: None,
        written: None,
        storyboard: None,
        trace: None,
    }
}

/// A trail loaded and its session open, ready to replay; or its report when it does not run.
pub(crate) enum Started {
    Done(TrailReport),
    Open {
        trail: Box<Trail>,
        session: Session,
        device: String,
    },
}

/// Redacts `report` of `secrets`. The replay redacted each step with the secrets of the session
/// that ran it (`replayed_by`): when those cover `secrets`, only the trail's own texts are read
/// (a long trail's steps took a millisecond a pass).
pub(crate) fn redact_replayed(
    report: &mut TrailReport,
    replayed_by: Option<&Session>,
    secrets: &crate::secret::Redaction,
) {
    if replayed_by.is_some_and(|s| s.redaction().covers(secrets)) {
        report.redact_head(secrets);
    } else {
        report.redact(secrets);
    }
}

/// Loads and opens a session for one trail on `spec`; a trail that does not load, does not run on
/// this device (skipped, an `{{args.*}}` without a value) or whose session cannot start is
/// reported without a replay.
pub(crate) fn run_one(
    project: &Project,
    file: &Path,
    (dir, opts, id, spec): (&Path, &RunOptions, &str, &DeviceSpec),
    (replay, secrets): (&ReplayOptions<'_>, &crate::secret::Redaction),
    sink: &mut dyn RunSink,
) -> Started {
    let trail = match project.load_trail(file) {
        Ok(t) => t,
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            let mut report = failed_trail(file, format!("does not parse\n{}", text.join("\n")));
            report.redact(secrets);
            sink.trail_finished(&report);
            return Started::Done(report);
        }
    };
    if let Some(mut report) = replay::not_run(&trail, spec.platform().as_str(), spec.classifier(), replay) {
        report.redact(secrets);
        sink.trail_finished(&report);
        return Started::Done(report);
    }
    // No target, or one that is no loaded trailmap (an app's package id): the built-ins alone.
    let target = project
        .target_of(&trail)
        .filter(|id| project.trailmaps.get(id).is_some())
        .unwrap_or_else(|| crate::project::NO_TARGET.to_string());
    let session = match start_session(project, &target, &trail, (dir, opts, id, spec)) {
        Ok(s) => s,
        Err(e) => {
            // A device that cannot be reached is the infrastructure's failure, not the trail's.
            let unreachable = matches!(e, ProjectError::Device(crate::device::DeviceError::Io(_)));
            let mut report = TrailReport {
                error: Some(e.to_string()),
                outcome: if unreachable { Outcome::Error } else { Outcome::Failed },
                device: Some(spec.label()),
                ..replay::blank_report(&trail)
            };
            report.redact(secrets);
            sink.trail_finished(&report);
            return Started::Done(report);
        }
    };
    Started::Open {
        trail: Box::new(trail),
        session,
        device: spec.label(),
    }
}

fn start_session(
    project: &Project,
    target: &str,
    trail: &Trail,
    (dir, opts, id, spec): (&Path, &RunOptions, &str, &DeviceSpec),
) -> Result<Session, ProjectError> {
    project.open_session(
        target,
        SessionOptions {
            device: Some(project.device(target, &spec.for_trail(&trail.file))?),
            out_dir: Some(dir.to_path_buf()),
            settings: opts.settings.clone(),
            id: Some(id.to_string()),
            ..SessionOptions::default()
        },
    )
}

/// Each trail's session folder, in trail order: its stem, numbered when taken (`sign-in-2`).
/// Made before the run, so every trail has the same folder however many run at once.
fn session_ids(files: &[PathBuf]) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    files
        .iter()
        .map(|file| {
            let stem = session_stem(file);
            let mut id = stem.clone();
            let mut n = 1;
            while used.contains(&id) {
                n += 1;
                id = format!("{stem}-{n}");
            }
            used.insert(id.clone());
            id
        })
        .collect()
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

/// The run's own sink: keeps each step's screen in `<run>/screens/`, noting where in the step.
pub(crate) struct KeepScreens<'a>(pub(crate) &'a mut Screens);

impl RunSink for KeepScreens<'_> {
    fn step_finished(&mut self, _step: &Step, report: &mut StepReport, screen: Option<Screenshot>) {
        if let Some(shot) = screen
            && let Some(saved) = self.0.save(shot.mime, &shot.bytes)
        {
            report.screen = Some(saved.path);
            report.screen_size = saved.size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_folder_is_named_by_its_utc_second_and_numbered_when_taken() {
        let out = tempfile::tempdir().unwrap();
        // 2026-12-02 06:28:01.500 UTC.
        let at = 1_796_192_881_500;
        let first = new_run_dir(out.path(), at).unwrap();
        assert_eq!(first, out.path().join("run-2026-12-02T06-28-01Z"));
        assert!(first.is_dir());
        let second = new_run_dir(out.path(), at + 100).unwrap();
        assert_eq!(second, out.path().join("run-2026-12-02T06-28-01Z-2"));
        // Control: the next second is a name of its own.
        let next = new_run_dir(out.path(), at + 1_000).unwrap();
        assert_eq!(next, out.path().join("run-2026-12-02T06-28-02Z"));
    }

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
