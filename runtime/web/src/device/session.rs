//! The web device: one isolated browser context and one page in a shared [`Browser`], as a
//! [`Device`], plus the page operations the `web_*` tools use (each with a deadline). A call that
//! times out because the page's script never returns stops that script, so the next step runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::address::{self, Address};
use super::browser::Browser;
use super::capture::{self, Captured};
use super::cdp::CdpError;
use super::keeper::Keeper;
use super::page::{Page, PageError};
use super::serve::{NotServed, Served};
use trailblaze_core::device::spec::WebOptions;
use trailblaze_core::device::trace::{DeviceTrace, TraceOptions};
use trailblaze_core::device::{Device, DeviceError, KeyCode, LaunchMode, Platform, Screenshot, ViewTree};

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
    pub(super) browser: Arc<Browser>,
    pub(super) context: String,
    pub(super) page: Page,
    /// Pages this device opened before following a popup, to return to when it closes.
    openers: Vec<Page>,
    opts: WebOptions,
    pub(super) viewport: (u32, u32),
    pub(super) captured: Captured,
    captures: u64,
    served: Option<Served>,
    /// Popups already followed or listed.
    seen_popups: usize,
    /// The trace being kept, between `trace_begin` and `trace_end`.
    pub(super) trace: Option<Arc<Keeper>>,
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
            trace: None,
        })
    }

    /// A context in the browser the process's other web devices use (started when there is none):
    /// see [`super::KeepBrowser`]. Attaching (`web:ws://...`) is as [`WebDevice::start`].
    pub fn start_shared(opts: WebOptions) -> Result<WebDevice, DeviceError> {
        let browser = match &opts.endpoint {
            Some(e) => Browser::attach(e),
            None => super::shared::browser(opts.headed, opts.viewport),
        }
        .map_err(DeviceError::Io)?;
        WebDevice::open(browser, opts)
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

    pub(super) fn default_deadline(&self) -> Instant {
        Instant::now() + self.opts.timeout
    }

    /// How long a navigation waits for its load event: the navigation timeout, never less than the
    /// action timeout.
    fn navigation_timeout(&self) -> std::time::Duration {
        self.opts.navigation_timeout.max(self.opts.timeout)
    }

    /// When a navigation started now stops waiting for its load event.
    pub fn navigation_deadline(&self) -> Instant {
        Instant::now() + self.navigation_timeout()
    }

    /// Turns a call's error into the step's, stopping a script that keeps the page busy.
    pub(super) fn fail(&self, e: PageError) -> DeviceError {
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
            let popup = std::mem::replace(&mut self.page, opener);
            self.trace_follows(&popup);
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
            self.trace_follows(&opener);
            self.openers.push(opener);
            self.seen_popups = 0;
        }
    }

    pub fn url(&self) -> String {
        self.page.url()
    }

    /// The page shown and the pages it came from (popups' openers).
    pub(super) fn pages(&self) -> impl Iterator<Item = &Page> {
        std::iter::once(&self.page).chain(self.openers.iter())
    }

    /// Resolves a URL as `web_navigate` takes it: http(s) URLs and about:blank as they are; a
    /// relative path (or a `file://` URL) against the trail's folder, served from its site folder
    /// (by the device's own file server); every other scheme refused (`chrome:`, `data:`, ...).
    pub fn resolve_url(&mut self, url: &str) -> Result<String, DeviceError> {
        let (path, absolute) = match address::classify(url).map_err(DeviceError::Action)? {
            Address::Web(u) => return Ok(u.to_string()),
            Address::File { path, absolute } => (path, absolute),
        };
        let file = path.split(['?', '#']).next().unwrap_or(path);
        let suffix = &path[file.len()..];
        let path = if absolute {
            PathBuf::from(file)
        } else {
            let base = self.opts.base_dir.clone().unwrap_or_else(|| PathBuf::from("."));
            base.join(file)
        };
        let root = self
            .opts
            .workspace
            .clone()
            .or_else(|| self.opts.base_dir.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let real = std::fs::canonicalize(&path)
            .map_err(|_| DeviceError::Action(format!("`{url}`: no such file ({})", path.display())))?;
        let served = match &self.served {
            Some(s) => s,
            None => self.served.insert(
                Served::start(&root, &self.opts.never_served)
                    .map_err(|e| DeviceError::Io(format!("cannot serve the workspace: {e}")))?,
            ),
        };
        let refused = |why: NotServed| match why {
            NotServed::Outside => DeviceError::Action(format!(
                "`{url}` lies outside the trail's workspace ({}): pages may open only files inside it",
                root.display()
            )),
            NotServed::Private => DeviceError::Action(format!("`{url}` is not opened: {why}")),
        };
        let base = served.url_of(&real).map_err(refused)?;
        Ok(format!("{base}{suffix}"))
    }

    /// Goes to `url` (already resolved) and waits for its load event.
    pub fn navigate(&mut self, url: &str, deadline: Instant) -> Result<String, DeviceError> {
        let started = Instant::now();
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
                    deadline.saturating_duration_since(started).as_millis()
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
        let deadline = self.navigation_deadline();
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
    fn trace_picture(&mut self) -> Result<Screenshot, DeviceError> {
        let deadline = self.default_deadline();
        Ok(Screenshot {
            mime: "image/jpeg",
            bytes: self.jpeg(deadline)?,
        })
    }
    fn open_url(&mut self, url: &str) -> Result<(), DeviceError> {
        let url = self.resolve_url(url)?;
        let deadline = self.navigation_deadline();
        self.navigate(&url, deadline).map(|_| ())
    }
    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        Ok(false)
    }
    fn pictures_hide_secrets(&self) -> bool {
        true
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
        trailblaze_core::secret::Redaction::new(&secrets).value(&mut notes);
        Some(notes)
    }
    fn trace_begin(&mut self, opts: &TraceOptions) {
        self.begin_trace(opts);
    }
    fn trace_end(&mut self) -> DeviceTrace {
        self.end_trace()
    }
    fn as_any(&mut self) -> Option<&mut dyn std::any::Any> {
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
