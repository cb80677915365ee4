//! The catalog: what one trailmap's sessions can call, built once and then only read. Tools are every
//! built-in plus the scripted tools of the trailmap and its dependencies; host functions are those the
//! trailmap and its dependencies register under `host/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use trailblaze_host_functions::decode::nearest_names;
use trailblaze_host_functions::{HostEnv, HostFunctionEntry, HostRegistry, secrets::SecretStore};

use crate::tool::{self, ToolDescriptor, ToolKind};
use crate::trailmap::Trailmaps;

mod edges;
pub mod offer;

/// One LLM-visible tool as the model is sent it (MCP's shape: `name`, `description`, `inputSchema`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// Why a name is not an LLM-visible tool.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NotLlmVisible {
    #[error("`{name}` is not an LLM-visible tool; only those can be called here{}", .instead.as_ref().map(|i| format!(" (use `{i}` instead)")).unwrap_or_default())]
    Hidden { name: String, instead: Option<String> },
    #[error("unknown tool `{name}`{}", crate::tool::did_you_mean(.suggestions))]
    Unknown { name: String, suggestions: Vec<String> },
    /// Its file did not load: why, with file:line:col.
    #[error("{message}")]
    Broken { message: String },
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .messages.join("\n"))]
pub struct CatalogError {
    pub messages: Vec<String>,
}

pub struct Catalog {
    /// The trailmap this catalog serves; `None` for built-ins only.
    pub trailmap: Option<String>,
    /// The text of the trailmap's `target.system_prompt_file`: what the agent is told about the app.
    pub system_prompt: Option<String>,
    /// Module names are relative to this folder (the trailmaps folder).
    pub script_root: PathBuf,
    tools: BTreeMap<String, Arc<ToolDescriptor>>,
    registry: Arc<HostRegistry>,
    /// Visible host function name → the `.host.yaml` that registered it.
    host_visible: BTreeMap<String, PathBuf>,
    pub host_env: HostEnv,
    /// What `ctx.fetch` may reach: the trailmap's own `network:` (nothing for built-ins only).
    pub network: crate::network::NetworkPolicy,
    /// The HTTP client `ctx.fetch` goes through; `None` refuses every fetch (a build without one).
    pub fetch: Option<Arc<dyn crate::network::Fetch>>,
    /// What paints over secret fields in a device's pictures (a part); `None`: no picture is taken
    /// of a screen showing one.
    pub painter: Option<Arc<dyn crate::snapshot::Painter>>,
    /// Things worth telling the user that do not stop loading (a name declared twice).
    pub warnings: Vec<String>,
    /// Scripted tool files the analyzer refused (file:line:col each). Their tools fail when called;
    /// `check` and `dts` report them as errors.
    pub problems: Vec<String>,
    /// The waypoints of the trailmap and its dependencies.
    pub waypoints: Arc<crate::waypoint::Registry>,
    /// Every toolset the workspace knows, and which ones the trailmap starts its sessions with.
    pub toolsets: Arc<crate::toolset::Toolsets>,
    /// Shortcut and trailhead edges by tool name: the dispatcher checks them around each call.
    edges: BTreeMap<String, Edge>,
}

pub use crate::trailmap::navigation::Edge;

pub use crate::tool::builtin_tools;

impl Catalog {
    /// Built-in tools only, no host functions: for a session without a trailmap.
    pub fn builtins_only(script_root: &Path) -> Catalog {
        Catalog {
            trailmap: None,
            system_prompt: None,
            script_root: script_root.to_path_buf(),
            tools: builtin_tools()
                .into_iter()
                .map(|t| (t.name.clone(), Arc::new(t)))
                .collect(),
            registry: Arc::new(HostRegistry::new()),
            host_visible: BTreeMap::new(),
            host_env: HostEnv {
                trailmap_id: String::new(),
                trailmap_dir: script_root.to_path_buf(),
                env_allow: Vec::new(),
                // Secrets are the session's: each session puts its own store here.
                secrets: Arc::new(SecretStore::default()),
            },
            network: crate::network::NetworkPolicy::default(),
            fetch: None,
            painter: None,
            warnings: Vec::new(),
            problems: Vec::new(),
            waypoints: Arc::default(),
            toolsets: Arc::new(crate::toolset::Toolsets::with(Vec::new())),
            edges: BTreeMap::new(),
        }
    }

    /// The catalog of trailmap `id`: its tools and host functions and its dependencies'.
    pub fn for_trailmap(maps: &Trailmaps, id: &str, registry: Arc<HostRegistry>) -> Result<Catalog, CatalogError> {
        let Some(map) = maps.get(id) else {
            let names: Vec<&String> = maps.maps.keys().collect();
            return Err(CatalogError {
                messages: vec![format!("unknown trailmap `{id}` (found: {names:?})")],
            });
        };
        // The scripts' analysis (swc, the larger cost of a start) runs beside listing the built-ins.
        let closure = maps.closure(id);
        let (mut cat, discovered) = std::thread::scope(|s| {
            let scripts = s.spawn(|| {
                closure
                    .iter()
                    .map(|m| tool::scripted::discover(&maps.root, m))
                    .collect::<Vec<_>>()
            });
            let cat = Catalog::builtins_only(&maps.root);
            (cat, scripts.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        cat.trailmap = Some(id.to_string());
        cat.registry = registry;
        cat.host_env = HostEnv {
            trailmap_id: id.to_string(),
            trailmap_dir: map.dir.clone(),
            env_allow: map.spec.host_env.clone(),
            secrets: Arc::new(SecretStore::default()),
        };
        // Checked when the trailmap loaded: an entry that fails here cannot occur.
        cat.network = crate::network::NetworkPolicy::from_spec(map.spec.network.as_ref()).unwrap_or_default();
        let mut errors = Vec::new();
        let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
        for (m, (found, problems)) in closure.into_iter().zip(discovered) {
            cat.problems.extend(problems);
            cat.add_found(m, found, &mut origin, &mut errors);
            cat.add_host_decls(m, &mut errors);
        }
        edges::add(&mut cat, maps, id, &mut errors);
        break_composed_cycles(&mut cat);
        offer_to_llm(&mut cat, map);
        cat.read_system_prompt(map, &mut errors);
        // The catalog rules hold for built-ins by test; a trailmap's own tools are told at load.
        let own = cat.tools.values().filter(|t| t.trailmap.is_some()).map(|t| t.as_ref());
        let broken_rules = tool::rules::violations(own);
        cat.warnings.extend(broken_rules);
        if errors.is_empty() {
            Ok(cat)
        } else {
            Err(CatalogError { messages: errors })
        }
    }

    /// Adds trailmap `m`'s tools: the first of a name wins (a warning names both files); a built-in's
    /// name is an error.
    fn add_found(
        &mut self,
        m: &crate::trailmap::Trailmap,
        found: Vec<ToolDescriptor>,
        origin: &mut BTreeMap<String, PathBuf>,
        errors: &mut Vec<String>,
    ) {
        for t in found {
            let file = match &t.kind {
                ToolKind::Scripted(s) => s.file.clone(),
                ToolKind::Broken { file, .. } => file.clone(),
                ToolKind::Composed(_) => m.dir.join("tools"),
                ToolKind::Builtin(_) | ToolKind::Foreign(_) => PathBuf::new(),
            };
            if let Some(existing) = self.tools.get(&t.name) {
                match origin.get(&t.name) {
                    Some(first) => self.warnings.push(format!(
                        "tool `{}` is declared in {} and {}; keeping the first",
                        t.name,
                        first.display(),
                        file.display()
                    )),
                    None if matches!(existing.kind, ToolKind::Builtin(_) | ToolKind::Foreign(_)) => {
                        errors.push(format!(
                            "{}: `{}` is a built-in tool's name; rename the export",
                            file.display(),
                            t.name
                        ))
                    }
                    None => {}
                }
                continue;
            }
            origin.insert(t.name.clone(), file);
            self.tools.insert(t.name.clone(), Arc::new(t));
        }
    }

    /// Makes trailmap `m`'s declared host functions visible: each must be compiled in, under its name.
    fn add_host_decls(&mut self, m: &crate::trailmap::Trailmap, errors: &mut Vec<String>) {
        for (file, decl) in &m.host_decls {
            let Some(entry) = self.registry.get(&decl.class) else {
                let known: Vec<&str> = self.registry.names().collect();
                errors.push(format!(
                    "{}: unknown host function class `{}` (compiled in: {})",
                    file.display(),
                    decl.class,
                    known.join(", ")
                ));
                continue;
            };
            if entry.name != decl.id {
                errors.push(format!(
                    "{}: the id `{}` must equal the function's name `{}`",
                    file.display(),
                    decl.id,
                    entry.name
                ));
                continue;
            }
            if let Some(first) = self.host_visible.get(&decl.id) {
                self.warnings.push(format!(
                    "host function `{}` is declared in {} and {}; keeping the first",
                    decl.id,
                    first.display(),
                    file.display()
                ));
                continue;
            }
            self.host_visible.insert(decl.id.clone(), file.clone());
        }
    }

    /// The target's `system_prompt_file`, read beside its trailmap.yaml.
    fn read_system_prompt(&mut self, map: &crate::trailmap::Trailmap, errors: &mut Vec<String>) {
        if let Some(f) = map.spec.target.as_ref().and_then(|t| t.system_prompt_file.as_deref()) {
            match std::fs::read_to_string(map.dir.join(f)) {
                Ok(text) => self.system_prompt = Some(text).filter(|t| !t.trim().is_empty()),
                Err(e) => errors.push(format!(
                    "{}: system_prompt_file `{f}`: {e}",
                    map.dir.join("trailmap.yaml").display()
                )),
            }
        }
    }

    /// Adds a built-in tool of the embedder's (replacing one of the same name).
    pub fn register_builtin(&mut self, entry: tool::BuiltinEntry) {
        let t = ToolDescriptor::builtin(entry);
        self.tools.insert(t.name.clone(), Arc::new(t));
    }

    pub fn tool(&self, name: &str) -> Option<&Arc<ToolDescriptor>> {
        self.tools.get(name)
    }

    /// Whether calling tool `name` may run a script: a scripted or composed tool, a built-in that
    /// expands into other calls, or one with a shortcut edge (which may navigate first). An unknown,
    /// broken or foreign tool only fails. The session makes its engine for the first such call.
    pub fn may_run_scripts(&self, name: &str) -> bool {
        if self.edges.contains_key(name) {
            return true;
        }
        match self.tools.get(name).map(|t| &t.kind) {
            Some(ToolKind::Builtin(entry)) => entry.delegates,
            Some(ToolKind::Scripted(_) | ToolKind::Composed(_)) => true,
            Some(ToolKind::Broken { .. } | ToolKind::Foreign(_)) | None => false,
        }
    }

    /// The shortcut or trailhead edge of tool `name`, if it has one.
    pub fn edge(&self, name: &str) -> Option<&Edge> {
        self.edges.get(name)
    }

    /// Every tool with an edge, by name.
    pub fn edges(&self) -> impl Iterator<Item = (&String, &Edge)> {
        self.edges.iter()
    }

    pub fn tools(&self) -> impl Iterator<Item = &Arc<ToolDescriptor>> {
        self.tools.values()
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// The tools the LLM, MCP clients and `trailblaze tool` see.
    pub fn llm_tools(&self) -> impl Iterator<Item = &Arc<ToolDescriptor>> {
        self.tools.values().filter(|t| t.flags.surface_to_llm)
    }

    /// What the LLM is sent for each LLM-visible tool: `tools --json`, `tools --tokens`, MCP and the
    /// agent all read this one list.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.llm_tools()
            .map(|t| ToolDefinition {
                name: t.name.clone(),
                description: t.description.to_string(),
                input_schema: t.advertised_schema(),
            })
            .collect()
    }

    /// [`Catalog::tool_definitions`] a device of `platform` can run: a tool whose
    /// `supportedPlatforms` leaves it out is not offered (its call would be refused).
    pub fn tool_definitions_on(&self, platform: crate::device::Platform) -> Vec<ToolDefinition> {
        let names: std::collections::HashSet<&str> = self
            .llm_tools()
            .filter(|t| t.runs_on(platform))
            .map(|t| t.name.as_str())
            .collect();
        self.tool_definitions()
            .into_iter()
            .filter(|d| names.contains(d.name.as_str()))
            .collect()
    }

    /// The LLM-visible tool `name`, or why not: hidden (with the visible tool to use instead where
    /// there is one), or unknown (with the nearest LLM-visible names).
    pub fn llm_tool(&self, name: &str) -> Result<&Arc<ToolDescriptor>, NotLlmVisible> {
        match self.tool(name).map(|t| (t, &t.kind)) {
            Some((_, ToolKind::Broken { message, .. })) => Err(NotLlmVisible::Broken {
                message: message.clone(),
            }),
            Some((t, _)) if t.flags.surface_to_llm => Ok(t),
            Some(_) => Err(NotLlmVisible::Hidden {
                name: name.to_string(),
                instead: (name == "inputText").then(|| "type".to_string()),
            }),
            None => {
                let visible: Vec<String> = self.llm_tools().map(|t| t.name.clone()).collect();
                Err(NotLlmVisible::Unknown {
                    name: name.to_string(),
                    suggestions: nearest_names(name, &visible, 3),
                })
            }
        }
    }

    /// A host function this catalog's trailmap registered (or a dependency did); nothing else.
    pub fn host_function(&self, name: &str) -> Option<&HostFunctionEntry> {
        self.host_visible.get(name).and_then(|_| self.registry.get(name))
    }

    pub fn host_names(&self) -> Vec<String> {
        self.host_visible.keys().cloned().collect()
    }

    /// The host functions this catalog's scripts may call, as entries a script engine keeps (and
    /// calls without looking their names up again).
    pub fn host_functions(&self) -> Vec<Arc<HostFunctionEntry>> {
        self.host_visible
            .keys()
            .filter_map(|name| self.registry.shared(name))
            .collect()
    }
}

/// A composed tool that reaches itself again (directly or through others) would expand forever: each
/// one on a cycle becomes a broken tool that says so, and `check` and `dts` report it.
fn break_composed_cycles(cat: &mut Catalog) {
    let calls = |t: &ToolDescriptor| -> Vec<String> {
        match &t.kind {
            ToolKind::Composed(c) => c.calls.iter().map(|(n, _)| n.clone()).collect(),
            _ => Vec::new(),
        }
    };
    let mut cyclic: Vec<(String, String)> = Vec::new();
    for (name, t) in &cat.tools {
        if !matches!(t.kind, ToolKind::Composed(_)) {
            continue;
        }
        // Depth-first from `name`, looking for `name` again; the path says how.
        let mut stack: Vec<(String, Vec<String>)> = calls(t).into_iter().map(|c| (c.clone(), vec![c])).collect();
        let mut seen = std::collections::BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            if at == *name {
                cyclic.push((name.clone(), path.join(" → ")));
                break;
            }
            if !seen.insert(at.clone()) {
                continue;
            }
            if let Some(next) = cat.tools.get(&at) {
                for c in calls(next) {
                    let mut p = path.clone();
                    p.push(c.clone());
                    stack.push((c, p));
                }
            }
        }
    }
    for (name, path) in cyclic {
        let Some(t) = cat.tools.get(&name) else { continue };
        let file = cat
            .trailmap
            .as_ref()
            .map(|_| PathBuf::from(format!("tools/{name}.tool.yaml")))
            .unwrap_or_default();
        let message = format!(
            "{}: composed tool `{name}` calls itself ({name} → {path}), so it would never finish",
            file.display()
        );
        cat.problems.push(message.clone());
        let broken = ToolDescriptor {
            kind: ToolKind::Broken { file, message },
            ..t.as_ref().clone()
        };
        cat.tools.insert(name, Arc::new(broken));
    }
}

/// `target.tools` (and each platform's `tools`, hoisted as the original does) names the scripted
/// tools the LLM is offered; the others stay callable. A platform's `excluded_tools` hides a tool
/// from the LLM too.
fn offer_to_llm(cat: &mut Catalog, map: &crate::trailmap::Trailmap) {
    let Some(target) = map.spec.target.as_ref() else {
        return;
    };
    let excluded: Vec<&String> = target
        .platforms
        .iter()
        .flat_map(|m| m.values())
        .flat_map(|p| p.excluded_tools.iter().flatten())
        .collect();
    for name in &excluded {
        if let Some(t) = cat.tools.get_mut(name.as_str()) {
            Arc::make_mut(t).flags.surface_to_llm = false;
        }
    }
    let offered = target.offered_tools();
    if offered.is_empty() {
        return;
    }
    for name in &offered {
        if cat.tools.get(name).is_none_or(|t| t.trailmap.is_none()) {
            cat.warnings.push(format!(
                "{}/trailmap.yaml: target.tools names `{name}`, which is no scripted tool",
                map.id
            ));
        }
    }
    // Shortcuts and trailheads are offered by their own rule (see `offer`), not by `target.tools`.
    let edges = &cat.edges;
    for t in cat.tools.values_mut() {
        if t.trailmap.is_some() && t.flags.surface_to_llm && !offered.contains(&t.name) && !edges.contains_key(&t.name)
        {
            Arc::make_mut(t).flags.surface_to_llm = false;
        }
    }
}
