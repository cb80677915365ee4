//! No browser is ever left behind: the browser processes a `trailblaze` started are counted before
//! and after each way of ending (done, a deadline, a panic, an MCP client leaving, SIGINT, SIGTERM,
//! SIGKILL), by a mark in their environment (each inherits its trailblaze's). Also the run's report
//! for a web trail: a PNG per step, the page's URL, console errors and failed requests.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use trailblaze_e2e::web_site::{processes_in_group, processes_marked, require_chromium, site_dir, wait_for_none};
use trailblaze_e2e::{copy_dir, trailblaze_bin};

/// A folder with the fixture site under `site/` and a web trail whose last step waits `wait` s.
fn workspace(wait: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&site_dir(), &dir.path().join("site"));
    // An empty trailmaps folder anchors the workspace (a page needs no trailmap).
    std::fs::create_dir_all(dir.path().join("trailmaps")).expect("trailmaps");
    let trail = format!(
        "config:\n  id: web/lifecycle\n  devices: {{ web: chromium }}\ntrail:\n  - step: Open the page\n    recording:\n      web:\n        - web_navigate: {{ url: site/index.html }}\n        - web_click: {{ ref: 'css=#beacon' }}\n        - web_verifyTextVisible: {{ text: Fixture home }}\n  - step: Wait\n    recording:\n      web:\n        - web_wait: {{ seconds: {wait} }}\n"
    );
    std::fs::write(dir.path().join("web.trail.yaml"), trail).expect("trail");
    dir
}

/// A unique environment mark for one trailblaze and the browsers it starts.
fn mark(name: &str) -> (String, String) {
    let value = format!("{name}-{}-{}", std::process::id(), Instant::now().elapsed().as_nanos());
    ("TRAILBLAZE_TEST_MARK".into(), value)
}

fn marked(m: &(String, String)) -> usize {
    processes_marked(&format!("{}={}", m.0, m.1)).len()
}

fn trailblaze(dir: &Path, m: &(String, String), args: &[&str]) -> Command {
    let mut c = Command::new(trailblaze_bin());
    c.current_dir(dir)
        .args(args)
        .env(&m.0, &m.1)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
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

fn profiles_of(pid: u32) -> usize {
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
    let dir = workspace(1);
    let m = mark("run");
    let before = marked(&m);
    let out = trailblaze(dir.path(), &m, &["run", "--report-dir", "report", "web.trail.yaml"])
        .output()
        .expect("trailblaze runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(before, 0);
    assert_eq!(
        wait_for_none(Duration::from_secs(5), || marked(&m)),
        0,
        "a browser process was left"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report/report.json")).expect("report"))
            .expect("JSON");
    let step = &report["trails"][0]["steps"][0];
    assert!(
        step["page"]["url"].as_str().unwrap().ends_with("/site/index.html"),
        "{step}"
    );
    assert_eq!(step["page"]["consoleErrors"][0], "beacon sent", "{step}");
    let failed = step["page"]["failedRequests"].as_array().cloned().unwrap_or_default();
    assert!(
        failed.iter().any(|f| f
            .as_str()
            .is_some_and(|f| f.starts_with("404 ") && f.contains("/track?event=checkout-started"))),
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
    assert!(status.success() || status.code().is_some(), "{status:?}");
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
        let device = trailblaze::device::web::WebDevice::start(Default::default()).expect("browser");
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
