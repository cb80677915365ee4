//! The result types of the built-in tools: what `ctx.tools.x()` resolves to, typed in the generated
//! `.d.ts` from the same structs that produce the values.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::Outcome;
use crate::device::KeyCode;

/// Where a tap landed, in device pixels.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// A tap's result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tapped {
    pub tapped: Point,
}

/// A swipe's result: where the finger went down and where it lifted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Swiped {
    pub from: Point,
    pub to: Point,
}

/// What was typed: the number of characters only, each secret counted as the three of `***`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Typed {
    pub typed: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Pressed {
    pub pressed: KeyCode,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Launched {
    pub launched: String,
}

/// An assertion's result (a failed assertion is an error instead).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Visibility {
    pub visible: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Erased {
    pub erased: u32,
}

/// The screen: the app in front, the compact text the LLM reads, and the tree with a ref on each node.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotResult {
    pub app_id: Option<String>,
    /// Starts with `waypoint: <id>` when the screen is at one of the trailmap's waypoints.
    pub text: String,
    pub root: Value,
    /// The waypoints the screen is at (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waypoints: Vec<String>,
}

/// The JSON Schema of a result type, for the catalog.
pub fn schema<T: JsonSchema>() -> Option<Value> {
    Some(super::schema::of::<T>())
}

/// A finished call's outcome from its typed result.
pub fn done<T: Serialize>(result: T) -> Result<Outcome, super::ToolFailure> {
    serde_json::to_value(result)
        .map(Outcome::Done)
        .map_err(|e| format!("the result could not be encoded: {e}").into())
}
