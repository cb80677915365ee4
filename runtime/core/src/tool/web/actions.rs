//! The `web_*` tools that act on an element or the keyboard: click, hover, type, fill a secret,
//! select options, scroll, press a key.

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
/// Clicks a web element named by its snapshot ref, an ARIA descriptor (`button "Submit"`), a
/// `css=` selector, or `nodeSelector`; waits for it to be visible, stable, enabled and uncovered.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebClick {
    /// A snapshot ref (`k123`), an ARIA descriptor (`button "Submit"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// Why the caller clicks (recordings carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The element, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebClick {
    const NAME: &'static str = "web_click";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Moves the pointer over a web element (hover states, tooltips, menus).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebHover {
    /// A snapshot ref, an ARIA descriptor (`link "About"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// Why the caller hovers (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The element, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebHover {
    const NAME: &'static str = "web_hover";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Types text into a web field named by ref or `nodeSelector`: by default the field is cleared and
/// filled; `clearFirst: false` appends. The text may hold `{{secret:NAME}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebType {
    /// The text to type; may hold `{{secret:NAME}}` placeholders, resolved only at the browser.
    pub text: String,
    /// A snapshot ref, an ARIA descriptor (`textbox "Email"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// Clear the field first (default true); false appends to its text.
    #[serde(default)]
    pub clear_first: Option<bool>,
    /// Why the caller types (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The field, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebType {
    const NAME: &'static str = "web_type";
    const FLAGS: ToolFlags = ACTION;
    // Typing is what a secret is for; the result shows the text redacted.
    const SECRET_ARGS: &'static [&'static str] = &["text"];
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Fills a form field with a value that is never logged or shown: scripts pass a password or a
/// token (best as `{{secret:NAME}}`); the field reads `***` in snapshots and is masked in screenshots.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebFillSecret {
    /// A snapshot ref, an ARIA descriptor (`textbox "Password"`) or a CSS selector after `css=`.
    pub r#ref: String,
    /// The secret value (or a `{{secret:NAME}}` placeholder); never logged anywhere.
    pub value: String,
}

impl BuiltinTool for WebFillSecret {
    const NAME: &'static str = "web_fillSecret";
    const FLAGS: ToolFlags = ACTION;
    const SECRET_ARGS: &'static [&'static str] = &["value"];
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Selects options of a `<select>` by their values or visible labels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebSelectOption {
    /// A snapshot ref, an ARIA descriptor (`combobox "Category"`) or a CSS selector after `css=`.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// The options' values or visible labels.
    pub values: Vec<String>,
    /// Why the caller selects (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The `<select>`, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebSelectOption {
    const NAME: &'static str = "web_selectOption";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Which way `web_scroll` moves the content into view.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ScrollDirection {
    Up,
    #[default]
    Down,
    Left,
    Right,
}

/// Scrolls the page, or a container named by ref or `nodeSelector`, in a direction.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebScroll {
    /// UP, DOWN (default), LEFT or RIGHT.
    #[serde(default)]
    pub direction: ScrollDirection,
    /// Pixels to scroll (default 500).
    #[serde(default)]
    pub amount: Option<i64>,
    /// The container to scroll: a snapshot ref, an ARIA descriptor or `css=...`; the page when absent.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// Why the caller scrolls (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
    /// The container, as recordings hold it (wins over `ref`).
    #[serde(default)]
    pub node_selector: Option<TrailblazeNodeSelector>,
}

impl BuiltinTool for WebScroll {
    const NAME: &'static str = "web_scroll";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

impl serde::Serialize for ScrollDirection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            ScrollDirection::Up => "UP",
            ScrollDirection::Down => "DOWN",
            ScrollDirection::Left => "LEFT",
            ScrollDirection::Right => "RIGHT",
        })
    }
}

/// Presses a key or a combination in the page (`Enter`, `Tab`, `ArrowDown`, `Control+A`, `Shift+Tab`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebPressKey {
    /// The key or combination, as Playwright names keys.
    pub key: String,
    /// Why the caller presses it (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebPressKey {
    const NAME: &'static str = "web_pressKey";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<serde_json::Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}
