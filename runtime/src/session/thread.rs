//! The session's thread: the one place that wires the session's state ([`SessionCore`]) to its
//! script runtimes, embedded QuickJS and, on first use, the Node.js subprocess runtime.
//!
//! The thread makes its engine first and learns which session it serves after: the engine needs
//! only what a catalog and the limits give ([`EngineKey`]), so a thread can be started before its
//! session is asked for (the warm pool) and every session starts the same way.

use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use serde_json::Value;

use super::{Job, NEXT_CALL_SPIN, SessionConfig, spin_recv};
use crate::budget::{Deadline, Limits};
use crate::catalog::Catalog;
use crate::script::port::{Callbacks, RuntimeKind, ScriptOutcome, ScriptRuntime, ScriptedTool};
use crate::script::quickjs::{self, Embedded, EmbeddedConfig};
#[cfg(feature = "subprocess")]
use crate::script::subprocess::{Subprocess, SubprocessConfig};
use crate::script::transpile::Transpiler;
use crate::snapshot::Screen;
use crate::state::SessionCore;
use crate::state::log::SessionLog;

/// What a session's engine is made from: two sessions with equal keys can use each other's warm
/// threads. Catalog and transpiler compare by identity (a project builds each once).
#[derive(Clone)]
pub(crate) struct EngineKey {
    pub catalog: Arc<Catalog>,
    pub transpiler: Arc<Transpiler>,
    pub limits: Limits,
}

impl PartialEq for EngineKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.catalog, &other.catalog)
            && Arc::ptr_eq(&self.transpiler, &other.transpiler)
            && self.limits == other.limits
    }
}

/// Run by the session's thread once its first call is done (or it ends without one).
pub(crate) type TopUp = Box<dyn FnOnce() + Send>;

/// The rest of a session, handed to its thread once the session is started.
pub(super) struct Setup {
    pub config: SessionConfig,
    pub after_first_call: Option<TopUp>,
    pub log: SessionLog,
    pub jobs: mpsc::Receiver<Job>,
    pub ready: mpsc::SyncSender<Result<(), String>>,
}

/// A started thread waiting for its [`Setup`]. Dropping it unused ends the thread once its engine
/// is made.
pub(crate) struct Spawned {
    pub deadline: Arc<Deadline>,
    pub setup: mpsc::SyncSender<Setup>,
    pub thread: JoinHandle<()>,
}

/// Starts a session thread, which makes its engine at once.
pub(super) fn spawn(key: EngineKey) -> std::io::Result<Spawned> {
    let deadline = Deadline::new();
    let (setup, setups) = mpsc::sync_channel::<Setup>(1);
    let stack = quickjs::thread_stack_bytes(&key.limits);
    let d = deadline.clone();
    let thread = std::thread::Builder::new()
        .name("session".into())
        .stack_size(stack)
        .spawn(move || engine_thread(key, d, setups))?;
    Ok(Spawned {
        deadline,
        setup,
        thread,
    })
}

/// The script runtime the dispatcher sees on this session: each scripted tool goes to the runtime
/// its spec names.
struct Runtimes<'a> {
    embedded: &'a dyn ScriptRuntime,
    #[cfg(feature = "subprocess")]
    subprocess: &'a Subprocess,
}

impl ScriptRuntime for Runtimes<'_> {
    fn run_tool(
        &self,
        back: &dyn Callbacks,
        tool: &ScriptedTool,
        name: &str,
        args: Value,
    ) -> Result<ScriptOutcome, String> {
        match tool.runtime {
            RuntimeKind::Embedded => self.embedded.run_tool(back, tool, name, args),
            #[cfg(feature = "subprocess")]
            RuntimeKind::Subprocess => self.subprocess.run_tool(back, tool, name, args),
            #[cfg(not(feature = "subprocess"))]
            RuntimeKind::Subprocess => Err(format!(
                "{name} asks for `runtime: subprocess`, and this build of trailblaze has no Node.js runtime \
                 (it was built without the `subprocess` feature)"
            )),
        }
    }

    fn run_inline(&self, back: &dyn Callbacks, source: &str, input: Value) -> Result<Value, String> {
        self.embedded.run_inline(back, source, input)
    }
}

fn engine_thread(key: EngineKey, deadline: Arc<Deadline>, setups: mpsc::Receiver<Setup>) {
    // The engine needs nothing of the session: its bindings call the dispatcher through the
    // callbacks each call hands to `run_tool`.
    let engine = Embedded::create(EmbeddedConfig {
        limits: key.limits.clone(),
        deadline: deadline.clone(),
        transpiler: key.transpiler.clone(),
        root: key.catalog.script_root.clone(),
        tool_names: key.catalog.tool_names(),
        host_names: key.catalog.host_names(),
    });
    drop(key);
    let Ok(setup) = setups.recv() else { return };
    match engine {
        Ok(engine) => serve(setup, &engine, &deadline),
        Err(e) => {
            let _ = setup.ready.send(Err(format!("the script engine: {e}")));
        }
    }
}

/// Builds the session's state around its engine and runs its calls until the handle is dropped.
fn serve(setup: Setup, engine: &Embedded, deadline: &Arc<Deadline>) {
    let Setup {
        config,
        mut after_first_call,
        log,
        jobs,
        ready,
    } = setup;
    let SessionConfig {
        catalog,
        device,
        secrets,
        settings,
        transpiler,
        ..
    } = config;
    let root = catalog.script_root.clone();
    let limits = settings.limits.clone();
    let core = SessionCore::new(catalog, settings, secrets, log, Screen::new(device), deadline.clone());
    #[cfg(feature = "subprocess")]
    let subprocess = Subprocess::new(SubprocessConfig {
        root,
        transpiler,
        deadline: deadline.clone(),
        limits: limits.clone(),
        redact: core.secrets().values_to_redact(),
    });
    #[cfg(not(feature = "subprocess"))]
    let _ = (root, transpiler);
    let _ = ready.send(Ok(()));
    while let Some(job) = spin_recv(&jobs, NEXT_CALL_SPIN) {
        deadline.begin(&limits);
        // A panic in a job must not take the session down with it; the caller sees `Gone` for that
        // one job only because its reply channel is dropped.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine.enter(|embedded| {
                let rt = Runtimes {
                    embedded,
                    #[cfg(feature = "subprocess")]
                    subprocess: &subprocess,
                };
                job(&core, &rt)
            })
        }));
        deadline.end();
        if let Some(top_up) = after_first_call.take() {
            top_up();
        }
    }
    if let Some(top_up) = after_first_call {
        top_up();
    }
}
