//! Replaying one trail on one open [`Session`]: the trail's `config.skip`, its `{{args.*}}`, each
//! step's recording for the session's platform, `maxRetries`, the agent for steps with no recording
//! (and, with self-heal, recorded steps that fail), the screens the policy keeps. What happens is
//! pushed into a [`RunSink`] as it happens (in the spirit of ripgrep's `Sink`): the CLI's progress
//! lines, the run's reports, the C ABI's JSON report are sinks; none has a step loop of its own.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use trailblaze_core::{Project, ProjectOptions, ReplayOptions, SessionOptions, Trail};
//! let project = Project::open("trailmaps".as_ref(), ProjectOptions::default())?;
//! let trail = Trail::load("trailmaps/demo/trails/sign-in.trail.yaml".as_ref())
//!     .map_err(|e| format!("{e:?}"))?;
//! let session = project.open_session("demo", SessionOptions::default())?;
//! let report = session.replay(&trail, &ReplayOptions::default(), &mut ());
//! println!("{}", report.outcome.word());
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::time::Instant;

use crate::device::Screenshot;
use crate::session::Session;
use crate::trail::{Outcome, Step, StepReport, Trail, TrailReport};

mod step;

pub use step::{Replayer, nested_calls, step_report, tap_of};

/// How to replay a trail; every field has a default.
#[derive(Default)]
pub struct ReplayOptions<'a> {
    /// Values for `{{args.NAME}}`; they win over the defaults a trail declares under `config.args`.
    pub args: BTreeMap<String, String>,
    /// The device key (`config.devices`, a recording key such as `android-phone`) the session's
    /// device answers to besides its platform, if any.
    pub device_key: Option<String>,
    /// Which steps keep a picture of the screen: handed to [`RunSink::step_finished`].
    pub screenshots: ScreenshotPolicy,
    /// Runs steps with no recording (and, with self-heal, recorded steps that fail) through an
    /// LLM, and writes what it did back as their recordings.
    pub agent: Option<&'a dyn StepAgent>,
    /// Whether the trail's trace (and video) is recorded and kept (docs/trace.md).
    pub trace: crate::trace::TraceSettings,
}

impl ReplayOptions<'_> {
    /// Whether an agent may take steps over.
    fn has_agent(&self) -> bool {
        self.agent.is_some()
    }
}

/// A run's [`StepAgent`], shared by its trails.
#[derive(Clone)]
pub struct AgentHandle(pub std::sync::Arc<dyn StepAgent>);

impl std::fmt::Debug for AgentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentHandle")
    }
}

/// What takes a trail's steps in place of their recordings (the LLM agent of `run --agent`).
pub trait StepAgent: Send + Sync {
    /// Its turn at one trail, told of each step in order.
    fn trail<'a>(&'a self, trail: &'a Trail) -> Box<dyn TrailAgent + 'a>;
}

/// A [`StepAgent`] at one trail.
pub trait TrailAgent {
    /// Runs `step` (`original`: the same step before `{{args.*}}` were filled in) by its recording
    /// or by the agent.
    fn step(&mut self, replay: &mut Replayer<'_>, step: &Step, original: &Step, sink: &mut dyn RunSink) -> StepReport;
    /// A step ended (whoever ran it), as the trail's report holds it.
    fn stepped(&mut self, report: &StepReport);
    /// After the trail: writes what the agent did back as recordings; where it wrote them.
    fn finish(
        self: Box<Self>,
        session: &Session,
        redact: &crate::secret::Redaction,
        sink: &mut dyn RunSink,
    ) -> Option<String>;
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
    pub(crate) fn wants(self, outcome: &Outcome) -> bool {
        match self {
            ScreenshotPolicy::All => *outcome != Outcome::NotRecorded,
            ScreenshotPolicy::Failures => matches!(outcome, Outcome::Failed | Outcome::Error),
            ScreenshotPolicy::None => false,
        }
    }
}

/// What a replay tells as it goes. Every method has an empty default, so a sink implements what
/// it cares about; `()` is the sink that keeps nothing.
pub trait RunSink {
    /// A trail starts replaying on `session` (not called for a skipped trail, nor one whose
    /// `{{args.*}}` could not be filled in).
    fn trail_started(&mut self, trail: &Trail, session: &Session) {
        let _ = (trail, session);
    }
    /// A step's first attempt starts.
    fn step_started(&mut self, step: &Step) {
        let _ = step;
    }
    /// An attempt of `step` failed with `error` and `maxRetries` runs it again.
    fn step_retrying(&mut self, step: &Step, attempt: u32, error: &str) {
        let _ = (step, attempt, error);
    }
    /// A step ended (or was skipped after an earlier failure). `screen` is the screen after it when
    /// the policy keeps one; the sink may note in `report` where it kept it (`screen`, `screen_size`).
    fn step_finished(&mut self, step: &Step, report: &mut StepReport, screen: Option<Screenshot>) {
        let _ = (step, report, screen);
    }
    /// Something worth telling that is not a step: the agent taking over, its recordings written.
    fn notice(&mut self, notice: &Notice) {
        let _ = notice;
    }
    /// The trail ended: passed, failed, skipped, not recorded, or stopped by the device.
    fn trail_finished(&mut self, report: &TrailReport) {
        let _ = report;
    }
}

/// The sink that keeps nothing.
impl RunSink for () {}

/// Events of a replay that are not steps.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A recorded step failed and the agent runs it instead (self-heal).
    AgentTakesOver { step: String, error: String },
    /// The agent's recordings of `steps` steps were written to `path`; `kept_layout` is false when
    /// the file had to be written whole (its comments are gone).
    RecordingWritten {
        steps: usize,
        path: String,
        kept_layout: bool,
    },
    /// The agent's recordings could not be written (the run's outcome stands).
    RecordingNotWritten { error: String },
    /// A phone of the run's pool was lost while it ran `trail`; it left the pool. `again`: the
    /// trail runs once more on another phone (else it is reported as stopped by the device).
    DeviceLost { device: String, trail: String, again: bool },
}

/// A trail's report before it runs: its file, id and title, passed so far.
pub(crate) fn blank_report(trail: &Trail) -> TrailReport {
    TrailReport {
        device: None,
        lost_devices: Vec::new(),
        llm: None,
        file: trail.file.display().to_string(),
        id: trail.config.id.clone(),
        title: trail.config.title.clone().or(trail.config.description.clone()),
        outcome: Outcome::Passed,
        duration_ms: 0.0,
        steps: Vec::new(),
        error: None,
        log: None,
        written: None,
        storyboard: None,
        trace: None,
    }
}

/// The report of a trail that does not run on `platform` at all: skipped by its `config.skip`, or
/// failed because an `{{args.NAME}}` has no value. `None`: it runs. Decided before any session is
/// opened, so a run spends no device on it.
pub fn not_run(
    trail: &Trail,
    platform: &str,
    classifier: Option<&str>,
    opts: &ReplayOptions<'_>,
) -> Option<TrailReport> {
    let report = blank_report(trail);
    let key = opts.device_key.as_deref().or(classifier);
    if let Some(reason) = trail.config.skip_reason(platform, key) {
        let reason = reason.to_string();
        return Some(TrailReport {
            outcome: Outcome::Skipped { reason },
            ..report
        });
    }
    match trail.with_args(&opts.args) {
        Ok(_) => None,
        Err(errors) => Some(TrailReport {
            outcome: Outcome::Failed,
            error: Some(errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")),
            ..report
        }),
    }
}

impl Session {
    /// Replays `trail` on this session, step by step, telling `sink` as it goes; the first step
    /// that fails (or has nothing recorded for this device, with no agent) stops the trail and the
    /// rest are reported skipped. The report's texts are redacted.
    pub fn replay(&self, trail: &Trail, opts: &ReplayOptions<'_>, sink: &mut dyn RunSink) -> TrailReport {
        let redact = self.redaction();
        let platform = self.platform().as_str();
        // What `not_run` decides, with the steps' `{{args.*}}` filled in once (a long trail's
        // steps are each looked through for a placeholder).
        let key = opts.device_key.as_deref().or(self.classifier());
        let steps = match trail.config.skip_reason(platform, key) {
            Some(_) => Err(Vec::new()),
            None => trail.with_args(&opts.args),
        };
        let steps = match steps {
            Ok(steps) => steps,
            Err(_) => {
                let mut r = not_run(trail, platform, key, opts).unwrap_or_else(|| blank_report(trail));
                r.redact(redact);
                sink.trail_finished(&r);
                return r;
            }
        };
        self.seed_memory(trail);
        let mut report = blank_report(trail);
        // Room for every step at once: grown by doubling, a long trail's reports were copied and
        // their memory touched twice over (fresh pages, each a fault on this machine).
        report.steps.reserve_exact(steps.len());
        report.log = self.dir().map(|_| format!("{}/log.jsonl", self.id()));
        sink.trail_started(trail, self);
        let traced = opts.trace.records() && self.dir().is_some();
        if traced {
            self.trace_begin(opts.trace);
        }
        let mut step_calls = Vec::with_capacity(steps.len());
        let started_unix_ms = crate::device::trace::unix_ms_now();
        let started = Instant::now();
        let mut replay = step::Replayer::new(self, platform, key, opts);
        let mut agent = opts.agent.map(|a| a.trail(trail));
        let mut stopped: Option<String> = None;
        let mut cost = self.llm_cost();
        for (index, step) in steps.iter().enumerate() {
            if let Some(why) = &stopped {
                step_calls.push(None);
                let mut sr = step_report(step, Outcome::Skipped { reason: why.clone() }, Vec::new(), None);
                sr.redact(redact);
                sink.step_finished(step, &mut sr, None);
                report.steps.push(sr);
                continue;
            }
            sink.step_started(step);
            let first_seq = replay.last_seq + 1;
            let step_started = Instant::now();
            let by_agent = agent.as_mut().map(|agent| {
                let original = trail.all_steps().nth(index).unwrap_or(step);
                agent.step(&mut replay, step, original, sink)
            });
            let (mut sr, screen) = match by_agent {
                Some(sr) => (sr, None),
                None => replay.step_with_retries(step, steps.get(index + 1).map(|n| &**n), sink),
            };
            // What a page tells of the step besides its screen (its URL, console errors, ...); other
            // devices tell nothing, and asking would cost every step a trip to the session's thread.
            if self.platform() == crate::device::Platform::Web {
                sr.page = replay.page_notes().and_then(|n| serde_json::from_value(n).ok());
            }
            // What the step's own calls asked the judge (`assertWithAi`, ...), beside the agent's turns.
            let now = self.llm_cost();
            sr.llm = crate::judge::LlmCost::total([&sr.llm, &Some(now.since(&cost))]);
            cost = now;
            sr.redact(redact);
            sr.started_ms = step_started.duration_since(started).as_secs_f64() * 1000.0;
            sr.duration_ms = step_started.elapsed().as_secs_f64() * 1000.0;
            step_calls.push((replay.last_seq >= first_seq).then_some((first_seq, replay.last_seq)));
            let screen = replay.screen_for(&sr, screen);
            sink.step_finished(step, &mut sr, screen);
            if let Some(why) = stops_here(step, &sr.outcome, &mut report.outcome) {
                stopped = Some(why);
            }
            if let Some(agent) = agent.as_mut() {
                agent.stepped(&sr);
            }
            report.steps.push(sr);
        }
        report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        report.llm = crate::judge::LlmCost::total(report.steps.iter().map(|s| &s.llm));
        drop(replay);
        if let Some(agent) = agent {
            report.written = agent.finish(self, redact, sink);
        }

        // Each step was redacted as it ended, before any sink saw it: the trail's own texts are left.
        report.redact_head(redact);
        if traced {
            self.keep_trace(&mut report, opts.trace, started_unix_ms, &step_calls);
        }
        sink.trail_finished(&report);
        report
    }
}

/// Why the trail stops after a step that ended `outcome`, if it does; `trail` takes the outcome a
/// failed, unrecorded or device-failed step gives the whole trail.
fn stops_here(step: &Step, outcome: &Outcome, trail: &mut Outcome) -> Option<String> {
    match outcome {
        Outcome::Failed => {
            *trail = Outcome::Failed;
            Some(format!("{} failed", step.label()))
        }
        Outcome::NotRecorded => {
            if *trail == Outcome::Passed {
                *trail = Outcome::NotRecorded;
            }
            Some(format!("{} is not recorded", step.label()))
        }
        Outcome::Error => {
            *trail = Outcome::Error;
            Some("the device failed".to_string())
        }
        _ => None,
    }
}

impl Session {
    /// `config.memory` pre-seeds the session's memory, as the original does: the trail's
    /// `{{name}}` tokens read these values until a `remember*` call replaces one.
    fn seed_memory(&self, trail: &Trail) {
        if !trail.config.memory.is_empty() {
            let memory = trail.config.memory.clone();
            let _ = self.run(move |core| {
                let mut m = core.memory.borrow_mut();
                for (name, value) in &memory {
                    // A name no token can spell (a space, say) is never read: nothing to seed.
                    let _ = m.remember(name, value);
                }
            });
        }
    }
}
