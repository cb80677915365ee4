//! One page (a browser tab) in the device's context: its DevTools session, its frames and their
//! isolated worlds, and the page agent (`walker.js`) evaluated in them. Calls here take a deadline;
//! a page whose script never returns makes them time out, after which [`Page::unfreeze`] stops it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::browser::Browser;
use super::cdp::{CdpError, Connection};
use super::events::{self, Shared, WORLD};

/// The page agent, evaluated once in each frame's isolated world.
const AGENT: &str = include_str!("walker.js");

#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("{0}")]
    Cdp(#[from] CdpError),
    /// A script of ours threw in the page.
    #[error("{0}")]
    Script(String),
    /// The elements of the capture an action named are gone (the page changed or navigated).
    #[error("the page changed since it was captured")]
    Stale,
}

/// A frame of the page and the session that owns it (out-of-process frames have their own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub session: String,
    pub id: String,
    /// `None` for the main frame.
    pub parent: Option<String>,
    pub url: String,
}

pub struct Page {
    conn: Arc<Connection>,
    pub target: String,
    pub session: String,
    pub shared: Arc<Shared>,
}

impl Page {
    /// Opens a new page in `context` and attaches to it.
    pub fn open(browser: &Browser, context: &str, viewport: (u32, u32)) -> Result<Page, CdpError> {
        let conn = browser.connection().clone();
        let deadline = Instant::now() + super::cdp::SETUP;
        let r = conn.call(
            None,
            "Target.createTarget",
            json!({ "url": "about:blank", "browserContextId": context }),
            deadline,
        )?;
        let target = str_of(&r, "targetId");
        Self::attach(browser, conn, target, viewport)
    }

    /// Attaches to an existing page target (a popup the page opened).
    pub fn attach(
        browser: &Browser,
        conn: Arc<Connection>,
        target: String,
        viewport: (u32, u32),
    ) -> Result<Page, CdpError> {
        let deadline = Instant::now() + super::cdp::SETUP;
        let r = conn.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
            deadline,
        )?;
        let session = str_of(&r, "sessionId");
        let shared = Shared::new();
        conn.listen(&session, events::listener(&conn, &shared, session.clone()));
        browser.route(&target, &shared);
        let page = Page {
            conn,
            target,
            session,
            shared,
        };
        for (m, p) in events::setup_calls() {
            page.call(m, p, deadline)?;
        }
        let tree = page.call("Page.getFrameTree", json!({}), deadline)?;
        {
            let mut st = page.shared.lock();
            st.main_frame = str_of(&tree["frameTree"]["frame"], "id");
            st.url = str_of(&tree["frameTree"]["frame"], "url");
        }
        page.set_viewport(viewport, deadline)?;
        Ok(page)
    }

    pub fn call(&self, method: &str, params: Value, deadline: Instant) -> Result<Value, CdpError> {
        self.conn.call(Some(&self.session), method, params, at_least(deadline))
    }

    /// Sends `method` without waiting for its answer.
    pub fn send(&self, method: &str, params: Value) {
        let _ = self.conn.send(Some(&self.session), method, params);
    }

    fn call_on(&self, session: &str, method: &str, params: Value, deadline: Instant) -> Result<Value, CdpError> {
        self.conn.call(Some(session), method, params, at_least(deadline))
    }

    pub fn set_viewport(&self, (w, h): (u32, u32), deadline: Instant) -> Result<(), CdpError> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false }),
            deadline,
        )?;
        Ok(())
    }

    pub fn url(&self) -> String {
        self.shared.lock().url.clone()
    }

    /// The page's main frame (its id does not change when the page navigates).
    pub fn main_frame(&self) -> Frame {
        let st = self.shared.lock();
        Frame {
            session: self.session.clone(),
            id: st.main_frame.clone(),
            parent: None,
            url: st.url.clone(),
        }
    }

    /// Every frame of the page, parents before children, the main frame first: the page's own
    /// tree, then each out-of-process frame's (its root names its parent in another process).
    pub fn frames(&self, deadline: Instant) -> Result<Vec<Frame>, CdpError> {
        let mut out = Vec::new();
        let tree = self.call("Page.getFrameTree", json!({}), deadline)?;
        walk_tree(&self.session, &tree["frameTree"], None, &mut out, 0);
        let children: Vec<String> = self.shared.lock().children.values().cloned().collect();
        for session in children.into_iter().take(64) {
            // A frame that went away since is simply not there.
            let Ok(tree) = self.call_on(&session, "Page.getFrameTree", json!({}), deadline) else {
                continue;
            };
            let root = &tree["frameTree"];
            let parent = root["frame"]
                .get("parentId")
                .and_then(Value::as_str)
                .map(str::to_string);
            walk_tree(&session, root, parent, &mut out, 0);
        }
        // Parents first, so a child can find where it goes.
        let mut ordered: Vec<Frame> = Vec::with_capacity(out.len());
        let mut rest = out;
        for _ in 0..32 {
            let (ready, later): (Vec<Frame>, Vec<Frame>) = rest
                .into_iter()
                .partition(|f| f.parent.as_ref().is_none_or(|p| ordered.iter().any(|o| &o.id == p)));
            let progressed = !ready.is_empty();
            ordered.extend(ready);
            rest = later;
            if rest.is_empty() || !progressed {
                break;
            }
        }
        Ok(ordered)
    }

    /// The isolated world of `frame`, made when it has none yet.
    fn world(&self, frame: &Frame, deadline: Instant) -> Result<i64, CdpError> {
        let key = (frame.session.clone(), frame.id.clone());
        if let Some(id) = self.shared.lock().worlds.get(&key) {
            return Ok(*id);
        }
        let r = self.call_on(
            &frame.session,
            "Page.createIsolatedWorld",
            json!({ "frameId": frame.id, "worldName": WORLD, "grantUniveralAccess": false }),
            deadline,
        )?;
        let id = r.get("executionContextId").and_then(Value::as_i64).unwrap_or(0);
        self.shared.lock().worlds.insert(key, id);
        Ok(id)
    }

    /// Evaluates `expr` (which may use the agent as `__tb`) in `frame`'s isolated world, awaiting a
    /// promise; installs the agent first when the world has none.
    pub fn agent(&self, frame: &Frame, expr: &str, deadline: Instant) -> Result<Value, PageError> {
        for attempt in 0..3 {
            let ctx = self.world(frame, deadline)?;
            let wrapped = format!("globalThis.__tb ? ({expr}) : {{__missing: 1}}");
            match self.evaluate_in(&frame.session, ctx, &wrapped, deadline) {
                Ok(v) if v.get("__missing").is_some() => {
                    self.evaluate_in(&frame.session, ctx, &format!("globalThis.__tb = {AGENT}; 0"), deadline)?;
                }
                Ok(v) => return Ok(v),
                Err(PageError::Cdp(CdpError::Protocol { message, .. }))
                    if attempt < 2 && message.contains("context") =>
                {
                    // The document changed under us: its world went with it.
                    self.shared
                        .lock()
                        .worlds
                        .remove(&(frame.session.clone(), frame.id.clone()));
                }
                Err(e) => return Err(e),
            }
        }
        Err(PageError::Stale)
    }

    fn evaluate_in(&self, session: &str, ctx: i64, expr: &str, deadline: Instant) -> Result<Value, PageError> {
        let r = self.call_on(
            session,
            "Runtime.evaluate",
            json!({ "expression": expr, "contextId": ctx, "returnByValue": true, "awaitPromise": true }),
            deadline,
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(PageError::Script(exception_text(ex)));
        }
        Ok(r["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Evaluates `script` in the page's own world (as the page's scripts see it).
    pub fn evaluate_main(&self, script: &str, deadline: Instant) -> Result<Value, PageError> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": script, "returnByValue": true, "awaitPromise": true, "userGesture": true }),
            deadline,
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(PageError::Script(exception_text(ex)));
        }
        Ok(r["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Marks the `<iframe>` element that holds `child` in its parent's world, so the parent's
    /// capture can say where the child frame's tree goes.
    pub fn tag_owner(&self, parent: &Frame, child: &Frame, deadline: Instant) -> Result<(), PageError> {
        if self.shared.lock().tagged.contains(&child.id) {
            return Ok(());
        }
        let ctx = self.world(parent, deadline)?;
        let owner = self.call_on(
            &parent.session,
            "DOM.getFrameOwner",
            json!({ "frameId": child.id }),
            deadline,
        )?;
        let backend = owner.get("backendNodeId").cloned().unwrap_or(Value::Null);
        let node = self.call_on(
            &parent.session,
            "DOM.resolveNode",
            json!({ "backendNodeId": backend, "executionContextId": ctx }),
            deadline,
        )?;
        let object = str_of(&node["object"], "objectId");
        self.call_on(
            &parent.session,
            "Runtime.callFunctionOn",
            json!({
                "objectId": object,
                "functionDeclaration": "function (f) { this.__tbFrame = f; }",
                "arguments": [{ "value": child.id }],
            }),
            deadline,
        )?;
        let _ = self.call_on(
            &parent.session,
            "Runtime.releaseObject",
            json!({ "objectId": object }),
            deadline,
        );
        self.shared.lock().tagged.insert(child.id.clone());
        Ok(())
    }

    /// Stops a script that keeps the page busy, so the page answers again.
    pub fn unfreeze(&self) {
        let until = Instant::now() + Duration::from_secs(2);
        let _ = self.call("Runtime.terminateExecution", json!({}), until);
        let children: Vec<String> = self.shared.lock().children.values().cloned().collect();
        for c in children {
            let _ = self.call_on(&c, "Runtime.terminateExecution", json!({}), until);
        }
    }
}

/// Frames of one session's tree, depth first. Frames nest as deep as the page likes: a bound keeps
/// a hostile page from making this recurse without end.
fn walk_tree(session: &str, node: &Value, parent: Option<String>, out: &mut Vec<Frame>, depth: usize) {
    if depth > 16 || out.len() >= 64 {
        return;
    }
    let frame = &node["frame"];
    let id = str_of(frame, "id");
    out.push(Frame {
        session: session.to_string(),
        id: id.clone(),
        parent,
        url: str_of(frame, "url"),
    });
    for k in node.get("childFrames").and_then(Value::as_array).into_iter().flatten() {
        walk_tree(session, k, Some(id.clone()), out, depth + 1);
    }
}

/// A wait that ran out still gives each call a moment: an expired deadline must not read as a page
/// that stopped answering.
fn at_least(deadline: Instant) -> Instant {
    deadline.max(Instant::now() + Duration::from_millis(500))
}

pub(crate) fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn exception_text(ex: &Value) -> String {
    let described = ex
        .get("exception")
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| ex.get("text").and_then(Value::as_str).unwrap_or("the script threw"));
    described
        .lines()
        .next()
        .unwrap_or("the script threw")
        .chars()
        .take(300)
        .collect()
}
