//! The Chrome DevTools Protocol connection: JSON messages over a transport (the launched browser's
//! pipe, or a WebSocket to a running one), a reader thread that routes replies to their callers by
//! id and events to the listener of their session, and calls that give up at a deadline.
//!
//! Messages are `serde_json::Value`s: the project uses a few dozen of the protocol's methods, and
//! the typed bindings of a CDP crate cost more compile time than the handful of field reads here.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The largest message accepted from the browser (a full-page screenshot of a tall page is the
/// biggest the project asks for).
const MAX_MESSAGE: usize = 256 << 20;

#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    /// The browser answered the call with an error.
    #[error("{method}: {message}")]
    Protocol { method: String, message: String },
    /// No answer before the deadline: the page may be busy (a script that never returns).
    #[error("{method}: no answer within {waited_ms} ms (the page may be running a script that never ends)")]
    Timeout { method: String, waited_ms: u128 },
    /// The connection is gone (the browser exited or the socket closed).
    #[error("the browser connection is closed ({0})")]
    Closed(String),
    /// The call's target went away while it waited (a page that closed itself on a click): the
    /// browser never answers a call on a session it detached.
    #[error("{method}: the page closed before it answered")]
    Detached { method: String },
}

/// Receives the events of one session (`None`: the browser's own) on the reader thread. It must not
/// wait for a reply to a call it makes (the reader is the thread that would deliver it); sending
/// without waiting ([`Connection::send`]) is fine.
pub type Listener = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// Writes one message to the browser.
pub(crate) trait Sink: Send {
    fn send(&mut self, message: &[u8]) -> std::io::Result<()>;
}

type Reply = Result<Value, CdpError>;

/// A call waiting for its answer: its method, its session (`""`: the browser's) and its caller.
struct Pending {
    method: String,
    session: String,
    reply: SyncSender<Reply>,
}

pub struct Connection {
    sink: Mutex<Box<dyn Sink>>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    listeners: Mutex<HashMap<String, Listener>>,
    /// Sessions the browser detached (pages that closed): a call on one fails at once.
    detached: Mutex<std::collections::HashSet<String>>,
    closed: AtomicBool,
    why_closed: Mutex<String>,
}

impl Connection {
    /// A connection writing through `sink`; `reader` is started on a thread of its own and feeds
    /// each whole message it reads to [`Connection::dispatch`] until it returns.
    pub(crate) fn start(sink: Box<dyn Sink>, reader: impl FnOnce(Arc<Connection>) + Send + 'static) -> Arc<Connection> {
        let conn = Arc::new(Connection {
            sink: Mutex::new(sink),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            listeners: Mutex::new(HashMap::new()),
            detached: Mutex::new(Default::default()),
            closed: AtomicBool::new(false),
            why_closed: Mutex::new(String::new()),
        });
        let for_reader = conn.clone();
        let spawned = std::thread::Builder::new()
            .name("trailblaze-cdp".into())
            .spawn(move || reader(for_reader));
        if let Err(e) = spawned {
            conn.close(&format!("cannot start the reader thread: {e}"));
        }
        conn
    }

    /// Listens to the events of `session` (a flattened target session id; `""` for the browser).
    pub fn listen(&self, session: &str, listener: Listener) {
        lock(&self.listeners).insert(session.to_string(), listener);
    }

    pub fn unlisten(&self, session: &str) {
        lock(&self.listeners).remove(session);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Calls `method` and waits for its answer until `deadline`.
    pub fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, CdpError> {
        let on = session.unwrap_or("");
        if !on.is_empty() && lock(&self.detached).contains(on) {
            return Err(CdpError::Detached {
                method: method.to_string(),
            });
        }
        let (tx, rx) = sync_channel(1);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let pending = Pending {
            method: method.to_string(),
            session: on.to_string(),
            reply: tx,
        };
        lock(&self.pending).insert(id, pending);
        if let Err(e) = self.write(id, session, method, params) {
            lock(&self.pending).remove(&id);
            return Err(e);
        }
        let started = Instant::now();
        let wait = deadline.saturating_duration_since(started);
        match rx.recv_timeout(wait) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => {
                lock(&self.pending).remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_string(),
                    waited_ms: started.elapsed().as_millis(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(CdpError::Closed(self.why())),
        }
    }

    /// Sends `method` without waiting for its answer (which is dropped): for a listener that must
    /// answer an event (a dialog) from the reader thread.
    pub fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<(), CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.write(id, session, method, params)
    }

    fn write(&self, id: u64, session: Option<&str>, method: &str, params: Value) -> Result<(), CdpError> {
        if self.is_closed() {
            return Err(CdpError::Closed(self.why()));
        }
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session.filter(|s| !s.is_empty()) {
            msg["sessionId"] = Value::String(s.to_string());
        }
        let bytes = serde_json::to_vec(&msg).map_err(|e| CdpError::Closed(e.to_string()))?;
        let sent = lock(&self.sink).send(&bytes);
        sent.map_err(|e| {
            self.close(&format!("write failed: {e}"));
            CdpError::Closed(self.why())
        })
    }

    /// Routes one message from the browser: a reply to its caller, an event to its session's listener.
    pub(crate) fn dispatch(&self, bytes: &[u8]) {
        let Ok(msg) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        if let Some(id) = msg.get("id").and_then(Value::as_u64) {
            let Some(Pending { method, reply: tx, .. }) = lock(&self.pending).remove(&id) else {
                return;
            };
            let reply = match msg.get("error") {
                Some(e) => Err(CdpError::Protocol {
                    method,
                    message: e.get("message").and_then(Value::as_str).unwrap_or("error").to_string(),
                }),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.try_send(reply);
            return;
        }
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return;
        };
        let session = msg.get("sessionId").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").unwrap_or(&Value::Null);
        if method == "Target.detachedFromTarget"
            && let Some(gone) = params.get("sessionId").and_then(Value::as_str)
        {
            self.fail_session(gone);
        }
        let listener = lock(&self.listeners).get(session).cloned();
        if let Some(l) = listener {
            l(method, params);
        }
    }

    /// Fails the calls waiting on a session the browser detached: none of them will be answered.
    fn fail_session(&self, gone: &str) {
        lock(&self.detached).insert(gone.to_string());
        let mut pending = lock(&self.pending);
        let ids: Vec<u64> = pending
            .iter()
            .filter(|(_, p)| p.session == gone)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(p) = pending.remove(&id) {
                let _ = p.reply.try_send(Err(CdpError::Detached { method: p.method }));
            }
        }
    }

    /// Marks the connection closed and fails every waiting call.
    pub(crate) fn close(&self, why: &str) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        *lock(&self.why_closed) = why.to_string();
        let waiting: Vec<_> = lock(&self.pending).drain().collect();
        for (_, p) in waiting {
            let _ = p.reply.try_send(Err(CdpError::Closed(why.to_string())));
        }
    }

    fn why(&self) -> String {
        let why = lock(&self.why_closed).clone();
        if why.is_empty() { "closed".into() } else { why }
    }
}

/// A mutex whose poisoning (a listener panicked) is ignored: the maps stay consistent.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The launched browser's pipe (`--remote-debugging-pipe`): messages end with a NUL byte.
pub(crate) struct PipeSink(pub std::fs::File);

impl Sink for PipeSink {
    fn send(&mut self, message: &[u8]) -> std::io::Result<()> {
        self.0.write_all(message)?;
        self.0.write_all(&[0])
    }
}

/// Reads NUL-terminated messages from the browser's pipe until it closes.
pub(crate) fn read_pipe(mut from: std::fs::File, conn: Arc<Connection>) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut start = 0;
        for (i, b) in chunk[..n].iter().enumerate() {
            if *b == 0 {
                if buf.is_empty() {
                    conn.dispatch(&chunk[start..i]);
                } else {
                    buf.extend_from_slice(&chunk[start..i]);
                    conn.dispatch(&buf);
                    buf.clear();
                }
                start = i + 1;
            }
        }
        buf.extend_from_slice(&chunk[start..n]);
        if buf.len() > MAX_MESSAGE {
            conn.close("the browser sent a message larger than 256 MiB");
            return;
        }
    }
    conn.close("the browser closed its pipe");
}

/// How long calls that only set things up may take.
pub const SETUP: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps what the connection writes, for the test to answer.
    struct Kept(Arc<Mutex<Vec<Value>>>);

    impl Sink for Kept {
        fn send(&mut self, message: &[u8]) -> std::io::Result<()> {
            lock(&self.0).push(serde_json::from_slice(message).map_err(std::io::Error::other)?);
            Ok(())
        }
    }

    /// The id of the call written on `session`, once it is written.
    fn written_on(sent: &Mutex<Vec<Value>>, session: &str) -> u64 {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let found = lock(sent)
                .iter()
                .find(|m| m.get("sessionId").and_then(Value::as_str) == Some(session))
                .and_then(|m| m["id"].as_u64());
            if let Some(id) = found {
                return id;
            }
            assert!(Instant::now() < until, "no call was written on {session}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_detached_session_fails_its_waiting_calls_at_once_and_only_its_own() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let conn = Connection::start(Box::new(Kept(sent.clone())), |_| {});
        let call = |session: &'static str| {
            let c = conn.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let r = c.call(
                    Some(session),
                    "Input.dispatchMouseEvent",
                    json!({}),
                    started + Duration::from_secs(30),
                );
                (r, started.elapsed())
            })
        };
        let closing = call("popup");
        let staying = call("opener");
        written_on(&sent, "popup");
        let other = written_on(&sent, "opener");
        conn.dispatch(br#"{"method":"Target.detachedFromTarget","params":{"sessionId":"popup"}}"#);
        let (r, waited) = closing.join().expect("the call's thread");
        assert!(
            matches!(r, Err(CdpError::Detached { ref method }) if method == "Input.dispatchMouseEvent"),
            "{r:?}"
        );
        assert!(
            waited < Duration::from_secs(10),
            "waited {waited:?} for a detached page"
        );
        // Control: the other session's call still waits for, and gets, its own answer.
        conn.dispatch(format!(r#"{{"id":{other},"result":{{"ok":true}}}}"#).as_bytes());
        let (r, _) = staying.join().expect("the call's thread");
        assert_eq!(r.expect("the opener's answer"), json!({ "ok": true }));
        // A later call on the detached session fails without waiting.
        let r = conn.call(
            Some("popup"),
            "Input.dispatchKeyEvent",
            json!({}),
            Instant::now() + Duration::from_secs(30),
        );
        assert!(matches!(r, Err(CdpError::Detached { .. })), "{r:?}");
    }
}
