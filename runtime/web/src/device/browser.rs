//! A browser: the Chromium process trailblaze started (or one it attached to) and the one DevTools
//! connection to it. It is shared (`Arc`): each web device owns one isolated browser context and
//! one page in it, so several devices can run side by side in one browser. The last device to let
//! go closes the browser it started; an attached browser is left running, minus what we opened.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cdp::{self, CdpError, Connection, lock};
use super::events::Shared;
use super::launch::{self, ChromeProcess, LaunchOptions};

pub struct Browser {
    conn: Arc<Connection>,
    process: Mutex<Option<ChromeProcess>>,
    /// Pages by target id, to hand them the popups they open.
    pages: Arc<Mutex<HashMap<String, Weak<Shared>>>>,
    /// `Browser.getVersion`'s product, e.g. `HeadlessChrome/156.0.8078.73`.
    pub version: String,
    /// Where it came from: the executable's path, or the endpoint attached to.
    pub origin: String,
}

impl Browser {
    /// Starts Chromium (see [`launch::find_chromium`]) and connects to it over its pipe.
    pub fn launch(headed: bool, window: (u32, u32)) -> Result<Arc<Browser>, String> {
        let executable = launch::find_chromium()?;
        let opts = LaunchOptions {
            executable: executable.clone(),
            headed,
            window,
        };
        let (mut process, pipes) = launch::launch(&opts)?;
        let from = pipes.from_browser;
        let conn = Connection::start(Box::new(cdp::PipeSink(pipes.to_browser)), move |c| {
            cdp::read_pipe(from, c)
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let version = match conn.call(None, "Browser.getVersion", json!({}), deadline) {
            Ok(v) => v,
            Err(e) => {
                let tail = process.stderr_tail();
                process.shut_down(Duration::ZERO);
                return Err(format!(
                    "{} did not start: {e}{}",
                    executable.display(),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!("\n{tail}")
                    }
                ));
            }
        };
        Ok(Self::finish(
            conn,
            Some(process),
            version,
            executable.display().to_string(),
        ))
    }

    /// Attaches to a running browser at a `ws://` endpoint; it is never closed by us.
    pub fn attach(endpoint: &str) -> Result<Arc<Browser>, String> {
        let conn = super::ws::connect(endpoint)?;
        let deadline = Instant::now() + cdp::SETUP;
        let version = conn
            .call(None, "Browser.getVersion", json!({}), deadline)
            .map_err(|e| format!("{endpoint}: {e}"))?;
        Ok(Self::finish(conn, None, version, endpoint.to_string()))
    }

    fn finish(conn: Arc<Connection>, process: Option<ChromeProcess>, version: Value, origin: String) -> Arc<Browser> {
        let pages: Arc<Mutex<HashMap<String, Weak<Shared>>>> = Arc::default();
        let routes = pages.clone();
        conn.listen(
            "",
            Arc::new(move |method: &str, p: &Value| {
                let info = p.get("targetInfo").unwrap_or(&Value::Null);
                let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                match method {
                    "Target.targetCreated" if str_of(info, "type") == "page" => {
                        let opener = str_of(info, "openerId");
                        let page = lock(&routes).get(&opener).and_then(Weak::upgrade);
                        if let Some(shared) = page {
                            shared.lock().popups.push(str_of(info, "targetId"));
                            shared.changed.notify_all();
                        }
                    }
                    "Target.targetDestroyed" | "Target.targetCrashed" => {
                        let id = str_of(p, "targetId");
                        if let Some(shared) = lock(&routes).get(&id).and_then(Weak::upgrade) {
                            shared.lock().closed = true;
                            shared.changed.notify_all();
                        }
                    }
                    _ => {}
                }
            }),
        );
        let _ = conn.call(
            None,
            "Target.setDiscoverTargets",
            json!({ "discover": true }),
            Instant::now() + cdp::SETUP,
        );
        Arc::new(Browser {
            conn,
            process: Mutex::new(process),
            pages,
            version: version.get("product").and_then(Value::as_str).unwrap_or("").to_string(),
            origin,
        })
    }

    pub fn connection(&self) -> &Arc<Connection> {
        &self.conn
    }

    /// Whether trailblaze started this browser (and so closes it).
    pub fn owned(&self) -> bool {
        lock(&self.process).is_some()
    }

    /// The browser's main process id, when trailblaze started it.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.process).as_ref().map(ChromeProcess::pid)
    }

    /// A new isolated browser context (its own cookies, storage and cache), downloads refused.
    pub fn new_context(&self) -> Result<String, CdpError> {
        let deadline = Instant::now() + cdp::SETUP;
        let r = self.conn.call(
            None,
            "Target.createBrowserContext",
            json!({ "disposeOnDetach": true }),
            deadline,
        )?;
        let id = r
            .get("browserContextId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let _ = self.conn.call(
            None,
            "Browser.setDownloadBehavior",
            json!({ "behavior": "deny", "browserContextId": id }),
            deadline,
        );
        Ok(id)
    }

    /// Closes a context and every page in it.
    pub fn dispose_context(&self, id: &str) {
        let _ = self.conn.call(
            None,
            "Target.disposeBrowserContext",
            json!({ "browserContextId": id }),
            Instant::now() + Duration::from_secs(5),
        );
    }

    /// Routes the popups of page `target` (and its closing) to `shared`.
    pub(crate) fn route(&self, target: &str, shared: &Arc<Shared>) {
        lock(&self.pages).insert(target.to_string(), Arc::downgrade(shared));
    }

    pub(crate) fn unroute(&self, target: &str) {
        lock(&self.pages).remove(target);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let process = lock(&self.process).take();
        if let Some(mut p) = process {
            // A clean close lets Chromium end its helpers; the group is killed after it anyway.
            let _ = self.conn.call(
                None,
                "Browser.close",
                json!({}),
                Instant::now() + Duration::from_secs(2),
            );
            p.shut_down(Duration::from_secs(2));
        }
        self.conn.close("the browser was closed");
    }
}
