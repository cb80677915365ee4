//! report.html in a real browser: headless Debian Chromium renders a real run's report (a scripted
//! tool with nested calls, a failing step), runs its script, and logs no console error.
//! Without Chromium the test says so and passes, except under CI (`CI=true`), where it fails.
//! `TRAILBLAZE_REPORT_SCREENSHOT=docs/report.png` also saves a screenshot of the page there.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::report::{fixture, opts, run, trail_text, write};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Chromium; a failure when it is missing, unless `TRAILBLAZE_ALLOW_MISSING` names it (`None`).
pub(crate) fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.is_file() {
        return Some(path);
    }
    trailblaze_e2e::missing_tool("chromium", "chromium");
    None
}

/// Runs headless Chromium on `page` with `extra` flags; returns (stdout, stderr).
pub(crate) fn headless(chromium: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let profile = tempfile::tempdir().expect("profile dir");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The lines where the page's console reported an error.
pub(crate) fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("Uncaught") || (l.contains("CONSOLE") && l.to_lowercase().contains("error")))
        .collect()
}

#[test]
fn the_report_renders_in_chromium_with_nested_steps_and_no_console_error() {
    let Some(chromium) = chromium() else { return };
    let f = fixture();
    let steps = "  - verify: The inbox is shown\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Inbox$\" } } }\n  - step: Open the settings\n    recording:\n      tools:\n        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Setings } } }\n";
    let failing = write(&f, "browse.trail.yaml", &trail_text("", "jane@example.com", steps));
    let steps = "  - step: Open Ana's message\n    recording:\n      tools:\n        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Ana Lima$\" } } }\n";
    let passing = write(&f, "open.trail.yaml", &trail_text("", "jane@example.com", steps));
    let out = run(&f, &[failing, passing], opts(&f));
    let (dom, stderr) = headless(&chromium, &out.files.html, &["--dump-dom".to_string()]);
    // The page's script ran to its end.
    assert!(dom.contains("data-script=\"ran\""), "the script did not run:\n{stderr}");
    assert!(console_errors(&stderr).is_empty(), "{stderr}");
    // The nested calls are in the rendered DOM, inside the scripted tool's call.
    let sign_in = dom.find("<code>signInWith</code>").expect("the scripted tool's call");
    let nested = dom[sign_in..].find("<code>launchApp</code>").expect("its nested calls");
    assert!(
        dom[sign_in..sign_in + nested].contains("<ol class=\"calls\">"),
        "nested, not flat"
    );
    assert!(dom.contains("nearest on screen"), "the failing step's error is shown");
    // The failing trail opens, the passing one is folded.
    assert!(dom.contains("<details class=\"trail failed\" id=\"trail-1\" open=\"open\">"));
    assert!(dom.contains("<details class=\"trail passed\" id=\"trail-2\">"));
    if let Ok(shot) = std::env::var("TRAILBLAZE_REPORT_SCREENSHOT") {
        let shot = std::path::absolute(&shot).expect("a path");
        headless(
            &chromium,
            &out.files.html,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1000,1300".to_string(),
                "--hide-scrollbars".to_string(),
            ],
        );
        assert!(shot.is_file(), "{}", shot.display());
    }
}

#[test]
fn a_script_error_would_be_seen() {
    // Control for the test above: a page that throws shows up in what `console_errors` reads.
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().expect("dir");
    let page = dir.path().join("boom.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><script>throw new Error('boom');</script></body></html>",
    )
    .expect("write");
    let (_, stderr) = headless(&chromium, &page, &["--dump-dom".to_string()]);
    assert!(!console_errors(&stderr).is_empty(), "{stderr}");
}
