//! A session: one device, one script engine, one log, on its own thread ([`thread`]). The
//! [`Session`] handle sends work to that thread; a project starts its sessions on warm threads
//! ([`WarmPool`]) whose engines are made already.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use serde_json::Value;
use trailblaze_host_functions::secrets::SecretStore;

use crate::budget::{CancelHandle, Deadline};
use crate::catalog::Catalog;
use crate::device::{Device, Platform, Screenshot, ViewTree};
use crate::dispatch::{self, CallError};
use crate::script::port::ScriptRuntime;
use crate::script::transpile::Transpiler;
use crate::secret::Redaction;
use crate::state::SessionCore;
pub use crate::state::Settings;
use crate::state::log::{LogEntry, SessionLog};
use thread::{EngineKey, Setup, Spawned, TopUp};
pub use warm::WarmPool;

mod thread;
mod trace;
mod warm;

/// Everything a session starts from.
pub struct SessionConfig {
    pub catalog: Arc<Catalog>,
    pub device: Box<dyn Device>,
    /// This session's secrets: what `{{secret:NAME}}` resolves to and what every output redacts.
    pub secrets: Arc<SecretStore>,
    /// The session writes `<out_dir>/<id>/log.jsonl`; `None` writes no files.
    pub out_dir: Option<PathBuf>,
    pub settings: Settings,
    pub transpiler: Arc<Transpiler>,
    /// A fixed id (tests, reports); generated when `None`.
    pub id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot start the session: {0}")]
    Start(String),
    #[error("the session's thread has stopped")]
    Gone,
}

/// Work for the session's thread. Only a tool call gets the script runtimes, and says whether it
/// may run a script: the engine is made for the first that may (or once the session idles), so a
/// session that only calls built-in tools never waits for one.
struct Job {
    scripts: bool,
    run: JobFn,
}

type JobFn = Box<dyn FnOnce(&SessionCore, &dyn ScriptRuntime) + Send>;

/// A handle to a running session. Dropping it ends the session.
pub struct Session {
    id: String,
    dir: Option<PathBuf>,
    /// What the session's device is, its catalog and its secrets' redaction, known at its start.
    platform: Platform,
    /// The device's classifier (`ios-iphone`), when it tells one.
    classifier: Option<String>,
    catalog: Arc<Catalog>,
    redact: Redaction,
    /// Secret values as recordings hold them (write-back): their placeholders.
    placeholders: crate::secret::Placeholders,
    deadline: Arc<Deadline>,
    /// Whether the session has a judge (else no call of it can cost anything).
    judged: bool,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

static SESSION_COUNTER: AtomicU64 = AtomicU64::new(0);

fn new_session_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let n = SESSION_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("s{secs}-{}-{n}", std::process::id())
}

impl Session {
    /// Starts making, on a thread of `pool`, the engine of a session about to start with this
    /// catalog, transpiler and limits; [`Session::start_warm`] then takes it (see
    /// [`Project::prepare_session`](crate::Project::prepare_session)).
    pub(crate) fn prepare(
        catalog: Arc<Catalog>,
        transpiler: Arc<Transpiler>,
        limits: crate::budget::Limits,
        pool: &WarmPool,
    ) {
        pool.prepare(EngineKey {
            catalog,
            transpiler,
            limits,
        });
    }

    /// Starts a session on a thread of its own: one from `pool` whose engine is made already when
    /// one waits, else a new one that makes its engine when first needed.
    pub(crate) fn start_warm(config: SessionConfig, pool: &WarmPool) -> Result<Session, SessionError> {
        let key = Session::engine_key(&config);
        let (spawned, top_up) = pool.take(&key).map_err(|e| SessionError::Start(e.to_string()))?;
        Session::hand_over(config, spawned, top_up)
    }

    fn engine_key(config: &SessionConfig) -> EngineKey {
        EngineKey {
            catalog: config.catalog.clone(),
            transpiler: config.transpiler.clone(),
            limits: config.settings.limits.clone(),
        }
    }

    /// Gives a started thread its session and waits until the session is ready for calls.
    fn hand_over(
        config: SessionConfig,
        spawned: Spawned,
        after_first_call: Option<TopUp>,
    ) -> Result<Session, SessionError> {
        let id = config.id.clone().unwrap_or_else(new_session_id);
        let platform = config.device.platform();
        let classifier = config.device.classifier();
        let catalog = config.catalog.clone();
        let redact = Redaction::new(&config.secrets.values_to_redact());
        let placeholders = crate::secret::Placeholders::new(&config.secrets.named_values());
        let dir = config.out_dir.as_ref().map(|d| d.join(&id));
        let judged = config.settings.judge.is_some();
        let log = match &dir {
            Some(d) => SessionLog::create(d).map_err(|e| SessionError::Start(format!("{}: {e}", d.display())))?,
            None => SessionLog::discard(),
        };
        let (jobs_tx, jobs) = mpsc::channel::<Job>();
        let (ready, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
        let Spawned {
            deadline,
            setup,
            thread,
        } = spawned;
        setup
            .send(Setup {
                config,
                after_first_call,
                log,
                jobs,
                ready,
            })
            .map_err(|_| SessionError::Start("the session thread stopped while starting".into()))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Session {
                id,
                dir,
                platform,
                classifier,
                catalog,
                redact,
                placeholders,
                deadline,
                judged,
                jobs: Some(jobs_tx),
                thread: Some(thread),
            }),
            Ok(Err(e)) => Err(SessionError::Start(e)),
            Err(_) => Err(SessionError::Start("the session thread stopped while starting".into())),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// `<out>/<id>`, where the log is, if the session writes files.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The platform of the session's device: which recordings it replays, which platform tools apply.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The device's classifier (`ios-iphone`): the recording key looked up before the platform's.
    pub fn classifier(&self) -> Option<&str> {
        self.classifier.as_deref()
    }

    /// What the session can call: its trailmap's tools and host functions.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.clone()
    }

    /// Replaces the session's secrets in texts meant for people.
    pub(crate) fn redaction(&self) -> &Redaction {
        &self.redact
    }

    /// Writes secret values as their placeholders in what a recording will replay (agent write-back).
    pub fn placeholders(&self) -> &crate::secret::Placeholders {
        &self.placeholders
    }

    /// Whether `assertWithAi` / `rememberWithAi` have an LLM to ask.
    pub fn has_judge(&self) -> bool {
        self.judged
    }

    /// What the session's `assertWithAi` / `rememberWithAi` calls cost so far (nothing without a judge).
    pub fn llm_cost(&self) -> crate::judge::LlmCost {
        if !self.judged {
            return Default::default();
        }
        self.run(|core| core.llm_cost.get()).unwrap_or_default()
    }

    /// Ends the running call from another thread (it fails with `cancelled`; the session stays usable).
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(self.deadline.clone())
    }

    /// Runs `f` on the session's thread, under a fresh deadline, and returns its result.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&SessionCore) -> R + Send + 'static,
    ) -> Result<R, SessionError> {
        self.submit(f)?.wait()
    }

    /// Sends `f` to the session's thread and returns at once; its result is read from the
    /// [`Pending`]. Jobs run in the order they were sent.
    pub(crate) fn submit<R: Send + 'static>(
        &self,
        f: impl FnOnce(&SessionCore) -> R + Send + 'static,
    ) -> Result<Pending<R>, SessionError> {
        self.send_job(false, move |core, _| f(core))
    }

    /// [`Session::submit`] for a call of tool `name`, which gets the script runtimes.
    fn submit_call<R: Send + 'static>(
        &self,
        name: &str,
        f: impl FnOnce(&SessionCore, &dyn ScriptRuntime) -> R + Send + 'static,
    ) -> Result<Pending<R>, SessionError> {
        self.send_job(self.catalog.may_run_scripts(name), f)
    }

    fn send_job<R: Send + 'static>(
        &self,
        scripts: bool,
        f: impl FnOnce(&SessionCore, &dyn ScriptRuntime) -> R + Send + 'static,
    ) -> Result<Pending<R>, SessionError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job = Job {
            scripts,
            run: Box::new(move |core, rt| {
                let _ = tx.send(f(core, rt));
            }),
        };
        self.jobs
            .as_ref()
            .ok_or(SessionError::Gone)?
            .send(job)
            .map_err(|_| SessionError::Gone)?;
        Ok(Pending(rx))
    }

    /// Calls tool `name` from outside (depth 0) through the one dispatcher, with a fresh deadline.
    pub fn call(&self, name: &str, args: Value) -> Result<Value, CallError> {
        let tool = name.to_string();
        let name = name.to_string();
        self.submit_call(&tool, move |core, rt| dispatch::call(core, rt, &name, args))
            .and_then(Pending::wait)
            .unwrap_or_else(|e| {
                Err(CallError::Failed {
                    tool,
                    message: e.to_string(),
                })
            })
    }

    /// [`Session::call`], and the steps logged with a `seq` above `after` (what the call did), in one
    /// trip to the session's thread: a live session asks for both after every call.
    pub fn call_with_steps(&self, name: &str, args: Value, after: u64) -> (Result<Value, CallError>, Vec<LogEntry>) {
        let (result, records, _) = self.send(name, args, after, true).wait_timed();
        (result, records)
    }

    /// [`Session::call_with_steps`] sent ahead: the caller does other work while the call runs (a
    /// replay reports one step while the next one's first call runs).
    /// The call's own step record comes back without its arguments (`null`): the caller has them
    /// (a replay's calls are its trail's), and copying them on the session's thread delayed the
    /// next call on every step.
    pub(crate) fn send_call_with_steps(&self, name: &str, args: Value, after: u64) -> PendingCall {
        self.send(name, args, after, false)
    }

    /// `own_args`: whether the call's own step record comes back with its arguments.
    fn send(&self, name: &str, args: Value, after: u64, own_args: bool) -> PendingCall {
        let name = name.to_string();
        let tool = name.clone();
        let pending = self.submit_call(&tool, move |core, rt| {
            let t = std::time::Instant::now();
            let result = dispatch::call(core, rt, &name, args);
            let took = t.elapsed();
            let records = steps_after(core, after, (!own_args).then_some(name.as_str()));
            (result, records, took)
        });
        PendingCall { tool, pending }
    }

    /// The tool definitions the LLM is offered now: the session's active toolsets, and the shortcuts
    /// whose start waypoint the screen is at (`setActiveToolSets` and moving around change them).
    pub fn offered_tools(&self) -> Vec<crate::catalog::ToolDefinition> {
        self.run(|core| core.offered()).unwrap_or_default()
    }

    /// Whether LLM-visible tool `name` is offered now, or why not.
    pub fn offered_now(&self, name: &str) -> Result<(), String> {
        let name = name.to_string();
        self.run(move |core| core.offered_now(&name))
            .unwrap_or_else(|e| Err(e.to_string()))
    }

    /// The toolsets active now, sorted.
    pub fn active_toolsets(&self) -> Vec<String> {
        self.run(|core| core.active_toolsets.borrow().iter().cloned().collect())
            .unwrap_or_default()
    }

    /// How many times the device captured its screen.
    pub fn captures(&self) -> u64 {
        self.run(|core| core.screen.captures()).unwrap_or(0)
    }

    /// The steps logged so far, in order, the most recent 10,000 at most (`log.jsonl` has all);
    /// placeholders, never secret values.
    pub fn steps(&self) -> Vec<LogEntry> {
        self.steps_after(0)
    }

    /// The steps with a `seq` above `seq`: what the calls since then did. A long live session asks
    /// this after every call, so it copies only the new records, not the whole log.
    pub fn steps_after(&self, seq: u64) -> Vec<LogEntry> {
        self.run(move |core| steps_after(core, seq, None)).unwrap_or_default()
    }

    /// The device's current view tree, captured now (not the cached snapshot, not redacted).
    pub fn view_tree(&self) -> Result<ViewTree, String> {
        self.run(|core| core.screen.with_device(|d| d.snapshot()).map_err(|e| e.to_string()))
            .map_err(|e| e.to_string())?
    }

    /// A screenshot of the device, for reports: secrets and fields that held one are masked.
    pub fn screenshot(&self) -> Result<Screenshot, String> {
        self.run(|core| core.screen.screenshot(&core.redact).map_err(|e| e.to_string()))
            .map_err(|e| e.to_string())?
    }

    /// A screenshot as [`Session::screenshot`] gives it, with where the fields a secret was typed
    /// into are (device pixels) and the screen's size: a picture for a model paints them over.
    pub fn screenshot_and_secret_fields(&self) -> Result<(Screenshot, crate::snapshot::SecretFields), String> {
        self.run(|core| {
            // The fields first: their capture settles a secret typed a moment ago.
            let fields = core.screen.secret_fields().map_err(|e| e.to_string())?;
            let shot = core.screen.screenshot(&core.redact).map_err(|e| e.to_string())?;
            Ok((shot, fields))
        })
        .map_err(|e| e.to_string())?
    }

    /// What the device tells about the last step beyond its screen (a page's URL, console errors,
    /// failed requests, dialogs), redacted; `None` for devices that tell nothing.
    pub fn step_notes(&self) -> Option<serde_json::Value> {
        self.send_step_notes()?.wait().ok().flatten()
    }

    /// [`Session::step_notes`], sent to the session's thread and read later: jobs run in order, so
    /// the notes are those of the jobs sent before this one, whatever is sent after.
    pub(crate) fn send_step_notes(&self) -> Option<Pending<Option<serde_json::Value>>> {
        self.submit(|core| {
            let mut notes = core.screen.with_device(|d| Ok(d.step_notes())).ok().flatten()?;
            core.redact.value(&mut notes);
            Some(notes)
        })
        .ok()
    }
}

/// A job's result, still to be read.
pub(crate) struct Pending<R>(mpsc::Receiver<R>);

impl<R> Pending<R> {
    pub(crate) fn wait(self) -> Result<R, SessionError> {
        spin_recv(&self.0, REPLY_SPIN).ok_or(SessionError::Gone)
    }
}

/// A call sent with [`Session::send_call_with_steps`].
pub(crate) struct PendingCall {
    tool: String,
    pending: Result<Pending<CallDone>, SessionError>,
}

/// A call's result, the steps it logged and how long it ran on the session's thread.
type CallDone = (Result<Value, CallError>, Vec<LogEntry>, std::time::Duration);

impl PendingCall {
    /// The call's result, the steps it logged and how long it ran (timed where it ran: a call sent
    /// ahead may be read well after it ended).
    pub(crate) fn wait_timed(self) -> CallDone {
        self.pending.and_then(Pending::wait).unwrap_or_else(|e| {
            let failed = CallError::Failed {
                tool: self.tool,
                message: e.to_string(),
            };
            (Err(failed), Vec::new(), std::time::Duration::ZERO)
        })
    }
}

impl Session {
    /// Asks the session's thread to end once the jobs sent are done, without waiting: the caller
    /// frees what it holds meanwhile (a long trail's parse), and dropping the session then waits
    /// for the thread. Nothing can be sent after.
    pub(crate) fn close_soon(&mut self) {
        self.jobs.take();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The session's step records with a `seq` above `seq`, copied. `without_args_of`: a call whose own record (the first, at
/// depth 0) comes back without its arguments (`null`), which its caller has.
fn steps_after(core: &SessionCore, seq: u64, without_args_of: Option<&str>) -> Vec<LogEntry> {
    let log = core.log.borrow();
    let records = log.records();
    let from = records.partition_point(|r| r.seq <= seq);
    let records = &records[from..];
    match records.split_first() {
        Some((own, rest)) if own.depth == 0 && without_args_of == Some(own.tool.as_str()) => {
            let mut steps = Vec::with_capacity(records.len());
            steps.push(LogEntry {
                seq: own.seq,
                depth: own.depth,
                tool: own.tool.clone(),
                args: Value::Null,
                ok: own.ok,
                masked: own.masked,
                error: own.error.clone(),
                millis: own.millis,
            });
            steps.extend_from_slice(rest);
            steps
        }
        _ => records.to_vec(),
    }
}

/// How long a caller waiting for its reply polls before it sleeps. Waking a sleeping thread on an
/// idle machine costs tens of microseconds, more than most calls: measured on this kind of machine,
/// a replayed step took 100–190 µs with both threads sleeping between handoffs and 20 µs without.
const REPLY_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// How long the session's thread polls for the next call after one ends. Calls come in bursts (a
/// trail's steps, an agent's turns, an MCP client's round trips of a few hundred microseconds), so
/// the next one usually arrives within this; an idle session sleeps after it and costs nothing.
const NEXT_CALL_SPIN: std::time::Duration = std::time::Duration::from_millis(1);

/// `rx.recv()`, polling for `spin` first; `None` once the sender is gone.
fn spin_recv<T>(rx: &mpsc::Receiver<T>, spin: std::time::Duration) -> Option<T> {
    match spin_recv_within(rx, spin, None) {
        Next::Got(v) => Some(v),
        Next::Idle | Next::Closed => None,
    }
}

/// What waiting for the next message gave.
enum Next<T> {
    Got(T),
    /// Nothing came within the time given.
    Idle,
    /// The sender is gone.
    Closed,
}

/// [`spin_recv`], waiting `idle` at most in all when given.
fn spin_recv_within<T>(
    rx: &mpsc::Receiver<T>,
    spin: std::time::Duration,
    idle: Option<std::time::Duration>,
) -> Next<T> {
    let started = std::time::Instant::now();
    loop {
        match rx.try_recv() {
            Ok(v) => return Next::Got(v),
            Err(mpsc::TryRecvError::Disconnected) => return Next::Closed,
            Err(mpsc::TryRecvError::Empty) if started.elapsed() < spin => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Empty) => break,
        }
    }
    let got = match idle {
        None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        Some(idle) => rx.recv_timeout(idle.saturating_sub(started.elapsed())),
    };
    match got {
        Ok(v) => Next::Got(v),
        Err(mpsc::RecvTimeoutError::Timeout) => Next::Idle,
        Err(mpsc::RecvTimeoutError::Disconnected) => Next::Closed,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// A replayed call's own record comes back without its arguments (the replay has them); the
    /// public `call_with_steps` keeps them (an agent records from them).
    #[test]
    fn a_replayed_calls_own_record_comes_back_without_its_arguments() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps");
        let project = crate::Project::open(&root, crate::ProjectOptions::default()).expect("the demo opens");
        let session = project
            .open_session("demo", crate::SessionOptions::default())
            .expect("a session starts");
        let args = json!({ "appId": "com.example.demo" });
        let (result, records, _) = session.send_call_with_steps("launchApp", args.clone(), 0).wait_timed();
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(
            records.first().map(|r| (r.tool.as_str(), &r.args)),
            Some(("launchApp", &json!(null)))
        );
        let after = records.last().map_or(0, |r| r.seq);
        let (result, records) = session.call_with_steps("launchApp", args.clone(), after);
        assert!(result.is_ok(), "{result:?}");
        // Control: the same call through the public path keeps them.
        assert_eq!(records.first().map(|r| &r.args), Some(&args));
    }
}
