//! Replays the demo trails as `trailblaze run` does (each step's recorded calls, then a screenshot
//! for the report) on a device, counting view-tree captures per call (`Session::captures`, never
//! time): what the snapshot-cache test and the `adb_replay` bench measure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use trailblaze::device::Device;
use trailblaze::{Project, ProjectOptions, SessionOptions};

/// The platform a recording is read for (the demo's recordings are for Android).
const PLATFORM: &str = "android";

/// What one replay cost.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Top-level calls (a trail step's recorded calls).
    pub calls: u64,
    /// Every logged step, nested ones included (a scripted tool's own calls).
    pub steps: u64,
    /// Logged steps that find a node by selector (each needs the screen).
    pub selector_steps: u64,
    pub captures: u64,
    /// Captures taken by the report screenshots between steps.
    pub screenshot_captures: u64,
    /// The trail step (its calls and its screenshot) that captured most per selector step:
    /// (trail, step, captures, selector steps).
    pub worst: Option<(String, String, u64, u64)>,
    /// The same, counting the step's calls only (not the screenshot after it).
    pub worst_calls: Option<(String, String, u64, u64)>,
    pub elapsed: Duration,
}

impl Replay {
    /// `n` replays by `one`, summed; the worst steps are the first that break a rule, else the last.
    pub fn sum(n: u32, mut one: impl FnMut() -> Replay) -> Replay {
        let mut total = Replay::default();
        for _ in 0..n {
            let r = one();
            total.calls += r.calls;
            total.steps += r.steps;
            total.selector_steps += r.selector_steps;
            total.captures += r.captures;
            total.screenshot_captures += r.screenshot_captures;
            total.elapsed += r.elapsed;
            if total.calls_capture_at_most_once_per_step() {
                total.worst_calls = r.worst_calls.clone();
            }
            if total.at_most_one_capture_per_step() {
                total.worst = r.worst;
            }
        }
        total
    }

    /// Whether no trail step captured more than once per selector step it ran (or once, with none).
    pub fn at_most_one_capture_per_step(&self) -> bool {
        self.worst.as_ref().is_none_or(|w| w.2 <= w.3.max(1))
    }

    /// The same, for the steps' calls alone.
    pub fn calls_capture_at_most_once_per_step(&self) -> bool {
        self.worst_calls.as_ref().is_none_or(|w| w.2 <= w.3.max(1))
    }

    /// Captures per selector step over the whole replay.
    pub fn captures_per_selector_step(&self) -> f64 {
        self.captures as f64 / self.selector_steps.max(1) as f64
    }

    /// Logged steps per second.
    pub fn steps_per_second(&self) -> f64 {
        self.steps as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }
}

/// The demo trailmap opened with its test secrets, its transpile cache in `cache`.
pub fn demo_project(cache: &Path) -> Project {
    let root = crate::repo_root().join("trailmaps");
    trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(cache.to_path_buf()),
            secrets_file: Some(root.join("demo/demo.secrets")),
            ..ProjectOptions::default()
        },
    )
    .expect("the demo trailmap opens")
}

/// The demo's trails, in name order.
pub fn demo_trails() -> Vec<PathBuf> {
    trails_of("demo")
}

/// The trails of the repository's trailmap `map` (`demo`, `web-demo`), in name order.
pub fn trails_of(map: &str) -> Vec<PathBuf> {
    let dir = crate::repo_root().join("trailmaps").join(map).join("trails");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("trails folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".trail.yaml"))
        .collect();
    files.sort();
    files
}

/// Replays every demo trail once, each on a fresh device from `device`; panics on a failed call.
pub fn replay_demo(project: &Project, device: &mut dyn FnMut() -> Box<dyn Device>) -> Replay {
    replay_trails(project, &demo_trails(), (PLATFORM, None), device)
}

/// [`replay_demo`] of `files`, each step's calls for `key` (a platform, and a device classifier
/// such as `ios-iphone`).
pub fn replay_trails(
    project: &Project,
    files: &[PathBuf],
    key: (&str, Option<&str>),
    device: &mut dyn FnMut() -> Box<dyn Device>,
) -> Replay {
    let mut r = Replay::default();
    let started = Instant::now();
    for file in files {
        let trail = trailblaze::Trail::load(file).unwrap_or_else(|e| panic!("{e:?}"));
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let session = project
            .open_session(
                "demo",
                SessionOptions {
                    device: Some(device()),
                    ..SessionOptions::default()
                },
            )
            .expect("session");
        let mut seq = session.steps().last().map_or(0, |s| s.seq);
        for step in trail.all_steps() {
            let (mut step_captures, mut step_selectors) = (0, 0);
            for call in step.calls_for(key.0, key.1).unwrap_or_default() {
                let before = session.captures();
                session
                    .call(&call.tool, call.args.clone())
                    .unwrap_or_else(|e| panic!("{name}: {}: {e}", call.tool));
                let records = session.steps_after(seq);
                seq = records.last().map_or(seq, |s| s.seq);
                r.calls += 1;
                r.steps += records.len() as u64;
                step_selectors += records.iter().filter(|s| has_selector(&s.args)).count() as u64;
                step_captures += session.captures() - before;
            }
            let ratio = |c: u64, s: u64| c as f64 / s.max(1) as f64;
            if r.worst_calls
                .as_ref()
                .is_none_or(|w| ratio(step_captures, step_selectors) > ratio(w.2, w.3))
            {
                r.worst_calls = Some((name.clone(), step.label(), step_captures, step_selectors));
            }
            // The report's picture of the screen after the step, as `run --screenshots all` takes it.
            let before = session.captures();
            session
                .screenshot()
                .unwrap_or_else(|e| panic!("{name}: screenshot: {e}"));
            let shot = session.captures() - before;
            r.screenshot_captures += shot;
            step_captures += shot;
            r.selector_steps += step_selectors;
            r.captures += step_captures;
            if r.worst
                .as_ref()
                .is_none_or(|w| ratio(step_captures, step_selectors) > ratio(w.2, w.3))
            {
                r.worst = Some((name.clone(), step.label(), step_captures, step_selectors));
            }
        }
    }
    r.elapsed = started.elapsed();
    r
}

/// Whether a step's arguments name a node by selector (anywhere inside).
pub fn has_selector(args: &Value) -> bool {
    match args {
        Value::Object(m) => m.contains_key("nodeSelector") || m.values().any(has_selector),
        Value::Array(a) => a.iter().any(has_selector),
        _ => false,
    }
}
