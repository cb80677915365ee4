//! The web tools about the page as a whole: navigate, wait, wait for a URL, the current URL, resize,
//! a named snapshot, more detail, evaluate a script, cookies and storage.

use super::{done, page, until};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use trailblaze_core::tool::web::{
    Detail, NavigationAction, WebApplyCookies, WebCurrentUrl, WebEvaluate, WebGetStorageState, WebNavigate,
    WebRequestDetails, WebResize, WebSnapshot, WebWait, WebWaitForUrl,
};
use trailblaze_core::tool::{BuiltinEntry, Outcome, ToolCx, ToolFailure};

fn web_navigate(this: WebNavigate, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let until = until(cx, None)?;
    match this.action {
        NavigationAction::Goto => {
            let url = this
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
            let (delta, word) = if this.action == NavigationAction::Back {
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

fn web_wait(this: WebWait, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let s = this.seconds.unwrap_or(1).clamp(1, 30);
    cx.sleep(Duration::from_secs(s as u64))?;
    // The page may have changed meanwhile.
    cx.screen.invalidate();
    done(format!("Waited {s} seconds."))
}

fn web_wait_for_url(this: WebWaitForUrl, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let re = regex::Regex::new(&trailblaze_core::selector::java_quoting(&this.pattern))
        .map_err(|e| format!("`pattern` is not a valid regular expression: {e}"))?;
    let timeout = this.timeout_ms.unwrap_or(30_000).min(600_000);
    let until = Instant::now() + Duration::from_millis(timeout);
    loop {
        let url = page(cx, |w| Ok(w.url()))?;
        if re.is_match(&url) {
            return done(url);
        }
        if Instant::now() >= until || cx.deadline.expired() {
            return Err(format!(
                "waited {timeout} ms for the URL to match `{}`; it is {url}",
                this.pattern
            )
            .into());
        }
        cx.sleep(Duration::from_millis(50))?;
    }
}

fn web_current_url(_: WebCurrentUrl, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    done(page(cx, |w| Ok(w.url()))?)
}

fn web_resize(this: WebResize, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let ok = |v: i64| (1..=10_000).contains(&v);
    if !ok(this.width) || !ok(this.height) {
        return Err("`width` and `height` must each be 1 to 10000 CSS pixels".into());
    }
    let until = until(cx, None)?;
    let size = (this.width as u32, this.height as u32);
    page(cx, |w| w.resize(size, until))?;
    done(format!("Resized viewport to {}x{}.", size.0, size.1))
}

fn web_snapshot(this: WebSnapshot, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    if this.screen_name.trim().is_empty() {
        return Err("`screenName` is empty".into());
    }
    let snap = cx.recapture()?;
    done(format!(
        "Snapshot '{}' captured ({} elements).",
        this.screen_name,
        snap.nodes.len()
    ))
}

fn web_request_details(this: WebRequestDetails, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    if this.include.is_empty() {
        return Err("`include` is empty: name at least one detail (e.g. BOUNDS)".into());
    }
    let snap = cx.screen.snapshot()?;
    let bounds = this.include.contains(&Detail::Bounds);
    let css = this.include.contains(&Detail::CssSelectors);
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

fn web_evaluate(this: WebEvaluate, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let until = until(cx, None)?;
    let v = page(cx, |w| w.evaluate(&this.script, until))?;
    let text = match v {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    };
    // A secret typed into the page is not the session's to know: scrub what the page holds.
    let secrets = page(cx, |w| w.secret_values(until))?;
    let scrubbed = trailblaze_core::secret::Redaction::new(&secrets)
        .text(&text)
        .into_owned();
    done(scrubbed)
}

fn web_apply_cookies(this: WebApplyCookies, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let text = this.cookies_json.as_deref().unwrap_or("").trim();
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

fn web_get_storage_state(_: WebGetStorageState, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
    let until = until(cx, None)?;
    let state = page(cx, |w| w.storage_state(until))?;
    done(state.to_string())
}

pub(super) fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<WebNavigate>().with_run(web_navigate),
        BuiltinEntry::of::<WebWait>().with_run(web_wait),
        BuiltinEntry::of::<WebWaitForUrl>().with_run(web_wait_for_url),
        BuiltinEntry::of::<WebCurrentUrl>().with_run(web_current_url),
        BuiltinEntry::of::<WebResize>().with_run(web_resize),
        BuiltinEntry::of::<WebSnapshot>().with_run(web_snapshot),
        BuiltinEntry::of::<WebRequestDetails>().with_run(web_request_details),
        BuiltinEntry::of::<WebEvaluate>().with_run(web_evaluate),
        BuiltinEntry::of::<WebApplyCookies>().with_run(web_apply_cookies),
        BuiltinEntry::of::<WebGetStorageState>().with_run(web_get_storage_state),
    ]
}
