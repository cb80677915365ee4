//! Tools: what a recording, the LLM or a script calls. Three kinds share one descriptor:
//! built in (Rust), scripted (`tools/<name>.ts`) and composed (`tools/<name>.tool.yaml`).

pub mod android;
pub mod answers;
pub mod app;
pub mod builtin;
pub mod by_selector;
pub mod by_text;
pub mod composed;
pub mod desktop;
pub mod exec;
mod expr;
pub mod gesture;
mod judged;
pub mod llm;
pub mod platform;
pub mod process;
pub mod remember;
pub mod results;
pub mod routes;
pub mod rules;
pub mod run_trail;
pub mod schema;
pub mod script;
pub mod scripted;
pub mod toolsets;
pub mod verify;
pub mod waypoint;
pub mod web;

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use builtin::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure};
pub use schema::{Generated, Made, OutputField, SchemaField, TextField};

/// The three flags every tool carries (DESIGN.md "Tools").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFlags {
    /// The LLM, MCP clients and `trailblaze tool` see it.
    pub surface_to_llm: bool,
    /// Its calls go into recordings.
    pub is_recordable: bool,
    /// Calling it keeps the cached snapshot.
    pub read_only: bool,
}

impl ToolFlags {
    pub const DEFAULT: ToolFlags = ToolFlags {
        surface_to_llm: true,
        is_recordable: true,
        read_only: false,
    };
    /// Executable and recorded, but not offered to the LLM (`inputText`, `tapOnPoint`, ...).
    pub const HIDDEN: ToolFlags = ToolFlags {
        surface_to_llm: false,
        is_recordable: true,
        read_only: false,
    };
}

impl Default for ToolFlags {
    fn default() -> Self {
        Self::DEFAULT
    }
}

pub use crate::script::port::ScriptedTool;

#[derive(Debug, Clone)]
pub enum ToolKind {
    Builtin(Arc<BuiltinEntry>),
    Scripted(ScriptedTool),
    /// A `.ts` file the analyzer refused (a syntax error, a type it cannot lower): calling the tool
    /// named after the file reports that error.
    Broken {
        file: PathBuf,
        message: String,
    },
    /// A `.tool.yaml` with `parameters:` and `tools:`: expands into its calls.
    Composed(Arc<composed::ComposedTool>),
    /// One of the original's tools for a platform this host has no device for (`web_*`,
    /// `compose_*`): typed, checked, and refused when called.
    Foreign(crate::device::Platform),
}

/// Everything the catalog knows about one tool.
#[derive(Debug, Clone)]
pub struct ToolDescriptor {
    pub name: String,
    pub description: TextField,
    pub flags: ToolFlags,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: SchemaField,
    /// JSON Schema of the result; `None` when not declared (typed `unknown`).
    pub output_schema: OutputField,
    pub kind: ToolKind,
    /// The trailmap that declared it; `None` for built-ins.
    pub trailmap: Option<String>,
}

impl ToolDescriptor {
    /// The schema as advertised to an LLM or MCP client: an object schema with `properties` (empty when
    /// there are no arguments), without the `$schema` and `title` noise schemars adds.
    pub fn advertised_schema(&self) -> Value {
        let mut s = (*self.input_schema).clone();
        if let Some(obj) = s.as_object_mut() {
            obj.remove("$schema");
            obj.remove("title");
            obj.entry("type").or_insert_with(|| Value::String("object".into()));
            obj.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        }
        s
    }

    /// The platforms it runs on (`android`, `web`, ...); empty when it runs on every platform.
    pub fn platforms(&self) -> Vec<&str> {
        match &self.kind {
            ToolKind::Builtin(entry) => entry.platforms.iter().map(|p| p.as_str()).collect(),
            ToolKind::Scripted(script) => script.platforms.iter().flatten().map(String::as_str).collect(),
            ToolKind::Foreign(p) => vec![p.as_str()],
            ToolKind::Composed(_) | ToolKind::Broken { .. } => Vec::new(),
        }
    }

    /// Whether it runs on a device of `platform`.
    pub fn runs_on(&self, platform: crate::device::Platform) -> bool {
        // On every call's path: no allocation.
        match &self.kind {
            ToolKind::Builtin(entry) => entry.platforms.is_empty() || entry.platforms.contains(&platform),
            ToolKind::Scripted(script) => script
                .platforms
                .as_ref()
                .is_none_or(|p| p.is_empty() || p.iter().any(|w| w.eq_ignore_ascii_case(platform.as_str()))),
            ToolKind::Foreign(p) => *p == platform,
            ToolKind::Composed(_) | ToolKind::Broken { .. } => true,
        }
    }

    pub fn builtin(entry: BuiltinEntry) -> ToolDescriptor {
        // The schemas and the description are the entry's, shared, and made when first read.
        ToolDescriptor {
            name: entry.name.to_string(),
            description: TextField::Generated(entry.schema.clone()),
            flags: entry.flags,
            input_schema: SchemaField::Generated(entry.schema.clone()),
            output_schema: entry.result_schema.clone(),
            kind: ToolKind::Builtin(Arc::new(entry)),
            trailmap: None,
        }
    }
}

/// The built-in tools, in the order `trailblaze tools` lists them.
///
/// Cheap: each one's schemas are generated (schemars) only when first read ([`Generated`]).
pub fn builtin_tools() -> Vec<ToolDescriptor> {
    let entries = [
        llm::entries(),
        exec::entries(),
        by_selector::entries(),
        verify::entries(),
        remember::entries(),
        process::entries(),
        android::entries(),
        waypoint::entries(),
        toolsets::entries(),
        by_text::entries(),
        gesture::entries(),
        app::entries(),
        answers::entries(),
        run_trail::entries(),
        script::entries(),
        web::entries(),
    ];
    let mut tools: Vec<ToolDescriptor> = entries.into_iter().flatten().map(ToolDescriptor::builtin).collect();
    tools.extend(platform::tools());
    tools.extend(desktop::tools());
    tools
}

pub use trailblaze_host_functions::decode::did_you_mean;
