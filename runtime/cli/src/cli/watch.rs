//! `run --watch` and `check --watch`: the project stays open (its catalogs, transpile cache and warm
//! sessions with it); on save, the trails a change touches ([`trailblaze::watch`]) are run or checked
//! again, each round announced by one line. Ctrl-C ends it cleanly: between rounds at once, during
//! a run by cancelling the calls under way; a second Ctrl-C ends the process outright.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};
use trailblaze::device::Screenshot;
use trailblaze::report::{Notice, StepReport, TrailReport};
use trailblaze::watch::{Touched, touched, trails_to_rerun};
use trailblaze::{CancelHandle, Project, RunSink, Session, Step, Trail};

use super::Failure;
use super::output::err;

/// After the first event of a save, how long the folder must stay quiet before the round starts
/// (an editor writes a file in several steps), and the longest a round waits for that.
const QUIET: Duration = Duration::from_millis(150);
const MAX_GATHER: Duration = Duration::from_millis(1500);

static STOP: AtomicBool = AtomicBool::new(false);
static PRESSES: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_interrupt(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: signal(2) and raise(3) are async-signal-safe; the second Ctrl-C ends the process
        // as it would have without a handler (a browser it started dies with it: see device/web).
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
    }
}

/// Ctrl-C asks the watch to stop instead of ending the process.
fn catch_interrupt() {
    // SAFETY: the handler only touches atomics and async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t);
    }
}

fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The folders watched and what comes out of them.
pub struct Watch {
    events: mpsc::Receiver<notify::Result<notify::Event>>,
    _watcher: notify::RecommendedWatcher,
    /// Files under here (the run's outputs) are never changes.
    out: Option<PathBuf>,
}

impl Watch {
    /// Watches the trailmaps folder and `roots` (the folders given, recursively; a trail file given,
    /// its folder); catches Ctrl-C from here on.
    pub fn start(project: &Project, roots: &[PathBuf], out: Option<&Path>) -> Result<Watch, Failure> {
        let mut folders: Vec<PathBuf> = roots.iter().filter(|r| r.is_dir()).cloned().collect();
        folders.push(project.trailmaps.root.clone());
        let files: Vec<&PathBuf> = roots.iter().filter(|r| r.is_file()).collect();
        let (tx, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(move |e| {
            let _ = tx.send(e);
        })
        .map_err(|e| Failure::Usage(anyhow::anyhow!("cannot watch for changes: {e}")))?;
        let mut watched = Vec::new();
        for dir in &folders {
            watcher
                .watch(dir, RecursiveMode::Recursive)
                .map_err(|e| Failure::Usage(anyhow::anyhow!("cannot watch {}: {e}", dir.display())))?;
            watched.push(dir.display().to_string());
        }
        // A trail named alone: its folder, not the file (an editor replaces the file on save).
        for file in files {
            let dir = file
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if watcher.watch(dir, RecursiveMode::NonRecursive).is_ok() {
                watched.push(file.display().to_string());
            }
        }
        catch_interrupt();
        err!("watch: watching {} (Ctrl-C to stop)", watched.join(", "));
        Ok(Watch {
            events,
            _watcher: watcher,
            out: out.map(|o| std::path::absolute(o).unwrap_or_else(|_| o.to_path_buf())),
        })
    }

    /// The files changed in the next save, gathered until the folders are quiet; `None` on Ctrl-C.
    pub fn next(&self) -> Option<Vec<PathBuf>> {
        let mut changed: Vec<PathBuf> = Vec::new();
        let mut first: Option<Instant> = None;
        loop {
            if stopping() {
                return None;
            }
            let wait = match first {
                None => Duration::from_millis(100),
                Some(at) if at.elapsed() >= MAX_GATHER => return Some(changed),
                Some(_) => QUIET,
            };
            match self.events.recv_timeout(wait) {
                Ok(Ok(event)) => {
                    let counts = matches!(
                        event.kind,
                        EventKind::Create(_)
                            | EventKind::Modify(_)
                            | EventKind::Remove(_)
                            | EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write))
                    );
                    for path in event.paths.into_iter().filter(|_| counts) {
                        let abs = std::path::absolute(&path).unwrap_or(path);
                        if self.out.as_ref().is_some_and(|o| abs.starts_with(o)) || changed.contains(&abs) {
                            continue;
                        }
                        changed.push(abs);
                        first.get_or_insert_with(Instant::now);
                    }
                }
                Ok(Err(e)) => err!("watch: {e}"),
                Err(mpsc::RecvTimeoutError::Timeout) if first.is_some() => return Some(changed),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Waits for a save that touches something in `project`, reloading what changed. `None` on
    /// Ctrl-C.
    pub fn next_touch(&self, project: &mut Project) -> Option<Touched> {
        loop {
            let changed = self.next()?;
            let t = touched(project, &changed);
            if t.is_empty() {
                continue;
            }
            if let Err(e) = project.reload(&t.trailmaps) {
                err!("watch: the trailmaps no longer load; fix them and save again:");
                super::report(&anyhow::anyhow!(e));
                continue;
            }
            return Some(t);
        }
    }
}

/// `a.trail.yaml, tools/x.ts and 2 more`: what a round is about.
fn names(t: &Touched, root: &Path) -> String {
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let shown: Vec<String> = t
        .files
        .iter()
        .take(3)
        .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
        .collect();
    match t.files.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}

/// One round's work: run (or check) these trails, after a save that touched this.
pub type Round<'a> = dyn FnMut(&Project, &[PathBuf], &Touched) -> Result<(), Failure> + 'a;

/// The watch loop: `once` runs (or checks) a list of trails; `select` finds the trails watched
/// now (a new trail file joins). Returns when Ctrl-C is pressed, after `watch: stopped`, the last
/// line it prints: the project and the watch are dropped first (their sessions' threads joined), so
/// nothing they end with can print after it.
pub fn rounds(
    mut owned: Project,
    watch: Watch,
    select: &mut dyn FnMut(&Project) -> Result<Vec<PathBuf>, Failure>,
    once: &mut Round<'_>,
) -> Result<(), Failure> {
    let project = &mut owned;
    let mut round = 1;
    loop {
        err!("watch: waiting for changes (Ctrl-C to stop)");
        let Some(t) = watch.next_touch(project) else {
            break;
        };
        round += 1;
        let trails = match select(project) {
            Ok(trails) => trails_to_rerun(project, &trails, &t),
            Err(e) => {
                show(e);
                continue;
            }
        };
        let what = names(&t, &project.trailmaps.root);
        err!(
            "watch: round {round}: {what} changed; {} trail(s) to run again",
            trails.len()
        );
        if let Err(e) = once(project, &trails, &t) {
            show(e);
        }
        if stopping() {
            break;
        }
    }
    drop(watch);
    drop(owned);
    err!("watch: stopped");
    Ok(())
}

pub fn show(e: Failure) {
    match e {
        Failure::Failed(e) | Failure::Usage(e) => super::report(&e),
        Failure::Reported(_) => {}
    }
}

/// The sessions of the run under way, so Ctrl-C can cancel their calls: shared with the thread
/// that does it.
#[derive(Clone, Default)]
pub struct Cancels(Arc<Mutex<Vec<CancelHandle>>>);

impl Cancels {
    /// Runs `f` while a thread cancels every call of the run once Ctrl-C is pressed (again and
    /// again, so the next call of a trail is stopped too, until the run returns).
    pub fn during<R>(&self, f: impl FnOnce() -> R) -> R {
        let done = Arc::new(AtomicBool::new(false));
        let (handles, finished) = (self.0.clone(), done.clone());
        let guard = std::thread::spawn(move || {
            while !finished.load(Ordering::SeqCst) {
                if stopping() {
                    for h in handles.lock().map(|h| h.clone()).unwrap_or_default() {
                        h.cancel();
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let r = f();
        done.store(true, Ordering::SeqCst);
        let _ = guard.join();
        if let Ok(mut h) = self.0.lock() {
            h.clear();
        }
        r
    }
}

/// A run's sink that also keeps each session's cancel handle.
pub struct Cancelling<'a> {
    pub inner: &'a mut dyn RunSink,
    pub cancels: &'a Cancels,
}

impl RunSink for Cancelling<'_> {
    fn trail_started(&mut self, trail: &Trail, session: &Session) {
        if let Ok(mut h) = self.cancels.0.lock() {
            h.push(session.cancel_handle());
        }
        self.inner.trail_started(trail, session);
    }
    fn step_started(&mut self, step: &Step) {
        self.inner.step_started(step);
    }
    fn step_retrying(&mut self, step: &Step, attempt: u32, error: &str) {
        self.inner.step_retrying(step, attempt, error);
    }
    fn step_finished(&mut self, step: &Step, report: &mut StepReport, screen: Option<Screenshot>) {
        self.inner.step_finished(step, report, screen);
    }
    fn notice(&mut self, notice: &Notice) {
        self.inner.notice(notice);
    }
    fn trail_finished(&mut self, report: &TrailReport) {
        self.inner.trail_finished(report);
    }
}
