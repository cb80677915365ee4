//! What a delegating tool names rather than lists: another trail's recorded calls (`runTrail`).

use std::path::Path;

use serde_json::Value;

use super::CallError;
use crate::script::port::ScriptRuntime;
use crate::state::SessionCore;

/// The recorded calls of the trail at `path` for this session's device, trailhead first. Only trail
/// files are read, and a problem is reported by position, never with the file's text.
pub(super) fn trail_calls(s: &SessionCore, tool: &str, path: &Path) -> Result<Vec<(String, Value)>, CallError> {
    let fail = |message: String| CallError::Failed {
        tool: tool.to_string(),
        message,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !(name == "trail.yaml" || name == "blaze.yaml" || name.ends_with(".trail.yaml")) {
        return Err(fail(
            "`path` must name a trail file (`trail.yaml`, `<name>.trail.yaml` or `blaze.yaml`)".into(),
        ));
    }
    let headlines =
        |errors: Vec<crate::yaml::YamlError>| errors.iter().map(|e| e.headline()).collect::<Vec<_>>().join("; ");
    let trail =
        crate::trail::load_trail(path).map_err(|e| fail(format!("the trail does not load: {}", headlines(e))))?;
    let steps = trail
        .with_args(&Default::default())
        .map_err(|e| fail(format!("the trail does not load: {}", headlines(e))))?;
    let platform = s.screen.platform();
    let mut calls = Vec::new();
    for step in steps {
        let Some(recorded) = step.calls_for(platform.as_str(), None) else {
            return Err(fail(format!(
                "{} · {} has no recording for this device ({platform}): runTrail replays recordings only",
                path.display(),
                step.label()
            )));
        };
        calls.extend(recorded.iter().map(|c| (c.tool.clone(), c.args.clone())));
    }
    Ok(calls)
}

/// Runs `source` (the `script` tool's body) in the session's script engine and reads the YAML it
/// returned as tool calls: a list of `toolName: {args}` (or one), or nothing.
pub(super) fn script_calls(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    tool: &str,
    source: &str,
    input: Value,
) -> Result<Vec<(String, Value)>, CallError> {
    let fail = |message: String| CallError::Script {
        tool: tool.to_string(),
        message,
    };
    let back = super::Back { core: s, runtime: rt };
    let out = s
        .as_script(tool, || rt.run_inline(&back, source, input))
        .map_err(fail)?;
    let yaml = match out {
        Value::Null => return Ok(Vec::new()),
        Value::String(text) if text.trim().is_empty() => return Ok(Vec::new()),
        Value::String(text) => text,
        _ => {
            return Err(fail(
                "it must return a YAML list of tool calls (a string), or nothing".into(),
            ));
        }
    };
    let doc = crate::yaml::parse(&yaml, Path::new("<script result>"))
        .map_err(|e| fail(format!("it returned YAML that does not parse: {}", e.headline())))?;
    let items = match doc.value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        one @ Value::Object(_) => vec![one],
        _ => return Err(fail("it returned YAML that is no list of `toolName: {args}`".into())),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::Object(m) if m.len() == 1 => {
                let (name, args) = m.into_iter().next().unwrap_or_default();
                let args = if args.is_null() {
                    Value::Object(Default::default())
                } else {
                    args
                };
                Ok((name, args))
            }
            _ => Err(fail(format!(
                "item {i} of the YAML it returned is not one `toolName: {{args}}`"
            ))),
        })
        .collect()
}
