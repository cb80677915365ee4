//! The callback endpoint of one session: `POST /scripting/callback` on 127.0.0.1 (an ephemeral port),
//! with the session's bearer token. A request is handed to the session's thread over a channel and
//! answered with the JSON envelope `{"ok":true,"value":...}` / `{"ok":false,"error":"..."}`.
//! No token → 401; a token that is not this session's → 403.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The path scripts post to.
pub const CALLBACK_PATH: &str = "/scripting/callback";

/// One callback, as the session thread receives it.
pub struct Request {
    pub body: Value,
    pub reply: oneshot::Sender<Result<Value, String>>,
}

/// What the session thread waits on while a subprocess tool runs: callbacks and exits.
pub enum Msg {
    Callback(Request),
    Exited {
        run: u64,
        stdout: Vec<u8>,
        status: Option<i32>,
    },
    /// A line the process wrote on stderr: a `console.*` call (`level` names it) or raw output.
    Console {
        run: u64,
        level: String,
        text: String,
    },
}

/// One process-wide runtime for every session's endpoint: one worker thread is plenty for loopback.
fn tokio_runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("trailblaze-callback")
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("cannot start the callback server's runtime: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The runs in progress, shared with the server so it refuses a callback of a run that has ended
/// instead of queueing it for a session that is not listening.
pub type ActiveRuns = Arc<Mutex<Vec<u64>>>;

#[derive(Clone)]
struct Shared {
    token: String,
    to_session: mpsc::Sender<Msg>,
    active: ActiveRuns,
}

/// A running endpoint; dropping it stops the server.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Server {
    /// Binds 127.0.0.1 only (never another interface) and serves until dropped.
    pub fn start(token: String, to_session: mpsc::Sender<Msg>, active: ActiveRuns) -> Result<Server, String> {
        let rt = tokio_runtime()?;
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", 0)))
            .map_err(|e| format!("cannot bind the callback endpoint on 127.0.0.1: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let app = Router::new().route(CALLBACK_PATH, post(callback)).with_state(Shared {
            token,
            to_session,
            active,
        });
        let (stop, stopped) = oneshot::channel::<()>();
        rt.spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Server { addr, stop: Some(stop) })
    }

    pub fn url(&self) -> String {
        format!("http://{}{CALLBACK_PATH}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Compares without an early exit, so timing says nothing about how much of a token matched.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn callback(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(presented) = presented else {
        return (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
    };
    if !same_token(presented, &shared.token) {
        return (StatusCode::FORBIDDEN, "this token is not this session's\n").into_response();
    }
    let envelope = match serde_json::from_slice::<Value>(&body) {
        Err(e) => json!({ "ok": false, "error": format!("the request is not JSON: {e}") }),
        Ok(body) if !is_active(&shared.active, &body) => {
            json!({ "ok": false, "error": "the call this request belongs to has ended" })
        }
        Ok(body) => {
            let (reply, answer) = oneshot::channel();
            if shared.to_session.send(Msg::Callback(Request { body, reply })).is_err() {
                json!({ "ok": false, "error": "the session has ended" })
            } else {
                match answer.await {
                    Ok(Ok(value)) => json!({ "ok": true, "value": value }),
                    Ok(Err(error)) => json!({ "ok": false, "error": error }),
                    Err(_) => json!({ "ok": false, "error": "the call has ended" }),
                }
            }
        }
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        envelope.to_string(),
    )
        .into_response()
}

fn is_active(active: &ActiveRuns, body: &Value) -> bool {
    let run = body.get("run").and_then(Value::as_u64);
    run.is_some_and(|r| active.lock().is_ok_and(|a| a.contains(&r)))
}
