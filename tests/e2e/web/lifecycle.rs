//! No browser is ever left behind: the browser processes a `trailblaze` started are counted before
//! and after each way of ending (done, a deadline, a panic, an MCP client leaving, SIGINT, SIGTERM,
//! SIGKILL), by a mark in their environment (each inherits its trailblaze's). Also the run's report
//! for a web trail: a PNG per step, the page's URL, console errors and failed requests.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use trailblaze_e2e::web_site::{processes_in_group, processes_marked, require_chromium, site_dir, wait_for_none};
use trailblaze_e2e::{copy_dir, trailblaze_bin};

/// A folder with the fixture site under `site/` and a web trail whose last step waits `wait` s.
pub(super) fn workspace(wait: u32) -> tempfile::TempDir {
    with_steps(
        "",
        &format!("  - step: Wait\n    recording:\n      web:\n        - web_wait: {{ seconds: {wait} }}\n"),
    )
}

/// A folder with the fixture site under `site/` and a web trail: the steps `first` (YAML), a step
/// that opens the site, then the steps `last`.
pub(super) fn with_steps(first: &str, last: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&site_dir(), &dir.path().join("site"));
    // An empty trailmaps folder anchors the workspace (a page needs no trailmap).
    std::fs::create_dir_all(dir.path().join("trailmaps")).expect("trailmaps");
    let trail = format!(
        "config:\n  id: web/lifecycle\n  devices: {{ web: chromium }}\ntrail:\n{first}  - step: Open the page\n    recording:\n      web:\n        - web_navigate: {{ url: site/index.html }}\n        - web_click: {{ ref: 'css=#beacon' }}\n        - web_verifyTextVisible: {{ text: Fixture home }}\n{last}"
    );
    std::fs::write(dir.path().join("web.trail.yaml"), trail).expect("trail");
    dir
}

/// A unique environment mark for one trailblaze and the browsers it starts.
pub(super) fn mark(name: &str) -> (String, String) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let value = format!("{name}-{}-{n}", std::process::id());
    ("TRAILBLAZE_TEST_MARK".into(), value)
}

pub(super) fn marked(m: &(String, String)) -> usize {
    processes_marked(&format!("{}={}", m.0, m.1)).len()
}

/// The processes of mark `m` but trailblaze itself (`pid`): the browser it started, and its helpers.
pub(super) fn browsers_of(m: &(String, String), pid: u32) -> Vec<u32> {
    processes_marked(&format!("{}={}", m.0, m.1))
        .into_iter()
        .filter(|p| *p != pid)
        .collect()
}

/// `trailblaze ARGS` in `dir`, marked with `m`, with a cache folder of its own (in `dir`).
pub(super) fn trailblaze(dir: &Path, m: &(String, String), args: &[&str]) -> Command {
    let mut c = Command::new(trailblaze_bin());
    c.current_dir(dir)
        .args(args)
        .env(&m.0, &m.1)
        .env("NO_COLOR", "1")
        .env("TRAILBLAZE_CACHE_DIR", dir.join(".cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// The first connection that asks for a page on `listener`, within `limit`, while `child` runs;
/// its request head is read.
fn accept_within(listener: &TcpListener, child: &mut Child, limit: Duration) -> TcpStream {
    listener.set_nonblocking(true).expect("nonblocking");
    let until = Instant::now() + limit;
    loop {
        match listener.accept() {
            Ok((mut s, _)) => {
                s.set_nonblocking(false).expect("blocking");
                s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                // A speculative connection that never asks is skipped.
                if head.starts_with(b"GET /held.html") {
                    return s;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(Instant::now() < until, "the run never asked for the held page");
                assert!(
                    child.try_wait().expect("wait").is_none(),
                    "trailblaze ended before it asked for the held page"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// Waits until the browser of `m` is up (its processes exist); panics after 20 s.
fn browser_up(m: &(String, String), child: &mut Child) {
    let until = Instant::now() + Duration::from_secs(20);
    while marked(m) < 2 {
        assert!(Instant::now() < until, "the browser never started");
        assert!(
            child.try_wait().expect("wait").is_none(),
            "trailblaze ended before its browser started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the run reach its waiting step.
    std::thread::sleep(Duration::from_millis(1500));
}

pub(super) fn profiles_of(pid: u32) -> usize {
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("trailblaze-chromium-{pid}-"))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_run_leaves_no_browser_and_reports_the_page() {
    require_chromium();
    // The run's last page is held by this test until it has seen the run's browser: the count of
    // 0 at the end is worth something only if the same count saw the browser while it ran.
    let hold = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = hold.local_addr().expect("address").port();
    // First: a step's page notes are read once the next step's first call was sent ahead.
    let dir = with_steps(
        &format!(
            "  - step: Open a page that waits for the test\n    recording:\n      web:\n        - web_navigate: {{ url: 'http://127.0.0.1:{port}/held.html' }}\n"
        ),
        "",
    );
    let m = mark("run");
    let mut child = trailblaze(dir.path(), &m, &["run", "--report-dir", "report", "web.trail.yaml"])
        .spawn()
        .expect("trailblaze runs");
    let mut held = accept_within(&hold, &mut child, Duration::from_secs(60));
    let during = browsers_of(&m, child.id());
    assert!(
        !during.is_empty(),
        "the mark saw no browser while the run's page was loading"
    );
    held.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\nConnection: close\r\n\r\n<p>held</p>",
    )
    .expect("answer");
    drop((held, hold));
    let out = child.wait_with_output().expect("trailblaze ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        wait_for_none(Duration::from_secs(5), || marked(&m)),
        0,
        "a browser process was left"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report/report.json")).expect("report"))
            .expect("JSON");
    let step = &report["trails"][0]["steps"][1];
    assert!(
        step["page"]["url"].as_str().unwrap().ends_with("/site/index.html"),
        "{step}"
    );
    assert_eq!(step["page"]["consoleErrors"][0], "beacon sent", "{step}");
    let failed = step["page"]["failedRequests"].as_array().cloned().unwrap_or_default();
    assert!(
        failed.iter().any(|f| f
            .as_str()
            .is_some_and(|f| f.starts_with("405 ") && f.contains("/track?event=checkout-started"))),
        "{step}"
    );
    let screen = step["screen"].as_str().expect("a screen per step");
    assert!(screen.ends_with(".png"), "{screen}");
    let png = std::fs::read(dir.path().join("report").join(screen)).expect("the PNG");
    assert!(png.starts_with(b"\x89PNG"));
    let html = std::fs::read_to_string(dir.path().join("report/report.html")).expect("html");
    assert!(
        html.contains("console error: <code>beacon sent</code>"),
        "the report shows the page's console"
    );
}

#[test]
fn snapshot_and_a_deadline_leave_no_browser() {
    require_chromium();
    let dir = workspace(30);
    let m = mark("snap");
    let out = trailblaze(dir.path(), &m, &["snapshot", "--device", "web"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(wait_for_none(Duration::from_secs(5), || marked(&m)), 0);
    // A step that outlives the call's wall-clock budget fails there, and the browser goes with the run.
    let m = mark("deadline");
    let started = Instant::now();
    let out = trailblaze(dir.path(), &m, &["run", "--wall-timeout", "3", "web.trail.yaml"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the deadline did not stop the step"
    );
    assert!(stdout.contains("✗ step 2"), "{stdout}");
    assert_eq!(
        wait_for_none(Duration::from_secs(5), || marked(&m)),
        0,
        "a browser process was left"
    );
}

#[test]
fn signals_leave_no_browser_and_no_profile() {
    require_chromium();
    let dir = workspace(60);
    for (name, signal) in [
        ("sigint", libc::SIGINT),
        ("sigterm", libc::SIGTERM),
        ("sighup", libc::SIGHUP),
    ] {
        let m = mark(name);
        let mut child = trailblaze(dir.path(), &m, &["run", "web.trail.yaml"])
            .spawn()
            .expect("spawn");
        browser_up(&m, &mut child);
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().expect("exits");
        assert!(!status.success(), "{name}");
        assert_eq!(
            wait_for_none(Duration::from_secs(5), || marked(&m)),
            0,
            "{name} left a browser"
        );
        assert_eq!(profiles_of(child.id()), 0, "{name} left a profile folder");
    }
}

#[test]
fn sigkill_of_trailblaze_takes_its_browser_along() {
    require_chromium();
    let dir = workspace(60);
    let m = mark("sigkill");
    let mut child = trailblaze(dir.path(), &m, &["run", "web.trail.yaml"])
        .spawn()
        .expect("spawn");
    browser_up(&m, &mut child);
    assert!(marked(&m) >= 2);
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    // The kernel's parent-death signal kills the browser; its helpers follow it.
    assert_eq!(
        wait_for_none(Duration::from_secs(10), || marked(&m)),
        0,
        "SIGKILL left a browser"
    );
}

#[test]
fn an_mcp_client_leaving_closes_its_browser() {
    require_chromium();
    let dir = workspace(1);
    let m = mark("mcp");
    let mut child = trailblaze(dir.path(), &m, &["mcp", "--device", "web"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let msgs = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"snapshot","arguments":{}}}"#,
    ];
    for msg in msgs {
        writeln!(stdin, "{msg}").expect("write");
    }
    let until = Instant::now() + Duration::from_secs(20);
    while marked(&m) < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(marked(&m) >= 2, "the MCP session never started its browser");
    drop(stdin);
    let status = child.wait().expect("exits");
    // A client that leaves (stdin closed) is the server's normal end.
    assert!(status.success(), "{status:?}");
    assert_eq!(
        wait_for_none(Duration::from_secs(5), || marked(&m)),
        0,
        "the MCP server left a browser"
    );
}

#[test]
fn a_panic_while_a_page_is_open_closes_the_browser() {
    require_chromium();
    let pgid = std::thread::spawn(|| {
        let device = trailblaze::web::device::WebDevice::start(Default::default()).expect("browser");
        let pid = device.browser().pid().expect("we started it");
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = device;
            assert!(!processes_in_group(pid).is_empty(), "the browser runs");
            panic!("a tool panicked");
        }));
        assert!(result.is_err());
        pid
    })
    .join()
    .expect("the thread ends");
    assert_eq!(
        wait_for_none(Duration::from_secs(5), || processes_in_group(pgid).len()),
        0
    );
}
