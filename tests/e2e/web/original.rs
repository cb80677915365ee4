//! A by-hand proof: the original's playwright-native trails that open its local sample pages pass on
//! `--device web` unchanged. It needs a checkout of the original, which CI does not have, so it is
//! ignored; `scripts/original-web.sh PATH-TO-THE-ORIGINAL` stages its trails and pages
//! (scripts/stage-original-web.sh, never committed) and runs it. Run that way, a missing checkout
//! fails it: it never passes having run nothing.

use std::process::Command;

use trailblaze_e2e::web_site::require_chromium;
use trailblaze_e2e::{repo_root, trailblaze_bin};

#[test]
#[ignore = "needs a checkout of the original Trailblaze: run scripts/original-web.sh PATH-TO-IT"]
fn the_originals_sample_page_trails_pass_unchanged() {
    require_chromium();
    let dir = tempfile::tempdir().expect("temp dir");
    let staged = Command::new(repo_root().join("scripts/stage-original-web.sh"))
        .arg(dir.path())
        .output()
        .expect("the staging script runs");
    assert!(
        staged.status.success(),
        "the original's web trails could not be staged (set TRAILBLAZE_ORIGINAL to its checkout): {}",
        String::from_utf8_lossy(&staged.stderr)
    );
    let trails = String::from_utf8_lossy(&staged.stdout).lines().count();
    assert!(trails >= 6, "staged {trails} trails");
    // No --device: the trails name only a web device (`devices: {web: PLAYWRIGHT_NATIVE}`).
    let out = Command::new(trailblaze_bin())
        .current_dir(dir.path())
        .args(["run", "trails/playwright-native"])
        .env("NO_COLOR", "1")
        .env("TRAILBLAZE_CACHE_DIR", dir.path().join(".cache"))
        .output()
        .expect("trailblaze runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{trails} passed, 0 failed")),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
