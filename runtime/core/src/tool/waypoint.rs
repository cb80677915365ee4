//! `assertWaypoint`: the screen is at a named waypoint, waiting for it to settle there. Its failure
//! says which required selector is missing and which forbidden one is present. Shortcuts and
//! trailheads check their edges with it.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results;
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::waypoint::Verdict;

/// How long `assertWaypoint` waits by default, and how often it looks again (the original's).
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
const DEFAULT_POLL_MS: u64 = 250;

/// Asserts that the screen has reached a named waypoint (a known place in the app, e.g.
/// `clock/android/alarm_tab`): every one of its required selectors present and none of its
/// forbidden ones. Waits up to `timeoutMs` for the screen to settle there; fails naming the missing
/// and the present-forbidden selectors. Use it to pin where a step landed instead of trusting that
/// a tap succeeded.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertWaypoint {
    /// The waypoint's id, e.g. `clock/android/alarm_tab` (`trailblaze waypoints` lists them).
    pub waypoint: String,
    /// How long to wait for the screen to settle into the waypoint, in milliseconds (default 5000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// How often to look again while waiting, in milliseconds (default 250).
    #[serde(default)]
    pub poll_interval_ms: Option<u64>,
}

/// The waypoint the screen is at.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaypointReached {
    pub waypoint: String,
}

impl BuiltinTool for AssertWaypoint {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<WaypointReached>()
    }
    const NAME: &'static str = "assertWaypoint";
    const FLAGS: ToolFlags = super::verify::READ_ONLY;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let timeout = self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let interval = self.poll_interval_ms.unwrap_or(DEFAULT_POLL_MS);
        if timeout == 0 || interval == 0 {
            return Err("`timeoutMs` and `pollIntervalMs` must be above 0".into());
        }
        let started = Instant::now();
        let verdict = wait_for(
            cx,
            &self.waypoint,
            Duration::from_millis(timeout),
            Duration::from_millis(interval),
        )?;
        if verdict.matched() {
            return results::done(WaypointReached {
                waypoint: self.waypoint,
            });
        }
        // A device that cannot change by itself is answered at once: no wait to speak of.
        let waited = started.elapsed().as_millis();
        let waited = if waited >= 50 {
            format!(" (after waiting {waited} ms)")
        } else {
            String::new()
        };
        Err(format!("{}{waited}", verdict.explain(&self.waypoint)).into())
    }
}

/// Looks at the screen until it is at waypoint `id` or `budget` runs out; the last verdict. A
/// waypoint that cannot match here (no block for the device, an unusable selector) is answered at
/// once, and a device whose screen only changes when a tool acts is asked once.
pub fn wait_for(cx: &ToolCx<'_>, id: &str, budget: Duration, interval: Duration) -> Result<Verdict, ToolFailure> {
    let Some(wp) = cx.waypoints.get(id) else {
        let ids = cx.waypoints.ids();
        let near = trailblaze_host_functions::decode::nearest_names(id, &ids, 3);
        let known = if ids.is_empty() {
            "this session's trailmap has no waypoints (`waypoints/*.waypoint.yaml`)".to_string()
        } else {
            format!("{} known{}", ids.len(), super::did_you_mean(&near))
        };
        return Err(format!("unknown waypoint `{id}`: {known}").into());
    };
    let platform = cx.screen.platform();
    let mut verdict = cx.waypoints.evaluate(wp, &*cx.screen.snapshot()?, platform);
    if !matches!(verdict, Verdict::Mismatch { .. }) || !cx.screen.with_device(|d| Ok(d.changes_on_its_own()))? {
        return Ok(verdict);
    }
    let until = Instant::now() + budget;
    while Instant::now() < until {
        cx.sleep(interval.min(until.saturating_duration_since(Instant::now())))?;
        verdict = cx.waypoints.evaluate(wp, &*cx.recapture()?, platform);
        if verdict.matched() {
            break;
        }
    }
    Ok(verdict)
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![BuiltinEntry::of::<AssertWaypoint>()]
}
