//! `--jobs` on the web: trails side by side in one Chromium, each in a context of its own, and a
//! browser killed mid-run taking its trails to a new one.

use serde_json::Value;
use trailblaze_e2e::{Fixture, in_dir, text};

use super::{comparable, report};

#[test]
fn jobs_on_the_web_run_trails_side_by_side_each_in_a_context_of_its_own() {
    trailblaze_e2e::web_site::require_chromium();
    let dir = tempfile::tempdir().expect("temp dir");
    let map = dir.path().join("trailmaps/web-demo");
    trailblaze_e2e::copy_dir(&trailblaze_e2e::repo_root().join("trailmaps/web-demo"), &map);
    // Each trail also waits 2 s on its page, so trails that overlap show in the run's duration.
    let trails = map.join("trails");
    for name in ["counter", "sign-in", "slow-page"] {
        let path = trails.join(format!("{name}.trail.yaml"));
        let body = std::fs::read_to_string(&path).expect("trail")
            + "  - step: Stay on the page\n    recording:\n      web:\n        - web_wait: { seconds: 2 }\n";
        std::fs::write(&path, &body).expect("write");
        std::fs::write(trails.join(format!("{name}-copy.trail.yaml")), &body).expect("copy");
    }
    let f = Fixture {
        dir,
        id: "web-demo".into(),
    };
    let pw = map.join("web-demo.secrets").display().to_string();
    let go = |jobs: &str, name: &str| {
        let out = f.dir.path().join(name);
        let o = in_dir(
            &f,
            f.dir.path(),
            &[
                "run",
                "--secrets",
                &pw,
                "--device",
                "web",
                "--jobs",
                jobs,
                "--report-dir",
                out.to_str().unwrap_or_default(),
            ],
        );
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "--jobs {jobs}: {stdout}{stderr}");
        assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
        report(&out)
    };
    let (one, three) = (go("1", "one"), go("3", "three"));
    assert!(
        comparable(one.clone()) == comparable(three.clone()),
        "not the same outcomes and steps"
    );
    let busy = |r: &Value| -> f64 {
        r["trails"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["duration_ms"].as_f64())
            .sum()
    };
    let run_ms = |r: &Value| r["duration_ms"].as_f64().unwrap_or(f64::MAX);
    // Three at once: the run takes well under the sum of its trails (each waits 2 s); one at a time
    // (the control) takes at least that sum.
    assert!(
        run_ms(&three) < busy(&three) * 0.75,
        "{} ms of {} ms: the trails did not overlap",
        run_ms(&three),
        busy(&three)
    );
    assert!(run_ms(&one) >= busy(&one), "{} ms of {} ms", run_ms(&one), busy(&one));
    assert!(
        three["trails"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["device"] == "web"),
        "{three}"
    );
}

#[test]
fn a_browser_killed_mid_run_takes_its_trails_to_a_new_browser() {
    use trailblaze_e2e::web_site::processes_marked;
    trailblaze_e2e::web_site::require_chromium();
    let dir = tempfile::tempdir().expect("temp dir");
    let map = dir.path().join("trailmaps/web-demo");
    trailblaze_e2e::copy_dir(
        &trailblaze_e2e::repo_root().join("trailmaps/web-demo/site"),
        &map.join("site"),
    );
    std::fs::write(
        map.join("trailmap.yaml"),
        "id: web-demo\ntarget:\n  platforms:\n    web: {}\n",
    )
    .expect("trailmap");
    std::fs::create_dir_all(map.join("trails")).expect("trails");
    let trail = "config:\n  target: web-demo\n  devices: { web: chromium }\ntrail:\n  - step: Open the counter\n    recording:\n      web:\n        - web_navigate: { url: ../site/counter.html }\n  - step: Stay\n    recording:\n      web:\n        - web_wait: { seconds: 4 }\n  - verify: The counter is there\n    recording:\n      web:\n        - web_verifyTextVisible: { text: \"Value: 0\" }\n";
    for n in ["a", "b"] {
        std::fs::write(map.join(format!("trails/{n}.trail.yaml")), trail).expect("trail");
    }
    let mark = format!("TRAILBLAZE_TEST_MARK=killed-browser-{}", std::process::id());
    let (key, value) = mark.split_once('=').unwrap_or_default();
    let report_dir = dir.path().join("report");
    let child = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(dir.path())
        .args(["run", "--device", "web", "--jobs", "2", "--report-dir"])
        .arg(&report_dir)
        .env(key, value)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("trailblaze runs");
    let chromium = |pid: &u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.contains("chrom"));
    // Once the browser is up and the trails are in their wait, kill every process of it.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while processes_marked(&mark).iter().filter(|p| chromium(p)).count() == 0 {
        assert!(std::time::Instant::now() < until, "the browser never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed: Vec<u32> = processes_marked(&mark).into_iter().filter(chromium).collect();
    for pid in &killed {
        // SAFETY: kill(2) on a pid of a process this test's trailblaze started.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    let o = child.wait_with_output().expect("output");
    let (out, err) = text(&o);
    assert!(!killed.is_empty());
    assert_eq!(
        o.status.code(),
        Some(0),
        "both trails passed in a new browser: {out}{err}"
    );
    assert!(err.contains("warning: the browser (web) was lost during"), "{err}");
    let r = report(&report_dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 2, "{r}");
    assert!(trails.iter().all(|t| t["outcome"]["status"] == "passed"), "{r}");
    assert!(
        trails.iter().any(|t| t["lost_devices"] == serde_json::json!(["web"])),
        "a trail names the lost browser: {r}"
    );
}
