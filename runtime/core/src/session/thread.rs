//! The session's thread: the one place that wires the session's state ([`SessionCore`]) to its
//! script runtimes, embedded QuickJS and, on first use, the Node.js subprocess runtime.
//!
//! The engine needs only what a catalog and the limits give ([`EngineKey`]), so a thread started
//! before its session is asked for (the warm pool) makes it first and learns which session it
//! serves after. A thread started for a session already waiting makes it when a call may run a
//! script, or once the session idles ([`IDLE_BEFORE_ENGINE`]): a session that only calls built-in
//! tools (`trailblaze tool snapshot`) never waits for an engine it does not use.

use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use serde_json::Value;

use super::{Job, NEXT_CALL_SPIN, Next, SessionConfig, spin_recv_within};
use crate::budget::{Deadline, Limits};
use crate::catalog::Catalog;
use crate::script::port::{Callbacks, RuntimeKind, ScriptOutcome, ScriptRuntime, ScriptedTool};
use crate::script::quickjs::{self, Embedded, EmbeddedConfig};
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

/// Starts a session thread ahead of its session: it makes its engine at once.
pub(super) fn spawn(key: EngineKey) -> std::io::Result<Spawned> {
    start(key, true)
}

/// Starts a session thread for a session waiting for it: the engine is made when first needed.
pub(super) fn spawn_lazy(key: EngineKey) -> std::io::Result<Spawned> {
    start(key, false)
}

/// How long a session whose engine is not made yet may idle before its thread makes it anyway, so
/// that a later script does not wait for it (an MCP client, an app's test between calls).
const IDLE_BEFORE_ENGINE: std::time::Duration = std::time::Duration::from_millis(20);

fn start(key: EngineKey, eager: bool) -> std::io::Result<Spawned> {
    let deadline = Deadline::new();
    let (setup, setups) = mpsc::sync_channel::<Setup>(1);
    let stack = quickjs::thread_stack_bytes(&key.limits);
    let d = deadline.clone();
    let thread = std::thread::Builder::new()
        .name("session".into())
        .stack_size(stack)
        .spawn(move || engine_thread(key, d, setups, eager))?;
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
    subprocess: &'a Subprocess,
}

impl ScriptRuntime for Runtimes<'_> {
    fn run_tool(
        &self,
        back: &dyn Callbacks,
        tool: &ScriptedTool,
        name: &str,
        args: &Value,
    ) -> Result<ScriptOutcome, String> {
        match tool.runtime {
            RuntimeKind::Embedded => self.embedded.run_tool(back, tool, name, args),
            RuntimeKind::Subprocess => self.subprocess.run_tool(back, tool, name, args),
        }
    }

    fn run_inline(&self, back: &dyn Callbacks, source: &str, input: Value) -> Result<Value, String> {
        self.embedded.run_inline(back, source, input)
    }
}

/// A runtime for calls that run no script, used until the engine is made (or when making it failed).
struct NoEngine<'a>(&'a str);

impl ScriptRuntime for NoEngine<'_> {
    fn run_tool(&self, _: &dyn Callbacks, _: &ScriptedTool, _: &str, _: &Value) -> Result<ScriptOutcome, String> {
        Err(self.0.to_string())
    }

    fn run_inline(&self, _: &dyn Callbacks, _: &str, _: Value) -> Result<Value, String> {
        Err(self.0.to_string())
    }
}

/// The session's engine, made once: before the session (`eager`), or when first needed.
struct Engine {
    config: EmbeddedConfig,
    made: Option<Result<Embedded, String>>,
}

impl Engine {
    fn make(&mut self) -> &Result<Embedded, String> {
        self.made
            .get_or_insert_with(|| Embedded::create(self.config.clone()).map_err(|e| format!("the script engine: {e}")))
    }
}

fn engine_thread(key: EngineKey, deadline: Arc<Deadline>, setups: mpsc::Receiver<Setup>, eager: bool) {
    // The engine needs nothing of the session: its bindings call the dispatcher through the
    // callbacks each call hands to `run_tool`.
    let mut engine = Engine {
        config: EmbeddedConfig {
            limits: key.limits.clone(),
            deadline: deadline.clone(),
            transpiler: key.transpiler.clone(),
            root: key.catalog.script_root.clone(),
            tool_names: key.catalog.tool_names(),
            host_names: key.catalog.host_names(),
            host_functions: key.catalog.host_functions(),
        },
        made: None,
    };
    drop(key);
    if eager {
        engine.make();
    }
    let Ok(setup) = setups.recv() else { return };
    // Made ahead and failed: the session does not start, as it would not start its scripts.
    if let Some(Err(e)) = &engine.made {
        let _ = setup.ready.send(Err(e.clone()));
        return;
    }
    serve(setup, engine, &deadline);
}

/// Builds the session's state around its engine and runs its calls until the handle is dropped.
fn serve(setup: Setup, mut engine: Engine, deadline: &Arc<Deadline>) {
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
    let screen = Screen::new(device).painted_by(catalog.painter.clone());
    let core = SessionCore::new(catalog, settings, secrets, log, screen, deadline.clone());
    let subprocess = Subprocess::new(SubprocessConfig {
        root,
        transpiler,
        deadline: deadline.clone(),
        limits: limits.clone(),
        redact: core.secrets().values_to_redact(),
    });
    let _ = ready.send(Ok(()));
    loop {
        let idle = engine.made.is_none().then_some(IDLE_BEFORE_ENGINE);
        let job = match spin_recv_within(&jobs, NEXT_CALL_SPIN, idle) {
            Next::Got(job) => job,
            Next::Idle => {
                engine.make();
                continue;
            }
            Next::Closed => break,
        };
        // Before the call's deadline starts: making the engine is not the call's to pay for.
        if job.scripts {
            engine.make();
        }
        deadline.begin(&limits);
        // A panic in a job must not take the session down with it; the caller sees `Gone` for that
        // one job only because its reply channel is dropped.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let run = |embedded: &dyn ScriptRuntime| {
                let rt = Runtimes {
                    embedded,
                    subprocess: &subprocess,
                };
                (job.run)(&core, &rt)
            };
            match &engine.made {
                Some(Ok(made)) => made.enter(run),
                Some(Err(e)) => run(&NoEngine(e)),
                None => run(&NoEngine(
                    "internal error: a call that runs a script was sent without an engine",
                )),
            }
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
