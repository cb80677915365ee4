//! What a delegating tool names rather than lists: another trail's recorded calls (`runTrail`).

use std::path::Path;

use serde_json::Value;

use super::CallError;
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
