//! report.html's trace viewer in the real Chromium, from file://, driven by playwright-core
//! (tests/viewer-client, from npm) over a run folder of hand-written traces (docs/trace.md) whose
//! report.html `trailblaze report` built: opening a trace, a step's screen and tree, a tree line's
//! node outlined on the screen, the step's requests (not another step's), a console line of markup
//! shown as text, and no request off file://.
//! Without Chromium the test says so and passes, except under CI (`CI=true`), where it fails.
//! `TRAILBLAZE_KEEP_VIEWER_RUN=DIR` keeps a copy of the run folder there, to open by hand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use trailblaze_e2e::{copy_dir, repo_root, trace_fixture, trailblaze_bin};

/// The npm project holding playwright-core; installed once if the suite's script did not.
pub(crate) fn client_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = repo_root().join("tests/viewer-client");
        if !dir.join("node_modules/playwright-core").exists() {
            let ok = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .status()
                .expect("npm runs");
            assert!(ok.success(), "npm ci in tests/viewer-client failed");
        }
        dir
    })
    .clone()
}

/// `node drive.mjs check PAGE`: what the viewer showed, as JSON.
fn drive(page: &Path) -> Value {
    let out = Command::new("node")
        .arg(client_dir().join("drive.mjs"))
        .args(["check"])
        .arg(page)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the driver failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn texts(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// `r`'s `key` as f64.
fn f(r: &Value, key: &str) -> f64 {
    r[key].as_f64().unwrap_or(f64::NAN)
}

/// Whether the outline `got` is node `bounds` (device pixels) on the image at `img`, within 2 px.
fn outlines(got: &Value, img: &Value, bounds: [i64; 4]) -> bool {
    let (sx, sy) = (
        f(img, "w") / trace_fixture::SIZE.0 as f64,
        f(img, "h") / trace_fixture::SIZE.1 as f64,
    );
    let want = [
        f(img, "x") + bounds[0] as f64 * sx,
        f(img, "y") + bounds[1] as f64 * sy,
        (bounds[2] - bounds[0]) as f64 * sx,
        (bounds[3] - bounds[1]) as f64 * sy,
    ];
    let have = [f(got, "x"), f(got, "y"), f(got, "w"), f(got, "h")];
    want.iter().zip(have).all(|(w, h)| (w - h).abs() <= 2.0)
}

#[test]
fn the_trace_viewer_shows_a_steps_screen_tree_requests_and_logs_from_file_urls() {
    let Some(_chromium) = super::report_browser::chromium() else {
        return;
    };
    let made = tempfile::tempdir().expect("temp dir");
    trace_fixture::write_run(made.path(), 2);
    let out = Command::new(trailblaze_bin())
        .arg("report")
        .arg(made.path())
        .output()
        .expect("trailblaze runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Read from a copy elsewhere: the page holds relative paths only.
    let copy = tempfile::tempdir().expect("temp dir");
    copy_dir(made.path(), copy.path());
    if let Some(keep) = std::env::var_os("TRAILBLAZE_KEEP_VIEWER_RUN") {
        copy_dir(copy.path(), Path::new(&keep));
    }
    drop(made);
    let seen = drive(&copy.path().join("report.html"));
    let steps = &seen;

    // No error, and every request the page made was a file: URL (the trace.js among them, which
    // shows requests are seen at all).
    assert!(texts(&seen["errors"]).is_empty(), "{}", seen["errors"]);
    let requests = texts(&seen["requests"]);
    assert!(
        requests.iter().any(|r| r.ends_with("/sign-in/trace.js")),
        "{requests:?}"
    );
    assert!(requests.iter().all(|r| r.starts_with("file://")), "{requests:?}");
    assert!(
        !requests.iter().any(|r| r.contains("trail-2/trace.js")),
        "an unopened trace was loaded"
    );
    assert_eq!(seen["buttons"], 3);
    assert_eq!(seen["opened"]["title"], "Sign in");
    // Opened on the failed step.
    assert!(
        seen["opened"]["selected"]
            .as_str()
            .unwrap_or_default()
            .contains("Sign in as jane")
    );
    let items = texts(&seen["opened"]["items"]);
    assert!(
        items.iter().any(|i| i.starts_with("inputText")),
        "nested calls listed: {items:?}"
    );

    // Step 1: its screen before, the tap's point, its matched node outlined and its line marked.
    let s1 = &steps["step1"];
    assert_eq!(s1["img"], "sign-in/trace/s0.svg");
    assert!(
        s1["matched"].as_str().unwrap_or_default().contains("[e1] EditText"),
        "{s1}"
    );
    assert!(s1["box"]["cls"].as_str().unwrap_or_default().contains("matched"));
    assert!(outlines(&s1["box"], &s1["imgRect"], trace_fixture::EMAIL), "{s1}");
    let p = &s1["point"];
    let img = &s1["imgRect"];
    let (px, py) = (f(p, "x") + f(p, "w") / 2.0, f(p, "y") + f(p, "h") / 2.0);
    let want = (
        f(img, "x") + 540.0 * f(img, "w") / 1080.0,
        f(img, "y") + 700.0 * f(img, "h") / 2400.0,
    );
    assert!(
        (px - want.0).abs() < 4.0 && (py - want.1).abs() < 4.0,
        "point {p} on {img}"
    );
    assert_eq!(steps["step1after"]["img"], "sign-in/trace/s1.svg");

    // Step 2 (failed): the screen before it, its tree, the nearest candidate outlined, dashed.
    let s2 = &steps["step2"];
    assert_eq!(s2["img"], "sign-in/trace/s1.svg");
    assert!(texts(&s2["tree"]).iter().any(|l| l.contains("[b2] Button \"Sign In\"")));
    assert!(s2["candidate"].as_str().unwrap_or_default().contains("[b2]"));
    assert!(s2["box"]["cls"].as_str().unwrap_or_default().contains("candidate"));
    assert!(
        s2["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("text differs in case")
    );
    // Hovering a tree line outlines its node, scaled to the image; another line, another node.
    assert!(
        outlines(
            &steps["hoverB2"]["hover"],
            &steps["hoverB2"]["imgRect"],
            trace_fixture::SIGN_IN
        ),
        "{}",
        steps["hoverB2"]
    );
    assert!(outlines(
        &steps["hoverE1"]["hover"],
        &steps["hoverE1"]["imgRect"],
        trace_fixture::EMAIL
    ));
    assert!(!outlines(
        &steps["hoverE1"]["hover"],
        &steps["hoverE1"]["imgRect"],
        trace_fixture::SIGN_IN
    ));

    // The network tab: step 2's requests, not step 1's; the failed one with its body.
    let net = texts(&steps["network"]["rows"]).join("\n");
    assert!(net.contains("/api/login") && net.contains("/api/profile"), "{net}");
    assert!(!net.contains("/api/config"), "another step's request: {net}");
    assert!(texts(&steps["step1"]["network"]).join("\n").contains("/api/config"));
    assert!(
        texts(&steps["network"]["bodies"])
            .iter()
            .any(|b| b.contains("invalid password"))
    );

    // The console: the markup line is text, nothing of it ran or loaded.
    let console = &steps["console"];
    assert!(
        texts(&console["rows"])
            .iter()
            .any(|r| r.contains(trace_fixture::HOSTILE)),
        "{console}"
    );
    assert!(console["panelImages"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(console["xss"], Value::Null);
    assert!(
        !texts(&console["rows"]).join("\n").contains("config loaded"),
        "step 1's line"
    );
    assert!(
        texts(&steps["consoleWhole"]["rows"])
            .join("\n")
            .contains("config loaded")
    );
    let log = texts(&steps["devicelog"]["rows"]).join("\n");
    assert!(log.contains("FATAL EXCEPTION") && !log.contains("Start proc"), "{log}");
    assert!(
        steps["agent"]["panel"]
            .as_str()
            .unwrap_or_default()
            .contains("The sign-in button is [b2].")
    );
    // The turn's own screen shows; the one named off the folder (https://) is not loaded.
    let agent = &steps["agent"]["panelImages"];
    assert_eq!(agent, &serde_json::json!(["sign-in/trace/s1.svg"]), "{agent}");
    // The video's nearest frame to the step.
    assert_eq!(steps["video"]["panelImages"][0], "sign-in/trace/v1.svg");
    // Keyboard and search.
    assert!(
        seen["keyUp"].as_str().unwrap_or_default().starts_with("inputText")
            || seen["keyUp"]
                .as_str()
                .unwrap_or_default()
                .starts_with("tapOnElementBySelector"),
        "{}",
        seen["keyUp"]
    );
    assert!(
        seen["keyDown"].as_str().unwrap_or_default().contains("Sign in as jane") || seen["keyDown"] != seen["keyUp"]
    );
    assert_eq!(texts(&seen["search"]).len(), 1, "{}", seen["search"]);
    assert_eq!(seen["closed"], true);
    // A second trail's trace opens over the first's: its video, seeked to its step (0.5 s in).
    let other = &seen["other"];
    assert_eq!(other["video"], "trail-1/video.mp4", "{other}");
    assert!((other["seek"].as_f64().unwrap_or(-1.0) - 0.5).abs() < 1e-6, "{other}");
}
