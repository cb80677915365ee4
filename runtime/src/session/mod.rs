//! A session: one device, one QuickJS context, one log, on its own thread. The [`Session`] handle
//! sends work to that thread; [`SessionCore`] is what the dispatcher sees there.

pub mod log;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use rquickjs::Ctx;
use serde_json::Value;
use trailblaze_host_functions::secrets::SecretStore;

use crate::catalog::Catalog;
use crate::device::{Device, DeviceError};
use crate::dispatch::{self, CallError};
use crate::script::engine::{self, EngineLimits, ScriptState};
use crate::script::transpile::Transpiler;
use crate::snapshot::Snapshot;
use log::SessionLog;

/// Settings of one session.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Calls nest at most this deep (tools, delegations, host functions together).
    pub depth_cap: u32,
    pub limits: EngineLimits,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            depth_cap: 16,
            limits: EngineLimits::default(),
        }
    }
}

/// What the dispatcher sees on the session's thread.
pub struct SessionCore {
    pub id: String,
    pub catalog: Arc<Catalog>,
    pub settings: Settings,
    pub secrets: Arc<SecretStore>,
    pub log: RefCell<SessionLog>,
    pub script: ScriptState,
    /// Secret values: what snapshots and logs show as `***`.
    pub redact: Vec<String>,
    device: RefCell<Box<dyn Device>>,
    snapshot: RefCell<Option<Arc<Snapshot>>>,
}

impl SessionCore {
    /// Runs `f` on the device; a device error becomes the tool's error message.
    pub fn with_device<R>(&self, f: impl FnOnce(&mut dyn Device) -> Result<R, DeviceError>) -> Result<R, String> {
        let mut device = self.device.borrow_mut();
        f(device.as_mut()).map_err(|e| e.to_string())
    }

    /// The current snapshot: the cached one, or a fresh capture.
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, String> {
        if let Some(s) = self.snapshot.borrow().as_ref() {
            return Ok(s.clone());
        }
        let tree = self.with_device(|d| d.snapshot())?;
        let snap = Arc::new(Snapshot::from_tree(tree));
        *self.snapshot.borrow_mut() = Some(snap.clone());
        Ok(snap)
    }

    pub fn invalidate_snapshot(&self) {
        self.snapshot.borrow_mut().take();
    }

    /// How many times the device captured its screen.
    pub fn captures(&self) -> u64 {
        self.device.borrow().captures()
    }
}

/// Everything a session starts from.
pub struct SessionConfig {
    pub catalog: Arc<Catalog>,
    pub device: Box<dyn Device>,
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

type Job = Box<dyn for<'js> FnOnce(&SessionCore, &Ctx<'js>) + Send>;

/// A handle to a running session. Dropping it ends the session.
pub struct Session {
    id: String,
    dir: Option<PathBuf>,
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
    pub fn start(config: SessionConfig) -> Result<Session, SessionError> {
        let id = config.id.clone().unwrap_or_else(new_session_id);
        let dir = config.out_dir.as_ref().map(|d| d.join(&id));
        let log = match &dir {
            Some(d) => SessionLog::create(d).map_err(|e| SessionError::Start(format!("{}: {e}", d.display())))?,
            None => SessionLog::discard(),
        };
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
        let thread_id = id.clone();
        let stack = engine::thread_stack_bytes(&config.settings.limits);
        let thread = std::thread::Builder::new()
            .name(format!("session-{thread_id}"))
            .stack_size(stack)
            .spawn(move || session_thread(config, thread_id, log, jobs_rx, ready_tx))
            .map_err(|e| SessionError::Start(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Session {
                id,
                dir,
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

    /// Runs `f` on the session's thread and returns its result.
    pub fn run<R: Send + 'static>(
        &self,
        f: impl for<'js> FnOnce(&SessionCore, &Ctx<'js>) -> R + Send + 'static,
    ) -> Result<R, SessionError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |core, ctx| {
            let _ = tx.send(f(core, ctx));
        });
        self.jobs
            .as_ref()
            .ok_or(SessionError::Gone)?
            .send(job)
            .map_err(|_| SessionError::Gone)?;
        rx.recv().map_err(|_| SessionError::Gone)
    }

    /// Calls tool `name` from outside (depth 0) through the one dispatcher, with a fresh deadline.
    pub fn call(&self, name: &str, args: Value) -> Result<Value, CallError> {
        let name = name.to_string();
        let tool = name.clone();
        self.run(move |core, ctx| {
            core.script.begin_call();
            let r = dispatch::call(core, ctx, &name, args, 0);
            core.script.end_call(ctx);
            r
        })
        .unwrap_or_else(|e| {
            Err(CallError::Failed {
                tool,
                message: e.to_string(),
            })
        })
    }

    /// How many times the device captured its screen.
    pub fn captures(&self) -> u64 {
        self.run(|core, _| core.captures()).unwrap_or(0)
    }

    /// Steps logged so far.
    pub fn steps(&self) -> u64 {
        self.run(|core, _| core.log.borrow().steps()).unwrap_or(0)
    }

    /// How many `.ts` files swc actually transpiled in this process.
    pub fn transpile_count(&self) -> u64 {
        self.run(|core, _| core.script.transpiler.transpile_count())
            .unwrap_or(0)
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

fn session_thread(
    config: SessionConfig,
    id: String,
    mut log: SessionLog,
    jobs: mpsc::Receiver<Job>,
    ready: mpsc::SyncSender<Result<(), String>>,
) {
    let SessionConfig {
        catalog,
        device,
        settings,
        transpiler,
        ..
    } = config;
    let (engine, script) = match engine::create(settings.limits.clone(), transpiler, catalog.script_root.clone()) {
        Ok(e) => e,
        Err(e) => {
            let _ = ready.send(Err(format!("the script engine: {e}")));
            return;
        }
    };
    let secrets = catalog.host_env.secrets.clone();
    let redact = secrets.values_to_redact();
    log.set_redactions(redact.clone());
    let core = Rc::new(SessionCore {
        id,
        catalog,
        settings,
        secrets,
        log: RefCell::new(log),
        script,
        redact,
        device: RefCell::new(device),
        snapshot: RefCell::new(None),
    });
    if let Err(e) = engine::install(&engine, core.clone()) {
        let _ = ready.send(Err(format!("the script engine: {e}")));
        return;
    }
    let _ = ready.send(Ok(()));
    while let Ok(job) = jobs.recv() {
        engine.context.with(|ctx| {
            // A panic in a job must not take the session down with it; the caller sees `Gone` for that
            // one job only because its reply channel is dropped.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&core, &ctx)));
        });
    }
    drop(engine);
}
