//! The `web_*` tools, declared once: each one's arguments (its schema and description come from the
//! Rust type), flags and result. The web device's crate (`trailblaze-web`) runs them; a project
//! without it has no web device, so a call is refused for its platform before it runs.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::Platform;
use crate::selector::TrailblazeNodeSelector;

/// Every `web_*` tool runs on a page only.
const WEB: &[Platform] = &[Platform::Web];

/// Hidden from the LLM (which uses `tap`/`type` on refs), recorded, changes the page.
const ACTION: ToolFlags = ToolFlags::HIDDEN;
/// Hidden, recorded, leaves the page as it was (checks and queries).
const QUERY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};
/// Hidden and never recorded (the original's `web_evaluate`, `web_requestDetails`).
const UNRECORDED: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: false,
    read_only: false,
};

/// What every `web_*` tool returns: a line saying what happened (a URL, a JSON text), as the original.
fn string_result() -> Option<Value> {
    Some(json!({ "type": "string" }))
}

/// A `web_*` tool with no runner: the project has no web device's part.
fn needs_a_page(name: &str) -> ToolFailure {
    ToolFailure::Failed(format!(
        "{name} drives a web page, and this build of trailblaze has no web device (it was built without the `web` feature)"
    ))
}

/// The declarations, each refusing to run until the web device's crate gives it its runner.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebClick>(),
        BuiltinEntry::of::<WebHover>(),
        BuiltinEntry::of::<WebType>(),
        BuiltinEntry::of::<WebFillSecret>(),
        BuiltinEntry::of::<WebSelectOption>(),
        BuiltinEntry::of::<WebScroll>(),
        BuiltinEntry::of::<WebPressKey>(),
        BuiltinEntry::of::<WebNavigate>(),
        BuiltinEntry::of::<WebWait>(),
        BuiltinEntry::of::<WebWaitForUrl>(),
        BuiltinEntry::of::<WebCurrentUrl>(),
        BuiltinEntry::of::<WebResize>(),
        BuiltinEntry::of::<WebSnapshot>(),
        BuiltinEntry::of::<WebRequestDetails>(),
        BuiltinEntry::of::<WebEvaluate>(),
        BuiltinEntry::of::<WebApplyCookies>(),
        BuiltinEntry::of::<WebGetStorageState>(),
        BuiltinEntry::of::<WebVerifyTextVisible>(),
        BuiltinEntry::of::<WebVerifyElementVisible>(),
        BuiltinEntry::of::<WebVerifyValue>(),
        BuiltinEntry::of::<WebVerifyListVisible>(),
        BuiltinEntry::of::<WebAssertNetworkEvent>(),
    ]
}

// Acting on an element or the keyboard.

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

// The page: navigation, waits, size, snapshot, network details, script, cookies, storage.

/// GOTO a URL, or BACK / FORWARD in history.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
pub enum NavigationAction {
    #[default]
    Goto,
    Back,
    Forward,
}

/// Goes to a URL (GOTO, the default) and waits for it to load, or moves BACK or FORWARD in the
/// browser's history. A relative path resolves against the trail file's folder.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebNavigate {
    /// GOTO (default) needs `url`; BACK and FORWARD move through history.
    #[serde(default)]
    pub action: NavigationAction,
    /// The URL (`https://...`), or a path relative to the trail's folder (`sample-app/index.html`),
    /// served from the trail's workspace.
    #[serde(default)]
    pub url: Option<String>,
    /// Why the caller navigates (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebNavigate {
    const NAME: &'static str = "web_navigate";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Waits a number of seconds (1 to 30).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebWait {
    /// Seconds to wait, 1 to 30 (default 1).
    #[serde(default)]
    pub seconds: Option<i64>,
    /// Why the caller waits (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebWait {
    const NAME: &'static str = "web_wait";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Waits until the page's URL matches a regular expression (searched in the URL), and returns it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebWaitForUrl {
    /// The pattern, e.g. `.*(dashboard|home).*` (Java's `\Q...\E` quoting is read).
    pub pattern: String,
    /// Milliseconds to wait (default 30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl BuiltinTool for WebWaitForUrl {
    const NAME: &'static str = "web_waitForUrl";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Returns the current page's URL.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebCurrentUrl {}

impl BuiltinTool for WebCurrentUrl {
    const NAME: &'static str = "web_currentUrl";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Resizes the page's viewport (CSS pixels); the user agent stays a desktop one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebResize {
    /// Width in CSS pixels (1 to 10000).
    pub width: i64,
    /// Height in CSS pixels (1 to 10000).
    pub height: i64,
    /// Why the caller resizes (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebResize {
    const NAME: &'static str = "web_resize";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Captures the page afresh and names the screen (for logs and reports).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebSnapshot {
    /// A name for the screen, e.g. `login_page`.
    pub screen_name: String,
    /// Why the caller takes it (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebSnapshot {
    const NAME: &'static str = "web_snapshot";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// The extra detail `web_requestDetails` can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Detail {
    /// Each element's box: `{x,y,w,h}`.
    Bounds,
    /// A `css=` selector for each element with an id or a test id.
    CssSelectors,
    /// Elements outside the viewport (the snapshot lists them already, marked `offscreen`).
    OffscreenElements,
    /// Elements covered by another (the snapshot lists them already).
    OccludedElements,
}

/// Shows more about the page's elements than the snapshot does: boxes, CSS selectors.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebRequestDetails {
    /// BOUNDS, CSS_SELECTORS, OFFSCREEN_ELEMENTS and/or OCCLUDED_ELEMENTS.
    pub include: Vec<Detail>,
    /// Why the caller asks (it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for WebRequestDetails {
    const NAME: &'static str = "web_requestDetails";
    const FLAGS: ToolFlags = ToolFlags {
        read_only: true,
        ..UNRECORDED
    };
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Evaluates a JavaScript expression in the page (as its own scripts would) and returns the result
/// as text. Values of fields holding a secret read `***`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebEvaluate {
    /// An expression, or `(() => { ... })()` for statements; a promise is awaited.
    pub script: String,
}

impl BuiltinTool for WebEvaluate {
    const NAME: &'static str = "web_evaluate";
    const FLAGS: ToolFlags = UNRECORDED;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Adds cookies to the browser context: a JSON array in Playwright's storage-state cookie shape, or
/// a whole storage state (its `cookies` are read).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebApplyCookies {
    /// `[{"name":"sid","value":"abc","domain":".example.com","path":"/"}]`, or `{"cookies": [...]}`.
    #[serde(default)]
    pub cookies_json: Option<String>,
}

impl BuiltinTool for WebApplyCookies {
    const NAME: &'static str = "web_applyCookies";
    const FLAGS: ToolFlags = ACTION;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

/// Returns the browser context's storage state (cookies, and the page origin's local storage) as
/// JSON in Playwright's shape.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebGetStorageState {}

impl BuiltinTool for WebGetStorageState {
    const NAME: &'static str = "web_getStorageState";
    const FLAGS: ToolFlags = QUERY;
    const PLATFORMS: &'static [Platform] = WEB;
    fn result_schema() -> Option<Value> {
        string_result()
    }
    fn run(self, _: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Err(needs_a_page(Self::NAME))
    }
}

// Checks of what the page shows.

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
