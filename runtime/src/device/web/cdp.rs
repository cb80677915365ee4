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

pub struct Connection {
    sink: Mutex<Box<dyn Sink>>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, (String, SyncSender<Reply>)>>,
    listeners: Mutex<HashMap<String, Listener>>,
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
        let (tx, rx) = sync_channel(1);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.pending).insert(id, (method.to_string(), tx));
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
            let Some((method, tx)) = lock(&self.pending).remove(&id) else {
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
        let listener = lock(&self.listeners).get(session).cloned();
        if let Some(l) = listener {
            let params = msg.get("params").unwrap_or(&Value::Null);
            l(method, params);
        }
    }

    /// Marks the connection closed and fails every waiting call.
    pub(crate) fn close(&self, why: &str) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        *lock(&self.why_closed) = why.to_string();
        let waiting: Vec<_> = lock(&self.pending).drain().collect();
        for (_, (_, tx)) in waiting {
            let _ = tx.try_send(Err(CdpError::Closed(why.to_string())));
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
