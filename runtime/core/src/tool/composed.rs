//! Composed tools: `tools/<name>.tool.yaml` with `parameters:` and `tools:`. A call expands into the
//! listed calls, each dispatched as its own step; `"{{params.x}}"` standing alone keeps the parameter's
//! type (a number stays a number), inside a longer string it becomes text.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{ToolDescriptor, ToolFlags, ToolKind};
use crate::trailmap::{ParamSpec, ToolYaml, Trailmap};

/// A composed tool's definition: its calls with their templates.
#[derive(Debug, Clone)]
pub struct ComposedTool {
    pub calls: Vec<(String, Value)>,
    /// The values omitted arguments take (a shortcut's `default:`), by parameter.
    pub defaults: Vec<(String, Value)>,
}

const OPEN: &str = "{{params.";

/// The descriptor of the composed tool `stem` declared by `file`, or why it is invalid.
pub fn descriptor(stem: &str, file: &Path, y: &ToolYaml, trailmap: &str) -> Result<ToolDescriptor, String> {
    let name = y
        .name
        .clone()
        .or_else(|| y.id.clone())
        .unwrap_or_else(|| stem.to_string());
    let params = y.parameters.clone().unwrap_or_default();
    let calls = calls_of(file, y.tools.as_deref().unwrap_or_default(), &params)?;
    Ok(ToolDescriptor {
        name,
        description: y.description.clone().unwrap_or_default().into(),
        flags: ToolFlags {
            surface_to_llm: y.surface_to_llm.unwrap_or(true),
            is_recordable: y.is_recordable.unwrap_or(true),
            read_only: y.read_only.unwrap_or(false),
        },
        input_schema: y.input_schema.clone().unwrap_or_else(|| schema(&params)).into(),
        output_schema: None.into(),
        kind: ToolKind::Composed(std::sync::Arc::new(ComposedTool {
            calls,
            defaults: Vec::new(),
        })),
        trailmap: Some(trailmap.to_string()),
    })
}

/// The calls of a `tools:` list, each `toolName: {args}` whose placeholders name `params`.
pub(super) fn calls_of(file: &Path, tools: &[Value], params: &[ParamSpec]) -> Result<Vec<(String, Value)>, String> {
    let mut calls = Vec::new();
    for (i, entry) in tools.iter().enumerate() {
        let Some((tool, args)) = entry.as_object().filter(|m| m.len() == 1).and_then(|m| m.iter().next()) else {
            return Err(format!(
                "{}: tools[{i}] must be one `toolName: {{args}}` entry",
                file.display()
            ));
        };
        let args = if args.is_null() { json!({}) } else { args.clone() };
        if !args.is_object() {
            return Err(format!(
                "{}: tools[{i}].{tool}: the arguments must be a map",
                file.display()
            ));
        }
        for used in placeholders(&args) {
            if !params.iter().any(|p| p.name == used) {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                return Err(format!(
                    "{}: tools[{i}].{tool} uses `{{{{params.{used}}}}}`, which is not a parameter (parameters: {})",
                    file.display(),
                    names.join(", ")
                ));
            }
        }
        calls.push((tool.clone(), args));
    }
    if calls.is_empty() {
        return Err(format!(
            "{}: a composed tool needs at least one entry under `tools:`",
            file.display()
        ));
    }
    Ok(calls)
}

/// The parameters as a strict object schema.
pub(super) fn schema(params: &[ParamSpec]) -> Value {
    let mut props = Map::new();
    for p in params {
        let mut s = json!({ "type": p.ty.json_type() });
        if let Some(d) = &p.description {
            s["description"] = Value::String(d.clone());
        }
        props.insert(p.name.clone(), s);
    }
    let required: Vec<&str> = params.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

fn placeholders(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find(OPEN) {
                let after = &rest[i + OPEN.len()..];
                let Some(end) = after.find("}}") else { break };
                out.push(after[..end].trim().to_string());
                rest = &after[end + 2..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| out.extend(placeholders(i))),
        Value::Object(map) => map.values().for_each(|i| out.extend(placeholders(i))),
        _ => {}
    }
    out
}

/// The calls with parameters substituted (an omitted one takes its default). An absent optional
/// parameter standing alone drops its key.
pub fn expand(tool: &ComposedTool, params: &Value) -> Vec<(String, Value)> {
    let with_defaults;
    let params = if tool.defaults.iter().any(|(k, _)| params.get(k).is_none()) {
        let mut m = params.as_object().cloned().unwrap_or_default();
        for (k, v) in &tool.defaults {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        with_defaults = Value::Object(m);
        &with_defaults
    } else {
        params
    };
    tool.calls
        .iter()
        .map(|(name, args)| (name.clone(), substitute(args, params).unwrap_or(Value::Null)))
        .collect()
}

fn substitute(v: &Value, params: &Value) -> Option<Value> {
    Some(match v {
        Value::String(s) => {
            let trimmed = s.trim();
            if let Some(name) = trimmed
                .strip_prefix(OPEN)
                .and_then(|r| r.strip_suffix("}}"))
                .filter(|n| !n.contains('}'))
            {
                // The whole string is one placeholder: the value keeps its type.
                return params.get(name.trim()).cloned();
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find(OPEN) {
                out.push_str(&rest[..i]);
                let after = &rest[i + OPEN.len()..];
                let Some(end) = after.find("}}") else {
                    out.push_str(&rest[i..]);
                    rest = "";
                    break;
                };
                match params.get(after[..end].trim()) {
                    Some(Value::String(p)) => out.push_str(p),
                    Some(Value::Null) | None => {}
                    Some(other) => out.push_str(&other.to_string()),
                }
                rest = &after[end + 2..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().filter_map(|i| substitute(i, params)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter_map(|(k, v)| substitute(v, params).map(|v| (k.clone(), v)))
                .collect(),
        ),
        other => other.clone(),
    })
}

/// The composed tools of the trailmap's `.tool.yaml` files (those with `tools:` or `parameters:`);
/// a name a script already took is refused.
pub(super) fn discover(map: &Trailmap, out: &mut Vec<ToolDescriptor>, problems: &mut Vec<String>) {
    for (stem, (file, y)) in &map.tool_yamls {
        if y.tools.is_none() && y.parameters.is_none() {
            continue;
        }
        match descriptor(stem, file, y, &map.id) {
            Ok(d) if out.iter().any(|t| t.name == d.name) => problems.push(format!(
                "{}: `{}` is both a scripted and a composed tool",
                file.display(),
                d.name
            )),
            Ok(d) => out.push(d),
            Err(e) => problems.push(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(calls: Value) -> ComposedTool {
        ComposedTool {
            calls: calls
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let (k, v) = c.as_object().unwrap().iter().next().unwrap();
                    (k.clone(), v.clone())
                })
                .collect(),
            defaults: Vec::new(),
        }
    }

    #[test]
    fn a_whole_placeholder_keeps_the_type_and_an_embedded_one_becomes_text() {
        let t = tool(
            json!([{ "tapOnPoint": { "x": "{{params.x}}", "y": 5 } }, { "inputText": { "text": "n={{params.x}} {{params.who}}" } }]),
        );
        let calls = expand(&t, &json!({ "x": 40, "who": "jane" }));
        assert_eq!(calls[0].1, json!({ "x": 40, "y": 5 }));
        assert_eq!(calls[1].1, json!({ "text": "n=40 jane" }));
    }

    #[test]
    fn an_absent_optional_parameter_drops_its_key() {
        let t = tool(json!([{ "launchApp": { "appId": "a", "launchMode": "{{params.mode}}" } }]));
        assert_eq!(expand(&t, &json!({}))[0].1, json!({ "appId": "a" }));
        assert_eq!(
            expand(&t, &json!({ "mode": "RESUME" }))[0].1,
            json!({ "appId": "a", "launchMode": "RESUME" })
        );
    }

    #[test]
    fn an_unknown_placeholder_is_refused_at_load() {
        let y = ToolYaml {
            tools: Some(vec![json!({ "inputText": { "text": "{{params.nope}}" } })]),
            ..Default::default()
        };
        let e = descriptor("t", Path::new("t.tool.yaml"), &y, "m").unwrap_err();
        assert!(e.contains("`{{params.nope}}`"), "{e}");
    }
}
