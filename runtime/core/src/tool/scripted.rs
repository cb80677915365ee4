//! Scripted tools: `tools/*.ts` files read by the swc analyzer, with `<name>.tool.yaml` pinning fields.

use std::path::Path;

use serde_json::{Value, json};

use super::{ScriptedTool, ToolDescriptor, ToolFlags, ToolKind};
use crate::script::analyze::{self, AnalyzeOptions};
use crate::script::port::{RuntimeKind, module_name};
use crate::trailmap::Trailmap;

/// A script's tools, or why the analyzer refused it.
type Analyzed = Result<Vec<analyze::AnalyzedTool>, String>;

/// Reads and analyzes each script, in the scripts' order. The files are independent (siblings they
/// import are read anew by each), so they are analyzed on as many threads as there are cores: at a
/// cold start each takes about half a millisecond of swc.
fn analyze_all(root: &Path, scripts: &[std::path::PathBuf], options: &AnalyzeOptions) -> Vec<(String, Analyzed)> {
    let mut sources = Vec::with_capacity(scripts.len());
    let mut read: Vec<(String, Option<Analyzed>)> = Vec::with_capacity(scripts.len());
    for file in scripts {
        let module = module_name(root, file);
        match crate::files::read_text(file) {
            Ok(source) => {
                sources.push((module.clone(), source));
                read.push((module, None));
            }
            Err(e) => {
                let why = format!("{module}: cannot read: {e}");
                read.push((module, Some(Err(why))));
            }
        }
    }
    let load = |spec: &str, from: &str| load_sibling(root, spec, from);
    let mut analyzed = analyze::analyze_modules_with(&sources, &load, options, crate::cores::count()).into_iter();
    read.into_iter()
        .map(|(module, done)| {
            let result = done.unwrap_or_else(|| match analyzed.next() {
                Some(r) => r.map_err(|e| e.to_string()),
                None => Err(format!("{module}: internal error: not analyzed")),
            });
            (module, result)
        })
        .collect()
}

/// The tools of one trailmap's `tools/` folder: its scripts (analyzed), the scripts its
/// descriptors declare, and its composed tools; and the files refused (each analyzer refusal also
/// registered as a broken tool named after its file, so calling it says why).
pub fn discover(root: &Path, map: &Trailmap) -> (Vec<ToolDescriptor>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    from_scripts(root, map, &mut out, &mut problems);
    from_descriptors(root, map, &mut out, &mut problems);
    super::composed::discover(map, &mut out, &mut problems);
    (out, problems)
}

/// The tools the analyzer finds in the trailmap's `.ts` files, with what their `.tool.yaml` or
/// descriptor pins.
fn from_scripts(root: &Path, map: &Trailmap, out: &mut Vec<ToolDescriptor>, problems: &mut Vec<String>) {
    let options = AnalyzeOptions {
        inputs_declared: map
            .tool_yamls
            .iter()
            .filter(|(_, (_, y))| y.input_schema.is_some())
            .map(|(n, _)| n.clone())
            .collect(),
    };
    for (file, (module, analyzed)) in map.scripts.iter().zip(analyze_all(root, &map.scripts, &options)) {
        let found = match analyzed {
            Ok(found) => found,
            Err(message) => {
                let stem = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push(broken(stem, file, message.clone(), map));
                problems.push(message);
                continue;
            }
        };
        for t in found {
            let mut pinned = map.tool_yamls.get(&t.name).map(|(_, y)| y.clone()).unwrap_or_default();
            // A `<name>.yaml` script descriptor pins the same fields, as the original's does.
            let mut platforms = t.supported_platforms.clone();
            if let Some(d) = described(map, file, &t.name) {
                pinned.description = pinned.description.or(d.description);
                pinned.surface_to_llm = pinned.surface_to_llm.or(d.surface_to_llm);
                pinned.is_recordable = pinned.is_recordable.or(d.is_recordable);
                pinned.runtime = pinned.runtime.or(d.runtime);
                pinned.input_schema = pinned.input_schema.or(d.input_schema);
                platforms = d.platforms.or(platforms);
            }
            let runtime = match pinned.runtime {
                Some(crate::trailmap::ToolRuntime::Subprocess) => RuntimeKind::Subprocess,
                _ => RuntimeKind::Embedded,
            };
            let flags = ToolFlags {
                surface_to_llm: pinned.surface_to_llm.or(t.surface_to_llm).unwrap_or(true),
                is_recordable: pinned.is_recordable.or(t.is_recordable).unwrap_or(true),
                read_only: pinned.read_only.or(t.read_only).unwrap_or(false),
            };
            let input = pinned
                .input_schema
                .clone()
                .or(t.input_schema.clone())
                .unwrap_or_else(|| json!({"type": "object", "properties": {}, "additionalProperties": false}));
            out.push(ToolDescriptor {
                name: t.name.clone(),
                description: pinned
                    .description
                    .clone()
                    .or(t.description.clone())
                    .unwrap_or_default()
                    .into(),
                flags,
                input_schema: with_selector_defs(input).into(),
                output_schema: t.output_schema.clone().map(with_selector_defs).into(),
                kind: ToolKind::Scripted(ScriptedTool {
                    file: file.clone(),
                    module: module.clone(),
                    runtime,
                    timeout: pinned.timeout_ms.map(std::time::Duration::from_millis),
                    platforms,
                }),
                trailmap: Some(map.id.clone()),
            });
        }
    }
}

/// The tools of script descriptors whose script is plain JavaScript (a `.ts` one was analyzed).
fn from_descriptors(root: &Path, map: &Trailmap, out: &mut Vec<ToolDescriptor>, problems: &mut Vec<String>) {
    for (file, d) in &map.script_descriptors {
        let script = file.parent().unwrap_or(&map.dir).join(&d.script);
        // A `.ts` script is read by the analyzer above; the descriptor only pinned its fields.
        if script.extension().is_some_and(|e| e == "ts") {
            continue;
        }
        for tool in Described::all(d) {
            if out.iter().any(|t| t.name == tool.name) {
                problems.push(format!("{}: `{}` is declared twice", file.display(), tool.name));
                continue;
            }
            out.push(ToolDescriptor {
                name: tool.name.clone(),
                description: tool.description.clone().unwrap_or_default().into(),
                flags: ToolFlags {
                    surface_to_llm: tool.surface_to_llm.unwrap_or(true),
                    is_recordable: tool.is_recordable.unwrap_or(true),
                    read_only: false,
                },
                input_schema: tool
                    .input_schema
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}))
                    .into(),
                output_schema: None.into(),
                kind: ToolKind::Scripted(ScriptedTool {
                    file: script.clone(),
                    module: module_name(root, &script),
                    runtime: match tool.runtime {
                        Some(crate::trailmap::ToolRuntime::Subprocess) => RuntimeKind::Subprocess,
                        _ => RuntimeKind::Embedded,
                    },
                    timeout: None,
                    platforms: tool.platforms,
                }),
                trailmap: Some(map.id.clone()),
            });
        }
    }
}

/// One tool as a `<name>.yaml` script descriptor declares it (the single or the multi-tool shape).
struct Described {
    name: String,
    description: Option<String>,
    surface_to_llm: Option<bool>,
    is_recordable: Option<bool>,
    runtime: Option<crate::trailmap::ToolRuntime>,
    /// `None` when the descriptor declares no arguments: the analyzer's (or an empty object) stands.
    input_schema: Option<Value>,
    platforms: Option<Vec<String>>,
}

impl Described {
    fn all(d: &crate::trailmap::ScriptDescriptor) -> Vec<Described> {
        let schema = |props: &std::collections::BTreeMap<_, _>| {
            (!props.is_empty()).then(|| crate::trailmap::properties_schema(props))
        };
        match &d.tools {
            Some(entries) => entries
                .iter()
                .map(|e| Described {
                    name: e.name.clone(),
                    description: e.description.clone(),
                    surface_to_llm: e.surface_to_llm,
                    is_recordable: e.is_recordable,
                    runtime: d.runtime,
                    input_schema: schema(&e.input_schema),
                    platforms: e.supported_platforms.clone().or(d.supported_platforms.clone()),
                })
                .collect(),
            None => d
                .name
                .iter()
                .map(|name| Described {
                    name: name.clone(),
                    description: d.description.clone(),
                    surface_to_llm: d.surface_to_llm,
                    is_recordable: d.is_recordable,
                    runtime: d.runtime,
                    input_schema: schema(&d.input_schema),
                    platforms: d.supported_platforms.clone(),
                })
                .collect(),
        }
    }
}

/// What a script descriptor naming `script` says of its export `name`.
fn described(map: &Trailmap, script: &Path, name: &str) -> Option<Described> {
    map.script_descriptors
        .iter()
        .filter(|(file, d)| file.parent().unwrap_or(&map.dir).join(&d.script) == script)
        .flat_map(|(_, d)| Described::all(d))
        .find(|t| t.name == name)
}

/// The analyzer refers to the selector grammar by `$ref`; a published schema carries its definition.
fn with_selector_defs(mut schema: Value) -> Value {
    if !schema.to_string().contains(analyze::SELECTOR_REF) {
        return schema;
    }
    if let Some(obj) = schema.as_object_mut() {
        let defs = obj.entry("$defs").or_insert_with(|| json!({}));
        if let Some(defs) = defs.as_object_mut() {
            // The selector and its own nested definitions (driver matches) live beside it.
            for (k, v) in crate::tool::schema::selector_defs() {
                defs.insert(k.clone(), v.clone());
            }
        }
    }
    schema
}

/// Reads an imported sibling for the analyzer: `./x`, `./x.ts` or `./x.js` (NodeNext style) → `x.ts`.
fn load_sibling(root: &Path, spec: &str, from: &str) -> Option<(String, String)> {
    let base = Path::new(from).parent()?;
    let mut rel = base.join(spec);
    match rel.extension().and_then(|e| e.to_str()) {
        Some("ts") => {}
        Some("js") | None => {
            rel.set_extension("ts");
        }
        Some(_) => return None,
    }
    let file = root.join(&rel);
    let source = crate::files::read_text(&file).ok()?;
    Some((module_name(root, &file), source))
}

/// A tool that fails with `message` when called: what a file the analyzer refused, or a runtime that is
/// not supported, registers, so calling it says why.
fn broken(name: String, file: &Path, message: String, map: &Trailmap) -> ToolDescriptor {
    ToolDescriptor {
        name,
        description: String::new().into(),
        flags: ToolFlags {
            surface_to_llm: false,
            ..ToolFlags::DEFAULT
        },
        input_schema: json!({"type": "object"}).into(),
        output_schema: None.into(),
        kind: ToolKind::Broken {
            file: file.to_path_buf(),
            message,
        },
        trailmap: Some(map.id.clone()),
    }
}
