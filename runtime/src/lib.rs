//! trailblaze: a Rust host for TypeScript scripted tools that drive mobile apps.
//!
//! The embedding API is what this page lists: open a [`Project`] (a trailmaps folder), start a
//! [`Session`] on a [`device::Device`] and [`Session::call`] tools through the one dispatcher, or
//! [`run_trails`] / [`check_native`] whole trails. Everything else is the crate's own.
//!
//! Inside, modules follow DESIGN.md's words: a `trailmap` declares `tool`s and host functions; a
//! `session` runs them through the one `dispatch`er against a `device`, with its state in `state`;
//! scripted tools run behind the `script` runtime port (embedded QuickJS or a Node subprocess).

#[cfg(feature = "agent")]
pub mod agent;
pub(crate) mod budget;
pub(crate) mod catalog;
pub(crate) mod check;
pub mod device;
pub(crate) mod dispatch;
pub(crate) mod files;
pub(crate) mod markup;
pub(crate) mod memory;
pub(crate) mod placeholder;
pub(crate) mod project;
pub mod recording;
pub(crate) mod replay;
pub(crate) mod run;
pub(crate) mod script;
pub(crate) mod secret;
pub(crate) mod selector;
pub(crate) mod session;
pub(crate) mod snapshot;
pub(crate) mod state;
pub(crate) mod surface;
pub(crate) mod tool;
pub(crate) mod toolset;
pub(crate) mod trail;
pub(crate) mod trailmap;
pub(crate) mod waypoint;
pub mod workspace;
pub(crate) mod yaml;

#[cfg(feature = "agent")]
pub use agent::{AgentConfig, ApiKey, HttpSettings, ProviderConfig, ProviderKind, WriteBack};
pub use budget::{CancelHandle, Limits};
pub use catalog::ToolDefinition;
pub use check::{
    CheckOptions, CheckReport, CheckStats, Finding, NavCounts, TOOLS_NOT_TYPE_CHECKED, check_native, check_native_with,
    check_nav, check_nav_tsc, check_tools_tsc, check_tsc,
};
pub use dispatch::CallError;
pub use project::{Project, ProjectError, ProjectOptions, SessionOptions};
pub use replay::{Notice, ReplayOptions, RunSink, ScreenshotPolicy};
pub use run::{RunOptions, RunOutput, run_trails};
pub use session::{Session, SessionError, Settings, WarmPool};
pub use state::console::{ConsoleLevel, ConsoleLine, ConsoleSink};
pub use state::log::StepRecord;
pub use trail::{MigrateError, Step, Trail, migrate_file, migrate_in_place, migrate_text};

/// What a run and a replay report: per trail, per step, per call.
pub mod report {
    pub use crate::trail::report::{
        AgentReport, AgentTurn, CallReport, Outcome, Point, RunReport, StepReport, Summary, TrailReport,
    };
}
pub use trailmap::LoadErrors;
pub use yaml::{Pos, YamlError};

/// The crate's insides, for this workspace's CLI, tests and benches only: no stability promise.
#[doc(hidden)]
pub mod internals {
    pub use crate::catalog::{Catalog, NotLlmVisible};
    pub use crate::markup::{is_invisible_control, json_escape_invisible};
    pub use crate::script::sdk;
    pub use crate::script::transpile::{Transpiler, transpile_uncached};
    pub use crate::secret::Redaction;
    pub use crate::session::SessionConfig;
    pub use crate::surface::catalog::write_client_files;
    pub use crate::surface::{find_tsc, run_tsc};
    pub use crate::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolDescriptor, ToolFailure, ToolFlags};
    pub use crate::trail::filter_by_tags;
    pub use crate::trail::{Outcome as TrailOutcome, find_trails, load_trail, parse_shard, parse_trail, shard};
    pub use crate::yaml::parse as parse_yaml;
}
