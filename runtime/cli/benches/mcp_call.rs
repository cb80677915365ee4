//! An MCP `tools/call` of `snapshot` on the simulated device, round trip over stdio with the official
//! TypeScript SDK client (tests/mcp-client), beside a direct `Session::call` of the same tool in the
//! same run. Prints medians and the ratio.
//!
//! `cargo bench -p trailblaze-cli --bench mcp_call` (needs `npm ci --prefix tests/mcp-client`).
//! Under `cargo test` it runs a smoke-sized pass.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use trailblaze::{ProjectOptions, SessionOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let n = if full { 2_000 } else { 20 };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cache = tempfile::tempdir().expect("temp dir");
    let project = trailblaze::open(
        &repo.join("trailmaps"),
        ProjectOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            ..ProjectOptions::default()
        },
    )
    .expect("the demo opens");
    let session = project
        .open_session("demo", SessionOptions::default())
        .expect("session");
    // `snapshot` alone is served from the session's cache after the first call, in both
    // measurements alike: what is measured is the path to the dispatcher and back.
    let direct: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            session.call("snapshot", json!({})).expect("snapshot");
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let client = repo.join("tests/mcp-client");
    if !client.join("node_modules").is_dir() {
        eprintln!("notice: skipping the MCP side: run `npm ci --prefix tests/mcp-client`");
        return;
    }
    let ops = json!([{ "op": "bench", "tool": "snapshot", "args": {}, "n": n }]);
    let mut child = Command::new("node")
        .arg(client.join("drive.mjs"))
        .args(["stdio", env!("CARGO_BIN_EXE_trailblaze"), "--trailmaps"])
        .arg(repo.join("trailmaps"))
        .arg("mcp")
        .env("TRAILBLAZE_CACHE_DIR", cache.path())
        .env("TRAILBLAZE_OUT", cache.path().join("out"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(ops.to_string().as_bytes())
        .expect("ops written");
    let out = child.wait_with_output().expect("node ends");
    assert!(out.status.success(), "the MCP client failed");
    let results: Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    let micros: Vec<f64> = results[0]["micros"]
        .as_array()
        .expect("micros")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(micros.len(), n, "one timing per call");
    // The first calls start the session and warm the client's JIT: leave a tenth out.
    let mcp = median(micros[n / 10..].to_vec());
    let direct = median(direct[n / 10..].to_vec());
    println!(
        "snapshot, {n} calls: MCP tools/call round trip over stdio (official TS client) {mcp:.1} µs median; \
         direct Session::call {direct:.1} µs; MCP is {:.1}× the direct call (+{:.1} µs)",
        mcp / direct,
        mcp - direct
    );
}
