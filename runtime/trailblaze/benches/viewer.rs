//! Opening the trace viewer of a 500-trail run: `trailblaze report`'s rebuild of the folder (its
//! report.html and each trail's trace.js), then report.html in headless Chromium from file://
//! (playwright-core, tests/viewer-client): the page's first paint and first contentful paint, and
//! the time from clicking a trail's "Open trace" to its screen shown; beside the same run's page
//! with no trace kept (no viewer in it), the anchor. Medians printed.
//!
//! `npm ci --prefix tests/viewer-client && cargo bench -p trailblaze --bench viewer`
//! (under `cargo test` a smoke-sized pass of 20 trails, which leaves the browser out when
//! playwright-core or Chromium is not installed)

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use trailblaze_e2e::trace_fixture;

/// The median; NaN (printed `NaN`) when the browser reported none (a paint it did not time).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Each trail's report of a real run's size: six steps of two calls each, a screen after each.
fn widen(run: &Path) {
    let path = run.join("report.json");
    let mut report: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("report.json")).expect("json");
    for t in report["trails"].as_array_mut().expect("trails") {
        let dir = t["trace"]
            .as_str()
            .and_then(|p| p.strip_suffix("/trace.json"))
            .unwrap_or_default()
            .to_string();
        let steps: Vec<Value> = (0..6)
            .map(|n| {
                json!({ "number": n, "kind": "step", "text": format!("Step {n} of the trail, in words"), "line": 3 + n,
                    "outcome": { "status": "passed" }, "duration_ms": 120.0, "error": null,
                    "screen": format!("{dir}/trace/s0.svg"), "screen_size": { "x": 1080, "y": 2400 },
                    "calls": [
                        { "tool": "tapOnElementBySelector", "args": { "selector": { "textRegex": "^Next$" } }, "ok": true, "error": null, "duration_ms": 40.0, "line": 4 },
                        { "tool": "assertVisibleBySelector", "args": { "selector": { "textRegex": "Inbox" } }, "ok": true, "error": null, "duration_ms": 30.0, "line": 6 }
                    ] })
            })
            .collect();
        t["steps"] = Value::Array(steps);
    }
    std::fs::write(&path, serde_json::to_string(&report).expect("json")).expect("write");
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (trails, rounds) = if full { (500, 7) } else { (20, 1) };
    let run = tempfile::tempdir().expect("temp dir");
    trace_fixture::write_run(run.path(), trails - 1);
    widen(run.path());

    let t = Instant::now();
    let built = trailblaze::report::rebuild(run.path()).expect("rebuild");
    let rebuild_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    trailblaze::report::rebuild(run.path()).expect("rebuild");
    let again_ms = t.elapsed().as_secs_f64() * 1000.0;
    let page_kib = std::fs::metadata(&built.html).map(|m| m.len()).unwrap_or(0) / 1024;
    println!(
        "viewer: {trails} trails, report.html {page_kib} KiB; `trailblaze report` rebuild {rebuild_ms:.1} ms ({} trace.js written), again {again_ms:.1} ms (all current)",
        built.trace_js.len()
    );

    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/viewer-client");
    let chromium = Path::new("/usr/bin/chromium");
    if !client.join("node_modules/playwright-core").is_dir() || !chromium.is_file() {
        assert!(
            !full,
            "install first: npm ci --prefix tests/viewer-client (and Chromium: ./test.sh)"
        );
        println!("notice: playwright-core or Chromium is not installed: no browser in this smoke run");
        return;
    }
    let paint = |page: &Path, open: bool| -> Vec<Value> {
        let out = Command::new("node")
            .arg(client.join("drive.mjs"))
            .arg("paint")
            .arg(page)
            .arg(rounds.to_string())
            .args((!open).then_some("no-open"))
            .output()
            .expect("node runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("the driver's JSON")
    };
    let pick = |rounds: &[Value], key: &str| median(rounds.iter().filter_map(|r| r[key].as_f64()).collect::<Vec<_>>());
    let with = paint(&built.html, true);
    println!(
        "viewer: {trails} trails in headless Chromium (file://), medians of {}: first paint {:.0} ms, first contentful paint {:.0} ms, DOMContentLoaded {:.0} ms, load {:.0} ms; Open trace to its screen {:.0} ms",
        with.len(),
        pick(&with, "first_paint_ms"),
        pick(&with, "first_contentful_paint_ms"),
        pick(&with, "dom_content_loaded_ms"),
        pick(&with, "load_ms"),
        pick(&with, "open_trace_ms")
    );
    // The anchor: the same run with no trace kept, so its page carries no viewer.
    let path = run.path().join("report.json");
    let mut report: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("report.json")).expect("json");
    for t in report["trails"].as_array_mut().expect("trails") {
        t.as_object_mut().map(|o| o.remove("trace"));
    }
    std::fs::write(&path, serde_json::to_string(&report).expect("json")).expect("write");
    let plain = trailblaze::report::rebuild(run.path()).expect("rebuild");
    let without = paint(&plain.html, false);
    println!(
        "viewer: the same {trails} trails with no trace (no viewer on the page): first paint {:.0} ms, first contentful paint {:.0} ms, DOMContentLoaded {:.0} ms, load {:.0} ms",
        pick(&without, "first_paint_ms"),
        pick(&without, "first_contentful_paint_ms"),
        pick(&without, "dom_content_loaded_ms"),
        pick(&without, "load_ms")
    );
}
