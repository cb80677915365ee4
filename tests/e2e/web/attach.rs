//! `--device web:ws://HOST:PORT`: a run attached to a Chromium that is already running (started
//! here as docs/web.md says) passes, starts no browser of its own, and closes what it opened there
//! (its page and its context) while the browser itself keeps running.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze::web::device::Browser;
use trailblaze_e2e::web_site::{require_chromium, wait_for_none};

use super::lifecycle::{browsers_of, mark, marked, profiles_of, trailblaze, with_steps};

/// A Chromium started by the test, killed (its whole process group) when dropped.
struct Running {
    child: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group of our own child.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Kills a trailblaze the test fails to wait for (a failed assertion while it runs).
struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) on our own child, not reaped yet (disarmed before it is waited for).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Starts Chromium as the docs say, and reads the DevTools endpoint it prints.
fn start_chromium() -> (Running, String) {
    let exe = require_chromium();
    let profile = tempfile::tempdir().expect("temp dir");
    let tmp = profile.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--remote-debugging-port=0",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        // Its temporary folders go with its profile (it is killed, so it cannot remove them).
        .env("TMPDIR", &tmp)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().expect("stderr");
    let running = Running {
        child,
        _profile: profile,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    // Read to the end, so the browser never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("chromium printed its DevTools endpoint");
    (running, url)
}

/// `Target.getTargets`' pages.
fn pages(b: &Browser) -> Vec<Value> {
    let r = b
        .connection()
        .call(
            None,
            "Target.getTargets",
            json!({}),
            Instant::now() + Duration::from_secs(10),
        )
        .expect("Target.getTargets");
    r["targetInfos"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t["type"] == "page")
        .collect()
}

#[test]
fn a_run_attached_to_a_running_chromium_passes_and_closes_only_what_it_opened() {
    let (mut chromium, endpoint) = start_chromium();
    // `ws://127.0.0.1:PORT/devtools/browser/ID`: the documented form is `web:ws://HOST:PORT`.
    let authority = endpoint
        .strip_prefix("ws://")
        .and_then(|r| r.split('/').next())
        .expect("a ws:// endpoint")
        .to_string();
    let observer = Browser::attach(&endpoint).expect("the test attaches too");
    let dir = with_steps(
        "",
        "  - step: Wait for the test\n    recording:\n      web:\n        - web_waitForUrl: { pattern: '#released$', timeoutMs: 120000 }\n",
    );
    let m = mark("attach");
    let device = format!("web:ws://{authority}");
    let mut child = trailblaze(dir.path(), &m, &["run", "--device", &device, "web.trail.yaml"])
        .spawn()
        .expect("trailblaze runs");
    let mut guard = KillOnDrop(Some(child.id()));
    // The run's page appears in the running browser, in a context of its own.
    let until = Instant::now() + Duration::from_secs(120);
    let page = loop {
        if let Some(p) = pages(&observer)
            .into_iter()
            .find(|p| p["url"].as_str().is_some_and(|u| u.ends_with("/site/index.html")))
        {
            break p;
        }
        assert!(
            Instant::now() < until,
            "the run's page never showed in the attached browser"
        );
        if child.try_wait().expect("wait").is_some() {
            guard.0 = None;
            panic!("trailblaze ended before its page showed in the attached browser");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let context = page["browserContextId"].as_str().expect("a context").to_string();
    // Attached, the run starts no browser and makes no profile of its own.
    assert_eq!(
        browsers_of(&m, child.id()),
        Vec::<u32>::new(),
        "the run started a browser"
    );
    assert_eq!(profiles_of(child.id()), 0, "the run made a browser profile");
    // Lets the trail's last step pass.
    let conn = observer.connection();
    let deadline = || Instant::now() + Duration::from_secs(10);
    let attached = conn
        .call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": page["targetId"], "flatten": true }),
            deadline(),
        )
        .expect("attach to the run's page");
    let session = attached["sessionId"].as_str().expect("a session").to_string();
    conn.call(
        Some(&session),
        "Runtime.evaluate",
        json!({ "expression": "location.hash = 'released'" }),
        deadline(),
    )
    .expect("release the run");
    guard.0 = None;
    let out = child.wait_with_output().expect("trailblaze ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed, 0 failed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(wait_for_none(Duration::from_secs(5), || marked(&m)), 0);
    // The browser still runs; the run's page and context are gone (closing takes a moment).
    assert!(
        chromium.child.try_wait().expect("wait").is_none(),
        "the attached browser was closed"
    );
    let contexts = || {
        conn.call(None, "Target.getBrowserContexts", json!({}), deadline())
            .expect("the browser answers")["browserContextIds"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let left = wait_for_none(Duration::from_secs(10), || {
        pages(&observer)
            .iter()
            .filter(|p| p["targetId"] == page["targetId"] || p["browserContextId"] == context.as_str())
            .count()
            + contexts().iter().filter(|c| *c == context.as_str()).count()
    });
    assert_eq!(left, 0, "the run's page or context was left open");
    // Control: the browser's own first page was not the run's to close.
    assert!(
        pages(&observer).iter().any(|p| p["url"] == "about:blank"),
        "the browser's own page was closed"
    );
}
