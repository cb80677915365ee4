use std::time::Duration;

use super::*;
use crate::trail::Outcome;

fn header() -> RunReport {
    RunReport {
        shard: None,
        suite: None,
        started_unix_ms: 1,
        duration_ms: 0.0,
        device: "sim".into(),
        trails: Vec::new(),
        llm: None,
    }
}

fn trail(n: usize) -> TrailReport {
    TrailReport {
        device: None,
        lost_devices: Vec::new(),
        llm: None,
        file: format!("t{n}.trail.yaml"),
        id: Some(format!("demo/t{n}")),
        title: None,
        outcome: Outcome::Passed,
        duration_ms: 1.0,
        steps: Vec::new(),
        error: None,
        log: None,
        written: None,
        storyboard: None,
        trace: None,
    }
}

/// The trails in `dir/report.json`, once it holds `want` of them (bounded wait).
fn trails_on_disk(dir: &Path, want: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n = std::fs::read_to_string(dir.join("report.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["trails"].as_array().map(Vec::len))
            .unwrap_or(0);
        if n >= want || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn each_finished_trail_reaches_the_files_while_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut report = header();
    let mut interim = InterimReports::start(&report, dir.path());
    // Positive control: nothing is written before a trail finished.
    std::thread::sleep(Duration::from_millis(20));
    assert!(!dir.path().join("report.json").exists());
    for n in 0..3 {
        report.trails.push(trail(n));
        let last = report.trails.len() - 1;
        interim.finished_at(last, &report.trails[last], &report, || report.clone());
        assert_eq!(
            trails_on_disk(dir.path(), n + 1),
            n + 1,
            "trail {n} is on disk before the next one ends"
        );
    }
    for name in ["report.html", "junit.xml"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    assert!(interim.finish() >= 3);
}

#[test]
fn a_burst_of_trails_is_written_in_a_few_writes_not_one_each() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut report = header();
    let mut interim = InterimReports::start(&report, dir.path());
    for n in 0..300 {
        report.trails.push(trail(n));
        let last = report.trails.len() - 1;
        interim.finished_at(last, &report.trails[last], &report, || report.clone());
    }
    // The last interim write holds every trail (the run writes its final reports after `finish`).
    assert_eq!(trails_on_disk(dir.path(), 300), 300);
    let writes = interim.finish();
    assert!((1..100).contains(&writes), "{writes} writes for 300 trails");
}
