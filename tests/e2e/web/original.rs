//! The original's playwright-native trails that open its local sample pages pass on `--device web`
//! unchanged. They are staged from its repository at test time (scripts/stage-original-web.sh, from
//! /work/orig or $TRAILBLAZE_ORIGINAL), never committed; without it the test says so and passes.

use std::process::Command;

use trailblaze_e2e::web_site::require_chromium;
use trailblaze_e2e::{repo_root, trailblaze_bin};

#[test]
fn the_originals_sample_page_trails_pass_unchanged() {
    require_chromium();
    let dir = tempfile::tempdir().expect("temp dir");
    let staged = Command::new(repo_root().join("scripts/stage-original-web.sh"))
        .arg(dir.path())
        .output()
        .expect("the staging script runs");
    if staged.status.code() == Some(3) {
        eprintln!(
            "NOTICE: the original Trailblaze is not checked out (set TRAILBLAZE_ORIGINAL): its web trails were not run"
        );
        return;
    }
    assert!(staged.status.success(), "{}", String::from_utf8_lossy(&staged.stderr));
    let trails = String::from_utf8_lossy(&staged.stdout).lines().count();
    assert!(trails >= 6, "staged {trails} trails");
    // No --device: the trails name only a web device (`devices: {web: PLAYWRIGHT_NATIVE}`).
    let out = Command::new(trailblaze_bin())
        .current_dir(dir.path())
        .args(["run", "trails/playwright-native"])
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{trails} passed, 0 failed")),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
