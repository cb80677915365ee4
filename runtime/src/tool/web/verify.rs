//! The web assertions: text visible, element visible, an element's text / value / attribute, a
//! list's items, a network event. Each retries until its timeout, as Playwright's `expect` does,
//! and a failure says what it saw last.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use super::locate::{Target, visible};
use super::{QUERY, WEB, done, page, string_result, until};
use crate::device::Platform;
use crate::selector::TrailblazeNodeSelector;
use crate::snapshot::Snapshot;
use crate::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

const POLL: Duration = Duration::from_millis(100);

/// Lower case with runs of white space as one space: how text is compared (as Playwright's
/// `getByText` compares it).
fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The page's visible text, in document order.
fn page_text(snap: &Snapshot) -> String {
    let parts: Vec<&str> = snap
        .nodes
        .iter()
        .filter_map(|n| n.web.as_deref())
        .filter_map(|w| w.own_text.as_deref())
        .collect();
    parts.join(" ")
}

/// Retries `check` (fresh captures after the first) until it passes or `until`; `check` returns
/// what it saw when it fails.
fn retry(
    cx: &ToolCx<'_>,
    until: Instant,
    mut check: impl FnMut(&ToolCx<'_>) -> Result<Result<String, String>, ToolFailure>,
) -> Result<Result<String, String>, ToolFailure> {
    loop {
        let r = check(cx)?;
        if r.is_ok() || Instant::now() >= until || cx.deadline.expired() {
            return Ok(r);
        }
        cx.sleep(POLL)?;
        cx.screen.invalidate();
    }
}

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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let want = fold(&self.text);
        if want.is_empty() {
            return Err("`text` is empty".into());
        }
        let started = Instant::now();
        let until = until(cx, None)?;
        let r = retry(cx, until, |cx| {
            let text = fold(&page_text(&*cx.screen.snapshot()?));
            Ok(if text.contains(&want) {
                Ok(String::new())
            } else {
                let start: String = text.chars().take(160).collect();
                Err(format!(
                    "the page reads \"{start}{}\"",
                    if text.chars().count() > 160 { "…" } else { "" }
                ))
            })
        })?;
        let shown = cx.redact.text(&self.text).into_owned();
        match r {
            Ok(_) => done(format!("Verified text '{shown}' is visible on the page.")),
            Err(saw) => Err(format!(
                "text '{shown}' is not visible on the page (retried for {} ms; {saw})",
                started.elapsed().as_millis()
            )
            .into()),
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let until = until(cx, None)?;
        visible(cx, &target, until)?;
        done(format!("Verified element '{}' is visible.", target.describe()))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let attr = self.attribute.clone().unwrap_or_default();
        if self.kind == ValueKind::Attribute && attr.trim().is_empty() {
            return Err("`attribute` is required when `type` is ATTRIBUTE".into());
        }
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let started = Instant::now();
        let until = until(cx, None)?;
        let expected = &self.expected;
        let r = retry(cx, until, |cx| {
            let found = visible(cx, &target, until)?;
            let read = |what: &str| page(cx, |w| w.read(found.handle, what, &attr, until));
            let pass = match self.kind {
                ValueKind::Text => {
                    let text = read("text")?.unwrap_or_default();
                    let value = read("value")?;
                    if text.contains(expected.as_str()) || value.as_deref() == Some(expected.as_str()) {
                        Ok(String::new())
                    } else {
                        Err(format!(
                            "its text is \"{}\"",
                            text.chars().take(160).collect::<String>()
                        ))
                    }
                }
                ValueKind::Value => match read("value")? {
                    Some(v) if &v == expected => Ok(String::new()),
                    Some(v) => Err(format!("its value is \"{v}\"")),
                    None => Err("it has no value (not a form field)".into()),
                },
                ValueKind::Attribute => match read("attribute")? {
                    Some(v) if &v == expected => Ok(String::new()),
                    Some(v) => Err(format!("its {attr} is \"{v}\"")),
                    None => Err(format!("it has no {attr} attribute")),
                },
            };
            Ok(pass)
        })?;
        let kind = match self.kind {
            ValueKind::Text => "TEXT",
            ValueKind::Value => "VALUE",
            ValueKind::Attribute => "ATTRIBUTE",
        };
        let shown = cx.redact.text(expected).into_owned();
        match r {
            Ok(_) => done(format!("Verified {kind} of '{}' matches '{shown}'.", target.describe())),
            Err(saw) => Err(cx
                .redact
                .text(&format!(
                    "{kind} of '{}' does not match '{shown}' (retried for {} ms): {saw}",
                    target.describe(),
                    started.elapsed().as_millis()
                ))
                .into_owned()
                .into()),
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.items.is_empty() {
            return Err("`items` is empty: give at least one expected item".into());
        }
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let started = Instant::now();
        let until = until(cx, None)?;
        let r = retry(cx, until, |cx| {
            let found = visible(cx, &target, until)?;
            let text = fold(&page(cx, |w| w.read(found.handle, "text", "", until))?.unwrap_or_default());
            let missing: Vec<String> = self
                .items
                .iter()
                .filter(|i| !text.contains(&fold(i)))
                .map(|i| format!("'{i}'"))
                .collect();
            Ok(if missing.is_empty() {
                Ok(String::new())
            } else {
                Err(format!("missing {}", missing.join(", ")))
            })
        })?;
        match r {
            Ok(_) => done(format!(
                "Verified list '{}' contains all {} expected items.",
                target.describe(),
                self.items.len()
            )),
            Err(saw) => Err(format!(
                "list '{}' (retried for {} ms): {saw}",
                target.describe(),
                started.elapsed().as_millis()
            )
            .into()),
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let want = self.event_name.trim().to_lowercase();
        if want.is_empty() {
            return Err("`eventName` is empty: it would match every request".into());
        }
        let timeout = self.timeout_ms.unwrap_or(5000).min(600_000);
        let until = Instant::now() + Duration::from_millis(timeout);
        loop {
            let requests = page(cx, |w| Ok(w.requests()))?;
            let hit = requests
                .iter()
                .any(|(url, body)| url.to_lowercase().contains(&want) || body.to_lowercase().contains(&want));
            if hit {
                return done(format!(
                    "Network event '{}' was found in the requests sent.",
                    self.event_name
                ));
            }
            if Instant::now() >= until || cx.deadline.expired() {
                return Err(format!(
                    "network event '{}' was not found in the {} requests sent within {timeout} ms",
                    self.event_name,
                    requests.len()
                )
                .into());
            }
            cx.sleep(Duration::from_millis(100))?;
        }
    }
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebVerifyTextVisible>(),
        BuiltinEntry::of::<WebVerifyElementVisible>(),
        BuiltinEntry::of::<WebVerifyValue>(),
        BuiltinEntry::of::<WebVerifyListVisible>(),
        BuiltinEntry::of::<WebAssertNetworkEvent>(),
    ]
}
