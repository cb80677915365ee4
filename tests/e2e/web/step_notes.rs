//! A step's page notes (URL, console errors, failed requests) are the page as that step left it,
//! though the next step's first call is sent to the browser before the step is reported.

use super::lifecycle::{mark, trailblaze, with_steps};
use trailblaze_e2e::web_site::require_chromium;

/// The report of `web.trail.yaml` in `dir`, run to the end.
fn run(dir: &std::path::Path) -> serde_json::Value {
    let m = mark("notes");
    let out = trailblaze(dir, &m, &["run", "--report-dir", "report", "web.trail.yaml"])
        .output()
        .expect("trailblaze runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("report/report.json")).expect("report");
    serde_json::from_str(&text).expect("JSON")
}

/// The site's home logs a console error (its beacon), then the next step opens another page: the
/// first step's notes name the home and its error, the second's the other page and no error.
#[test]
fn each_steps_page_notes_are_the_page_it_left_not_the_next_steps() {
    require_chromium();
    let dir = with_steps(
        "",
        "  - step: Open the sign-in page\n    recording:\n      web:\n        - web_navigate: { url: site/form.html }\n",
    );
    let report = run(dir.path());
    let steps = &report["trails"][0]["steps"];
    let url = |i: usize| steps[i]["page"]["url"].as_str().unwrap_or_default().to_string();
    // Control: the second step's notes do tell of the page it opened.
    assert!(url(1).ends_with("/site/form.html"), "{}", steps[1]);
    assert!(url(0).ends_with("/site/index.html"), "{}", steps[0]);
    assert_eq!(steps[0]["page"]["consoleErrors"][0], "beacon sent", "{}", steps[0]);
    let errors = steps[1]["page"]["consoleErrors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(errors.is_empty(), "{}", steps[1]);
}
