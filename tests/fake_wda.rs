//! A fake iPhone behind WebDriverAgent's HTTP API (the XCUITest server Appium runs on iOS): an
//! HTTP/1.1 server on 127.0.0.1 (port 0, keep-alive, one thread per connection) answering WDA's
//! routes with WDA's JSON shapes (`routes`, `element_routes`), in front of one app: the simulated
//! app of an `app.yaml` ([`SimApp`]) or a Contacts app ([`Contacts`]). It stops when the `FakeWda`
//! is dropped: no thread or socket is left listening.
//!
//! Test hooks: every request recorded, session and source counters, delays, a WDA that hangs
//! ([`FakeWda::go_silent`]) or dies ([`FakeWda::stop`]), and everything the keyboard typed.
//! Several fakes can run at once, each its own phone.

mod actions;
mod app;
pub mod client;
mod contacts;
mod contacts_ui;
mod element;
mod element_routes;
mod http;
mod phone;
mod routes;
mod sim_app;

use std::collections::HashMap;
use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use app::{FakeApp, Screen};
pub use contacts::{Contacts, Person};
pub use element::{Element, Rect, keyboard};
pub use sim_app::SimApp;

use phone::Phone;

/// One request as received: method, target (path and query), body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: String,
}

struct Shared {
    udid: String,
    phone: Mutex<Phone>,
    requests: Mutex<Vec<Request>>,
    sessions_created: AtomicUsize,
    sessions_deleted: AtomicUsize,
    source_requests: AtomicUsize,
    delay: Mutex<Duration>,
    source_delay: Mutex<Duration>,
    silent: AtomicBool,
    stopped: AtomicBool,
    /// Open connections, to close them all when the fake stops.
    conns: Mutex<HashMap<u64, TcpStream>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    fn phone(&self) -> MutexGuard<'_, Phone> {
        self.phone.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct FakeWda {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

impl FakeWda {
    /// Serves `app` on a phone with a fresh udid.
    pub fn start(app: impl FakeApp + 'static) -> FakeWda {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let udid = format!("FA4E{:04X}-0000-4000-8000-{n:012X}", std::process::id() & 0xffff);
        FakeWda::with_udid(&udid, app)
    }

    /// Serves `app` on a phone named `udid`.
    pub fn with_udid(udid: &str, app: impl FakeApp + 'static) -> FakeWda {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            udid: udid.to_owned(),
            phone: Mutex::new(Phone::new(Box::new(app))),
            requests: Mutex::new(Vec::new()),
            sessions_created: AtomicUsize::new(0),
            sessions_deleted: AtomicUsize::new(0),
            source_requests: AtomicUsize::new(0),
            delay: Mutex::new(Duration::ZERO),
            source_delay: Mutex::new(Duration::ZERO),
            silent: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            workers: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let accept = std::thread::spawn(move || {
            for (n, conn) in (0u64..).zip(listener.incoming()) {
                if s.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                if let Ok(clone) = conn.try_clone() {
                    lock(&s.conns).insert(n, clone);
                }
                let w = s.clone();
                let worker = std::thread::spawn(move || {
                    let _ = serve(&w, conn);
                    lock(&w.conns).remove(&n);
                });
                lock(&s.workers).push(worker);
            }
        });
        FakeWda {
            addr,
            shared,
            accept: Mutex::new(Some(accept)),
        }
    }

    /// The demo app (`trailmaps/demo/app.yaml`).
    pub fn demo() -> FakeWda {
        FakeWda::start(SimApp::demo())
    }

    /// The Contacts app with the simulator's seeded contacts.
    pub fn contacts() -> FakeWda {
        FakeWda::start(Contacts::new())
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn udid(&self) -> &str {
        &self.shared.udid
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.requests).clone()
    }

    pub fn sessions_created(&self) -> usize {
        self.shared.sessions_created.load(Ordering::SeqCst)
    }

    /// Sessions ended by `DELETE /session/{id}` (not those a new session replaced).
    pub fn sessions_deleted(&self) -> usize {
        self.shared.sessions_deleted.load(Ordering::SeqCst)
    }

    /// `GET /source` requests, with or without a session.
    pub fn source_requests(&self) -> usize {
        self.shared.source_requests.load(Ordering::SeqCst)
    }

    /// The active session's id.
    pub fn session_id(&self) -> Option<String> {
        self.shared.phone().session.as_ref().map(|s| s.id.clone())
    }

    /// Everything the keyboard got, exactly: `/wda/keys`, typing into elements, keys tapped.
    pub fn typed(&self) -> String {
        self.shared.phone().typed.clone()
    }

    /// URLs opened with `POST /session/{id}/url`.
    pub fn opened_urls(&self) -> Vec<String> {
        self.shared.phone().urls.clone()
    }

    /// The page source as `GET /source` answers it now (no scope).
    pub fn source(&self) -> String {
        self.shared.phone().source(None, &[])
    }

    /// Every answer waits `d` first.
    pub fn set_delay(&self, d: Duration) {
        *lock(&self.shared.delay) = d;
    }

    /// Page source answers wait `d` more.
    pub fn set_source_delay(&self, d: Duration) {
        *lock(&self.shared.source_delay) = d;
    }

    /// A WDA that hangs: connections are still accepted and requests read, never answered.
    pub fn go_silent(&self) {
        self.shared.silent.store(true, Ordering::SeqCst);
    }

    /// A WDA that died: the listener and every open connection close; the port refuses.
    pub fn stop(&self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        let Some(accept) = lock(&self.accept).take() else {
            return;
        };
        // Wake the accept loop so it sees `stopped` and drops the listener.
        let _ = TcpStream::connect(self.addr);
        let _ = accept.join();
        for conn in lock(&self.shared.conns).values() {
            let _ = conn.shutdown(std::net::Shutdown::Both);
        }
        let workers = std::mem::take(&mut *lock(&self.shared.workers));
        for w in workers {
            let _ = w.join();
        }
    }
}

impl Drop for FakeWda {
    fn drop(&mut self) {
        self.stop();
    }
}

fn is_source(req: &http::Incoming) -> bool {
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    req.method == "GET" && matches!(segs.as_slice(), ["source"] | ["session", _, "source"])
}

/// Sleeps `d`, waking early when the fake stops; `false` then.
fn pause(shared: &Shared, d: Duration) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if shared.stopped.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(10)));
    }
    !shared.stopped.load(Ordering::SeqCst)
}

fn serve(shared: &Shared, conn: TcpStream) -> std::io::Result<()> {
    let mut out = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    while let Some(req) = http::read(&mut reader)? {
        if shared.stopped.load(Ordering::SeqCst) {
            break;
        }
        let target = if req.query.is_empty() {
            req.path.clone()
        } else {
            format!("{}?{}", req.path, req.query)
        };
        lock(&shared.requests).push(Request {
            method: req.method.clone(),
            path: target,
            body: req.body.clone(),
        });
        let source = is_source(&req);
        if source {
            shared.source_requests.fetch_add(1, Ordering::SeqCst);
        }
        let mut wait = *lock(&shared.delay);
        if source {
            wait += *lock(&shared.source_delay);
        }
        if !pause(shared, wait) {
            break;
        }
        if shared.silent.load(Ordering::SeqCst) {
            continue;
        }
        let (status, body) = routes::answer(shared, &req);
        http::write(&mut out, status, &body, req.close)?;
        if req.close {
            break;
        }
    }
    Ok(())
}
