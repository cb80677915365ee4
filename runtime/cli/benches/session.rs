//! Live sessions as a coding agent uses them: whole `trailblaze` processes acting in a running
//! session (`session start` once), beside the same command on a fresh device, in the same run, with
//! the ratio printed.
//!
//! - the simulated device: `trailblaze tool tap ref=... --session bench` against `trailblaze tool tap
//!   ref=... --session none` (a fresh device each);
//! - the web: `trailblaze snapshot --session web` (the browser already up) against `trailblaze
//!   snapshot --device web` (a headless Chromium started and closed each time).
//!
//! `cargo bench -p trailblaze-cli --bench session`; under `cargo test` a smoke-sized pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

/// Milliseconds of each of `n` runs of `make()`, each of which must succeed.
fn times(n: usize, what: &str, mut make: impl FnMut() -> Command) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let ok = make()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("runs")
                .success();
            assert!(ok, "{what} failed");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// The median and the 90th percentile.
fn spread(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 9 / 10).min(v.len() - 1)])
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (calls, fresh, web_calls, web_fresh) = if full { (201, 41, 51, 7) } else { (3, 2, 2, 1) };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_trailblaze"));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("trailmaps");
    copy_dir(&repo.join("trailmaps/demo"), &root.join("demo"));
    copy_dir(&repo.join("trailmaps/web-demo"), &root.join("web-demo"));
    let cli = |args: &[&str]| {
        let mut c = Command::new(&bin);
        c.arg("--trailmaps")
            .arg(&root)
            .args(args)
            .env("TRAILBLAZE_SESSIONS_DIR", dir.path().join("sessions"))
            .env("TRAILBLAZE_CACHE_DIR", dir.path().join("cache"))
            .env("TRAILBLAZE_OUT", dir.path().join("out"))
            .env_remove("TRAILBLAZE_SESSION")
            .env_remove("TRAILBLAZE_DEVICE")
            .env_remove("RUST_LOG");
        c
    };
    let started = cli(&[
        "session",
        "start",
        "--name",
        "bench",
        "--trailmap",
        "demo",
        "--trace",
        "off",
    ])
    .stdout(Stdio::null())
    .status()
    .expect("runs");
    assert!(started.success(), "the session started");
    // The sign-in button: tapping it with an empty form shows an error and changes nothing else.
    let tap = ["tool", "tap", "ref=d803", "--trailmap", "demo"];
    let joined = times(calls, "tool in the session", || {
        let mut c = cli(&tap);
        c.args(["--session", "bench"]);
        c
    });
    let alone = times(fresh, "tool on a fresh device", || {
        let mut c = cli(&tap);
        c.args(["--session", "none"]);
        c
    });
    let _ = cli(&["session", "stop", "bench"]).status();
    let ((j50, j90), (a50, a90)) = (spread(joined), spread(alone));
    println!(
        "sim: `tool tap` in a running session, whole process, median {j50:.2} ms (p90 {j90:.2}) of {calls}; \
         on a fresh device {a50:.2} ms (p90 {a90:.2}) of {fresh}: {:.1}× faster (goal ≤ 15 ms)",
        a50 / j50
    );

    let chromium = ["chromium", "chromium-browser", "google-chrome"].iter().any(|b| {
        Command::new("which")
            .arg(b)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !chromium && std::env::var_os("TRAILBLAZE_CHROMIUM").is_none() {
        println!("web: not measured (no Chromium on PATH)");
        return;
    }
    let started = cli(&[
        "session",
        "start",
        "--name",
        "web",
        "--device",
        "web",
        "--trailmap",
        "web-demo",
        "--trace",
        "off",
    ])
    .stdout(Stdio::null())
    .status()
    .expect("runs");
    assert!(started.success(), "the web session started");
    let joined = times(web_calls, "snapshot in the web session", || {
        cli(&["snapshot", "--session", "web"])
    });
    let alone = times(web_fresh, "snapshot on a fresh browser", || {
        cli(&[
            "snapshot",
            "--device",
            "web",
            "--trailmap",
            "web-demo",
            "--session",
            "none",
        ])
    });
    let _ = cli(&["session", "stop", "web"]).status();
    let ((j50, j90), (a50, a90)) = (spread(joined), spread(alone));
    println!(
        "web: `snapshot` in a running session (its Chromium up), median {j50:.2} ms (p90 {j90:.2}) of {web_calls}; \
         with a browser started for it {a50:.2} ms (p90 {a90:.2}) of {web_fresh}: {:.1}× faster",
        a50 / j50
    );
}
