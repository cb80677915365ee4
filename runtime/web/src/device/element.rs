//! The web device's operations on the elements of its last capture and on the page's contents:
//! checks before an action, mouse and keys, fields and options, CSS queries, reads, secrets,
//! scripts, cookies and storage, screenshots.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cdp::CdpError;
use super::keys;
use super::page::PageError;
use super::session::{Checks, Lines, WebDevice};
use trailblaze_core::device::{DeviceError, WebHandle};

impl WebDevice {
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
        self.input("Input.dispatchMouseEvent", p, deadline)
    }

    /// Sends one input event. A page that closes itself in answer (a "Close" button calling
    /// `window.close()`) took the input: the action is done, and the next capture follows the
    /// page's opener.
    fn input(&self, method: &str, params: Value, deadline: Instant) -> Result<(), DeviceError> {
        match self.page.call(method, params, deadline) {
            Ok(_) | Err(CdpError::Detached { .. }) => Ok(()),
            Err(e) => Err(self.fail(e.into())),
        }
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
        self.input("Input.insertText", json!({ "text": text }), deadline)
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
        self.input("Input.dispatchKeyEvent", keys::event(k, down, modifiers), deadline)
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
        if let Some(k) = &self.trace {
            k.secret_typed();
        }
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
        self.picture(json!({ "format": "png" }), deadline)
    }

    /// A JPEG of the page, secret fields masked: a trace's frames (a fifth of a PNG's time to
    /// encode, and of its size).
    pub fn jpeg(&self, deadline: Instant) -> Result<Vec<u8>, DeviceError> {
        self.picture(
            json!({ "format": "jpeg", "quality": 70, "optimizeForSpeed": true }),
            deadline,
        )
    }

    fn picture(&self, format: Value, deadline: Instant) -> Result<Vec<u8>, DeviceError> {
        let masked = self
            .captured
            .frames
            .iter()
            .map(|f| self.page.agent(f, "__tb.mask(true)", deadline))
            .collect::<Result<Vec<_>, _>>();
        let shot = self.page.call("Page.captureScreenshot", format, deadline);
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
