//! Session state: what the dispatcher reads and writes on the session's thread — the catalog, the
//! device and its cached snapshot, the log, the secrets, the depth stack and the deadline. No script
//! engine lives here: runtimes are wired to this state by the session thread (`crate::session`).

pub mod console;
pub mod log;
mod offered;

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use trailblaze_host_functions::HostEnv;
use trailblaze_host_functions::secrets::SecretStore;

use crate::budget::{Deadline, Limits};
use crate::catalog::Catalog;
use crate::snapshot::Screen;
use crate::tool::ToolCx;
use console::{ConsoleGate, ConsoleLevel, ConsoleSink};
use log::{Event, SessionLog};

/// Settings of one session.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Calls nest at most this deep (tools, delegations, host functions together).
    pub depth_cap: u32,
    pub limits: Limits,
    /// Where scripts' `console.*` lines go besides the session log (the CLI prints them on stderr).
    pub console: Option<ConsoleSink>,
    /// Answers `assertWithAi` / `rememberWithAi` (an LLM provider); `None`: they fail saying which
    /// setting gives one.
    pub judge: Option<crate::judge::JudgeHandle>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            depth_cap: 16,
            limits: Limits::default(),
            console: None,
            judge: None,
        }
    }
}

/// What the dispatcher sees on the session's thread.
pub struct SessionCore {
    pub catalog: Arc<Catalog>,
    pub settings: Settings,
    /// The trailmap's environment with this session's secrets: what host functions see.
    pub host_env: HostEnv,
    pub log: RefCell<SessionLog>,
    /// Secret values: what snapshots and logs show as `***`.
    pub redact: crate::secret::Redaction,
    /// Secret values as the step log and recordings hold them: their placeholders.
    pub placeholders: crate::secret::Placeholders,
    pub screen: Screen,
    /// What `remember*` stored: later calls' `{{name}}` tokens.
    pub memory: RefCell<crate::memory::Memory>,
    /// The toolsets whose tools the LLM is offered now (`setActiveToolSets` replaces them).
    pub active_toolsets: RefCell<std::collections::BTreeSet<String>>,
    /// What the judge's questions cost so far in this session (the replay reads it per step).
    pub llm_cost: Cell<crate::judge::LlmCost>,
    /// Height of the stack of active calls: a call made while `depth` calls are running is at `depth`.
    depth: Cell<u32>,
    /// The running top-level call's deadline (the script runtimes check it too).
    pub deadline: Arc<Deadline>,
    /// Calls that delegating and composed tools expanded into during the running top-level call.
    pub expanded: Cell<u64>,
    /// Scripted tools running now, innermost last: who printed a console line.
    scripts: RefCell<Vec<String>>,
    console: ConsoleGate,
    /// The trail's trace while one is recorded (docs/trace.md).
    pub trace: RefCell<Option<crate::trace::Recorder>>,
}

impl SessionCore {
    pub fn new(
        catalog: Arc<Catalog>,
        settings: Settings,
        secrets: Arc<SecretStore>,
        mut log: SessionLog,
        screen: Screen,
        deadline: Arc<Deadline>,
    ) -> SessionCore {
        let redact = crate::secret::Redaction::new(&secrets.values_to_redact());
        log.set_redactions(redact.clone());
        let placeholders = crate::secret::Placeholders::new(&secrets.named_values());
        let host_env = HostEnv {
            secrets: secrets.clone(),
            ..catalog.host_env.clone()
        };
        let screen = screen.bounded_by(deadline.clone());
        let active_toolsets = RefCell::new(catalog.initial_toolsets(screen.platform()));
        SessionCore {
            catalog,
            settings,
            host_env,
            log: RefCell::new(log),
            redact,
            placeholders,
            screen,
            memory: RefCell::default(),
            active_toolsets,
            llm_cost: Cell::default(),
            depth: Cell::new(0),
            deadline,
            expanded: Cell::new(0),
            scripts: RefCell::new(Vec::new()),
            console: ConsoleGate::default(),
            trace: RefCell::new(None),
        }
    }

    pub fn secrets(&self) -> &SecretStore {
        &self.host_env.secrets
    }

    /// The depth the next call runs at.
    pub fn depth(&self) -> u32 {
        self.depth.get()
    }

    /// Pushes one call on the depth stack, or refuses it at the cap: the one depth check.
    pub fn enter_call(&self, name: &str) -> Result<DepthGuard<'_>, (u32, String)> {
        let depth = self.depth.get();
        let cap = self.settings.depth_cap;
        if depth >= cap {
            return Err((cap, name.to_string()));
        }
        self.depth.set(depth + 1);
        Ok(DepthGuard { core: self, depth })
    }

    /// A new top-level call: fresh per-call allowances.
    pub fn begin_top_level(&self) {
        self.expanded.set(0);
        self.console.reset();
    }

    /// Runs `f` as scripted tool `name` (the tool its console lines are attributed to).
    pub fn as_script<R>(&self, name: &str, f: impl FnOnce() -> R) -> R {
        self.scripts.borrow_mut().push(name.to_string());
        let popped = PopScript(self);
        let r = f();
        drop(popped);
        r
    }

    /// One `console.*` line of scripted tool `tool` (`None`: the innermost running one): scrubbed,
    /// bounded, logged and handed to the sink. A line printed when no scripted tool runs (work a
    /// returned call left behind) is dropped.
    pub fn console(&self, tool: Option<&str>, level: &str, text: &str) {
        let Some(innermost) = self.scripts.borrow().last().cloned() else {
            return;
        };
        let tool = tool.map_or(innermost, str::to_string);
        let level = ConsoleLevel::parse(level);
        let Some(line) = self.console.admit(&tool, level, text, &self.redact) else {
            return;
        };
        self.log.borrow_mut().append(Event::Console {
            tool: &line.tool,
            level: line.level.as_str(),
            text: &line.text,
        });
        if let Some(t) = self.trace.borrow_mut().as_mut() {
            t.console(&line.tool, line.level.as_str(), &line.text);
        }
        if let Some(sink) = &self.settings.console {
            // The embedder's code must not unwind through the session.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (sink.0)(&line)));
        }
    }

    /// The narrow context a built-in tool runs with.
    pub fn tool_cx(&self) -> ToolCx<'_> {
        ToolCx {
            screen: &self.screen,
            redact: &self.redact,
            memory: &self.memory,
            deadline: &self.deadline,
            secret_input: false,
            waypoints: &self.catalog.waypoints,
            toolsets: &self.catalog.toolsets,
            active_toolsets: &self.active_toolsets,
            judge: self.settings.judge.as_ref().map(|j| &*j.0),
            llm_cost: &self.llm_cost,
            trace: &self.trace,
        }
    }
}

/// Pops the running script's name, even on unwind.
struct PopScript<'a>(&'a SessionCore);

impl Drop for PopScript<'_> {
    fn drop(&mut self) {
        self.0.scripts.borrow_mut().pop();
    }
}

/// One active call; popping it (on drop, even on unwind) restores the depth.
pub struct DepthGuard<'a> {
    core: &'a SessionCore,
    depth: u32,
}

impl DepthGuard<'_> {
    /// The depth this call runs at (0 for a call from outside).
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.core.depth.set(self.depth);
    }
}
