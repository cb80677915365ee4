//! The web assertions: text visible, element visible, an element's text / value / attribute, a
//! list's items, a network event. Each retries until its timeout, as Playwright's `expect` does,
//! and a failure says what it saw last.

use super::locate::{Target, visible};
use super::{done, page, until};
use std::time::{Duration, Instant};
use trailblaze_core::snapshot::Snapshot;
use trailblaze_core::tool::web::{
    ValueKind, WebAssertNetworkEvent, WebVerifyElementVisible, WebVerifyListVisible, WebVerifyTextVisible,
    WebVerifyValue,
};
use trailblaze_core::tool::{BuiltinEntry, Outcome, ToolCx, ToolFailure};

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
    let mut last = Err(String::new());
    let mut fresh = false;
    let passed = trailblaze_core::budget::poll(Some(cx.deadline), until, super::POLL, || {
        if std::mem::replace(&mut fresh, true) {
            cx.screen.invalidate();
        }
        last = check(cx)?;
        Ok::<_, ToolFailure>(last.as_ref().ok().cloned())
    })?;
    Ok(passed.map_or(last, Ok))
}

fn web_verify_text_visible(this: WebVerifyTextVisible, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let want = fold(&this.text);
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
    let shown = cx.redact.text(&this.text).into_owned();
    match r {
        Ok(_) => done(format!("Verified text '{shown}' is visible on the page.")),
        Err(saw) => Err(format!(
            "text '{shown}' is not visible on the page (retried for {} ms; {saw})",
            started.elapsed().as_millis()
        )
        .into()),
    }
}

fn web_verify_element_visible(this: WebVerifyElementVisible, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let target = Target::of(this.r#ref.as_deref(), this.node_selector.as_ref())?;
    let until = until(cx, None)?;
    visible(cx, &target, until)?;
    done(format!("Verified element '{}' is visible.", target.describe()))
}

fn web_verify_value(this: WebVerifyValue, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let attr = this.attribute.clone().unwrap_or_default();
    if this.kind == ValueKind::Attribute && attr.trim().is_empty() {
        return Err("`attribute` is required when `type` is ATTRIBUTE".into());
    }
    let target = Target::of(this.r#ref.as_deref(), this.node_selector.as_ref())?;
    let started = Instant::now();
    let until = until(cx, None)?;
    let expected = &this.expected;
    let r = retry(cx, until, |cx| {
        let found = visible(cx, &target, until)?;
        let read = |what: &str| page(cx, |w| w.read(found.handle, what, &attr, until));
        let pass = match this.kind {
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
    let kind = match this.kind {
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

fn web_verify_list_visible(this: WebVerifyListVisible, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    if this.items.is_empty() {
        return Err("`items` is empty: give at least one expected item".into());
    }
    let target = Target::of(this.r#ref.as_deref(), this.node_selector.as_ref())?;
    let started = Instant::now();
    let until = until(cx, None)?;
    let r = retry(cx, until, |cx| {
        let found = visible(cx, &target, until)?;
        let text = fold(&page(cx, |w| w.read(found.handle, "text", "", until))?.unwrap_or_default());
        let missing: Vec<String> = this
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
            this.items.len()
        )),
        Err(saw) => Err(format!(
            "list '{}' (retried for {} ms): {saw}",
            target.describe(),
            started.elapsed().as_millis()
        )
        .into()),
    }
}

fn web_assert_network_event(this: WebAssertNetworkEvent, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let want = this.event_name.trim().to_lowercase();
    if want.is_empty() {
        return Err("`eventName` is empty: it would match every request".into());
    }
    let timeout = this.timeout_ms.unwrap_or(5000).min(600_000);
    let until = Instant::now() + Duration::from_millis(timeout);
    loop {
        let requests = page(cx, |w| Ok(w.requests()))?;
        let hit = requests
            .iter()
            .any(|(url, body)| url.to_lowercase().contains(&want) || body.to_lowercase().contains(&want));
        if hit {
            return done(format!(
                "Network event '{}' was found in the requests sent.",
                this.event_name
            ));
        }
        if Instant::now() >= until || cx.deadline.expired() {
            return Err(format!(
                "network event '{}' was not found in the {} requests sent within {timeout} ms",
                this.event_name,
                requests.len()
            )
            .into());
        }
        cx.sleep(Duration::from_millis(100))?;
    }
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebVerifyTextVisible>().with_run(web_verify_text_visible),
        BuiltinEntry::of::<WebVerifyElementVisible>().with_run(web_verify_element_visible),
        BuiltinEntry::of::<WebVerifyValue>().with_run(web_verify_value),
        BuiltinEntry::of::<WebVerifyListVisible>().with_run(web_verify_list_visible),
        BuiltinEntry::of::<WebAssertNetworkEvent>().with_run(web_assert_network_event),
    ]
}
