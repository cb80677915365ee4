//! Shortcuts and trailheads: a call along an edge checks its start waypoint before it acts (a
//! shortcut's `from`) and its end waypoint after (`to`), each through `assertWaypoint`, so each
//! check is a step of its own in the log and the report. A failed check fails the call naming the
//! waypoint.

use serde_json::{Value, json};

use super::{CallError, call};
use crate::catalog::Edge;
use crate::script::port::ScriptRuntime;
use crate::state::SessionCore;

/// How long a shortcut gives the screen to settle at its start waypoint before it refuses to act.
const START_WAIT_MS: u64 = 1_000;

/// Runs `run` (the tool `name`) along `edge`.
pub(super) fn along(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    edge: &Edge,
    run: impl FnOnce() -> Result<Value, CallError>,
) -> Result<Value, CallError> {
    if let Edge::Shortcut { from, .. } = edge {
        check(s, rt, from, Some(START_WAIT_MS)).map_err(|e| {
            failed(
                name,
                e,
                format!(
                    "shortcut `{name}` starts at waypoint `{from}`, and the screen is not there, so nothing was done"
                ),
            )
        })?;
    }
    let value = run()?;
    let to = match edge {
        Edge::Shortcut { to, .. } => Some(to),
        Edge::Trailhead { to } => to.as_ref(),
    };
    if let Some(to) = to {
        let what = if matches!(edge, Edge::Shortcut { .. }) {
            "shortcut"
        } else {
            "trailhead"
        };
        check(s, rt, to, None).map_err(|e| {
            failed(
                name,
                e,
                format!("{what} `{name}` ran, and the screen did not reach its end waypoint `{to}`"),
            )
        })?;
    }
    Ok(value)
}

fn check(s: &SessionCore, rt: &dyn ScriptRuntime, waypoint: &str, wait_ms: Option<u64>) -> Result<Value, CallError> {
    let mut args = json!({ "waypoint": waypoint });
    if let Some(ms) = wait_ms {
        args["timeoutMs"] = ms.into();
    }
    call(s, rt, "assertWaypoint", args)
}

/// The check's failure as the tool's: a device failure stays one (it is no failed step).
fn failed(tool: &str, e: CallError, what: String) -> CallError {
    match e {
        CallError::Device { .. } => e,
        CallError::Failed { message, .. } => {
            // The check's own sentence names the waypoint again: keep only what it found.
            let found = message
                .strip_prefix("the screen is not at waypoint `")
                .and_then(|rest| rest.split_once("`: "))
                .map_or(message.as_str(), |(_, found)| found);
            CallError::Failed {
                tool: tool.to_string(),
                message: format!("{what}: {found}"),
            }
        }
        other => CallError::Failed {
            tool: tool.to_string(),
            message: format!("{what}: {other}"),
        },
    }
}
