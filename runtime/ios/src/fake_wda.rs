//! A tiny HTTP server on 127.0.0.1:0 for the tests: one request per connection, each answered by
//! the test's handler (canned JSON, an HTML page, or no answer at all), every request logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub body: String,
}

impl Req {
    pub fn is(&self, method: &str, path: &str) -> bool {
        self.method == method && self.path == path
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// How the server answers a request.
pub enum Reply {
    /// A status and a JSON body.
    Json(u16, String),
    /// A `200` HTML page (a captive portal, a proxy's error page).
    Html,
    /// Reads the request and never answers, until the server is dropped.
    Hang,
}

/// `{"value": <value>, "sessionId": ...}` with status 200.
pub fn ok(value: serde_json::Value) -> Reply {
    Reply::Json(
        200,
        serde_json::json!({"value": value, "sessionId": SESSION}).to_string(),
    )
}

/// WDA's error answer.
pub fn wda_error(status: u16, error: &str, message: &str) -> Reply {
    let body =
        serde_json::json!({"value": {"error": error, "message": message, "traceback": ""}, "sessionId": SESSION});
    Reply::Json(status, body.to_string())
}

pub const SESSION: &str = "5E55-10N";

/// What a simulated iPhone's WDA answers to the calls a connect makes, and `null` to the rest.
pub fn standard(r: &Req) -> Reply {
    let s = format!("/session/{SESSION}");
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/status") => ok(serde_json::json!({
            "ready": true, "message": "WebDriverAgent is ready to accept commands", "state": "success",
            "os": {"name": "iOS", "version": "17.4", "sdkVersion": "17.4", "testmanagerdVersion": 28},
            "ios": {"simulatorVersion": "17.4", "ip": null},
            "build": {"time": "Jan 1 2025", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner"},
            "device": "iPhone",
        })),
        ("POST", "/session") => ok(serde_json::json!({"sessionId": SESSION, "capabilities": {"device": "iPhone"}})),
        ("GET", p) if p == format!("{s}/window/size") => ok(serde_json::json!({"width": 393, "height": 852})),
        ("GET", p) if p == format!("{s}/wda/screen") => ok(serde_json::json!({
            "screenSize": {"width": 393, "height": 852}, "statusBarSize": {"width": 393, "height": 54}, "scale": 3,
        })),
        _ => ok(serde_json::Value::Null),
    }
}

type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

pub struct FakeWda {
    pub url: String,
    log: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
    port: u16,
}

impl FakeWda {
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> FakeWda {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a test port");
        let port = listener.local_addr().expect("its address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (l, s) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (l, s, h) = (l.clone(), s.clone(), handler.clone());
                std::thread::spawn(move || serve(conn, &l, &s, &*h));
            }
        });
        FakeWda {
            url: format!("http://127.0.0.1:{port}"),
            log,
            stop,
            port,
        }
    }

    pub fn requests(&self) -> Vec<Req> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub fn options(&self, udid: Option<&str>) -> trailblaze_core::device::spec::IosOptions {
        trailblaze_core::device::spec::IosOptions {
            udid: udid.map(str::to_string),
            wda: self.url.clone(),
        }
    }
}

impl Drop for FakeWda {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(conn: TcpStream, log: &Mutex<Vec<Req>>, stop: &AtomicBool, handler: &Handler) {
    let Some(req) = read_request(&conn) else { return };
    if let Ok(mut l) = log.lock() {
        l.push(req.clone());
    }
    let (status, kind, body) = match handler(&req) {
        Reply::Json(status, body) => (status, "application/json;charset=UTF-8", body),
        Reply::Html => (200, "text/html", "<html><body>Bad gateway</body></html>".to_string()),
        Reply::Hang => {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            return;
        }
    };
    let mut conn = conn;
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
}

fn read_request(conn: &TcpStream) -> Option<Req> {
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Req {
        method,
        path,
        body: String::from_utf8(body).ok()?,
    })
}
