//! The web tools that act on an element or the keyboard: click, hover, type, fill a secret, select
//! options, scroll, press a key.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::locate::{Target, ready};
use super::{ACTION, WEB, done, page, string_result, until};
use crate::device::Platform;
use crate::device::web::Checks;
use crate::selector::TrailblazeNodeSelector;
use crate::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// What a click or type needs of its element.
const ACTIONABLE: Checks = Checks {
    enabled: true,
    editable: false,
    hit: true,
};

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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let until = until(cx, None)?;
        let found = ready(cx, &target, ACTIONABLE, until)?;
        let before = page(cx, |w| Ok(w.url()))?;
        page(cx, |w| w.click_at(found.point, Duration::ZERO, until))?;
        let after = page(cx, |w| Ok(w.url()))?;
        let what = target.describe();
        if before != after {
            done(format!("Clicked on '{what}'. Page navigated to: {after}"))
        } else {
            done(format!("Clicked on '{what}'. Page URL unchanged ({after})."))
        }
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let until = until(cx, None)?;
        let found = ready(
            cx,
            &target,
            Checks {
                hit: true,
                ..Checks::default()
            },
            until,
        )?;
        page(cx, |w| w.hover_at(found.point, until))?;
        done(format!("Hovered over '{}'.", target.describe()))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let clear = self.clear_first.unwrap_or(true);
        let shown = cx.redact.text(&self.text).into_owned();
        let secret = shown != self.text;
        fill(cx, &target, &self.text, clear, secret)?;
        let action = if clear { "Filled" } else { "Typed" };
        done(format!("{action} '{shown}' into '{}'.", target.describe()))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let target = Target::of(Some(&self.r#ref), None)?;
        fill(cx, &target, &self.value, true, true)?;
        done(format!("Filled secret into '{}'.", target.describe()))
    }
}

/// Focuses the field, empties it when asked, types `text` as one input, and remembers a secret.
fn fill(cx: &ToolCx<'_>, target: &Target, text: &str, clear: bool, secret: bool) -> Result<(), ToolFailure> {
    let until = until(cx, None)?;
    let checks = Checks {
        enabled: true,
        editable: true,
        hit: false,
    };
    let found = ready(cx, target, checks, until)?;
    page(cx, |w| {
        w.focus(found.handle, clear, until)?;
        if clear && text.is_empty() {
            w.clear(found.handle, until)
        } else {
            w.insert_text(text, until)
        }
    })?;
    if secret {
        page(cx, |w| w.mark_secret(Some(found.handle), until))?;
        cx.screen.taint(&found.r#ref);
    }
    Ok(())
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if self.values.is_empty() {
            return Err("`values` is empty: give the option values or labels to select".into());
        }
        let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
        let until = until(cx, None)?;
        let found = ready(
            cx,
            &target,
            Checks {
                enabled: true,
                ..Checks::default()
            },
            until,
        )?;
        let picked = page(cx, |w| w.select_options(found.handle, &self.values, until))?
            .map_err(|why| format!("cannot select in '{}': {why}", target.describe()))?;
        done(format!("Selected {} in '{}'.", picked.join(", "), target.describe()))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let amount = self.amount.unwrap_or(500).clamp(-100_000, 100_000) as f64;
        let delta = match self.direction {
            ScrollDirection::Down => (0.0, amount),
            ScrollDirection::Up => (0.0, -amount),
            ScrollDirection::Right => (amount, 0.0),
            ScrollDirection::Left => (-amount, 0.0),
        };
        let named = self.node_selector.is_some() || self.r#ref.as_deref().is_some_and(|r| !r.trim().is_empty());
        let until = until(cx, None)?;
        let what = if named {
            let target = Target::of(self.r#ref.as_deref(), self.node_selector.as_ref())?;
            let found = ready(cx, &target, Checks::default(), until)?;
            page(cx, |w| w.scroll_by(Some(found.handle), delta, until))?;
            target.describe()
        } else {
            page(cx, |w| w.scroll_by(None, delta, until))?;
            "page".to_string()
        };
        let direction = serde_json::to_value(self.direction)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        done(format!("Scrolled {direction} by {amount} pixels on '{what}'."))
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
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let until = until(cx, None)?;
        page(cx, |w| w.press(&self.key, until))?;
        done(format!("Pressed key '{}'.", self.key))
    }
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebClick>(),
        BuiltinEntry::of::<WebHover>(),
        BuiltinEntry::of::<WebType>(),
        BuiltinEntry::of::<WebFillSecret>(),
        BuiltinEntry::of::<WebSelectOption>(),
        BuiltinEntry::of::<WebScroll>(),
        BuiltinEntry::of::<WebPressKey>(),
    ]
}
