//! Issue 24 item 7: neighbours on the same machine. A Node tool inherits no credential of the runner
//! and its runner files live in a folder no other user could make first; `mcp --http` wants a bearer
//! token, checks `Origin`, caps live sessions with a clear refusal and closes idle ones, so one client
//! opening and dropping a thousand sessions leaves the server serving and its file descriptors where
//! they were.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use trailblaze_e2e::{Fixture, text};

use super::mcp::{HttpServer, MCP_TOKEN, cli, demo};

const ENV_KEYS: &str = r#"
import { trailblaze } from "@trailblaze/scripting";
/** The names of the variables the tool's process was given. */
export const envKeys = trailblaze.tool<{}, { keys: string[] }>(async () => {
  return { keys: Object.keys((globalThis as any).process.env).sort() };
});
"#;

#[test]
fn a_node_tool_inherits_no_credential_and_its_runner_folder_is_private() {
    let f = Fixture::new("t");
    f.tool("envKeys", ENV_KEYS);
    f.file("tools/envKeys.tool.yaml", "runtime: subprocess\n");
    let o = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(f.dir.path())
        .args(["tool", "--json", "envKeys"])
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_LLM_API_KEY", "sk-test-neighbour")
        .env("GITHUB_TOKEN", "ghp_neighbour")
        .env("AWS_SECRET_ACCESS_KEY", "aws-neighbour")
        .env("TRAILBLAZE_SECRET_PIN", "4711")
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let keys: Vec<&str> = v["result"]["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for held in [
        "TRAILBLAZE_LLM_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "TRAILBLAZE_SECRET_PIN",
    ] {
        assert!(!keys.contains(&held), "{held} reached the tool: {keys:?}");
    }
    // Control: the tool did see its environment (what Node needs, and the runner's own wiring).
    assert!(keys.contains(&"PATH") && keys.contains(&"TRAILBLAZE_ROOT"), "{keys:?}");
    // The runner's files: under this user's cache folder, 0700 (not a fixed name in the shared /tmp).
    use std::os::unix::fs::PermissionsExt;
    let node_dirs: Vec<_> = std::fs::read_dir(f.cache())
        .expect("cache")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("node-"))
        .collect();
    assert_eq!(
        node_dirs.len(),
        1,
        "{:?}",
        std::fs::read_dir(f.cache()).map(|d| d.count())
    );
    let mode = node_dirs[0].metadata().expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// One HTTP/1.1 request; the status, the headers (lower-case names) and the body.
fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, HashMap<String, String>, String) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("writes");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const SNAPSHOT: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"snapshot","arguments":{}}}"#;
const BEARER: &str = "Bearer test-token-7d2f0b";

/// A raw client: opens a session, or tells why it could not.
fn open(addr: &str, extra: &[(&str, &str)]) -> Result<String, (u16, String)> {
    let mut headers = vec![("Authorization", BEARER)];
    headers.extend_from_slice(extra);
    let (status, h, body) = request(addr, "POST", &headers, INIT);
    match h.get("mcp-session-id") {
        Some(id) if status == 200 => {
            let init = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            let (s, _, b) = request(addr, "POST", &session_headers(id), init);
            assert_eq!(s, 202, "{b}");
            Ok(id.clone())
        }
        _ => Err((status, body)),
    }
}

fn session_headers(id: &str) -> Vec<(&str, &str)> {
    vec![
        ("Authorization", BEARER),
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// `snapshot` on session `id`: whether it answered with the sign-in screen.
fn snapshot_ok(addr: &str, id: &str) -> bool {
    let (status, _, body) = request(addr, "POST", &session_headers(id), SNAPSHOT);
    status == 200 && body.contains("Email")
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn a_thousand_sessions_opened_and_dropped_leave_the_server_serving_and_its_fds_as_they_were() {
    let f = demo();
    let server =
        HttpServer::start_with(cli(&f).args(["mcp", "--http", "0", "--max-sessions", "4", "--idle-timeout", "3"]));
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let pid = server.child.id();
    // No token, a wrong one: 401, and no session made.
    let (status, h, body) = request(&addr, "POST", &[], INIT);
    assert_eq!(
        (status, h.get("www-authenticate").map(String::as_str)),
        (401, Some("Bearer")),
        "{body}"
    );
    assert!(body.contains("Authorization: Bearer"), "{body}");
    assert_eq!(request(&addr, "POST", &[("Authorization", "Bearer nope")], INIT).0, 401);
    // A page of another site: refused by its Origin; one served from loopback may call (control).
    assert!(matches!(
        open(&addr, &[("Origin", "http://evil.example")]),
        Err((403, _))
    ));
    let local = open(&addr, &[("Origin", "http://localhost:8123")]).expect("a loopback page may call");
    assert!((200..300).contains(&request(&addr, "DELETE", &session_headers(&local), "").0));

    // The legitimate client, then the baseline with its session live.
    let legit = open(&addr, &[]).expect("the legitimate client");
    assert!(snapshot_ok(&addr, &legit));
    let baseline = open_fds(pid);
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..1000 {
        match open(&addr, &[]) {
            Ok(id) => {
                accepted += 1;
                assert!(snapshot_ok(&addr, &id), "an accepted session works");
                // Half are closed as a client should, half abandoned (left to the idle timeout).
                if i % 2 == 0 {
                    request(&addr, "DELETE", &session_headers(&id), "");
                }
            }
            Err((status, why)) => {
                refused += 1;
                assert_eq!(status, 503, "{why}");
                assert!(why.contains("live sessions") && why.contains("--max-sessions"), "{why}");
            }
        }
        if i % 10 == 0 {
            assert!(snapshot_ok(&addr, &legit), "the legitimate client is served at {i}");
        }
    }
    assert!(refused > 0 && accepted > 0, "accepted {accepted}, refused {refused}");
    // Abandoned sessions close when idle: the descriptors come back to the baseline.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut now = open_fds(pid);
    while now > baseline && Instant::now() < deadline {
        assert!(snapshot_ok(&addr, &legit), "still served while the others expire");
        std::thread::sleep(Duration::from_millis(500));
        now = open_fds(pid);
    }
    eprintln!("mcp --http: 1000 sessions: {accepted} accepted, {refused} refused; fds {baseline} before, {now} after");
    assert!(now <= baseline, "fds {baseline} before, {now} after");
    assert!(snapshot_ok(&addr, &legit));
    let _ = server.stderr();
}

#[test]
fn a_token_is_made_and_printed_when_none_is_given() {
    let f = demo();
    let server = HttpServer::start_with(cli(&f).env_remove("TRAILBLAZE_MCP_TOKEN").args(["mcp", "--http", "0"]));
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let printed = server.stderr();
    let token = printed
        .split("bearer token ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token printed:\n{printed}"));
    assert_eq!(token.len(), 64, "{token}");
    assert_ne!(token, MCP_TOKEN);
    let auth = format!("Bearer {token}");
    assert_eq!(request(&addr, "POST", &[("Authorization", &auth)], INIT).0, 200);
    // Control: the fixed test token is not this server's.
    assert_eq!(request(&addr, "POST", &[("Authorization", BEARER)], INIT).0, 401);
}
