//! Trailmaps: `trailmaps/<id>/` with `trailmap.yaml`, `tools/`, `host/`, `trails/` and an optional
//! `app.yaml`. Discovery reads every declaration file strictly (file:line:col errors) and reports all
//! bad files together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::yaml::{self, YamlError};

/// `trailmap.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrailmapSpec {
    pub id: String,
    /// Trailmaps whose tools and host functions this one sees.
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(default)]
    pub target: Option<TargetSpec>,
    #[serde(default)]
    pub trail_validation: Option<TrailValidation>,
    /// Environment variables the `env` host function may read for this trailmap's scripts.
    #[serde(default)]
    pub host_env: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub app_ids: Vec<String>,
    /// The scripted tools offered to the LLM (all are callable).
    #[serde(default)]
    pub tools: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrailValidation {
    /// Why this trailmap's findings are only warnings. Required.
    pub exempt: String,
}

/// `host/<name>.host.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostDecl {
    pub id: String,
    /// The registry key of the compiled-in host function.
    pub class: String,
}

/// `tools/<name>.tool.yaml`: a descriptor that pins a scripted tool's fields.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolYaml {
    #[serde(default)]
    pub name: Option<String>,
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
#[derive(Debug, Clone, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRuntime {
    Quickjs,
    Subprocess,
}

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
    /// `host/*.host.yaml`, sorted by file name.
    pub host_decls: Vec<(PathBuf, HostDecl)>,
    pub app_yaml: Option<PathBuf>,
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
    /// Loads every `<root>/<id>/trailmap.yaml`. A missing root is an error naming it.
    pub fn discover(root: &Path) -> Result<Trailmaps, LoadErrors> {
        let mut errors = Vec::new();
        let mut maps = BTreeMap::new();
        let entries = match sorted_entries(root) {
            Ok(e) => e,
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
        for map in maps.values() {
            for dep in &map.spec.dependencies {
                if !maps.contains_key(dep) {
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

fn load_one(dir: &Path) -> Result<Trailmap, Vec<YamlError>> {
    let mut errors = Vec::new();
    let file = dir.join("trailmap.yaml");
    let spec: Option<TrailmapSpec> = match yaml::parse_file(&file) {
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
    };
    let tools_dir = dir.join("tools");
    let mut scripts = Vec::new();
    let mut tool_yamls = BTreeMap::new();
    for path in sorted_entries(&tools_dir).unwrap_or_default() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".d.ts") {
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
        }
    }
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
    let app_yaml = Some(dir.join("app.yaml")).filter(|p| p.is_file());
    match spec {
        Some(spec) if errors.is_empty() => Ok(Trailmap {
            id: spec.id.clone(),
            dir: dir.to_path_buf(),
            spec,
            scripts,
            tool_yamls,
            host_decls,
            app_yaml,
        }),
        _ => Err(errors),
    }
}
