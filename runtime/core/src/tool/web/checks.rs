//! The `web_*` tools that check what the page shows.

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
/// Asserts that the page shows the text (a case-insensitive match within the visible text),
/// retrying until the timeout.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebVerifyTextVisible {
    /// The text that must be visible.
    pub text: String,
    /// Why the caller checks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebVerifyTextVisible {
    const NAME: &'static str = "web_verifyTextVisible";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Asserts that an element is visible, retrying until the timeout.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebVerifyElementVisible {
    /// A snapshot ref, an ARIA descriptor (`button "Submit"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// Why the caller checks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The element, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebVerifyElementVisible {
    const NAME: &'static str = "web_verifyElementVisible";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// What `web_verifyValue` compares.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
pub enum ValueKind {
    /// The element's text contains `expected` (a field's value equals it, failing that).
    #[default]
    Text,
    /// A field's value equals `expected`.
    Value,
    /// The attribute `attribute` equals `expected`.
    Attribute,
}

/// Asserts an element's text, a field's value or an attribute, retrying until the timeout.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebVerifyValue {
    /// A snapshot ref, an ARIA descriptor (`textbox "Email"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// TEXT (default), VALUE or ATTRIBUTE.
    #[serde(default, rename = "type")]
    pub kind: ValueKind,
    /// The expected text or value.
    pub expected: String,
    /// The attribute's name (for ATTRIBUTE).
    #[serde(default)]
    pub attribute: Option<String>,
    /// Why the caller checks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The element, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebVerifyValue {
    const NAME: &'static str = "web_verifyValue";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Asserts that a list (or any container) is visible and shows every given item's text.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebVerifyListVisible {
    /// A snapshot ref, an ARIA descriptor (`list "Results"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// The texts the container must show.
    pub items: Vec<String>,
    /// Why the caller checks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The container, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebVerifyListVisible {
    const NAME: &'static str = "web_verifyListVisible";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Asserts that a request whose URL or body names the event was sent during the session
/// (case-insensitive), polling until `timeoutMs` (default 5000; at least one look).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebAssertNetworkEvent {
    /// The event's name, e.g. `checkout-started`.
    pub event_name: String,
    /// Milliseconds to wait for it (default 5000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Why the caller checks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebAssertNetworkEvent {
    const NAME: &'static str = "web_assertNetworkEvent";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}
