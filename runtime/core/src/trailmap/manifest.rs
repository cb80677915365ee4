//! The declaration files of a trailmap, as the original writes them: `trailmap.yaml`, tool
//! descriptors (`<name>.tool.yaml`, `<name>.yaml` with `script:`) and `host/<name>.host.yaml`. Each
//! is read strictly: an unknown key is an error at its line and column.

use std::collections::BTreeMap;

use serde::Deserialize;

pub use crate::network::NetworkSpec;

/// `trailmap.yaml`: every key of the original's manifest is read. Those this host acts on are
/// documented on the field; the others are kept as data (they drive the original's UI, its web and
/// desktop drivers, or features this host has no counterpart for) so a manifest written for it loads
/// unchanged.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrailmapSpec {
    pub id: String,
    /// Trailmaps whose tools and host functions this one sees. The original's framework trailmaps
    /// ([`FRAMEWORK_TRAILMAPS`]) are this host's built-ins and need no folder.
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(default)]
    pub target: Option<TargetSpec>,
    /// Per-platform defaults a library trailmap hands to the targets that depend on it.
    #[serde(default)]
    pub defaults: Option<BTreeMap<String, PlatformSpec>>,
    /// A library trailmap's platforms (a target's live under `target.platforms`).
    #[serde(default)]
    pub platforms: Option<BTreeMap<String, PlatformSpec>>,
    /// The tools a library trailmap exports to its dependents (kept as data: every tool is visible).
    #[serde(default)]
    pub exports: Option<Vec<String>>,
    /// Toolset ids (kept as data).
    #[serde(default)]
    pub toolsets: Vec<String>,
    /// Legacy: waypoints auto-discover in the original; kept so old manifests parse.
    #[serde(default)]
    pub waypoints: Vec<String>,
    /// Legacy: trails are found under the workspace root; kept so old manifests parse.
    #[serde(default)]
    pub trails: Vec<String>,
    #[serde(default)]
    pub trail_validation: Option<TrailValidation>,
    /// Environment variables the `env` host function may read for this trailmap's scripts.
    #[serde(default)]
    pub host_env: Vec<String>,
    /// What scripts may reach with `ctx.fetch`: nothing unless listed here.
    #[serde(default)]
    pub network: Option<NetworkSpec>,
}

/// The original's framework trailmaps: a dependency on one of these is satisfied by the built-in
/// catalog, so `dependencies: [trailblaze]` loads without a `trailblaze/` folder.
pub const FRAMEWORK_TRAILMAPS: [&str; 5] = ["trailblaze", "android", "mobile", "web", "compose"];

/// `target:` of a trailmap: the app under test.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Kept as data (the original lets a target's id differ from the trailmap's).
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub display_name: Option<String>,
    /// This host's flat form of `platforms.<p>.app_ids`.
    #[serde(default)]
    pub app_ids: Vec<String>,
    /// Per platform (`android`, `ios`, `web`, `compose`, ...): its app ids and tools. `{}` says the
    /// platform exists with defaults.
    #[serde(default)]
    pub platforms: Option<BTreeMap<String, PlatformSpec>>,
    /// Kept as data (an iOS driver switch of the original).
    #[serde(default)]
    pub has_custom_ios_driver: bool,
    /// A file, relative to the trailmap, whose text the agent adds to its system prompt. Must exist.
    #[serde(default)]
    pub system_prompt_file: Option<String>,
    /// The scripted tools offered to the LLM (all are callable).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Kept as data (the original's UI shows it).
    #[serde(default)]
    pub icon: Option<String>,
    /// An Electron desktop app (kept as data: this host has no desktop driver).
    #[serde(default)]
    pub electron: Option<ElectronSpec>,
}

impl TargetSpec {
    /// Every app id: the flat list, then each platform's, without repeats.
    pub fn all_app_ids(&self) -> Vec<String> {
        let mut out = self.app_ids.clone();
        for p in self.platforms.iter().flat_map(|m| m.values()) {
            for id in p.app_ids.iter().flatten() {
                if !out.contains(id) {
                    out.push(id.clone());
                }
            }
        }
        out
    }

    /// The tools offered to the LLM: `tools`, then each platform's `tools` (the original hoists them
    /// the same way), without repeats.
    pub fn offered_tools(&self) -> Vec<String> {
        let mut out = self.tools.clone();
        for p in self.platforms.iter().flat_map(|m| m.values()) {
            for t in p.tools.iter().flatten() {
                if !out.contains(t) {
                    out.push(t.clone());
                }
            }
        }
        out
    }
}

/// One platform of a target.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    #[serde(default)]
    pub app_ids: Option<Vec<String>>,
    /// Toolset ids (kept as data).
    #[serde(default)]
    pub tool_sets: Option<Vec<String>>,
    /// Scripted tools offered on this platform, hoisted into the target's offered tools.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Tools hidden from the LLM for this target (still callable by trails).
    #[serde(default)]
    pub excluded_tools: Option<Vec<String>>,
    /// Driver names (kept as data).
    #[serde(default)]
    pub drivers: Option<Vec<String>>,
    /// A web target's base URL (kept as data).
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub min_build_version: Option<String>,
    #[serde(default)]
    pub icon: Option<String>,
}

/// `target.electron` (kept as data).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElectronSpec {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cdp_port: Option<u16>,
    #[serde(default)]
    pub cdp_url: Option<String>,
    #[serde(default)]
    pub cdp_timeout_seconds: Option<u32>,
    #[serde(default)]
    pub headless: bool,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrailValidation {
    /// Why this trailmap's findings are only warnings. Required.
    pub exempt: String,
}

/// `host/<name>.host.yaml`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostDecl {
    pub id: String,
    /// The registry key of the compiled-in host function.
    pub class: String,
}

/// `tools/<name>.tool.yaml`: a descriptor that pins a scripted tool's fields.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolYaml {
    #[serde(default)]
    pub name: Option<String>,
    /// The original's spelling of `name` in its `*.tool.yaml` files.
    #[serde(default)]
    pub id: Option<String>,
    /// The original binds a built-in's descriptor to a Kotlin class; here the built-in of the same
    /// name is that tool, so the descriptor is read and needs nothing more.
    #[serde(default)]
    pub class: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub surface_to_llm: Option<bool>,
    #[serde(default)]
    pub is_recordable: Option<bool>,
    #[serde(default)]
    pub read_only: Option<bool>,
    #[serde(default)]
    pub runtime: Option<ToolRuntime>,
    /// The script time budget of the tool when it is the top-level call, replacing the session's
    /// (1 ms to [`MAX_TOOL_TIMEOUT_MS`]).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// A composed tool's parameters.
    #[serde(default)]
    pub parameters: Option<Vec<ParamSpec>>,
    /// A composed tool's calls, `- toolName: {args}`, whose strings may say `"{{params.<name>}}"`.
    #[serde(default)]
    pub tools: Option<Vec<serde_json::Value>>,
}

/// The largest `timeoutMs` a tool.yaml may set: an hour (a longer script is a stuck script).
pub const MAX_TOOL_TIMEOUT_MS: u64 = 3_600_000;

/// One parameter of a composed tool.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub name: String,
    /// `string`, `number`, `integer`, `boolean`, `object` or `array`.
    #[serde(rename = "type")]
    pub ty: ParamType,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
}

impl ParamType {
    pub fn json_type(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Number => "number",
            ParamType::Integer => "integer",
            ParamType::Boolean => "boolean",
            ParamType::Object => "object",
            ParamType::Array => "array",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolRuntime {
    /// Embedded QuickJS; the original calls it `inProcess`.
    #[serde(alias = "inProcess")]
    Quickjs,
    Subprocess,
}

/// `tools/<name>.yaml`: the original's descriptor of a script (`script:`), for `.js` tools and for
/// `.ts` tools it pins fields of. One tool (`name`) or several exports of one script (`tools`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptDescriptor {
    /// The script, relative to this file (`./x.js`).
    pub script: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Every tool runs on the host here: read, needs nothing more.
    #[serde(default)]
    pub requires_host: bool,
    #[serde(default)]
    pub supported_platforms: Option<Vec<String>>,
    #[serde(default)]
    pub surface_to_llm: Option<bool>,
    #[serde(default)]
    pub is_recordable: Option<bool>,
    #[serde(default)]
    pub runtime: Option<ToolRuntime>,
    /// The original's namespaced hints (kept as data).
    #[serde(default, rename = "_meta")]
    pub meta: Option<serde_json::Value>,
    #[serde(default)]
    pub input_schema: BTreeMap<String, ScriptProperty>,
    /// Several exports of the one script.
    #[serde(default)]
    pub tools: Option<Vec<ScriptEntry>>,
}

/// One export of a multi-tool [`ScriptDescriptor`].
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptEntry {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub requires_host: Option<bool>,
    #[serde(default)]
    pub supported_platforms: Option<Vec<String>>,
    #[serde(default)]
    pub surface_to_llm: Option<bool>,
    #[serde(default)]
    pub is_recordable: Option<bool>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<serde_json::Value>,
    #[serde(default)]
    pub input_schema: BTreeMap<String, ScriptProperty>,
}

/// One argument in a [`ScriptDescriptor`]'s `inputSchema` map.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptProperty {
    #[serde(rename = "type")]
    pub ty: ParamType,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, rename = "enum")]
    pub one_of: Option<Vec<String>>,
    /// Required unless it says `required: false`, as in the original.
    #[serde(default = "yes")]
    pub required: bool,
}

fn yes() -> bool {
    true
}

/// The JSON Schema of a descriptor's `inputSchema` map.
pub fn properties_schema(props: &BTreeMap<String, ScriptProperty>) -> serde_json::Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, p) in props {
        let mut s = serde_json::json!({ "type": p.ty.json_type() });
        if let Some(d) = &p.description {
            s["description"] = d.clone().into();
        }
        if let Some(values) = &p.one_of {
            s["enum"] = values.clone().into();
        }
        properties.insert(name.clone(), s);
        if p.required {
            required.push(name.clone());
        }
    }
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
