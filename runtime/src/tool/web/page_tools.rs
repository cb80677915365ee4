//! The web tools about the page as a whole: navigate, wait, wait for a URL, the current URL, resize,
//! a named snapshot, more detail, evaluate a script, cookies and storage.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ACTION, QUERY, UNRECORDED, WEB, done, page, string_result, until};
use crate::device::Platform;
use crate::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let until = until(cx, None)?;
        match self.action {
            NavigationAction::Goto => {
                let url = self
                    .url
                    .as_deref()
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .ok_or("`url` is required when `action` is GOTO")?;
                let resolved = page(cx, |w| w.resolve_url(url))?;
                let landed = page(cx, |w| {
                    let deadline = w.navigation_deadline();
                    w.navigate(&resolved, deadline)
                })?;
                if landed != resolved {
                    done(format!("Navigated to {resolved} (redirected to {landed})"))
                } else {
                    done(format!("Navigated to {landed}"))
                }
            }
            NavigationAction::Back | NavigationAction::Forward => {
                let (delta, word) = if self.action == NavigationAction::Back {
                    (-1, "back")
                } else {
                    (1, "forward")
                };
                match page(cx, |w| w.history(delta, until))? {
                    Some(url) => done(format!("Navigated {word} to {url}.")),
                    None => {
                        let url = page(cx, |w| Ok(w.url()))?;
                        Err(format!("no browser history to navigate {word} to; the current page is {url}").into())
                    }
                }
            }
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let s = self.seconds.unwrap_or(1).clamp(1, 30);
        cx.sleep(Duration::from_secs(s as u64))?;
        // The page may have changed meanwhile.
        cx.screen.invalidate();
        done(format!("Waited {s} seconds."))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let re = regex::Regex::new(&crate::selector::java_quoting(&self.pattern))
            .map_err(|e| format!("`pattern` is not a valid regular expression: {e}"))?;
        let timeout = self.timeout_ms.unwrap_or(30_000).min(600_000);
        let until = Instant::now() + Duration::from_millis(timeout);
        loop {
            let url = page(cx, |w| Ok(w.url()))?;
            if re.is_match(&url) {
                return done(url);
            }
            if Instant::now() >= until || cx.deadline.expired() {
                return Err(format!(
                    "waited {timeout} ms for the URL to match `{}`; it is {url}",
                    self.pattern
                )
                .into());
            }
            cx.sleep(Duration::from_millis(50))?;
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        done(page(cx, |w| Ok(w.url()))?)
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let ok = |v: i64| (1..=10_000).contains(&v);
        if !ok(self.width) || !ok(self.height) {
            return Err("`width` and `height` must each be 1 to 10000 CSS pixels".into());
        }
        let until = until(cx, None)?;
        let size = (self.width as u32, self.height as u32);
        page(cx, |w| w.resize(size, until))?;
        done(format!("Resized viewport to {}x{}.", size.0, size.1))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.screen_name.trim().is_empty() {
            return Err("`screenName` is empty".into());
        }
        let snap = cx.recapture()?;
        done(format!(
            "Snapshot '{}' captured ({} elements).",
            self.screen_name,
            snap.nodes.len()
        ))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.include.is_empty() {
            return Err("`include` is empty: name at least one detail (e.g. BOUNDS)".into());
        }
        let snap = cx.screen.snapshot()?;
        let bounds = self.include.contains(&Detail::Bounds);
        let css = self.include.contains(&Detail::CssSelectors);
        let mut out = String::new();
        for n in &snap.nodes {
            let Some(w) = n.web.as_deref() else { continue };
            let mut extra = Vec::new();
            if bounds {
                let b = n.bounds;
                extra.push(format!(
                    "{{x:{},y:{},w:{},h:{}}}",
                    b.left,
                    b.top,
                    b.right - b.left,
                    b.bottom - b.top
                ));
            }
            if css {
                if let Some(id) = n.resource_id.as_deref() {
                    extra.push(format!("[css=#{id}]"));
                } else if let Some(t) = &w.test_id {
                    extra.push(format!("[css=[data-testid=\"{t}\"]]"));
                } else if !bounds {
                    continue;
                }
            }
            let name = if w.name.is_empty() {
                String::new()
            } else {
                format!(" \"{}\"", w.name)
            };
            out.push_str(&format!("[{}] {}{name} {}\n", n.r#ref, w.role, extra.join(" ")));
        }
        done(cx.redact.text(&out).into_owned())
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let until = until(cx, None)?;
        let v = page(cx, |w| w.evaluate(&self.script, until))?;
        let text = match v {
            Value::Null => String::new(),
            Value::String(s) => s,
            other => other.to_string(),
        };
        // A secret typed into the page is not the session's to know: scrub what the page holds.
        let secrets = page(cx, |w| w.secret_values(until))?;
        let scrubbed = crate::secret::Redaction::new(&secrets).text(&text).into_owned();
        done(scrubbed)
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let text = self.cookies_json.as_deref().unwrap_or("").trim();
        if text.is_empty() {
            return Err("`cookiesJson` is required".into());
        }
        let parsed: Value = serde_json::from_str(text).map_err(|e| format!("`cookiesJson` is not JSON: {e}"))?;
        let list = match &parsed {
            Value::Array(a) => a.clone(),
            Value::Object(o) => match o.get("cookies") {
                Some(Value::Array(a)) => a.clone(),
                _ => return Err("`cookiesJson` must be a JSON array or a storage state with a `cookies` array".into()),
            },
            _ => return Err("`cookiesJson` must be a JSON array or a storage state with a `cookies` array".into()),
        };
        let url = page(cx, |w| Ok(w.url()))?;
        let cookies: Vec<Value> = list.iter().filter_map(|c| cookie(c, &url)).collect();
        let until = until(cx, None)?;
        if !cookies.is_empty() {
            page(cx, |w| w.add_cookies(cookies.clone(), until))?;
        }
        done(format!("Applied {} cookie(s)", cookies.len()))
    }
}

/// One cookie as the protocol takes it; `None` without a name and a value.
fn cookie(c: &Value, page_url: &str) -> Option<Value> {
    let s = |k: &str| c.get(k).and_then(Value::as_str);
    let mut out = json!({ "name": s("name")?, "value": s("value")? });
    for k in ["url", "domain", "path"] {
        if let Some(v) = s(k) {
            out[k] = Value::String(v.to_string());
        }
    }
    if out.get("url").is_none() && out.get("domain").is_none() && page_url.starts_with("http") {
        out["url"] = Value::String(page_url.to_string());
    }
    if let Some(e) = c.get("expires").and_then(Value::as_f64).filter(|e| *e > 0.0) {
        out["expires"] = json!(e);
    }
    for k in ["httpOnly", "secure"] {
        if let Some(b) = c.get(k).and_then(Value::as_bool) {
            out[k] = Value::Bool(b);
        }
    }
    if let Some(ss) = s("sameSite") {
        let v = match ss.to_ascii_lowercase().as_str() {
            "strict" => "Strict",
            "lax" => "Lax",
            "none" => "None",
            _ => return Some(out),
        };
        out["sameSite"] = Value::String(v.into());
    }
    Some(out)
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let until = until(cx, None)?;
        let state = page(cx, |w| w.storage_state(until))?;
        done(state.to_string())
    }
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
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
    ]
}
