//! What a trailmap adds to its catalog besides tools and host functions: waypoints, toolsets, and
//! shortcuts and trailheads (tools with an edge).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::Catalog;
use crate::tool::{self, ToolKind};
use crate::toolset::{Toolset, Toolsets};
use crate::trailmap::Trailmaps;
use crate::waypoint::Registry;

/// Adds trailmap `id`'s waypoints, toolsets and navigation tools (its own and its dependencies')
/// to `cat`. A problem that makes a tool unusable is an error; a name declared twice is a warning.
pub(super) fn add(cat: &mut Catalog, maps: &Trailmaps, id: &str, errors: &mut Vec<String>) {
    add_waypoints(cat, maps, id);
    add_toolsets(cat, maps, id);
    add_routes(cat, maps, id, errors);
}

/// Waypoints: the trailmap's own first, then each dependency's.
fn add_waypoints(cat: &mut Catalog, maps: &Trailmaps, id: &str) {
    let closure = maps.closure(id);
    let mut waypoints = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for m in &closure {
        for w in &m.waypoints {
            match seen.get(&w.id) {
                Some(first) => cat.warnings.push(format!(
                    "waypoint `{}` is declared in {} and {}; keeping the first",
                    w.id,
                    first.display(),
                    w.file.display()
                )),
                None => {
                    seen.insert(w.id.clone(), w.file.clone());
                    waypoints.push(w.clone());
                }
            }
        }
    }
    let app_ids = maps
        .get(id)
        .and_then(|m| m.spec.target.as_ref())
        .map(|t| t.all_app_ids())
        .unwrap_or_default();
    cat.waypoints = Arc::new(Registry::new(waypoints, app_ids));
}

/// Toolsets: the original pools every trailmap's toolset files across the workspace.
fn add_toolsets(cat: &mut Catalog, maps: &Trailmaps, id: &str) {
    let mut files: Vec<Toolset> = Vec::new();
    for m in maps.maps.values() {
        for t in &m.toolsets {
            match files.iter().find(|f| f.spec.id == t.spec.id) {
                Some(first) => cat.warnings.push(format!(
                    "toolset `{}` is declared in {} and {}; keeping the first",
                    t.spec.id,
                    shown(&first.file),
                    shown(&t.file)
                )),
                None => files.push(t.clone()),
            }
        }
    }
    let mut toolsets = Toolsets::with(files);
    toolsets.declared = declared(maps, id);
    cat.toolsets = Arc::new(toolsets);
}

/// Shortcuts and trailheads: a body makes a tool; no body attaches the edge to the tool of that id.
fn add_routes(cat: &mut Catalog, maps: &Trailmaps, id: &str, errors: &mut Vec<String>) {
    let closure = maps.closure(id);
    let mut attach = Vec::new();
    for m in &closure {
        for (file, _, spec) in &m.nav_tools {
            let Some(edge) = spec.edge() else { continue };
            if spec.metadata_only() {
                attach.push((file.clone(), spec.id.clone(), edge));
                continue;
            }
            let t = match tool::routes::descriptor(file, spec, &m.id) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            if let Some(existing) = cat.tools.get(&t.name) {
                if matches!(existing.kind, ToolKind::Builtin(_) | ToolKind::Foreign(_)) {
                    errors.push(format!(
                        "{}: `{}` is a built-in tool's name; rename the shortcut",
                        file.display(),
                        t.name
                    ));
                } else {
                    cat.warnings.push(format!(
                        "tool `{}` is declared twice (again in {}); keeping the first",
                        t.name,
                        file.display()
                    ));
                }
                continue;
            }
            cat.edges.insert(t.name.clone(), edge);
            cat.tools.insert(t.name.clone(), Arc::new(t));
        }
    }
    for (file, name, edge) in attach {
        if cat.tools.contains_key(&name) {
            cat.edges.entry(name).or_insert(edge);
        } else {
            errors.push(format!(
                "{}: `{name}` has no `tools:` body and names no tool to attach its edge to",
                file.display()
            ));
        }
    }
}

fn shown(file: &Option<PathBuf>) -> String {
    file.as_ref()
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| "the built-ins".into())
}

/// The toolsets trailmap `id` declares per platform: its target's `platforms.<p>.tool_sets`, else
/// the closest `defaults.<p>.tool_sets` among it and its dependencies (the original's closest-wins
/// inheritance; a declared list replaces, it does not add).
fn declared(maps: &Trailmaps, id: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut put = |platform: &str, sets: &Option<Vec<String>>| {
        if let Some(sets) = sets {
            // The original calls the desktop platform `compose`.
            let key = if platform == "compose" { "desktop" } else { platform };
            out.entry(key.to_string()).or_insert_with(|| sets.clone());
        }
    };
    if let Some(platforms) = maps.get(id).and_then(|m| m.spec.target.as_ref()?.platforms.as_ref()) {
        for (p, spec) in platforms {
            put(p, &spec.tool_sets);
        }
    }
    for m in maps.closure(id) {
        for (p, spec) in m.spec.defaults.iter().flatten() {
            put(p, &spec.tool_sets);
        }
    }
    out
}

/// A waypoint as `trailblaze waypoints` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WaypointInfo {
    pub id: String,
    pub description: Option<String>,
    pub file: PathBuf,
    /// The device classifiers it has a block for (`android`, `ios`, ...).
    pub classifiers: Vec<String>,
}

impl Catalog {
    /// The waypoints the trailmap and its dependencies declare, by id.
    pub fn waypoint_list(&self) -> Vec<WaypointInfo> {
        self.waypoints
            .all()
            .iter()
            .map(|w| WaypointInfo {
                id: w.id.clone(),
                description: w.description.clone(),
                file: w.file.clone(),
                classifiers: w.blocks.iter().map(|(c, _)| c.clone()).collect(),
            })
            .collect()
    }
}
