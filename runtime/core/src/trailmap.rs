//! Trailmaps: `trailmaps/<id>/` with `trailmap.yaml`, `tools/`, `host/`, `trails/` and an optional
//! `app.yaml`. Discovery reads every declaration file strictly (file:line:col errors) and reports all
//! bad files together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::yaml::{self, YamlError};

mod legacy;
mod manifest;
pub mod navigation;

pub use manifest::*;

/// One loaded trailmap: its spec and the files it declares.
#[derive(Debug, Clone)]
pub struct Trailmap {
    pub id: String,
    pub dir: PathBuf,
    pub spec: TrailmapSpec,
    /// `tools/*.ts` except generated `.d.ts` files, sorted.
    pub scripts: Vec<PathBuf>,
    /// `tools/<stem>.tool.yaml` by stem.
    pub tool_yamls: BTreeMap<String, (PathBuf, ToolYaml)>,
    /// `tools/<stem>.yaml` script descriptors, sorted by file name.
    pub script_descriptors: Vec<(PathBuf, ScriptDescriptor)>,
    /// `host/*.host.yaml`, sorted by file name.
    pub host_decls: Vec<(PathBuf, HostDecl)>,
    pub app_yaml: Option<PathBuf>,
    /// `waypoints/**/*.waypoint.yaml`, sorted by file.
    pub waypoints: Vec<crate::waypoint::Waypoint>,
    /// `shortcuts/**/*.shortcut.yaml` and `trailheads/**/*.trailhead.yaml`, sorted by file.
    pub nav_tools: Vec<(PathBuf, navigation::NavKind, navigation::NavToolSpec)>,
    /// `toolsets/**/*.yaml` and the files the manifest's `toolsets:` names.
    pub toolsets: Vec<crate::toolset::Toolset>,
}

/// Every trailmap under a folder, by id.
#[derive(Debug, Clone, Default)]
pub struct Trailmaps {
    pub root: PathBuf,
    pub maps: BTreeMap<String, Trailmap>,
}

/// Problems found while loading trailmaps: every bad file, not only the first.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
pub struct LoadErrors {
    pub errors: Vec<YamlError>,
}

impl Trailmaps {
    /// Loads every `<root>/<id>/trailmap.yaml`. A missing root holds none; an unreadable one is an
    /// error naming it.
    pub fn discover(root: &Path) -> Result<Trailmaps, LoadErrors> {
        let mut errors = Vec::new();
        let mut maps = BTreeMap::new();
        let entries = match sorted_entries(root) {
            Ok(e) => e,
            // A workspace anchored by `trails/config/trailblaze.yaml` may have no trailmaps yet: its
            // trails then run with the built-ins.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(LoadErrors {
                    errors: vec![file_error(root, format!("cannot read the trailmaps folder: {e}"))],
                });
            }
        };
        for dir in entries.into_iter().filter(|p| p.join("trailmap.yaml").is_file()) {
            match load_one(&dir) {
                Ok(map) => {
                    maps.insert(map.id.clone(), map);
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        // The original's legacy flat targets, `config/targets/<id>.yaml`, beside `config/trailmaps/`.
        if let Some(targets) = root.parent().map(|p| p.join("targets")).filter(|d| d.is_dir()) {
            for file in sorted_entries(&targets).unwrap_or_default() {
                if file.extension().is_none_or(|e| e != "yaml") {
                    continue;
                }
                match legacy::load_target(&file) {
                    Ok(map) if maps.contains_key(&map.id) => errors.push(file_error(
                        &file,
                        format!("target `{}` is also a trailmap in {}", map.id, root.display()),
                    )),
                    Ok(map) => {
                        maps.insert(map.id.clone(), map);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        for map in maps.values() {
            for dep in &map.spec.dependencies {
                if !maps.contains_key(dep) && !FRAMEWORK_TRAILMAPS.contains(&dep.as_str()) {
                    let file = map.dir.join("trailmap.yaml");
                    let doc = yaml::parse_file(&file);
                    let err = match doc {
                        Ok(doc) => doc.error_at(
                            "dependencies",
                            format!("unknown dependency `{dep}`: no trailmaps/{dep}/trailmap.yaml"),
                        ),
                        Err(e) => e,
                    };
                    errors.push(err);
                }
            }
        }
        if errors.is_empty() {
            Ok(Trailmaps {
                root: root.to_path_buf(),
                maps,
            })
        } else {
            Err(LoadErrors { errors })
        }
    }

    pub fn get(&self, id: &str) -> Option<&Trailmap> {
        self.maps.get(id)
    }

    /// `id` and its dependencies, transitively, in order: the trailmap first, then each dependency the
    /// first time it is reached (so the trailmap's own declarations win).
    pub fn closure(&self, id: &str) -> Vec<&Trailmap> {
        let mut out: Vec<&Trailmap> = Vec::new();
        let mut queue = vec![id.to_string()];
        while let Some(next) = queue.first().cloned() {
            queue.remove(0);
            if out.iter().any(|m| m.id == next) {
                continue;
            }
            if let Some(map) = self.maps.get(&next) {
                queue.extend(map.spec.dependencies.iter().cloned());
                out.push(map);
            }
        }
        out
    }
}

fn file_error(file: &Path, message: String) -> YamlError {
    YamlError {
        file: file.to_path_buf(),
        pos: yaml::Pos { line: 1, col: 1 },
        message,
        source_line: String::new(),
    }
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    out.sort();
    Ok(out)
}

/// Reads the trailmap in `dir`: its manifest, its tools, its host functions and its navigation
/// files, each error at its file, line and column.
fn load_one(dir: &Path) -> Result<Trailmap, Vec<YamlError>> {
    let mut errors = Vec::new();
    let spec = read_manifest(dir, &mut errors);
    let ToolFiles {
        scripts,
        tool_yamls,
        script_descriptors,
    } = read_tools(dir, &mut errors);
    let host_decls = read_host_decls(dir, &mut errors);
    let app_yaml = Some(dir.join("app.yaml")).filter(|p| p.is_file());
    let has_target = spec.as_ref().is_some_and(|s| s.target.is_some());
    let (waypoints, mut bad) = crate::waypoint::discover(dir);
    if has_target || waypoints.is_empty() {
        errors.append(&mut bad);
    } else if let Some(w) = waypoints.first() {
        // The original's rule: a waypoint is a screen of a target's app.
        errors.push(file_error(
            &w.file,
            "a trailmap with no `target:` (a library) has no screens: move its waypoints to a target trailmap".into(),
        ));
    }
    let (nav_tools, mut bad) = navigation::discover(dir, has_target);
    errors.append(&mut bad);
    let listed = spec.as_ref().map(|s| s.toolsets.clone()).unwrap_or_default();
    let (toolsets, mut bad) = crate::toolset::discover(dir, &listed);
    errors.append(&mut bad);
    match spec {
        Some(spec) if errors.is_empty() => Ok(Trailmap {
            id: spec.id.clone(),
            dir: dir.to_path_buf(),
            spec,
            scripts,
            tool_yamls,
            script_descriptors,
            host_decls,
            app_yaml,
            waypoints,
            nav_tools,
            toolsets,
        }),
        _ => Err(errors),
    }
}

/// `trailmap.yaml`, decoded and checked (its id, exemption, network and system prompt file).
fn read_manifest(dir: &Path, errors: &mut Vec<YamlError>) -> Option<TrailmapSpec> {
    let file = dir.join("trailmap.yaml");
    match yaml::parse_file(&file) {
        Ok(doc) => match doc.decode::<TrailmapSpec>() {
            Ok(spec) => {
                let folder = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if spec.id != folder {
                    errors.push(doc.error_at(
                        "id",
                        format!("the id `{}` must equal the folder name `{folder}`", spec.id),
                    ));
                }
                if let Some(v) = &spec.trail_validation
                    && v.exempt.trim().is_empty()
                {
                    errors.push(doc.error_at("trail_validation.exempt", "an exemption needs a reason"));
                }
                if let Err(problems) = crate::network::NetworkPolicy::from_spec(spec.network.as_ref()) {
                    for (key, message) in problems {
                        errors.push(doc.error_at(&format!("network.{key}"), format!("`network.{key}`: {message}")));
                    }
                }
                if let Some(f) = spec.target.as_ref().and_then(|t| t.system_prompt_file.as_deref()) {
                    // Trailmap-relative, as the original's: a path out of the trailmap is refused.
                    let inside = Path::new(f)
                        .components()
                        .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
                    if !inside {
                        let msg = format!("`system_prompt_file: {f}` must be a path inside the trailmap's folder");
                        errors.push(doc.error_at("target.system_prompt_file", msg));
                    } else if !dir.join(f).is_file() {
                        let msg = format!("`system_prompt_file: {f}` names no file beside trailmap.yaml");
                        errors.push(doc.error_at("target.system_prompt_file", msg));
                    }
                }
                Some(spec)
            }
            Err(e) => {
                errors.push(e);
                None
            }
        },
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

/// What `tools/` holds: scripts, `.tool.yaml` composed tools and script descriptors.
struct ToolFiles {
    scripts: Vec<PathBuf>,
    tool_yamls: BTreeMap<String, (PathBuf, ToolYaml)>,
    script_descriptors: Vec<(PathBuf, ScriptDescriptor)>,
}

fn read_tools(dir: &Path, errors: &mut Vec<YamlError>) -> ToolFiles {
    let tools_dir = dir.join("tools");
    let mut scripts = Vec::new();
    const NOT_TOOL_YAML: [&str; 5] = [
        ".host.yaml",
        ".waypoint.yaml",
        ".shortcut.yaml",
        ".trailhead.yaml",
        ".toolset.yaml",
    ];
    let mut tool_yamls = BTreeMap::new();
    let mut script_descriptors = Vec::new();
    for path in sorted_entries(&tools_dir).unwrap_or_default() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Type declarations and the original's unit tests of its tools are no tools.
        if name.ends_with(".d.ts") || name.ends_with(".test.ts") || name.ends_with(".spec.ts") {
            continue;
        } else if NOT_TOOL_YAML.iter().any(|suffix| name.ends_with(suffix)) {
            // Host declarations belong in host/; the original's waypoints, shortcuts, trailheads and
            // tool sets are not read here: none of them is a script descriptor.
            continue;
        } else if name.ends_with(".ts") {
            scripts.push(path);
        } else if let Some(stem) = name.strip_suffix(".tool.yaml") {
            match yaml::from_file::<ToolYaml>(&path) {
                Ok(t) if t.timeout_ms.is_some_and(|ms| ms == 0 || ms > MAX_TOOL_TIMEOUT_MS) => {
                    // Parsed again only to point at the value.
                    let message = format!("`timeoutMs` must be between 1 and {MAX_TOOL_TIMEOUT_MS} (milliseconds)");
                    errors.push(match yaml::parse_file(&path) {
                        Ok(doc) => doc.error_at("timeoutMs", message),
                        Err(e) => e,
                    });
                }
                Ok(t) => {
                    tool_yamls.insert(stem.to_string(), (path, t));
                }
                Err(e) => errors.push(e),
            }
        } else if name.ends_with(".yaml") {
            match yaml::parse_file(&path).and_then(|doc| doc.decode::<ScriptDescriptor>().map(|d| (doc, d))) {
                Ok((doc, d)) => {
                    let script = path.parent().unwrap_or(dir).join(&d.script);
                    if !script.is_file() || !script.starts_with(dir) || d.script.contains("..") {
                        let msg = format!("`script: {}` names no file in this trailmap's folder", d.script);
                        errors.push(doc.error_at("script", msg));
                    } else if d.name.is_none() && d.tools.is_none() {
                        errors.push(doc.error_at("script", "a script descriptor needs `name:` or `tools:`"));
                    } else {
                        script_descriptors.push((path, d));
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    ToolFiles {
        scripts,
        tool_yamls,
        script_descriptors,
    }
}

/// `host/*.host.yaml`: each declaration's id is its file's name.
fn read_host_decls(dir: &Path, errors: &mut Vec<YamlError>) -> Vec<(PathBuf, HostDecl)> {
    let mut host_decls = Vec::new();
    for path in sorted_entries(&dir.join("host")).unwrap_or_default() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(stem) = name.strip_suffix(".host.yaml") else {
            continue;
        };
        match yaml::parse_file(&path).and_then(|doc| doc.decode::<HostDecl>().map(|d| (doc, d))) {
            Ok((doc, decl)) => {
                if decl.id != stem {
                    errors.push(doc.error_at(
                        "id",
                        format!("the id `{}` must equal the file name `{stem}.host.yaml`", decl.id),
                    ));
                } else {
                    host_decls.push((path, decl));
                }
            }
            Err(e) => errors.push(e),
        }
    }
    host_decls
}
