//! What stands before `mcp --http`'s sessions: any local process can reach a loopback port, so a
//! request needs the server's bearer token (401 without it), and the live sessions are capped (a
//! new one past the cap is refused with 503 and says why), each ending after an idle time (the
//! session layer's keep-alive). The `Host` and `Origin` checks are rmcp's, configured in `super`;
//! the limits on connections that have not shown the token yet are [`super::conns`]'.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The token and the count of live sessions, shared by the middleware and the sessions.
pub struct Gate {
    token: String,
    cap: usize,
    idle_secs: u64,
    live: Arc<AtomicUsize>,
}

/// A live session's place under the cap, given back when its handler is dropped (the client closed
/// it, or it was idle past the timeout).
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    pub fn new(token: String, cap: usize, idle_secs: u64) -> Gate {
        Gate {
            token,
            cap: cap.max(1),
            idle_secs,
            live: Arc::default(),
        }
    }

    /// A place for a new session, or `None` at the cap (strict: taken atomically).
    pub fn take_slot(&self) -> Option<Slot> {
        self.live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.cap).then_some(n + 1))
            .ok()
            .map(|_| Slot(self.live.clone()))
    }

    fn full(&self) -> bool {
        self.live.load(Ordering::SeqCst) >= self.cap
    }

    fn authorized(&self, value: Option<&HeaderValue>) -> bool {
        let given = value
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        trailblaze::token::same(given.as_bytes(), self.token.as_bytes())
    }
}

/// The middleware: the token first, then the cap for a request that opens a session (a POST with
/// no `Mcp-Session-Id`).
pub async fn check(State(gate): State<Arc<Gate>>, req: Request, next: Next) -> Response {
    if !gate.authorized(req.headers().get(header::AUTHORIZATION)) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "trailblaze mcp: send `Authorization: Bearer <token>` (the token `mcp --http` printed at \
             its start, or the one given with --token / TRAILBLAZE_MCP_TOKEN)\n",
        )
            .into_response();
    }
    // The connection proved itself: it no longer counts against the waiting connections' cap.
    if let Some(conn) = req.extensions().get::<super::conns::Conn>() {
        conn.trusted();
    }
    let opens = req.method() == Method::POST && !req.headers().contains_key("mcp-session-id");
    if opens && gate.full() {
        let why = format!(
            "trailblaze mcp: {} live sessions, the most this server keeps (--max-sessions); close one \
             (DELETE with its Mcp-Session-Id) or wait until one has been idle for {} s\n",
            gate.cap, gate.idle_secs
        );
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], why).into_response();
    }
    next.run(req).await
}

/// A fresh token: 32 random bytes as hex.
pub fn new_token() -> std::io::Result<String> {
    trailblaze::token::random_hex(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_compared_whole_and_slots_are_capped() {
        let gate = Gate::new("abc123".into(), 2, 60);
        let bearer = |s: &str| HeaderValue::from_str(s).expect("header");
        assert!(gate.authorized(Some(&bearer("Bearer abc123"))));
        for bad in [
            "Bearer abc12",
            "Bearer abc1234",
            "abc123",
            "Bearer ABC123",
            "Basic abc123",
        ] {
            assert!(!gate.authorized(Some(&bearer(bad))), "{bad}");
        }
        assert!(!gate.authorized(None));
        let (a, b) = (gate.take_slot(), gate.take_slot());
        assert!(a.is_some() && b.is_some() && gate.full());
        assert!(gate.take_slot().is_none(), "the cap holds");
        drop(a);
        assert!(gate.take_slot().is_some(), "a closed session gives its place back");
    }
}
