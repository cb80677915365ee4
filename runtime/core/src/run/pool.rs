//! `run --jobs N`: trails replayed at once, each on its own session and device. A job owns one
//! device for the whole run (a simulated device or a browser made anew per trail, or one phone of
//! the pool), so two trails can never share a phone. Each job records what its trail tells and the
//! run's thread hands it to the caller's sink in one piece when the trail ends: lines never
//! interleave, and the caller's sink needs no locking. A phone that is lost takes its trail back to
//! the queue once (another phone runs it) and leaves the pool; a spare phone, if any, takes its place.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::{KeepScreens, RunOptions, Started, run_one};
use crate::device::{DeviceSpec, Screenshot};
use crate::project::Project;
use crate::replay::{Notice, ReplayOptions, RunSink};
use crate::session::Session;
use crate::trail::report::Screens;
use crate::trail::{Outcome, Step, StepReport, Trail, TrailReport};

/// What every job reads.
pub(super) struct Ctx<'a, 'r> {
    pub project: &'a Project,
    pub files: &'a [PathBuf],
    pub ids: &'a [String],
    pub dir: &'a Path,
    pub opts: &'a RunOptions,
    pub replay: &'a ReplayOptions<'r>,
    pub secrets: &'a crate::secret::Redaction,
}

/// The devices of a run: those jobs start on, and phones kept for when one is lost.
pub(super) struct Slots {
    active: Vec<DeviceSpec>,
    spares: Vec<DeviceSpec>,
    /// Real phones: a lost one leaves the pool and its trail runs again elsewhere.
    phones: bool,
}

/// The phones of the pool, each once, in the order given.
fn phones(opts: &RunOptions) -> Vec<DeviceSpec> {
    let mut out: Vec<DeviceSpec> = Vec::new();
    for d in std::iter::once(&opts.device).chain(&opts.pool) {
        if !out.contains(d) {
            out.push(d.clone());
        }
    }
    out
}

/// The jobs' devices for `trails` trails: `jobs` sims or browsers (0: one per core), or the pool's
/// phones (0: all of them).
pub(super) fn slots(opts: &RunOptions, trails: usize) -> Slots {
    match &opts.device {
        d if d.is_phone() => {
            let mut active = phones(opts);
            let n = if opts.jobs == 0 {
                active.len()
            } else {
                opts.jobs.min(active.len())
            };
            let spares = active.split_off(n.max(1));
            Slots {
                active,
                spares,
                phones: true,
            }
        }
        other => {
            let n = match opts.jobs {
                0 => crate::cores::count(),
                n => n,
            };
            Slots {
                active: vec![other.clone(); n.min(trails).max(1)],
                spares: Vec::new(),
                phones: false,
            }
        }
    }
}

/// How the run's report names its devices: `sim`, or the pool's phones.
pub(super) fn label(opts: &RunOptions) -> String {
    match &opts.device {
        d if d.is_phone() => phones(opts)
            .iter()
            .map(DeviceSpec::label)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.label(),
    }
}

/// One event of a replay, kept until its trail ends.
enum Event {
    TrailStarted,
    StepStarted(Step),
    StepRetrying(Step, u32, String),
    StepFinished(Step, Box<StepReport>),
    Notice(Notice),
    TrailFinished(Box<TrailReport>),
}

/// A job's sink: keeps the screens (shared by the jobs), records the rest.
struct Recorder<'a, 's> {
    screens: &'a Mutex<&'s mut Screens>,
    events: Vec<Event>,
}

impl RunSink for Recorder<'_, '_> {
    fn trail_started(&mut self, _trail: &Trail, _session: &Session) {
        self.events.push(Event::TrailStarted);
    }
    fn step_started(&mut self, step: &Step) {
        self.events.push(Event::StepStarted(step.clone()));
    }
    fn step_retrying(&mut self, step: &Step, attempt: u32, error: &str) {
        self.events
            .push(Event::StepRetrying(step.clone(), attempt, error.to_string()));
    }
    fn step_finished(&mut self, step: &Step, report: &mut StepReport, screen: Option<Screenshot>) {
        if screen.is_some() {
            let mut screens = self.screens.lock().unwrap_or_else(|p| p.into_inner());
            KeepScreens(&mut screens).step_finished(step, report, screen);
        }
        self.events
            .push(Event::StepFinished(step.clone(), Box::new(report.clone())));
    }
    fn notice(&mut self, notice: &Notice) {
        self.events.push(Event::Notice(notice.clone()));
    }
    fn trail_finished(&mut self, report: &TrailReport) {
        self.events.push(Event::TrailFinished(Box::new(report.clone())));
    }
}

/// What a job tells the run's thread.
enum Msg {
    /// A trail ended; its session is dropped once its events are told.
    Done {
        index: usize,
        report: Box<TrailReport>,
        events: Vec<Event>,
        open: Option<Box<(Box<Trail>, Session)>>,
    },
    /// A phone was lost while it ran trail `index`.
    Lost { index: usize, device: String, again: bool },
}

/// The trails still to run (with the devices each has lost so far) and how many are running.
struct Queue {
    pending: VecDeque<(usize, Vec<String>)>,
    running: usize,
    spares: Vec<DeviceSpec>,
}

struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next trail, waiting while others run (a lost phone's trail may come back); `None` when
    /// nothing is left.
    fn next(&self) -> Option<(usize, Vec<String>)> {
        let mut q = self.lock();
        loop {
            if let Some(t) = q.pending.pop_front() {
                q.running += 1;
                return Some(t);
            }
            if q.running == 0 {
                return None;
            }
            q = self.changed.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// A trail is no longer running; `again` puts it first in line.
    fn done(&self, again: Option<(usize, Vec<String>)>) {
        let mut q = self.lock();
        q.running -= 1;
        if let Some(t) = again {
            q.pending.push_front(t);
        }
        drop(q);
        self.changed.notify_all();
    }
}

/// The trail's report for the caller, with its lost devices, redacted ([`super::redact_replayed`]:
/// as a run on one device does, its steps are not read again when `replayed_by` redacted them).
fn finish(
    mut report: TrailReport,
    lost: Vec<String>,
    secrets: &crate::secret::Redaction,
    replayed_by: Option<&Session>,
) -> TrailReport {
    report.lost_devices = lost;
    super::redact_replayed(&mut report, replayed_by, secrets);
    report
}

/// Where a job's trails go: what their replays tell, and how each ended.
trait Out {
    fn sink(&mut self) -> &mut dyn RunSink;
    /// Trail `index` ended; `open` is its trail and session, dropped once it is told.
    fn done(&mut self, index: usize, report: TrailReport, open: Option<(Box<Trail>, Session)>);
    /// The job's device was lost while it ran trail `index`.
    fn lost(&mut self, index: usize, device: String, again: bool);
}

/// One job: takes trails until none are left, on `device` (or a spare when it is lost).
fn job(ctx: &Ctx<'_, '_>, mut device: DeviceSpec, phones: bool, shared: &Shared, out: &mut dyn Out) {
    while let Some((index, mut lost)) = shared.next() {
        let file = &ctx.files[index];
        let started = run_one(
            ctx.project,
            file,
            (ctx.dir, ctx.opts, &ctx.ids[index], &device),
            (ctx.replay, ctx.secrets),
            out.sink(),
        );
        let (report, open) = match started {
            Started::Done(r) => (r, None),
            Started::Open { trail, session, device } => {
                let r = session.replay(&trail, ctx.replay, out.sink());
                let r = TrailReport {
                    device: Some(device),
                    ..r
                };
                (r, Some((trail, session)))
            }
        };
        let browser = matches!(device, DeviceSpec::Web(_));
        let lost_now = if phones {
            lost_phone(ctx.project, &report, &device)
        } else {
            browser && lost_browser(&report, open.as_ref().map(|(_, s)| s))
        };
        if !lost_now {
            let report = finish(report, lost, ctx.secrets, open.as_ref().map(|(_, s)| s));
            out.done(index, report, open);
            shared.done(None);
            continue;
        }
        // The phone is lost: its trail runs once more elsewhere, and it leaves the pool. A lost
        // browser (it crashed) is not used again: the trail runs once more in a new one.
        drop(open);
        let name = device.label();
        lost.push(name.clone());
        let again = lost.len() == 1;
        out.lost(index, name, again);
        if again {
            shared.done(Some((index, lost)));
        } else {
            let report = TrailReport {
                outcome: Outcome::Error,
                ..report
            };
            // A lost device's trail (rare): read whole.
            out.done(index, finish(report, lost, ctx.secrets, None), None);
            shared.done(None);
        }
        if browser {
            continue;
        }
        let spare = shared.lock().spares.pop();
        match spare {
            Some(d) => device = d,
            None => return,
        }
    }
}

/// A job on a thread of its own: its trails' events are kept until each ends, then sent whole.
struct Sent<'a, 's> {
    rec: Recorder<'a, 's>,
    tx: mpsc::Sender<Msg>,
}

impl Out for Sent<'_, '_> {
    fn sink(&mut self) -> &mut dyn RunSink {
        &mut self.rec
    }
    fn done(&mut self, index: usize, report: TrailReport, open: Option<(Box<Trail>, Session)>) {
        let _ = self.tx.send(Msg::Done {
            index,
            report: Box::new(report),
            events: std::mem::take(&mut self.rec.events),
            open: open.map(Box::new),
        });
    }
    fn lost(&mut self, index: usize, device: String, again: bool) {
        let _ = self.tx.send(Msg::Lost { index, device, again });
    }
}

/// The only job, on the run's own thread: what its replays tell goes to the caller as it happens.
struct Here<'a, 'r, 's, 'f> {
    live: Live<'a, 's>,
    tally: &'a mut Tally<'r, 'f>,
}

/// The caller's sink, with each step's screen kept first.
struct Live<'a, 's> {
    screens: &'a Mutex<&'s mut Screens>,
    sink: &'a mut dyn RunSink,
}

impl RunSink for Live<'_, '_> {
    fn trail_started(&mut self, trail: &Trail, session: &Session) {
        self.sink.trail_started(trail, session);
    }
    fn step_started(&mut self, step: &Step) {
        self.sink.step_started(step);
    }
    fn step_retrying(&mut self, step: &Step, attempt: u32, error: &str) {
        self.sink.step_retrying(step, attempt, error);
    }
    fn step_finished(&mut self, step: &Step, report: &mut StepReport, screen: Option<Screenshot>) {
        if screen.is_some() {
            let mut screens = self.screens.lock().unwrap_or_else(|p| p.into_inner());
            KeepScreens(&mut screens).step_finished(step, report, screen);
        }
        self.sink.step_finished(step, report, None);
    }
    fn notice(&mut self, notice: &Notice) {
        self.sink.notice(notice);
    }
    fn trail_finished(&mut self, report: &TrailReport) {
        self.sink.trail_finished(report);
    }
}

impl Out for Here<'_, '_, '_, '_> {
    fn sink(&mut self) -> &mut dyn RunSink {
        &mut self.live
    }
    fn done(&mut self, index: usize, report: TrailReport, open: Option<(Box<Trail>, Session)>) {
        if let Some((trail, mut session)) = open {
            // The session's thread frees its records while this one frees the trail.
            session.close_soon();
            drop(trail);
        }
        self.tally.done(index, report);
    }
    fn lost(&mut self, index: usize, device: String, again: bool) {
        self.tally.lost(self.live.sink, index, device, again);
    }
}

/// The run's trails as they end, in trail order, and the devices lost.
struct Tally<'r, 'f> {
    files: &'r [PathBuf],
    results: Vec<Option<TrailReport>>,
    gone: Vec<String>,
    on_finished: &'r mut OnFinished<'f>,
}

impl Tally<'_, '_> {
    fn done(&mut self, index: usize, report: TrailReport) {
        self.results[index] = Some(report);
        let results = &self.results;
        if let Some(report) = &results[index] {
            (self.on_finished)(index, report, &|| results.iter().flatten().cloned().collect());
        }
    }

    fn lost(&mut self, sink: &mut dyn RunSink, index: usize, device: String, again: bool) {
        sink.notice(&Notice::DeviceLost {
            device: device.clone(),
            trail: self.files[index].display().to_string(),
            again,
        });
        self.gone.push(device);
    }
}

/// Whether the browser was lost during a web trail: the trail stopped or failed and its page no
/// longer answers (the browser crashed or was killed), or its session never started.
fn lost_browser(report: &TrailReport, session: Option<&Session>) -> bool {
    match (&report.outcome, session) {
        (Outcome::Error | Outcome::Failed, Some(s)) => s.view_tree().is_err(),
        // The browser did not start (a trail that did not parse fails without a session).
        (Outcome::Error, None) => true,
        _ => false,
    }
}

/// Whether the phone was lost during a trail: it stopped it (`error`), or the trail failed and the
/// phone no longer answers (a script's tool call that met the lost phone fails the step instead;
/// a phone that takes commands and never answers is as lost as an unplugged one).
fn lost_phone(project: &Project, report: &TrailReport, device: &DeviceSpec) -> bool {
    match report.outcome {
        Outcome::Error => true,
        Outcome::Failed => project.parts().lost(device),
        _ => false,
    }
}

/// Hands a finished trail's events to `sink`, in the order they happened.
fn tell(sink: &mut dyn RunSink, events: Vec<Event>, open: Option<&(Box<Trail>, Session)>) {
    for event in events {
        match event {
            Event::TrailStarted => {
                if let Some((trail, session)) = open {
                    sink.trail_started(trail, session);
                }
            }
            Event::StepStarted(step) => sink.step_started(&step),
            Event::StepRetrying(step, attempt, error) => sink.step_retrying(&step, attempt, &error),
            Event::StepFinished(step, mut report) => sink.step_finished(&step, &mut report, None),
            Event::Notice(n) => sink.notice(&n),
            Event::TrailFinished(report) => sink.trail_finished(&report),
        }
    }
}

/// Called with each finished trail's place, its report and a way to get the run's trails so far in
/// trail order (the interim reports).
pub(super) type OnFinished<'f> = dyn FnMut(usize, &TrailReport, &dyn Fn() -> Vec<TrailReport>) + 'f;

/// Runs `ctx.files` on `slots`; the reports in trail order. One device runs its trails on this
/// thread, telling `sink` as they go; several run a job each.
pub(super) fn run(
    ctx: &Ctx<'_, '_>,
    slots: Slots,
    screens: &mut Screens,
    sink: &mut dyn RunSink,
    on_finished: &mut OnFinished<'_>,
) -> Vec<TrailReport> {
    let shared = Shared {
        queue: Mutex::new(Queue {
            pending: (0..ctx.files.len()).map(|i| (i, Vec::new())).collect(),
            running: 0,
            spares: slots.spares,
        }),
        changed: Condvar::new(),
    };
    let screens = Mutex::new(screens);
    let mut tally = Tally {
        files: ctx.files,
        results: vec![None; ctx.files.len()],
        gone: Vec::new(),
        on_finished,
    };
    let alone = slots.active.len() == 1 && shared.lock().spares.is_empty();
    if alone {
        for device in slots.active {
            let mut here = Here {
                live: Live {
                    screens: &screens,
                    sink: &mut *sink,
                },
                tally: &mut tally,
            };
            job(ctx, device, slots.phones, &shared, &mut here);
        }
    } else {
        threaded(ctx, (slots.active, slots.phones), &shared, &screens, sink, &mut tally);
    }
    report_left(ctx, &shared, sink, &mut tally);
    tally
        .results
        .into_iter()
        .zip(ctx.files)
        .map(|(r, file)| r.unwrap_or_else(|| super::failed_trail(file, "not run".into())))
        .collect()
}

/// Several jobs, a thread each: each trail's events reach `sink` in one piece when it ends.
fn threaded(
    ctx: &Ctx<'_, '_>,
    (active, phones): (Vec<DeviceSpec>, bool),
    shared: &Shared,
    screens: &Mutex<&mut Screens>,
    sink: &mut dyn RunSink,
    tally: &mut Tally<'_, '_>,
) {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for device in active {
            let tx = tx.clone();
            scope.spawn(move || {
                let rec = Recorder {
                    screens,
                    events: Vec::new(),
                };
                job(ctx, device, phones, shared, &mut Sent { rec, tx });
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Msg::Done {
                    index,
                    report,
                    events,
                    open,
                } => {
                    tell(sink, events, open.as_deref());
                    drop(open);
                    tally.done(index, *report);
                }
                Msg::Lost { index, device, again } => tally.lost(sink, index, device, again),
            }
        }
    });
}

/// Every phone was lost: what is left is reported, never skipped in silence.
fn report_left(ctx: &Ctx<'_, '_>, shared: &Shared, sink: &mut dyn RunSink, tally: &mut Tally<'_, '_>) {
    let left: Vec<(usize, Vec<String>)> = shared.lock().pending.drain(..).collect();
    for (index, lost) in left {
        let file = &ctx.files[index];
        let report = TrailReport {
            outcome: Outcome::Error,
            error: Some(format!(
                "not run: no device of the pool is left ({} lost)",
                tally.gone.join(", ")
            )),
            ..super::failed_trail(file, String::new())
        };
        let report = finish(report, lost, ctx.secrets, None);
        sink.trail_finished(&report);
        tally.results[index] = Some(report);
    }
}
