//! The `web_*` tools about the page itself: navigation, waits, size, snapshot, network details,
//! script, cookies, storage.

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
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
