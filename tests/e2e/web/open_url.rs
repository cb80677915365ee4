//! `openUrl {url}` on the web device navigates the page, as docs/web.md says, and MCP on the web
//! offers the web's tools from its first `tools/list` (it listed the phone's: `openUrl` there and
//! refused, `networkConnection` offered and refused).

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze_e2e::web_site::{require_chromium, wait_for_none};

use super::lifecycle::{mark, marked, trailblaze, workspace};

/// The server's reply to request `id`, within a minute.
fn reply(lines: &Receiver<String>, id: u64) -> Value {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no reply to request {id}"));
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == id {
            return v;
        }
    }
}

#[test]
fn mcp_on_the_web_offers_open_url_and_it_navigates() {
    require_chromium();
    let dir = workspace(1);
    let m = mark("open-url");
    let mut child = trailblaze(dir.path(), &m, &["mcp", "--device", "web"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut send = |v: Value| writeln!(stdin, "{v}").expect("write");
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    reply(&lines, 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
    let listed = reply(&lines, 2);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    // Offered on the web: openUrl and launchApp; a phone-only tool is not.
    assert!(names.contains(&"openUrl") && names.contains(&"launchApp"), "{names:?}");
    assert!(!names.contains(&"networkConnection"), "{names:?}");
    let call = |id: u64, name: &str, args: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    send(call(3, "openUrl", json!({ "url": "site/index.html" })));
    let opened = reply(&lines, 3);
    assert_ne!(opened["result"]["isError"], true, "{opened}");
    send(call(4, "snapshot", json!({})));
    let snap = reply(&lines, 4);
    assert!(snap.to_string().contains("Fixture home"), "{snap}");
    // Control: a phone-only tool is still refused on the web.
    send(call(5, "networkConnection", json!({ "connected": false })));
    let refused = reply(&lines, 5);
    assert!(
        refused["result"]["isError"] == true || refused.get("error").is_some(),
        "{refused}"
    );
    drop(stdin);
    let status = child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
    assert_eq!(wait_for_none(Duration::from_secs(5), || marked(&m)), 0);
}
