//! A by-hand proof: the original Trailblaze's `trails/ios-contacts` trails, run as its own CI runs
//! them (`TRAILBLAZE_CONFIG_DIR=examples/ios-contacts/trails/config`, `--device ios`), against the
//! fake WebDriverAgent serving the Contacts-like app (tests/fake_wda). It needs a checkout of the
//! original, which CI does not have, so it is ignored; `scripts/original-ios.sh PATH-TO-IT` stages
//! its files (scripts/stage-original-ios.sh, never committed) and runs it. Run that way, a missing
//! checkout fails it: it never passes having run nothing.

use std::process::Command;

use serde_json::Value;
use trailblaze_e2e::fake_wda::FakeWda;
use trailblaze_e2e::{repo_root, trailblaze_bin};

#[test]
#[ignore = "needs a checkout of the original Trailblaze: run scripts/original-ios.sh PATH-TO-IT"]
fn the_originals_ios_contacts_trails_run_on_the_fake() {
    let dir = tempfile::tempdir().expect("temp dir");
    let staged = Command::new(repo_root().join("scripts/stage-original-ios.sh"))
        .arg(dir.path())
        .output()
        .expect("the staging script runs");
    assert!(
        staged.status.success(),
        "the original's iOS trails could not be staged (set TRAILBLAZE_ORIGINAL to its checkout): {}",
        String::from_utf8_lossy(&staged.stderr)
    );
    let staged_trails = String::from_utf8_lossy(&staged.stdout).lines().count();
    assert_eq!(staged_trails, 18, "the original has 18 iOS Contacts trails");
    let fake = FakeWda::contacts();
    let report_dir = dir.path().join("report");
    let out = Command::new(trailblaze_bin())
        .current_dir(dir.path())
        .args(["run", "trails/ios-contacts", "--device"])
        .arg(format!("ios:{}", fake.url()))
        .arg("--report-dir")
        .arg(&report_dir)
        .env(
            "TRAILBLAZE_CONFIG_DIR",
            dir.path().join("examples/ios-contacts/trails/config"),
        )
        .env("NO_COLOR", "1")
        .env("TRAILBLAZE_CACHE_DIR", dir.path().join(".cache"))
        .output()
        .expect("trailblaze runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("no report ({e}):\n{stdout}\n{stderr}"));
    let trails = report["trails"].as_array().cloned().unwrap_or_default();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for t in &trails {
        let status = t["outcome"]["status"].as_str().unwrap_or("?").to_string();
        let why = t["outcome"]["reason"]
            .as_str()
            .or(t["outcome"]["error"].as_str())
            .unwrap_or("");
        println!(
            "{:<45} {status:<8} {}",
            t["file"].as_str().or(t["id"].as_str()).unwrap_or("?"),
            why.lines().next().unwrap_or("")
        );
        *counts.entry(status).or_default() += 1;
    }
    println!("{counts:?} of {} trails", trails.len());
    assert_eq!(trails.len(), 18, "{stdout}\n{stderr}");
    // Every trail that has a recording for an iPhone and is not skipped there passes; the rest
    // have no recording (an LLM would run them) or skip themselves on `ios-iphone`.
    let recorded_and_run = trails
        .iter()
        .filter(|t| t["outcome"]["status"] != "skipped" && !is_unrecorded(t));
    for t in recorded_and_run {
        assert_eq!(t["outcome"]["status"], "passed", "{t}");
    }
    assert!(
        counts.get("passed").copied().unwrap_or(0) >= 14,
        "{counts:?}\n{stdout}\n{stderr}"
    );
}

/// A trail with a step that has no recording: without an agent it cannot run.
fn is_unrecorded(t: &Value) -> bool {
    t["outcome"]["status"].as_str().is_some_and(|s| s.contains("recorded"))
}
