//! `ctx.fetch` (and `fetch` in QuickJS): the network through the host. Against real HTTP servers on
//! 127.0.0.1: an allowed origin answers, with a secret header the server sees and no output holds;
//! an origin off the list is refused by name before any connection (its server sees nothing); a
//! huge response is cut at the cap, a slow one at the time cap or the call's deadline; each
//! exchange is one `fetch` line in the session log. The same under `runtime: subprocess`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze::Session;
use trailblaze_e2e::{CANARY, Fixture, log_events, session_with, text, traces, trailblaze_bin};
use trailblaze_host_functions::{HostRegistry, SecretStore};

/// A small HTTP/1.1 server on 127.0.0.1 that records what it was sent. It stops when dropped, and
/// on its own after two minutes whatever happens.
struct Server {
    port: u16,
    /// Every request as received (head and body).
    seen: Arc<Mutex<Vec<String>>>,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, c, st) = (seen.clone(), connections.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let born = Instant::now();
            while !st.load(Ordering::Relaxed) && born.elapsed() < Duration::from_secs(120) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        c.fetch_add(1, Ordering::Relaxed);
                        let s = s.clone();
                        std::thread::spawn(move || serve(stream, &s));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server {
            port,
            seen,
            connections,
            stop,
            thread: Some(thread),
        }
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> String {
        self.seen.lock().map(|s| s.join("\n----\n")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request: read it, record it, answer by path.
fn serve(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v.trim().to_string())
    };
    let length: usize = header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).into_owned();
    if let Ok(mut s) = seen.lock() {
        s.push(format!("{head}{body}"));
    }
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let auth = header("authorization").unwrap_or_default();
    let (status, extra, body): (&str, String, Vec<u8>) = match path.as_str() {
        "/hello" => (
            "200 OK",
            format!("content-type: application/json\r\nx-seen: {auth}\r\n"),
            json!({ "hi": "there", "marker": "body-7f3a9c", "body": body })
                .to_string()
                .into_bytes(),
        ),
        "/huge" => ("200 OK", String::new(), vec![b'x'; 2 << 20]),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(3));
            ("200 OK", String::new(), b"late".to_vec())
        }
        "/moved" => ("302 Found", "location: http://198.51.100.7/\r\n".into(), Vec::new()),
        _ => ("404 Not Found", String::new(), b"no".to_vec()),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.write_all(&body);
}

const TOOL: &str = r#"
import { trailblaze } from "@trailblaze/scripting";

/** Fetches a URL and says what came back, or the error. */
export const get = trailblaze.tool<
  { url: string; method?: string; auth?: string; body?: string; global?: boolean },
  unknown
>(async (input, ctx) => {
  const headers: Record<string, string> = {};
  if (input.auth !== undefined) headers["Authorization"] = input.auth;
  const init = { method: input.method, headers, body: input.body };
  try {
    const r = input.global ? await (globalThis as any).fetch(input.url, init) : await ctx.fetch(input.url, init);
    const text = await r.text();
    const parsed = r.headers.get("content-type") === "application/json" ? await r.json() : null;
    console.log("fetched", r.status, r.headers.get("x-seen"));
    return { ok: r.ok, status: r.status, seen: r.headers.get("x-seen"), length: text.length, hi: parsed?.hi ?? null };
  } catch (e) {
    return { name: (e as Error).name, error: (e as Error).message };
  }
});
"#;

/// Runs out of time fetching: its own budget is short.
const SLOW_TOOL: &str = r#"
import { trailblaze } from "@trailblaze/scripting";

/** Fetches and does not catch. */
export const slowGet = trailblaze.tool<{ url: string }, unknown>(async (input, ctx) => {
  const r = await ctx.fetch(input.url);
  return { status: r.status };
});
"#;

/// A trailmap allowing `allow`, with the tools (pinned to Node when `subprocess`).
fn fixture(allow: &[String], extra_network: &str, subprocess: bool) -> Fixture {
    let f = Fixture::new("net");
    let list = allow.iter().map(|o| format!("\"{o}\"")).collect::<Vec<_>>().join(", ");
    f.file(
        "trailmap.yaml",
        &format!("id: net\nnetwork:\n  allow: [{list}]\n{extra_network}"),
    );
    f.tool("get", TOOL);
    f.tool("slowGet", SLOW_TOOL);
    let runtime = if subprocess { "runtime: subprocess\n" } else { "" };
    if subprocess {
        f.file("tools/get.tool.yaml", runtime);
    }
    f.file("tools/slowGet.tool.yaml", &format!("{runtime}timeoutMs: 1500\n"));
    f
}

fn session(f: &Fixture) -> Session {
    let secrets = SecretStore::from_pairs([("API_TOKEN".to_string(), CANARY.to_string())]);
    session_with(f, secrets, HostRegistry::builtin()).1
}

fn fetch_events(f: &Fixture) -> Vec<Value> {
    log_events(&f.out())
        .into_iter()
        .filter(|e| e["event"] == "fetch")
        .collect()
}

/// The rules, held the same way by both runtimes.
fn the_rules_hold(subprocess: bool) {
    traces();
    let allowed = Server::start();
    let other = Server::start();
    let f = fixture(
        &[allowed.origin()],
        "  max_response_bytes: 65536\n  timeout_ms: 400\n",
        subprocess,
    );
    let s = session(&f);
    let call = |args: Value| s.call("get", args).expect("the tool returns");

    // An allowed origin answers; the secret in the header and the body reaches the server only.
    let r = call(json!({
        "url": format!("{}/hello", allowed.origin()),
        "method": "post",
        "auth": "Bearer {{secret:API_TOKEN}}",
        "body": "{\"token\":\"{{secret:API_TOKEN}}\"}",
    }));
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["ok"], true);
    let seen = allowed.seen();
    assert!(seen.starts_with("POST /hello HTTP/1.1"), "{seen}");
    assert!(
        seen.contains(&format!("Bearer {CANARY}")),
        "the server sees the secret: {seen}"
    );
    assert!(seen.contains(&format!("{{\"token\":\"{CANARY}\"}}")), "{seen}");
    // The server echoed it back (header and body): the script gets `***`, as every reply does.
    assert_eq!(r["seen"], "Bearer ***", "{r}");
    assert_eq!(r["hi"], "there", "json() parsed the body");
    assert!(!r.to_string().contains(CANARY), "{r}");

    // Another origin is refused by name before any connection: its server sees nothing.
    let r = call(json!({ "url": format!("{}/hello", other.origin()) }));
    let error = r["error"].as_str().unwrap_or_default();
    assert_eq!(r["name"], "TrailblazeHostError", "{r}");
    assert!(
        error.contains(&format!(
            "fetch: {} is not in this trailmap's `network.allow`",
            other.origin()
        )),
        "{error}"
    );
    assert!(error.contains(&format!("(allowed: {})", allowed.origin())), "{error}");
    assert!(error.contains("refused before connecting"), "{error}");
    assert_eq!(
        other.connections.load(Ordering::Relaxed),
        0,
        "the refused origin's server saw a connection"
    );
    // The same host on another scheme or port is another origin.
    let r = call(json!({ "url": format!("https://127.0.0.1:{}/hello", allowed.port) }));
    assert!(
        r["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not in this trailmap")),
        "{r}"
    );

    // A huge response stops at the cap.
    let r = call(json!({ "url": format!("{}/huge", allowed.origin()) }));
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "GET {}: the response body exceeds 65536 bytes",
            allowed.origin()
        )),
        "{r}"
    );
    // A slow one at the time cap (`network.timeout_ms`), well before it would have answered (3 s).
    // Timed from a session whose engine (and Node worker) the calls above have started.
    let started = Instant::now();
    let r = call(json!({ "url": format!("{}/slow", allowed.origin()) }));
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("no complete response within 400 ms (`network.timeout_ms`)"),
        "{r}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    // A redirect is handed back, not followed (its target is off the list).
    let r = call(json!({ "url": format!("{}/moved", allowed.origin()) }));
    assert_eq!(r["status"], 302, "{r}");
    assert_eq!(r["ok"], false);
    // A placeholder naming no secret is an error naming it; a bad method is named too.
    let r = call(json!({ "url": format!("{}/hello", allowed.origin()), "auth": "{{secret:NOPE}}" }));
    assert!(
        r["error"].as_str().is_some_and(|e| e.contains("unknown secret `NOPE`")),
        "{r}"
    );
    let r = call(json!({ "url": format!("{}/hello", allowed.origin()), "method": "TRACE" }));
    assert!(
        r["error"]
            .as_str()
            .is_some_and(|e| e.contains("`method` must be one of")),
        "{r}"
    );

    // Each exchange is one log line: method, origin, status, time; never a header or a body.
    let events = fetch_events(&f);
    assert_eq!(events.len(), 8, "{events:?}");
    assert_eq!(events[0]["method"], "POST");
    assert_eq!(events[0]["origin"], allowed.origin());
    assert_eq!(events[0]["status"], 200);
    assert!(events[0]["ms"].as_f64().is_some());
    assert_eq!(events[1]["origin"], other.origin());
    assert_eq!(events[1]["status"], Value::Null);
    assert!(
        events
            .iter()
            .all(|e| e.get("body").is_none() && e.get("headers").is_none())
    );
    let everything = format!("{}{}", f.all_output(), traces());
    assert!(
        !everything.contains(CANARY),
        "a secret value reached the log or a trace"
    );
    assert!(
        everything.contains("fetched 200"),
        "the console line was logged (control)"
    );
    assert!(!everything.contains("body-7f3a9c"), "a response body reached the log");
}

#[test]
fn fetch_reaches_only_listed_origins_with_secrets_resolved_at_the_host_in_quickjs() {
    the_rules_hold(false);
}

#[test]
fn fetch_keeps_the_same_rules_under_runtime_subprocess() {
    the_rules_hold(true);
}

#[test]
fn the_global_fetch_in_quickjs_is_ctx_fetch() {
    the_global_fetch_is_ctx_fetch(false);
}

/// Node's own `fetch` reached any address, with none of the rules: a tool gets `ctx.fetch` instead.
#[test]
fn the_global_fetch_under_runtime_subprocess_is_ctx_fetch_too() {
    the_global_fetch_is_ctx_fetch(true);
}

fn the_global_fetch_is_ctx_fetch(subprocess: bool) {
    let allowed = Server::start();
    let f = fixture(&[allowed.origin()], "", subprocess);
    let s = session(&f);
    let r = s
        .call(
            "get",
            json!({ "url": format!("{}/hello", allowed.origin()), "global": true }),
        )
        .expect("returns");
    assert_eq!(r["status"], 200, "{r}");
    let other = Server::start();
    let r = s
        .call(
            "get",
            json!({ "url": format!("{}/hello", other.origin()), "global": true }),
        )
        .expect("returns");
    assert!(
        r["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not in this trailmap")),
        "{r}"
    );
    assert_eq!(other.connections.load(Ordering::Relaxed), 0);
}

#[test]
fn nothing_is_reachable_by_default_and_a_slow_server_ends_at_the_calls_deadline() {
    let server = Server::start();
    // No `network:` at all: nothing is allowed.
    let f = Fixture::new("bare");
    f.tool("get", TOOL);
    let s = session(&f);
    let r = s
        .call("get", json!({ "url": format!("{}/hello", server.origin()) }))
        .expect("returns");
    assert!(
        r["error"].as_str().is_some_and(|e| e.contains("(allowed: none)")),
        "{r}"
    );
    assert_eq!(server.connections.load(Ordering::Relaxed), 0);

    // Allowed, but the tool's own budget (1.5 s) ends before the server answers (3 s). Timed once
    // the session's engine is up (a first call made it), so the bound is the budget's alone.
    let f = fixture(&[server.origin()], "", false);
    let s = session(&f);
    let warm = s
        .call("get", json!({ "url": format!("{}/hello", server.origin()) }))
        .expect("returns");
    assert_eq!(warm["status"], 200, "{warm}");
    let reached = server.connections.load(Ordering::Relaxed);
    let started = Instant::now();
    let e = s
        .call("slowGet", json!({ "url": format!("{}/slow", server.origin()) }))
        .expect_err("out of time");
    let took = started.elapsed();
    assert!(
        e.to_string()
            .contains("slowGet: exceeded its time limit of 1500 ms (timeoutMs)"),
        "{e}"
    );
    assert!(took < Duration::from_millis(2600), "{took:?}");
    assert!(
        server.connections.load(Ordering::Relaxed) > reached,
        "the allowed server was reached by the slow call (control)"
    );
    // The session stays usable.
    let r = s
        .call("get", json!({ "url": format!("{}/hello", server.origin()) }))
        .expect("returns");
    assert_eq!(r["status"], 200, "{r}");
}

#[test]
fn network_allow_is_read_strictly_with_file_line_and_column() {
    let f = Fixture::new("net");
    f.file(
        "trailmap.yaml",
        "id: net\nnetwork:\n  allow:\n    - http://127.0.0.1:8080\n    - http://127.0.0.1:8080/api\n    - ftp://files.example.com\n  max_response_bytes: 0\n",
    );
    let e = trailblaze::open(&f.root(), Default::default()).err().expect("refused");
    let e = e.to_string();
    assert!(e.contains("trailmap.yaml:5:7"), "{e}");
    assert!(
        e.contains("`network.allow[1]`: an origin is `scheme://host[:port]` with nothing after it"),
        "{e}"
    );
    assert!(e.contains("trailmap.yaml:6:7"), "{e}");
    assert!(e.contains("`network.allow[2]`: only `http://` and `https://`"), "{e}");
    assert!(e.contains("`network.max_response_bytes`: must be between 1 and"), "{e}");
    // An unknown key names the nearest.
    f.file("trailmap.yaml", "id: net\nnetwork:\n  alow: []\n");
    let e = trailblaze::open(&f.root(), Default::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("trailmap.yaml:3:3") && e.contains("alow"), "{e}");
    // Control: valid origins load.
    f.file(
        "trailmap.yaml",
        "id: net\nnetwork:\n  allow: [\"http://127.0.0.1:8080\", \"https://staging.example.com\"]\n",
    );
    assert!(trailblaze::open(&f.root(), Default::default()).is_ok());
}

#[test]
fn through_the_cli_the_server_sees_the_secret_and_no_output_holds_it() {
    // Built first: the server stops by itself after two minutes, and a cold build takes longer.
    let bin = trailblaze_bin();
    let server = Server::start();
    let f = fixture(&[server.origin()], "", false);
    f.file(
        "trails/call.trail.yaml",
        &format!(
            "config:\n  id: net/call\n  target: net\ntrail:\n  - step: Call the API\n    recording:\n      tools:\n        - get: {{ url: \"{}/hello\", auth: \"Bearer {{{{secret:API_TOKEN}}}}\" }}\n",
            server.origin()
        ),
    );
    let out = std::process::Command::new(bin)
        .args(["run", "--trailmaps"])
        .arg(f.root())
        .arg("--out")
        .arg(f.out())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_API_TOKEN", CANARY)
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for (what, text) in [("stdout", &stdout), ("stderr", &stderr), ("outputs", &f.all_output())] {
        assert!(!text.contains(CANARY), "{what} holds the secret");
    }
    assert!(
        server.seen().contains(&format!("Bearer {CANARY}")),
        "the server sees the value:\n{stdout}\n{stderr}\n{}\n{}",
        server.seen().replace(CANARY, "<canary>"),
        f.all_output().replace(CANARY, "<canary>")
    );
    assert!(
        stderr.contains("fetched 200"),
        "the tool's console line was printed (control): {stderr}"
    );
}
