//! Memory of live sessions, read from the process's resident set (`VmRSS`): what each additional
//! session costs once it has run a scripted tool (100 sessions open at once), and whether one
//! session grows over many calls. Prints MiB per session and the growth.
//!
//! `cargo bench -p trailblaze --bench sessions_memory` (100 sessions, 10,000 calls; a smoke-sized
//! 5 and 200 under `cargo test`). Linux only (it reads /proc).

use std::path::Path;

use serde_json::json;
use trailblaze::{ProjectOptions, SessionOptions};

const TOOL: &str = "inboxSubjects";

/// The resident set in KiB, from /proc/self/status.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (sessions, calls) = if full { (100, 10_000) } else { (5, 200) };
    let Some(start) = rss_kib() else {
        eprintln!("notice: no /proc/self/status here; nothing measured");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps");
    let cache = tempfile::tempdir().expect("temp dir");
    let project = trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            ..ProjectOptions::default()
        },
    )
    .expect("the demo opens");
    let open = || {
        let s = project
            .open_session("demo", SessionOptions::default())
            .expect("session");
        s.call(TOOL, json!({})).expect("the tool runs");
        s
    };
    // One session first, so the transpile cache and the process's own first-use costs are paid.
    let warm = open();
    let before = rss_kib().unwrap_or(start);
    let open_now: Vec<_> = (0..sessions).map(|_| open()).collect();
    let after = rss_kib().unwrap_or(before);
    let per = (after.saturating_sub(before)) as f64 / 1024.0 / sessions as f64;

    // One session, many calls: the first batch fills what is bounded (the step records the session
    // keeps, 10,000 at most; the allocator's pools); the second must not grow.
    let s = &open_now[0];
    for _ in 0..calls {
        s.call(TOOL, json!({})).expect("call");
    }
    let settled = rss_kib().unwrap_or(after);
    for _ in 0..calls {
        s.call(TOOL, json!({})).expect("call");
    }
    let end = rss_kib().unwrap_or(settled);
    let growth = end as f64 / 1024.0 - settled as f64 / 1024.0;
    println!(
        "{sessions} sessions, each after running {TOOL}: {per:.2} MiB RSS per additional session \
         (process {:.1} → {:.1} MiB); in one session, {calls} calls after the first {calls}: {growth:+.2} MiB",
        before as f64 / 1024.0,
        after as f64 / 1024.0
    );
    drop(open_now);
    drop(warm);
}
