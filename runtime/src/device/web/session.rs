//! The web device: one isolated browser context and one page in a shared [`Browser`], as a
//! [`Device`], plus the page operations the `web_*` tools use (each with a deadline). A call that
//! times out because the page's script never returns stops that script, so the next step runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::browser::Browser;
use super::capture::{self, Captured};
use super::cdp::CdpError;
use super::keys;
use super::page::{Page, PageError};
use super::serve::Served;
use crate::device::spec::WebOptions;
use crate::device::{Device, DeviceError, KeyCode, LaunchMode, Platform, Screenshot, ViewTree, WebHandle};

/// What an action needs its element to be, beyond attached and visible.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks {
    pub enabled: bool,
    pub editable: bool,
    /// The element is the one the pointer would hit at its centre (nothing covers it).
    pub hit: bool,
}

/// A page's console errors, failed requests and dialogs since they were last read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lines {
    pub console_errors: Vec<String>,
    pub failed_requests: Vec<String>,
    pub dialogs: Vec<String>,
}

pub struct WebDevice {
    browser: Arc<Browser>,
    context: String,
    page: Page,
    /// Pages this device opened before following a popup, to return to when it closes.
    openers: Vec<Page>,
    opts: WebOptions,
    viewport: (u32, u32),
    captured: Captured,
    captures: u64,
    served: Option<Served>,
    /// Popups already followed or listed.
    seen_popups: usize,
}

impl WebDevice {
    /// A device on `browser`: a new context with one blank page.
    pub fn open(browser: Arc<Browser>, opts: WebOptions) -> Result<WebDevice, DeviceError> {
        let context = browser.new_context().map_err(io)?;
        let page = match Page::open(&browser, &context, opts.viewport) {
            Ok(p) => p,
            Err(e) => {
                browser.dispose_context(&context);
                return Err(io(e));
            }
        };
        Ok(WebDevice {
            viewport: opts.viewport,
            browser,
            context,
            page,
            openers: Vec::new(),
            opts,
            captured: Captured::default(),
            captures: 0,
            served: None,
            seen_popups: 0,
        })
    }

    /// Starts (or attaches to) a browser for this device alone.
    pub fn start(opts: WebOptions) -> Result<WebDevice, DeviceError> {
        let browser = match &opts.endpoint {
            Some(e) => Browser::attach(e),
            None => Browser::launch(opts.headed, opts.viewport),
        }
        .map_err(DeviceError::Io)?;
        WebDevice::open(browser, opts)
    }

    pub fn browser(&self) -> &Arc<Browser> {
        &self.browser
    }

    /// The action timeout, cut to `deadline` when that comes first.
    pub fn until(&self, deadline: Option<Instant>) -> Instant {
        let own = Instant::now() + self.opts.timeout;
        deadline.map_or(own, |d| d.min(own))
    }

    pub fn timeout(&self) -> Duration {
        self.opts.timeout
    }

    fn default_deadline(&self) -> Instant {
        Instant::now() + self.opts.timeout
    }

    /// Turns a call's error into the step's, stopping a script that keeps the page busy.
    fn fail(&self, e: PageError) -> DeviceError {
        match e {
            PageError::Cdp(CdpError::Timeout { method, waited_ms }) => {
                self.page.unfreeze();
                DeviceError::Action(format!(
                    "the page did not answer within {waited_ms} ms ({method}): a script of the page kept it busy and was stopped"
                ))
            }
            PageError::Cdp(CdpError::Closed(why)) => DeviceError::Io(format!("the browser is gone: {why}")),
            PageError::Cdp(e) => DeviceError::Action(e.to_string()),
            PageError::Script(s) => DeviceError::Action(s),
            PageError::Stale => DeviceError::Action("the page changed since it was captured".into()),
        }
    }

    /// Follows a popup the page opened (the newest), keeping the page it came from; returns to the
    /// opener when the popup closed.
    fn follow_popups(&mut self) {
        if self.page.shared.lock().closed
            && let Some(opener) = self.openers.pop()
        {
            self.browser.unroute(&self.page.target);
            self.page = opener;
            return;
        }
        let popups = self.page.shared.lock().popups.clone();
        if popups.len() <= self.seen_popups {
            return;
        }
        self.seen_popups = popups.len();
        let Some(target) = popups.last().cloned() else { return };
        let conn = self.browser.connection().clone();
        if let Ok(p) = Page::attach(&self.browser, conn, target, self.viewport) {
            let opener = std::mem::replace(&mut self.page, p);
            self.openers.push(opener);
            self.seen_popups = 0;
        }
    }

    pub fn url(&self) -> String {
        self.page.url()
    }

    /// Resolves a URL as `web_navigate` takes it: absolute URLs as they are; a relative path (or a
    /// `file://` URL) against the trail's folder, served from the workspace, never outside it.
    pub fn resolve_url(&mut self, url: &str) -> Result<String, DeviceError> {
        let has_scheme = url
            .split_once("://")
            .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)));
        let special = ["about:", "data:", "javascript:"].iter().any(|p| url.starts_with(p));
        if (has_scheme && !url.starts_with("file://")) || special {
            return Ok(url.to_string());
        }
        let path = match url.strip_prefix("file://") {
            Some(p) => PathBuf::from(p),
            None => {
                let base = self.opts.base_dir.clone().unwrap_or_else(|| PathBuf::from("."));
                base.join(url.split(['?', '#']).next().unwrap_or(url))
            }
        };
        let suffix: String = url.find(['?', '#']).map(|i| url[i..].to_string()).unwrap_or_default();
        let root = self
            .opts
            .workspace
            .clone()
            .or_else(|| self.opts.base_dir.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let outside = || {
            DeviceError::Action(format!(
                "`{url}` lies outside the trail's workspace ({}): pages may open only files inside it",
                root.display()
            ))
        };
        let real = std::fs::canonicalize(&path)
            .map_err(|_| DeviceError::Action(format!("`{url}`: no such file ({})", path.display())))?;
        if self.served.is_none() {
            self.served =
                Some(Served::start(&root).map_err(|e| DeviceError::Io(format!("cannot serve the workspace: {e}")))?);
        }
        let served = self.served.as_ref().ok_or_else(outside)?;
        let base = served.url_of(&real).ok_or_else(outside)?;
        Ok(format!("{base}{suffix}"))
    }

    /// Goes to `url` (already resolved) and waits for its load event.
    pub fn navigate(&mut self, url: &str, deadline: Instant) -> Result<String, DeviceError> {
        let r = self
            .page
            .call("Page.navigate", json!({ "url": url }), deadline)
            .map_err(|e| self.fail(e.into()))?;
        if let Some(err) = r.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty()) {
            return Err(DeviceError::Action(format!("navigation to {url} failed: {err}")));
        }
        if let Some(loader) = r.get("loaderId").and_then(Value::as_str) {
            let loader = loader.to_string();
            let loaded = self.page.shared.wait_until(deadline, |s| s.loaded_loader == loader);
            if !loaded {
                self.page.unfreeze();
                return Err(DeviceError::Action(format!(
                    "{url} did not finish loading within {} ms (waited for its load event)",
                    self.opts.timeout.as_millis()
                )));
            }
        }
        Ok(self.page.url())
    }

    /// Moves through history (`delta` -1 back, 1 forward); `None` when there is nothing there.
    pub fn history(&mut self, delta: i64, deadline: Instant) -> Result<Option<String>, DeviceError> {
        let h = self
            .page
            .call("Page.getNavigationHistory", json!({}), deadline)
            .map_err(|e| self.fail(e.into()))?;
        let current = h.get("currentIndex").and_then(Value::as_i64).unwrap_or(0);
        let entries = h.get("entries").and_then(Value::as_array).cloned().unwrap_or_default();
        let Some(entry) = usize::try_from(current + delta).ok().and_then(|i| entries.get(i)) else {
            return Ok(None);
        };
        let before = self.page.shared.lock().loads;
        let nav_before = self.page.shared.lock().navigations;
        self.page
            .call(
                "Page.navigateToHistoryEntry",
                json!({ "entryId": entry.get("id").cloned().unwrap_or(Value::Null) }),
                deadline,
            )
            .map_err(|e| self.fail(e.into()))?;
        let target = entry.get("url").and_then(Value::as_str).unwrap_or("").to_string();
        // A new document loads; a same-document entry (a #hash) only changes the URL.
        self.page.shared.wait_until(deadline, |s| {
            s.loads > before || (s.navigations == nav_before && s.url == target)
        });
        Ok(Some(self.page.url()))
    }

    /// Waits for a navigation an action started (a link, a form) to load, within `deadline`.
    pub fn settle(&mut self, deadline: Instant) {
        let quick = Instant::now() + Duration::from_millis(30);
        let started = self.page.shared.wait_until(quick.min(deadline), |s| s.navigating);
        if started {
            self.page.shared.wait_until(deadline, |s| !s.navigating);
        }
    }

    /// Captures the page as the device's current screen.
    pub fn capture(&mut self, deadline: Instant) -> Result<ViewTree, DeviceError> {
        self.follow_popups();
        self.captures += 1;
        let generation = self.captures;
        let (tree, captured) =
            capture::capture(&self.page, generation, self.viewport, deadline).map_err(|e| self.fail(e))?;
        self.captured = captured;
        Ok(tree)
    }

    /// The frame of `h`, if `h` belongs to the current capture.
    fn frame_of(&self, h: WebHandle) -> Result<&super::page::Frame, DeviceError> {
        if h.capture != self.captured.generation {
            return Err(DeviceError::Action("the page changed since it was captured".into()));
        }
        self.captured
            .frames
            .get(h.frame as usize)
            .ok_or_else(|| DeviceError::Action("the element's frame is gone".into()))
    }

    /// Runs `call` (an agent expression over `i` and `g`, the element's index and capture) in the
    /// element's frame.
    fn on_element(&self, h: WebHandle, call: &str, deadline: Instant) -> Result<Value, DeviceError> {
        let frame = self.frame_of(h)?.clone();
        let expr = call
            .replace("$i", &h.index.to_string())
            .replace("$g", &h.capture.to_string());
        let v = self.page.agent(&frame, &expr, deadline).map_err(|e| self.fail(e))?;
        if v.get("stale").is_some() {
            return Err(DeviceError::Action("the page changed since it was captured".into()));
        }
        Ok(v)
    }

    /// Scrolls `h` into view and checks it: `Ok(Ok(point))` in the page's viewport, `Ok(Err(why))`
    /// when it cannot be acted on yet.
    pub fn actionable(
        &self,
        h: WebHandle,
        checks: Checks,
        deadline: Instant,
    ) -> Result<Result<(f64, f64), String>, DeviceError> {
        let opts = json!({ "enabled": checks.enabled, "editable": checks.editable, "hit": checks.hit });
        let v = self.on_element(h, &format!("__tb.actionable($i, $g, {opts})"), deadline)?;
        if let Some(why) = v.get("why").and_then(Value::as_str) {
            return Ok(Err(why.to_string()));
        }
        let off = self
            .captured
            .offsets
            .get(h.frame as usize)
            .copied()
            .unwrap_or((0.0, 0.0));
        let x = v.get("x").and_then(Value::as_f64).unwrap_or(0.0) + off.0;
        let y = v.get("y").and_then(Value::as_f64).unwrap_or(0.0) + off.1;
        Ok(Ok((x, y)))
    }

    fn mouse(&self, kind: &str, (x, y): (f64, f64), extra: Value, deadline: Instant) -> Result<(), DeviceError> {
        let mut p = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
        if let (Some(o), Value::Object(e)) = (p.as_object_mut(), extra) {
            o.extend(e);
        }
        if kind == "mouseMoved" || kind == "mouseWheel" {
            p["button"] = Value::String("none".into());
        }
        self.page
            .call("Input.dispatchMouseEvent", p, deadline)
            .map_err(|e| self.fail(e.into()))?;
        Ok(())
    }

    /// A left click at a point of the page's viewport, held `hold` between press and release.
    pub fn click_at(&mut self, at: (f64, f64), hold: Duration, deadline: Instant) -> Result<(), DeviceError> {
        self.mouse("mouseMoved", at, json!({}), deadline)?;
        self.mouse("mousePressed", at, json!({}), deadline)?;
        if !hold.is_zero() {
            std::thread::sleep(hold);
        }
        self.mouse("mouseReleased", at, json!({}), deadline)?;
        self.settle(deadline);
        Ok(())
    }

    pub fn hover_at(&self, at: (f64, f64), deadline: Instant) -> Result<(), DeviceError> {
        self.mouse("mouseMoved", at, json!({}), deadline)
    }

    /// Turns the mouse wheel at a point by `delta` pixels.
    pub fn wheel(&self, at: (f64, f64), delta: (f64, f64), deadline: Instant) -> Result<(), DeviceError> {
        self.mouse(
            "mouseWheel",
            at,
            json!({ "deltaX": delta.0, "deltaY": delta.1 }),
            deadline,
        )?;
        // The wheel scrolls on the compositor; a capture right after must see the new offsets.
        let _ = self
            .page
            .evaluate_main("new Promise(r => requestAnimationFrame(() => r(1)))", deadline);
        Ok(())
    }

    /// Focuses the element (selecting its content when `select_all`).
    pub fn focus(&self, h: WebHandle, select_all: bool, deadline: Instant) -> Result<(), DeviceError> {
        self.on_element(h, &format!("__tb.focus($i, $g, {select_all})"), deadline)?;
        Ok(())
    }

    /// Empties a field (an `input` event follows, as typing would send).
    pub fn clear(&self, h: WebHandle, deadline: Instant) -> Result<(), DeviceError> {
        self.on_element(h, "__tb.clear($i, $g)", deadline)?;
        Ok(())
    }

    /// Types `text` into the focused element as one input (the text is resolved: never logged).
    pub fn insert_text(&self, text: &str, deadline: Instant) -> Result<(), DeviceError> {
        self.page
            .call("Input.insertText", json!({ "text": text }), deadline)
            .map_err(|e| self.fail(e.into()))?;
        Ok(())
    }

    /// Presses a key or a combination (`Control+A`), as Playwright names keys.
    pub fn press(&mut self, spec: &str, deadline: Instant) -> Result<(), DeviceError> {
        let combo = keys::combo(spec).map_err(DeviceError::Action)?;
        let mut modifiers = 0;
        for k in &combo {
            self.key_event(k, true, modifiers, deadline)?;
            modifiers |= k.modifier;
        }
        for k in combo.iter().rev() {
            modifiers &= !k.modifier;
            self.key_event(k, false, modifiers, deadline)?;
        }
        self.settle(deadline);
        Ok(())
    }

    fn key_event(&self, k: &keys::Key, down: bool, modifiers: i64, deadline: Instant) -> Result<(), DeviceError> {
        self.page
            .call("Input.dispatchKeyEvent", keys::event(k, down, modifiers), deadline)
            .map_err(|e| self.fail(e.into()))?;
        Ok(())
    }

    /// Selects options of a `<select>` by value or label: `Ok(Err(why))` when it cannot.
    pub fn select_options(
        &self,
        h: WebHandle,
        values: &[String],
        deadline: Instant,
    ) -> Result<Result<Vec<String>, String>, DeviceError> {
        let arg = serde_json::to_string(values).unwrap_or_else(|_| "[]".into());
        let v = self.on_element(h, &format!("__tb.selectOptions($i, $g, {arg})"), deadline)?;
        if let Some(why) = v.get("why").and_then(Value::as_str) {
            return Ok(Err(why.to_string()));
        }
        if let Some(missing) = v.get("missing") {
            return Ok(Err(format!(
                "no option has the value or label {missing} (the first options: {})",
                v.get("options").cloned().unwrap_or(Value::Null)
            )));
        }
        let picked = v
            .get("selected")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        Ok(Ok(picked))
    }

    /// The elements of the current capture `css` matches, in every frame (open shadow roots
    /// pierced), and how many it matches that are not visible.
    pub fn query_css(
        &self,
        css: &str,
        deadline: Instant,
    ) -> Result<Result<(Vec<WebHandle>, u64), String>, DeviceError> {
        let arg = serde_json::to_string(css).unwrap_or_default();
        let mut found = Vec::new();
        let mut hidden = 0;
        for (i, frame) in self.captured.frames.iter().enumerate() {
            let expr = format!("__tb.query({arg}, {})", self.captured.generation);
            let v = match self.page.agent(frame, &expr, deadline) {
                Ok(v) => v,
                Err(e) if i > 0 && !matches!(e, PageError::Cdp(CdpError::Timeout { .. })) => continue,
                Err(e) => return Err(self.fail(e)),
            };
            if let Some(bad) = v.get("bad").and_then(Value::as_str) {
                return Ok(Err(format!("`{css}` is not a valid CSS selector: {bad}")));
            }
            if v.get("stale").is_some() {
                return Err(DeviceError::Action("the page changed since it was captured".into()));
            }
            hidden += v.get("hidden").and_then(Value::as_u64).unwrap_or(0);
            for idx in v.get("idx").and_then(Value::as_array).into_iter().flatten() {
                if let Some(index) = idx.as_u64() {
                    found.push(WebHandle {
                        capture: self.captured.generation,
                        frame: i as u32,
                        index: index as u32,
                    });
                }
            }
        }
        Ok(Ok((found, hidden)))
    }

    /// An element's `text` (its text content), `value` (a field's) or attribute `attr`.
    pub fn read(&self, h: WebHandle, what: &str, attr: &str, deadline: Instant) -> Result<Option<String>, DeviceError> {
        let args = format!("{}, {}", json!(what), json!(attr));
        let v = self.on_element(h, &format!("__tb.read($i, $g, {args})"), deadline)?;
        Ok(v.get("v").and_then(Value::as_str).map(str::to_string))
    }

    /// Remembers that `h` (or the focused element, when `None`) holds a secret: it reads `***` and
    /// is masked in screenshots.
    pub fn mark_secret(&self, h: Option<WebHandle>, deadline: Instant) -> Result<(), DeviceError> {
        match h {
            Some(h) => self.on_element(h, "__tb.markSecret($i, $g)", deadline).map(|_| ()),
            None => {
                for frame in self.captured.frames.iter().take(1) {
                    self.page
                        .agent(frame, "__tb.markSecret(-1, 0)", deadline)
                        .map_err(|e| self.fail(e))?;
                }
                Ok(())
            }
        }
    }

    /// What the fields holding a secret hold now (to scrub it from what the page returns).
    pub fn secret_values(&self, deadline: Instant) -> Result<Vec<String>, DeviceError> {
        let mut out = Vec::new();
        for frame in &self.captured.frames {
            let v = match self.page.agent(frame, "__tb.secretValues()", deadline) {
                Ok(v) => v,
                Err(PageError::Cdp(CdpError::Timeout { .. })) => return Err(self.fail(PageError::Stale)),
                Err(_) => continue,
            };
            out.extend(
                v.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
        }
        Ok(out)
    }

    /// Evaluates `script` in the page (as its own scripts would) and returns the value.
    pub fn evaluate(&self, script: &str, deadline: Instant) -> Result<Value, DeviceError> {
        self.page.evaluate_main(script, deadline).map_err(|e| self.fail(e))
    }

    /// Scrolls the page (or the element `h`) by `delta` pixels.
    pub fn scroll_by(&self, h: Option<WebHandle>, delta: (f64, f64), deadline: Instant) -> Result<(), DeviceError> {
        let (dx, dy) = delta;
        match h {
            Some(h) => self
                .on_element(h, &format!("__tb.scrollBy($i, $g, {dx}, {dy})"), deadline)
                .map(|_| ()),
            None => self
                .page
                .evaluate_main(
                    &format!("window.scrollBy({{left: {dx}, top: {dy}, behavior: 'instant'}}); 1"),
                    deadline,
                )
                .map(|_| ())
                .map_err(|e| self.fail(e)),
        }
    }

    pub fn resize(&mut self, size: (u32, u32), deadline: Instant) -> Result<(), DeviceError> {
        self.page
            .set_viewport(size, deadline)
            .map_err(|e| self.fail(e.into()))?;
        self.viewport = size;
        Ok(())
    }

    pub fn viewport(&self) -> (u32, u32) {
        self.viewport
    }

    /// Adds cookies (the protocol's `CookieParam`s) to this device's context.
    pub fn add_cookies(&self, cookies: Vec<Value>, deadline: Instant) -> Result<(), DeviceError> {
        self.browser
            .connection()
            .call(
                None,
                "Storage.setCookies",
                json!({ "cookies": cookies, "browserContextId": self.context }),
                deadline,
            )
            .map_err(|e| self.fail(e.into()))?;
        Ok(())
    }

    /// The context's cookies, and the current origin's local storage, in Playwright's
    /// storage-state shape.
    pub fn storage_state(&self, deadline: Instant) -> Result<Value, DeviceError> {
        let r = self
            .browser
            .connection()
            .call(
                None,
                "Storage.getCookies",
                json!({ "browserContextId": self.context }),
                deadline,
            )
            .map_err(|e| self.fail(e.into()))?;
        let cookies = r.get("cookies").cloned().unwrap_or(json!([]));
        let local = self
            .page
            .evaluate_main(
                "(() => { try { const o = location.origin; if (o === 'null') return null; \
                 const items = []; for (let i = 0; i < localStorage.length && i < 1000; i++) { const k = localStorage.key(i); \
                 items.push({ name: k, value: localStorage.getItem(k) }); } return { origin: o, localStorage: items }; } \
                 catch (e) { return null; } })()",
                deadline,
            )
            .map_err(|e| self.fail(e))?;
        let origins = if local.is_null() { json!([]) } else { json!([local]) };
        Ok(json!({ "cookies": cookies, "origins": origins }))
    }

    /// Every request the page sent so far: its URL and the start of its body.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.page.shared.lock().requests.iter().cloned().collect()
    }

    /// Console errors, failed requests and dialogs since the last call.
    pub fn lines(&self) -> Lines {
        let (console_errors, failed_requests, dialogs) = self.page.shared.drain_lines();
        Lines {
            console_errors,
            failed_requests,
            dialogs,
        }
    }

    /// A PNG of the viewport with every field holding a secret covered.
    pub fn png(&self, deadline: Instant) -> Result<Vec<u8>, DeviceError> {
        let masked = self
            .captured
            .frames
            .iter()
            .map(|f| self.page.agent(f, "__tb.mask(true)", deadline))
            .collect::<Result<Vec<_>, _>>();
        let shot = self
            .page
            .call("Page.captureScreenshot", json!({ "format": "png" }), deadline);
        for f in &self.captured.frames {
            let _ = self.page.agent(f, "__tb.mask(false)", deadline);
        }
        masked.map_err(|e| self.fail(e))?;
        let shot = shot.map_err(|e| self.fail(e.into()))?;
        let data = shot.get("data").and_then(Value::as_str).unwrap_or("");
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| DeviceError::Io(format!("the screenshot is not base64: {e}")))
    }
}

fn io(e: CdpError) -> DeviceError {
    DeviceError::Io(e.to_string())
}

impl Device for WebDevice {
    fn name(&self) -> String {
        format!("web:{}", self.browser.version)
    }
    fn platform(&self) -> Platform {
        Platform::Web
    }
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        let deadline = self.default_deadline();
        self.capture(deadline)
    }
    fn captures(&self) -> u64 {
        self.captures
    }
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let deadline = self.default_deadline();
        self.click_at((f64::from(x), f64::from(y)), Duration::ZERO, deadline)
    }
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let deadline = self.default_deadline();
        self.click_at((f64::from(x), f64::from(y)), Duration::from_millis(800), deadline)
    }
    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        let deadline = self.default_deadline();
        self.insert_text(text, deadline)
    }
    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        let deadline = self.default_deadline();
        let name = match key {
            KeyCode::Back => {
                return self
                    .history(-1, deadline)?
                    .map(|_| ())
                    .ok_or_else(|| DeviceError::Action("there is no page to go back to".into()));
            }
            KeyCode::Enter => "Enter",
            KeyCode::Home => "Home",
            KeyCode::Backspace => "Backspace",
            KeyCode::Tab => "Tab",
            KeyCode::Escape => "Escape",
        };
        self.press(name, deadline)
    }
    fn launch_app(&mut self, app_id: &str, _mode: LaunchMode) -> Result<(), DeviceError> {
        // On the web an app is a URL: `launchApp {appId: https://...}` opens it.
        let url = self.resolve_url(app_id)?;
        let deadline = self.default_deadline();
        self.navigate(&url, deadline).map(|_| ())
    }
    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), _millis: u32) -> Result<(), DeviceError> {
        // A finger moving up scrolls the content down: the wheel turns the other way.
        let delta = (f64::from(from.0 - to.0), f64::from(from.1 - to.1));
        let deadline = self.default_deadline();
        self.wheel((f64::from(from.0), f64::from(from.1)), delta, deadline)
    }
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        let deadline = self.default_deadline();
        Ok(Screenshot {
            mime: "image/png",
            bytes: self.png(deadline)?,
        })
    }
    fn open_url(&mut self, url: &str) -> Result<(), DeviceError> {
        let url = self.resolve_url(url)?;
        let deadline = self.default_deadline();
        self.navigate(&url, deadline).map(|_| ())
    }
    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        Ok(false)
    }
    fn secret_typed(&mut self) -> Result<(), DeviceError> {
        let deadline = self.default_deadline();
        self.mark_secret(None, deadline)
    }
    fn step_notes(&mut self) -> Option<Value> {
        let l = self.lines();
        let mut notes = json!({
            "url": self.url(),
            "consoleErrors": l.console_errors,
            "failedRequests": l.failed_requests,
            "dialogs": l.dialogs,
        });
        // A page may log what was typed into a secret field: that value is scrubbed too.
        let secrets = self.secret_values(self.default_deadline()).unwrap_or_default();
        crate::secret::Redaction::new(&secrets).value(&mut notes);
        Some(notes)
    }
    fn web(&mut self) -> Option<&mut WebDevice> {
        Some(self)
    }
}

impl Drop for WebDevice {
    fn drop(&mut self) {
        for p in self.openers.drain(..) {
            self.browser.unroute(&p.target);
        }
        self.browser.unroute(&self.page.target);
        // Closes only what this device opened: its context and every page in it.
        self.browser.dispose_context(&self.context);
    }
}
