//! trailblaze: a Rust host for TypeScript scripted tools that drive mobile apps.
//!
//! The embedding API is what this page lists: open a [`Project`] (a trailmaps folder), start a
//! [`Session`] on a [`device::Device`] and [`Session::call`] tools through the one dispatcher, or
//! [`run_trails`] / [`gates::check_native`] whole trails; [`Session::replay`] one trail on an open
//! session. The modules below the root group the rest by what it is for (docs/embedding.md).
//!
//! This is the core crate (`trailblaze-core`): no feature switches, no optional dependency. The
//! optional parts are crates that register what they bring through [`Parts`]; embedders depend on
//! `trailblaze`, which re-exports this crate and the parts its features pull in.
//!
//! Inside, modules follow DESIGN.md's words: a `trailmap` declares `tool`s and host functions; a
//! `session` runs them through the one `dispatch`er against a `device`, with its state in `state`;
//! scripted tools run behind the `script` runtime port (embedded QuickJS or a Node subprocess).

// What embedders use: the names below and these modules (docs/embedding.md).
pub mod device;
pub mod judge;
pub mod parts;
pub mod recording;
pub mod watch;
pub mod workspace;

// The core's inside, public for the part crates (web, android, agent, fetch, reports) that build on
// it; not for embedders, and not kept stable for them.
#[doc(hidden)]
pub mod budget;
#[doc(hidden)]
pub mod catalog;
#[doc(hidden)]
pub mod cores;
#[doc(hidden)]
pub mod dispatch;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod network;
#[doc(hidden)]
pub mod project;
#[doc(hidden)]
pub mod replay;
#[doc(hidden)]
pub mod script;
#[doc(hidden)]
pub mod secret;
#[doc(hidden)]
pub mod selector;
#[doc(hidden)]
pub mod session;
#[doc(hidden)]
pub mod snapshot;
#[doc(hidden)]
pub mod state;
#[doc(hidden)]
pub mod surface;
#[doc(hidden)]
pub mod tool;
#[doc(hidden)]
pub mod toolset;
/// A trail's trace: what each call saw and did ([`trace::TraceSettings`] for a run; docs/trace.md).
pub mod trace;
#[doc(hidden)]
pub mod trail;
#[doc(hidden)]
pub mod trailmap;
#[doc(hidden)]
pub mod waypoint;
#[doc(hidden)]
pub mod yaml;

mod markup;
mod memory;
mod placeholder;
mod run;

// The everyday API: open a project, start a session, call tools, replay and run trails.
pub use budget::{CancelHandle, Limits};
pub use catalog::Catalog;
pub use dispatch::CallError;
pub use parts::Parts;
pub use project::{Project, ProjectError, ProjectOptions, SessionOptions};
pub use replay::{ReplayOptions, RunSink};
pub use run::{RunOptions, run_trails};
pub use secret::Redaction;
/// Random tokens for local servers, compared in constant time.
pub use secret::token;
pub use session::{Session, Settings};
pub use trail::{Step, Trail};

/// What a run and a replay report: per trail, per step, per call, and what a sink hears.
pub mod report {
    pub use crate::replay::{Notice, ScreenshotPolicy};
    pub use crate::run::RunOutput;
    pub use crate::state::log::LogEntry;
    pub use crate::trail::report::storyboard::frames as storyboard_frames;
    /// `trailblaze report`: a run's or a session's report.html rebuilt, each trace's trace.js.
    pub use crate::trail::report::traces::{
        RebuildError, Rebuilt, StepScreen, read_trace, rebuild, step_screens, write_trace_js,
    };
    pub use crate::trail::report::{
        AgentReport, AgentTurn, CallReport, LlmCost, MergeError, Merged, Outcome, Point, RunReport, Shard, StepReport,
        Summary, TrailReport, TurnTrace, merge, suite_digest,
    };
}

/// Finding, choosing and rewriting trail files (loading one is [`Trail::load`]).
pub mod trails {
    pub use crate::trail::{
        FindError, MigrateError, filter_by_tags, find_trails, is_trail_name, migrate_file, migrate_in_place,
        migrate_text, parse_shard, shard,
    };
}

/// Scripts' `console.*` lines, for an embedder that shows them its own way, and the escapes that
/// keep text from a device or a page from steering a terminal.
pub mod console {
    pub use crate::markup::{is_invisible_control, json_escape_invisible};
    pub use crate::state::console::{ConsoleLevel, ConsoleLine, ConsoleSink};
}

/// The tools a catalog offers, and writing a built-in tool of your own in Rust
/// ([`Catalog::register_builtin`]).
pub mod tools {
    pub use crate::catalog::{NotLlmVisible, ToolDefinition};
    pub use crate::tool::{
        BuiltinEntry, BuiltinTool, Generated, Made, Outcome, OutputField, SchemaField, TextField, ToolCx,
        ToolDescriptor, ToolFailure, ToolFlags,
    };
}

/// The scripted-tool toolchain on its own: transpiling TypeScript and the SDK's JavaScript.
pub mod scripting {
    pub use crate::script::quickjs::precompile as precompile_engine_modules;
    pub use crate::script::sdk::javascript as sdk_javascript;
    pub use crate::script::transpile::{Transpiler, transpile_uncached};
}

/// The errors of loading files and starting sessions, with their positions.
pub mod errors {
    pub use crate::session::SessionError;
    pub use crate::trailmap::LoadErrors;
    pub use crate::yaml::{Pos, YamlError};
}
