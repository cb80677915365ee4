//! Issue 24 item 6: `run --report-dir DIR` is a fresh folder each run (a trail's `log.jsonl` holds
//! this run's steps only, not the last run's too), and a second run into a folder another run is
//! writing fails at once, clearly, instead of mixing the two.

use std::path::Path;
use std::process::{Command, Output};

use trailblaze_e2e::{Fixture, text, trailblaze_bin};

fn run_into(f: &Fixture, dir: &Path) -> Output {
    Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .args(["run", "trailmaps/demo/trails/sign-in.trail.yaml", "--report-dir"])
        .arg(dir)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", "hunter2")
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs")
}

/// The `seq` of every `step_started` in the trail's log.
fn started_seqs(dir: &Path) -> Vec<u64> {
    let log = std::fs::read_to_string(dir.join("sign-in/log.jsonl")).expect("the trail's log");
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "step_started")
        .filter_map(|v| v["seq"].as_u64())
        .collect()
}

#[test]
fn a_fixed_report_folder_holds_the_last_run_only() {
    let f = Fixture::demo();
    let dir = f.dir.path().join("fixed");
    let o = run_into(&f, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let first = started_seqs(&dir);
    // Control: the first run logged its steps, each once.
    assert!(first.len() >= 4, "{first:?}");
    let o = run_into(&f, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(
        started_seqs(&dir),
        first,
        "the second run replaced the log, not appended to it"
    );
}

#[test]
fn a_second_run_into_a_folder_in_use_fails_clearly() {
    use std::os::fd::AsRawFd;
    let f = Fixture::demo();
    let dir = f.dir.path().join("shared");
    std::fs::create_dir_all(&dir).expect("dir");
    // Another run holds the folder (its lock, taken as a run takes it).
    let held = std::fs::File::create(dir.join(".trailblaze-run.lock")).expect("lock file");
    // SAFETY: flock on a descriptor owned by `held` for as long as the call.
    let rc = unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(rc, 0, "the test holds the lock");
    let o = run_into(&f, &dir);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("another run is writing its reports in this folder"),
        "{err}"
    );
    assert!(!dir.join("report.json").exists(), "nothing written");
    // Control: once the other run ends, the folder is this run's.
    drop(held);
    let o = run_into(&f, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(dir.join("report.json").exists());
}
