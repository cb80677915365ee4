//! JSON Schemas for a trailmap's files, so an editor with the YAML language server completes tool
//! names and flags a wrong argument as you type: the trail schema is built from the catalog (each
//! recordable tool's name, description and argument schema); the others (`trailmap.yaml`,
//! `app.yaml`, tool and host declarations, shortcut and trailhead files) from the types that read
//! them. `.vscode/settings.json` binds them by file pattern (`yaml.schemas`).
//!
//! A schema says less than the gates: what it cannot say is listed in docs/sdk.md (the editor) and
//! kept true by `tests/e2e/schemas.rs`, which runs a real validator against the parse gate.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::SurfaceEntry;
use super::client_files::{Surface, write_if_changed};
use trailblaze_core::catalog::Catalog;

/// Where a trailmap's schemas go, relative to it.
pub const SCHEMA_DIR: &str = ".trailblaze/schemas";

const DRAFT: &str = "http://json-schema.org/draft-07/schema#";

/// The schema of the trail files of a trailmap whose recordable tools are `tools`.
pub fn trail_schema(tools: &[SurfaceEntry]) -> Value {
    let mut defs = Map::new();
    // The trail's own definitions are named first, so a tool's definition of the same name is kept
    // apart (named after its tool) rather than replacing one.
    for name in ["trail-call", "trail-calls", "trail-recording", "trail-step"] {
        defs.insert(name.into(), Value::Null);
    }
    let props = tool_props(tools, &mut defs);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    insert_trail_defs(&mut defs, &names, props);
    let text = json!({ "type": ["string", "number", "boolean"] });
    let recording = json!({ "$ref": "#/definitions/trail-recording" });
    json!({
        "$schema": DRAFT,
        "title": "A trail (`*.trail.yaml`)",
        "definitions": defs,
        "anyOf": [
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["trail"],
                "properties": {
                    "config": config_schema(),
                    "trailhead": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["step"],
                        "properties": { "step": text, "recording": recording },
                    },
                    "trail": { "type": "array", "items": { "$ref": "#/definitions/trail-step" } },
                },
            },
            // The original's older list form (`trailblaze migrate` rewrites it): its shape only.
            { "type": "array", "minItems": 1 }
        ],
    })
}

/// Each tool's argument schema by tool name, its own definitions hoisted into `defs`.
fn tool_props(tools: &[SurfaceEntry], defs: &mut Map<String, Value>) -> Map<String, Value> {
    let mut props = Map::new();
    for t in tools {
        let mut args = hoist_defs(&t.name, (*t.args).clone(), defs);
        if let Value::Object(m) = &mut args {
            m.remove("$schema");
            m.remove("title");
            if !t.description.is_empty() {
                m.insert("description".into(), Value::String(t.description.to_string()));
            }
        }
        // `tool:` with nothing after it reads as no arguments.
        let no_required = args
            .get("required")
            .and_then(Value::as_array)
            .is_none_or(|r| r.is_empty());
        let args = if no_required {
            json!({ "anyOf": [{ "type": "null" }, args] })
        } else {
            args
        };
        props.insert(t.name.clone(), args);
    }
    props
}

/// Fills the trail's own definitions: a call of one of `names` (arguments `props`), a list of
/// calls, a recording and a step.
fn insert_trail_defs(defs: &mut Map<String, Value>, names: &[&str], props: Map<String, Value>) {
    defs.insert(
        "trail-call".into(),
        json!({
            "description": "A tool call: `toolName: {args}`",
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "propertyNames": { "enum": names },
            "properties": props,
        }),
    );
    defs.insert(
        "trail-calls".into(),
        json!({
            "anyOf": [
                { "type": "array", "items": { "$ref": "#/definitions/trail-call" } },
                { "type": "object", "maxProperties": 0 },
                { "$ref": "#/definitions/trail-call" }
            ]
        }),
    );
    let text = json!({ "type": ["string", "number", "boolean"] });
    let calls = json!({ "$ref": "#/definitions/trail-calls" });
    defs.insert(
        "trail-recording".into(),
        json!({
            "description": "The recorded tool calls: `tools` (every device), a platform or a `config.devices` key",
            "type": "object",
            "properties": { "tools": calls, "android": calls, "ios": calls, "web": calls },
            "additionalProperties": calls,
        }),
    );
    let recording = json!({ "$ref": "#/definitions/trail-recording" });
    defs.insert(
        "trail-step".into(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "step": text, "verify": text,
                "recordable": { "type": "boolean" },
                "maxRetries": { "type": "integer", "minimum": 0, "maximum": u32::MAX },
                "recording": recording,
            },
            "oneOf": [{ "required": ["step"] }, { "required": ["verify"] }],
        }),
    );
}

/// The schema of a trail's `config:` block.
fn config_schema() -> Value {
    let text = json!({ "type": ["string", "number", "boolean"] });
    let opt_text = json!({ "type": ["string", "number", "boolean", "null"] });
    let text_map = json!({ "type": ["object", "null"], "additionalProperties": text });
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "id": opt_text, "target": opt_text, "title": opt_text, "description": opt_text,
            "priority": opt_text, "context": opt_text,
            "devices": text_map, "memory": text_map, "metadata": text_map,
            "tags": { "type": ["array", "null"], "items": text },
            "skip": { "anyOf": [
                { "type": "string", "pattern": "\\S" },
                { "type": "object", "additionalProperties": { "type": ["string", "number", "boolean"], "pattern": "\\S" } }
            ] },
            "args": { "type": ["object", "null"] },
        },
    })
}

/// Moves `schema`'s own `$defs`/`definitions` into `defs` and points its `$ref`s there: each tool's
/// schema is a document of its own, and the trail schema holds them all. They keep their names when
/// every one is new or the same as the one already there (the selector types most tools share are
/// then held once); otherwise they are named `<tool>.<name>`.
fn hoist_defs(tool: &str, schema: Value, defs: &mut Map<String, Value>) -> Value {
    let mut schema = schema;
    let mut own = Map::new();
    if let Value::Object(m) = &mut schema {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(d)) = m.remove(key) {
                own.extend(d);
            }
        }
    }
    let rewrite = |prefix: &str, mut v: Value| {
        rewrite_refs(&mut v, prefix);
        v
    };
    let shared: Vec<(String, Value)> = own.iter().map(|(n, d)| (n.clone(), rewrite("", d.clone()))).collect();
    if shared.iter().all(|(n, d)| defs.get(n).is_none_or(|there| there == d)) {
        defs.extend(shared);
        return rewrite("", schema);
    }
    let prefix = format!("{tool}.");
    for (name, def) in own {
        defs.insert(format!("{prefix}{name}"), rewrite(&prefix, def));
    }
    rewrite(&prefix, schema)
}

/// Points `$ref`s to a local definition at `#/definitions/<prefix><name>`.
fn rewrite_refs(v: &mut Value, prefix: &str) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref") {
                for local in ["#/$defs/", "#/definitions/"] {
                    if let Some(name) = r.strip_prefix(local) {
                        *r = format!("#/definitions/{prefix}{name}");
                        break;
                    }
                }
            }
            m.values_mut().for_each(|v| rewrite_refs(v, prefix));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, prefix)),
        _ => {}
    }
}

/// The schema of `T`, as an editor reads it.
fn schema_of<T: schemars::JsonSchema>(title: &str) -> Value {
    // Draft 7: what the YAML language server and most validators read.
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut v = serde_json::to_value(schema).unwrap_or_default();
    if let Value::Object(m) = &mut v {
        m.insert("title".into(), Value::String(title.into()));
    }
    v
}

/// Each schema file a trailmap gets and the file patterns (relative to the trailmap) it binds.
pub fn schemas(catalog: &Catalog) -> Vec<(&'static str, Value, Vec<&'static str>)> {
    use trailblaze_core::trailmap::navigation::NavToolSpec;
    use trailblaze_core::trailmap::{HostDecl, ToolYaml, TrailmapSpec};
    let surface = Surface::of(catalog);
    let mut app = trailblaze_core::device::sim::app_schema();
    if let Value::Object(m) = &mut app {
        m.insert(
            "title".into(),
            Value::String("The simulated device's app (`app.yaml`)".into()),
        );
    }
    vec![
        (
            "trail.schema.json",
            trail_schema(&surface.recordable_tools()),
            vec!["trails/**/*.trail.yaml", "trails/**/trail.yaml", "trails/**/blaze.yaml"],
        ),
        (
            "trailmap.schema.json",
            schema_of::<TrailmapSpec>("A trailmap (`trailmap.yaml`)"),
            vec!["trailmap.yaml"],
        ),
        ("app.schema.json", app, vec!["app.yaml"]),
        (
            "tool.schema.json",
            schema_of::<ToolYaml>("A tool declaration (`*.tool.yaml`)"),
            vec!["tools/**/*.tool.yaml"],
        ),
        (
            "host.schema.json",
            schema_of::<HostDecl>("A host function's declaration (`*.host.yaml`)"),
            vec!["host/*.host.yaml"],
        ),
        (
            "navigation.schema.json",
            schema_of::<NavToolSpec>("A shortcut or trailhead (`*.shortcut.yaml`, `*.trailhead.yaml`)"),
            vec!["shortcuts/**/*.shortcut.yaml", "trailheads/**/*.trailhead.yaml"],
        ),
    ]
}

/// Writes the schemas of `catalog` under `<map_dir>/.trailblaze/schemas/` and returns each file
/// with its patterns relative to the trailmap.
pub fn write_schemas(catalog: &Catalog, map_dir: &Path) -> std::io::Result<Vec<(PathBuf, Vec<&'static str>)>> {
    let dir = map_dir.join(SCHEMA_DIR);
    std::fs::create_dir_all(&dir)?;
    let mut out = Vec::new();
    for (name, schema, globs) in schemas(catalog) {
        let path = dir.join(name);
        let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
        write_if_changed(&path, &text)?;
        out.push((path, globs));
    }
    Ok(out)
}

/// Why `.vscode/settings.json` was left alone.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{file}: not plain JSON (comments?), so it was left alone; add `yaml.schemas` by hand (docs/sdk.md)")]
    NotJson { file: PathBuf },
    #[error("{file}: {source}")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Sets, in `<workspace>/.vscode/settings.json`, the `yaml.schemas` entry of each schema file
/// (`bindings`: the schema's path and its patterns, both relative to the workspace), keeping every
/// other setting and entry. Returns the settings file.
pub fn bind_schemas(workspace: &Path, bindings: &[(String, Vec<String>)]) -> Result<PathBuf, SettingsError> {
    let file = workspace.join(".vscode/settings.json");
    let io = |source| SettingsError::Io {
        file: file.clone(),
        source,
    };
    let mut settings = match std::fs::read_to_string(&file) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            _ => return Err(SettingsError::NotJson { file }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(io(e)),
    };
    let schemas = settings
        .entry("yaml.schemas")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(schemas) = schemas else {
        return Err(SettingsError::NotJson { file });
    };
    for (schema, globs) in bindings {
        schemas.insert(schema.clone(), json!(globs));
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(settings)).unwrap_or_default() + "\n";
    write_if_changed(&file, &text).map_err(io)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` in `v`.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn each_tools_own_definitions_are_hoisted_and_every_ref_resolves() {
        let entry = |name: &str, defs_key: &str| {
            let mut args = json!({
                "$schema": "x", "type": "object", "required": ["sel"],
                "properties": { "sel": { "$ref": format!("#/{defs_key}/Sel") } },
            });
            let sel = json!({ "Sel": { "type": "object", "properties": { "inner": { "$ref": format!("#/{defs_key}/Sel") } } } });
            args[defs_key] = sel;
            SurfaceEntry {
                name: name.into(),
                description: format!("{name} does it").into(),
                args: args.into(),
                result: None.into(),
            }
        };
        // Two tools with the same definition, in both keywords' spellings: held once; a third whose
        // definition of that name differs gets its own, named after it.
        let mut other = entry("o", "$defs");
        other.args["$defs"]["Sel"]["type"] = json!("string");
        let schema = trail_schema(&[entry("a", "$defs"), entry("b", "definitions"), other]);
        let defs = schema["definitions"].as_object().expect("definitions");
        assert!(defs.contains_key("Sel") && defs.contains_key("o.Sel"), "{defs:?}");
        assert!(!defs.contains_key("a.Sel") && !defs.contains_key("b.Sel"), "{defs:?}");
        assert_eq!(defs["o.Sel"]["type"], json!("string"));
        let mut all = Vec::new();
        refs(&schema, &mut all);
        assert!(all.contains(&"#/definitions/o.Sel".to_string()), "{all:?}");
        assert!(all.contains(&"#/definitions/Sel".to_string()), "{all:?}");
        for r in &all {
            let name = r.strip_prefix("#/definitions/").expect("a local ref");
            assert!(defs.contains_key(name), "{r} does not resolve");
        }
        let call = &defs["trail-call"];
        assert_eq!(call["propertyNames"]["enum"], json!(["a", "b", "o"]));
        assert_eq!(call["properties"]["a"]["description"], json!("a does it"));
        assert!(call["properties"]["a"].get("$schema").is_none());
        // Control: a tool with no required argument also takes `tool:` with nothing after it.
        let mut free = entry("c", "$defs");
        free.args["required"] = json!([]);
        let schema = trail_schema(&[free]);
        assert_eq!(
            schema["definitions"]["trail-call"]["properties"]["c"]["anyOf"][0],
            json!({ "type": "null" })
        );
    }
}
