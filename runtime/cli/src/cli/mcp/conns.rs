//! `mcp --http`'s connections before a request proves them trusted. Any local process can open a
//! connection to a loopback port, so a connection must send a request's headers within the header
//! timeout (counted from its start, and again after each response: an idle keep-alive connection
//! ends the same way), and at most `max_pending` connections wait without having sent a request
//! with the token: a new one past that closes the oldest waiting, which had the longest to speak.
//! A connection that sent the token once is no longer counted (the session layer and its cap
//! govern it), so idle or half-sent connections cannot crowd out a client with the token.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Notify;
use tower::ServiceExt as _;

/// The limits on connections that have not yet sent the token.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub max_pending: usize,
}

/// The connections waiting for a request with the token, oldest first.
struct Waiting {
    queue: Mutex<VecDeque<(u64, Arc<Notify>)>>,
    next: AtomicU64,
    cap: usize,
}

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Arc<Notify>)>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection's place, closing the oldest waiting one past the cap; what tells it to close.
    fn admit(self: &Arc<Self>) -> (Conn, Arc<Notify>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let close = Arc::new(Notify::new());
        let mut queue = self.lock();
        queue.push_back((id, close.clone()));
        while queue.len() > self.cap {
            if let Some((_, oldest)) = queue.pop_front() {
                // Stored if its task is not waiting yet: it closes as soon as it is.
                oldest.notify_one();
            }
        }
        (
            Conn {
                id,
                waiting: self.clone(),
            },
            close,
        )
    }

    fn remove(&self, id: u64) {
        self.lock().retain(|(i, _)| *i != id);
    }
}

/// A connection, as the requests on it carry it (an extension): the gate marks it trusted.
#[derive(Clone)]
pub struct Conn {
    id: u64,
    waiting: Arc<Waiting>,
}

impl Conn {
    /// A request on this connection carried the token: it no longer counts as waiting.
    pub fn trusted(&self) {
        self.waiting.remove(self.id);
    }
}

/// Serves `app` on `listener` under `limits`, each connection on a task of its own, until the
/// listener fails for good.
pub async fn serve(listener: tokio::net::TcpListener, app: axum::Router, limits: Limits) -> std::io::Result<()> {
    let waiting = Arc::new(Waiting {
        queue: Mutex::default(),
        next: AtomicU64::new(0),
        cap: limits.max_pending.max(1),
    });
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of descriptors (EMFILE) or a connection reset before it was taken: try again
            // shortly instead of spinning.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let (conn, close) = waiting.admit();
        let app = app.clone();
        tokio::spawn(async move {
            let on_requests = conn.clone();
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(on_requests.clone());
                app.clone().oneshot(req.map(axum::body::Body::new))
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
            let serving = http.serve_connection(TokioIo::new(stream), service);
            // Dropping the connection closes its socket.
            tokio::select! {
                _ = serving => {}
                _ = close.notified() => {}
            }
            conn.trusted();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_the_oldest_waiting_connection_is_told_to_close_and_a_trusted_one_never_is() {
        let waiting = Arc::new(Waiting {
            queue: Mutex::default(),
            next: AtomicU64::new(0),
            cap: 2,
        });
        let (a, close_a) = waiting.admit();
        let (b, close_b) = waiting.admit();
        a.trusted();
        let (_c, close_c) = waiting.admit();
        // `a` left the queue when trusted: two wait, none closed.
        assert_eq!(waiting.lock().len(), 2);
        let (_d, _) = waiting.admit();
        assert_eq!(waiting.lock().len(), 2);
        let told = |n: &Arc<Notify>| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            rt.block_on(async {
                tokio::time::timeout(Duration::from_millis(10), n.notified())
                    .await
                    .is_ok()
            })
        };
        assert!(told(&close_b), "the oldest waiting is closed");
        assert!(
            !told(&close_a) && !told(&close_c),
            "a trusted one and a newer one are not"
        );
        drop(b);
    }
}
