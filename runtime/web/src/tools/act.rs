//! The web tools that act on an element or the keyboard: click, hover, type, fill a secret, select
//! options, scroll, press a key.

use super::locate::{Found, Target, ready};
use super::{done, page, until};
use crate::device::Checks;
use std::time::{Duration, Instant};
use trailblaze_core::selector::TrailblazeNodeSelector;
use trailblaze_core::tool::web::{
    ScrollDirection, WebClick, WebFillSecret, WebHover, WebPressKey, WebScroll, WebSelectOption, WebType,
};
use trailblaze_core::tool::{BuiltinEntry, Outcome, ToolCx, ToolFailure};

/// What a click or type needs of its element.
const ACTIONABLE: Checks = Checks {
    enabled: true,
    editable: false,
    hit: true,
};

/// The element `r` or `sel` names once it passes `checks`, and when the action gives up.
fn element(
    cx: &ToolCx<'_>,
    (r, sel): (Option<&str>, Option<&TrailblazeNodeSelector>),
    checks: Checks,
) -> Result<(Target, Instant, Found), ToolFailure> {
    let target = Target::of(r, sel)?;
    let until = until(cx, None)?;
    let found = ready(cx, &target, checks, until)?;
    Ok((target, until, found))
}

fn web_click(this: WebClick, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let named = (this.r#ref.as_deref(), this.node_selector.as_ref());
    let (target, until, found) = element(cx, named, ACTIONABLE)?;
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

fn web_hover(this: WebHover, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let hit = Checks {
        hit: true,
        ..Checks::default()
    };
    let (target, until, found) = element(cx, (this.r#ref.as_deref(), this.node_selector.as_ref()), hit)?;
    page(cx, |w| w.hover_at(found.point, until))?;
    done(format!("Hovered over '{}'.", target.describe()))
}

fn web_type(this: WebType, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let target = Target::of(this.r#ref.as_deref(), this.node_selector.as_ref())?;
    let clear = this.clear_first.unwrap_or(true);
    let shown = cx.redact.text(&this.text).into_owned();
    let secret = shown != this.text;
    fill(cx, &target, &this.text, clear, secret)?;
    let action = if clear { "Filled" } else { "Typed" };
    done(format!("{action} '{shown}' into '{}'.", target.describe()))
}

fn web_fill_secret(this: WebFillSecret, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let target = Target::of(Some(&this.r#ref), None)?;
    fill(cx, &target, &this.value, true, true)?;
    done(format!("Filled secret into '{}'.", target.describe()))
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

fn web_select_option(this: WebSelectOption, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    if this.values.is_empty() {
        return Err("`values` is empty: give the option values or labels to select".into());
    }
    let enabled = Checks {
        enabled: true,
        ..Checks::default()
    };
    let (target, until, found) = element(cx, (this.r#ref.as_deref(), this.node_selector.as_ref()), enabled)?;
    let picked = page(cx, |w| w.select_options(found.handle, &this.values, until))?
        .map_err(|why| format!("cannot select in '{}': {why}", target.describe()))?;
    done(format!("Selected {} in '{}'.", picked.join(", "), target.describe()))
}

fn web_scroll(this: WebScroll, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let amount = this.amount.unwrap_or(500).clamp(-100_000, 100_000) as f64;
    let delta = match this.direction {
        ScrollDirection::Down => (0.0, amount),
        ScrollDirection::Up => (0.0, -amount),
        ScrollDirection::Right => (amount, 0.0),
        ScrollDirection::Left => (-amount, 0.0),
    };
    let named = this.node_selector.is_some() || this.r#ref.as_deref().is_some_and(|r| !r.trim().is_empty());
    let until = until(cx, None)?;
    let what = if named {
        let target = Target::of(this.r#ref.as_deref(), this.node_selector.as_ref())?;
        let found = ready(cx, &target, Checks::default(), until)?;
        page(cx, |w| w.scroll_by(Some(found.handle), delta, until))?;
        target.describe()
    } else {
        page(cx, |w| w.scroll_by(None, delta, until))?;
        "page".to_string()
    };
    let direction = serde_json::to_value(this.direction)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    done(format!("Scrolled {direction} by {amount} pixels on '{what}'."))
}

fn web_press_key(this: WebPressKey, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let until = until(cx, None)?;
    page(cx, |w| w.press(&this.key, until))?;
    done(format!("Pressed key '{}'.", this.key))
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebClick>().with_run(web_click),
        BuiltinEntry::of::<WebHover>().with_run(web_hover),
        BuiltinEntry::of::<WebType>().with_run(web_type),
        BuiltinEntry::of::<WebFillSecret>().with_run(web_fill_secret),
        BuiltinEntry::of::<WebSelectOption>().with_run(web_select_option),
        BuiltinEntry::of::<WebScroll>().with_run(web_scroll),
        BuiltinEntry::of::<WebPressKey>().with_run(web_press_key),
    ]
}
