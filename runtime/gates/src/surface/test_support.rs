//! Rust types shaped like the real built-ins (the core's `tool` and `selector`), shared by
//! the type gate's and the TypeScript renderer's tests: schemars derives their schemas.

use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct AndroidAccessibilityMatch {
    #[serde(default)]
    text_regex: Option<String>,
    #[serde(default)]
    hint_text_regex: Option<String>,
    #[serde(default)]
    is_password: Option<bool>,
}

/// Trailblaze's recursive node selector.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct TrailblazeNodeSelector {
    #[serde(default)]
    android_accessibility: Option<AndroidAccessibilityMatch>,
    #[serde(default)]
    below: Option<Box<TrailblazeNodeSelector>>,
    #[serde(default)]
    contains_descendants: Option<Vec<TrailblazeNodeSelector>>,
    #[serde(default)]
    index: Option<u32>,
}

// A documented variant makes schemars emit `oneOf` of `enum` and `const`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum LaunchMode {
    /// Clear the app's data first.
    Reinstall,
    ForceRestart,
    Resume,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum KeyCode {
    Back,
    Enter,
}
