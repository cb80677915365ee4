//! What a page tells while it runs, kept by the listener of its sessions (on the connection's reader
//! thread): navigations and loads, the isolated worlds of its frames, its out-of-process frames, its
//! dialogs (answered at once, so none can hang a step), console errors and failed requests (per step,
//! for reports), and the requests it sent (for `web_assertNetworkEvent`). Every list is capped.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, Weak};

use serde_json::{Value, json};

use super::cdp::{Connection, lock};
use super::keeper::Keeper;

/// How many of each kind of line a page keeps between two reads.
const KEPT: usize = 200;
/// How many sent requests `web_assertNetworkEvent` can search.
const REQUESTS_KEPT: usize = 2000;
/// How much of a request's body is searched.
const BODY_KEPT: usize = 64 << 10;
/// The isolated world trailblaze's page agent runs in.
pub const WORLD: &str = "trailblaze";

#[derive(Default)]
pub struct State {
    pub main_frame: String,
    pub url: String,
    /// Main-frame `load` events so far, and the loader of the last one.
    pub loads: u64,
    pub loaded_loader: String,
    /// Main-frame navigations so far (new documents).
    pub navigations: u64,
    /// A main-frame navigation was asked for and has not finished loading.
    pub navigating: bool,
    /// Isolated worlds by (session, frame).
    pub worlds: HashMap<(String, String), i64>,
    /// Out-of-process frames: session id by frame (target) id.
    pub children: HashMap<String, String>,
    /// Frames whose owner element was tagged in its parent's world.
    pub tagged: std::collections::HashSet<String>,
    pub dialogs: Vec<String>,
    pub console_errors: Vec<String>,
    pub failed_requests: Vec<String>,
    /// Every request sent: its URL and the start of its body.
    pub requests: VecDeque<(String, String)>,
    request_urls: HashMap<String, String>,
    /// Pages this page opened (`window.open`, `target=_blank`), by target id, newest last.
    pub popups: Vec<String>,
    /// The page was closed (by itself or by the browser).
    pub closed: bool,
}

pub struct Shared {
    pub state: Mutex<State>,
    pub changed: Condvar,
    /// The trace this page's events also go to, while one is kept.
    trace: Mutex<Option<Arc<Keeper>>>,
}

impl Shared {
    pub fn new() -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            trace: Mutex::new(None),
        })
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Waits (until `deadline`) for `done` to hold over the state.
    pub fn wait_until(&self, deadline: std::time::Instant, done: impl Fn(&State) -> bool) -> bool {
        let mut st = self.lock();
        loop {
            if done(&st) {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            st = match self.changed.wait_timeout(st, deadline - now) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Sends this page's events to `keeper` too (or, `None`, no longer).
    pub fn set_trace(&self, keeper: Option<Arc<Keeper>>) {
        *lock(&self.trace) = keeper;
    }

    /// The console errors, failed requests and dialogs since the last call.
    pub fn drain_lines(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        let mut st = self.lock();
        (
            std::mem::take(&mut st.console_errors),
            std::mem::take(&mut st.failed_requests),
            std::mem::take(&mut st.dialogs),
        )
    }
}

fn push(list: &mut Vec<String>, line: String) {
    if list.len() < KEPT {
        list.push(line.chars().take(500).collect());
    }
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The listener of one of the page's sessions (`session`: the page's own or an out-of-process
/// frame's). It holds the connection weakly: the connection owns its listeners.
pub fn listener(conn: &Arc<Connection>, shared: &Arc<Shared>, session: String) -> super::cdp::Listener {
    let conn: Weak<Connection> = Arc::downgrade(conn);
    let shared = shared.clone();
    Arc::new(move |method: &str, p: &Value| on_event(&conn, &shared, &session, method, p))
}

/// Keeps what one event tells in the page's state, and wakes its waiters when it told anything.
fn on_event(conn: &Weak<Connection>, shared: &Arc<Shared>, session: &str, method: &str, p: &Value) {
    // Cloned out of the lock, so a trace's own lock is never taken under the page's.
    let trace = lock(&shared.trace).clone();
    if let Some(keeper) = trace {
        keeper.on_event(session, method, p);
    }
    let mut st = shared.lock();
    let kept = on_page(&mut st, conn, session, method, p)
        || on_runtime(&mut st, session, method, p)
        || on_network(&mut st, method, p)
        || on_target(&mut st, conn, shared, method, p);
    if !kept {
        return;
    }
    drop(st);
    shared.changed.notify_all();
}

/// A `Page.*` event: navigations, loads and dialogs. False when `method` is none of these.
fn on_page(st: &mut State, conn: &Weak<Connection>, session: &str, method: &str, p: &Value) -> bool {
    match method {
        "Page.lifecycleEvent" => {
            if s(p, "frameId") == st.main_frame && s(p, "name") == "load" {
                st.loads += 1;
                st.loaded_loader = s(p, "loaderId").to_string();
                st.navigating = false;
            }
        }
        "Page.frameNavigated" => {
            let frame = p.get("frame").unwrap_or(&Value::Null);
            if frame.get("parentId").is_none() && s(frame, "id") == st.main_frame {
                st.navigations += 1;
                st.url = s(frame, "url").to_string();
            }
        }
        "Page.navigatedWithinDocument" => {
            if s(p, "frameId") == st.main_frame {
                st.url = s(p, "url").to_string();
            }
        }
        "Page.frameRequestedNavigation" | "Page.frameStartedNavigating" => {
            if s(p, "frameId") == st.main_frame && !s(p, "url").starts_with("javascript:") {
                st.navigating = true;
            }
        }
        "Page.javascriptDialogOpening" => {
            let kind = s(p, "type").to_string();
            let message = s(p, "message").to_string();
            let prompt = s(p, "defaultPrompt").to_string();
            push(&mut st.dialogs, format!("{kind}: {message}"));
            // Answered at once, from this thread, without waiting for the reply: the page is
            // blocked until it is, and so is any call in flight.
            if let Some(c) = conn.upgrade() {
                let _ = c.send(
                    Some(session),
                    "Page.handleJavaScriptDialog",
                    json!({ "accept": true, "promptText": prompt }),
                );
            }
        }
        _ => return false,
    }
    true
}

/// A `Runtime.*` event: isolated worlds and console errors. False when `method` is none of these.
fn on_runtime(st: &mut State, session: &str, method: &str, p: &Value) -> bool {
    match method {
        "Runtime.executionContextCreated" => {
            let ctx = p.get("context").unwrap_or(&Value::Null);
            let aux = ctx.get("auxData").unwrap_or(&Value::Null);
            if s(ctx, "name") == WORLD
                && let Some(id) = ctx.get("id").and_then(Value::as_i64)
            {
                st.worlds
                    .insert((session.to_string(), s(aux, "frameId").to_string()), id);
            }
        }
        "Runtime.executionContextDestroyed" => {
            if let Some(id) = p.get("executionContextId").and_then(Value::as_i64) {
                st.worlds.retain(|_, v| *v != id);
            }
        }
        "Runtime.executionContextsCleared" => st.worlds.retain(|(s, _), _| s != session),
        "Runtime.consoleAPICalled" => {
            if s(p, "type") == "error" || s(p, "type") == "assert" {
                let args = p
                    .get("args")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let text: Vec<String> = args.iter().take(8).map(super::keeper::describe).collect();
                push(&mut st.console_errors, text.join(" "));
            }
        }
        "Runtime.exceptionThrown" => {
            let text = super::keeper::exception_text(p);
            let first = text.lines().next().unwrap_or("").to_string();
            push(&mut st.console_errors, format!("uncaught {first}"));
        }
        _ => return false,
    }
    true
}

/// A `Network.*` event: requests sent and failed. False when `method` is none of these.
fn on_network(st: &mut State, method: &str, p: &Value) -> bool {
    match method {
        "Network.requestWillBeSent" => {
            let req = p.get("request").unwrap_or(&Value::Null);
            let url = s(req, "url").to_string();
            if !url.starts_with("data:") {
                let body: String = s(req, "postData").chars().take(BODY_KEPT).collect();
                if st.requests.len() >= REQUESTS_KEPT {
                    st.requests.pop_front();
                }
                st.requests.push_back((url.clone(), body));
                if st.request_urls.len() >= REQUESTS_KEPT {
                    st.request_urls.clear();
                }
                st.request_urls.insert(s(p, "requestId").to_string(), url);
            }
        }
        "Network.responseReceived" => {
            let resp = p.get("response").unwrap_or(&Value::Null);
            let status = resp.get("status").and_then(Value::as_i64).unwrap_or(0);
            // The browser's own favicon probe is no request of the page's.
            if status >= 400 && !s(resp, "url").ends_with("/favicon.ico") {
                push(&mut st.failed_requests, format!("{status} {}", s(resp, "url")));
            }
        }
        "Network.loadingFailed" => {
            if p.get("canceled").and_then(Value::as_bool) != Some(true) {
                let url = st.request_urls.get(s(p, "requestId")).cloned().unwrap_or_default();
                let line = format!("{} {url}", s(p, "errorText"));
                push(&mut st.failed_requests, line);
            }
        }
        _ => return false,
    }
    true
}

/// A `Target.*` or `Inspector.*` event: out-of-process frames, and the page's end. False when
/// `method` is none of these.
fn on_target(st: &mut State, conn: &Weak<Connection>, shared: &Arc<Shared>, method: &str, p: &Value) -> bool {
    match method {
        "Target.attachedToTarget" => {
            let info = p.get("targetInfo").unwrap_or(&Value::Null);
            let child = s(p, "sessionId").to_string();
            if s(info, "type") == "iframe"
                && let Some(c) = conn.upgrade()
            {
                st.children.insert(s(info, "targetId").to_string(), child.clone());
                c.listen(&child, listener(&c, shared, child.clone()));
                for (m, params) in setup_calls() {
                    let _ = c.send(Some(&child), m, params);
                }
            }
        }
        "Target.detachedFromTarget" => {
            let child = s(p, "sessionId").to_string();
            st.children.retain(|_, v| *v != child);
            st.worlds.retain(|(s, _), _| *s != child);
            if let Some(c) = conn.upgrade() {
                c.unlisten(&child);
            }
        }
        "Inspector.detached" | "Inspector.targetCrashed" => st.closed = true,
        _ => return false,
    }
    true
}

/// What every session of a page turns on: events of its frames, worlds, console, network and
/// dialogs, and attaching to its out-of-process frames.
pub fn setup_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("Page.enable", json!({})),
        ("Page.setLifecycleEventsEnabled", json!({ "enabled": true })),
        ("Runtime.enable", json!({})),
        ("Network.enable", json!({ "maxPostDataSize": BODY_KEPT })),
        (
            "Target.setAutoAttach",
            json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true }),
        ),
    ]
}
