//! The web device against Playwright, in one run, on the project's fixture site (served on
//! 127.0.0.1): a click-and-verify round (`web_click` the counter's `+`, then `web_verifyTextVisible`
//! its new value) and a snapshot of a 1,000-element page (`web_snapshot`, a fresh capture, and the
//! snapshot text the LLM reads), beside Playwright (`playwright-core` driving the same Chromium
//! binary: `locator.click()` + `getByText().waitFor()`, and `ariaSnapshot()`). Medians, ratio printed.
//!
//! `npm ci --prefix runtime/trailblaze/benches/playwright && cargo bench -p trailblaze --bench web`
//! (under `cargo test` a smoke-sized pass, which leaves Playwright out when it is not installed)

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use trailblaze::device::spec::WebOptions;
use trailblaze::web::device::{Browser, WebDevice};
use trailblaze::{ProjectOptions, SessionOptions};
use trailblaze_e2e::web_site::{Site, require_chromium};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, snaps) = if full { (200, 50) } else { (3, 2) };
    let chromium = require_chromium();
    let site = Site::start();
    let base = format!("http://127.0.0.1:{}", site.port);

    // trailblaze: one session on a page of a browser it started, through the dispatcher.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("trailmaps/bench")).expect("trailmap dir");
    std::fs::write(dir.path().join("trailmaps/bench/trailmap.yaml"), "id: bench\n").expect("trailmap");
    let project = trailblaze::open(&dir.path().join("trailmaps"), ProjectOptions::default()).expect("project");
    let browser: Arc<Browser> = Browser::launch(false, (1280, 800)).expect("Chromium starts");
    let device = WebDevice::open(browser, WebOptions::default()).expect("a page");
    let session = project
        .open_session(
            "bench",
            SessionOptions {
                device: Some(Box::new(device)),
                ..SessionOptions::default()
            },
        )
        .expect("session");
    let call = |tool: &str, args: serde_json::Value| {
        session.call(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"));
    };
    call("web_navigate", json!({ "url": format!("{base}/index.html") }));
    let mut click = Vec::new();
    for i in 1..=rounds {
        let t = Instant::now();
        call("web_click", json!({ "ref": "css=#inc" }));
        call("web_verifyTextVisible", json!({ "text": format!("Count: {i}") }));
        click.push(ms(t.elapsed()));
    }
    call("web_navigate", json!({ "url": format!("{base}/big.html?n=1000") }));
    let (mut capture, mut text) = (Vec::new(), Vec::new());
    let mut lines = 0;
    for _ in 0..snaps {
        let t = Instant::now();
        call("web_snapshot", json!({ "screenName": "big" }));
        capture.push(ms(t.elapsed()));
        let v = session.call("snapshot", json!({})).expect("snapshot");
        text.push(ms(t.elapsed()));
        lines = v["text"].as_str().unwrap_or_default().lines().count();
    }
    let tb_click = median(click);
    let (tb_capture, tb_text) = (median(capture), median(text));
    println!("trailblaze  click+verify {tb_click:.2} ms/round ({rounds} rounds)");
    println!(
        "trailblaze  snapshot of 1,000 elements: capture {tb_capture:.2} ms, capture + snapshot text {tb_text:.2} ms ({lines} lines; {snaps} snapshots)"
    );
    drop(session);

    // Playwright, the same rounds on the same binary.
    let anchor = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright");
    if !anchor.join("node_modules/playwright-core").is_dir() {
        assert!(
            !full,
            "install the anchor first: npm ci --prefix runtime/trailblaze/benches/playwright"
        );
        println!(
            "notice: playwright-core is not installed (npm ci --prefix runtime/trailblaze/benches/playwright): no anchor in this smoke run"
        );
        return;
    }
    let out = Command::new("node")
        .current_dir(&anchor)
        .arg("web_bench.mjs")
        .arg(&chromium)
        .arg(&base)
        .arg(rounds.to_string())
        .arg(snaps.to_string())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pw: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the anchor's JSON");
    let (pw_click, pw_snap) = (
        pw["click"].as_f64().unwrap_or(f64::NAN),
        pw["snapshot"].as_f64().unwrap_or(f64::NAN),
    );
    println!("playwright  click+verify {pw_click:.2} ms/round");
    println!("playwright  ariaSnapshot of 1,000 elements {pw_snap:.2} ms");
    println!(
        "ratio       click+verify {:.2}× faster; snapshot (capture + text) {:.2}× faster",
        pw_click / tb_click,
        pw_snap / tb_text
    );
}
