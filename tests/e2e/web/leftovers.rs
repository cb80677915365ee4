//! What a browser leaves in the temporary folder when its trailblaze is killed outright (SIGKILL:
//! no cleanup runs): its profile (cookies, storage) and its own temporary folder
//! (`org.chromium.Chromium.*`, its singleton socket). The latter now lives inside the profile, and
//! the next start removes the profiles whose trailblaze is gone, never a live run's. Each test runs
//! trailblaze with a temporary folder of its own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use trailblaze_e2e::web_site::{require_chromium, wait_for_none};

use super::lifecycle::{mark, marked, trailblaze, workspace};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .expect("read the folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// A profile folder of trailblaze `pid` in `tmp`, holding a cookie file, whose singleton socket
/// points into a browser temporary folder `temp` beside it (as Chromium lays them out).
fn fake_profile(tmp: &Path, pid: u32, temp: &str) -> (PathBuf, PathBuf) {
    let profile = tmp.join(format!("trailblaze-chromium-{pid}-0-test"));
    std::fs::create_dir_all(profile.join("Default")).expect("profile");
    std::fs::write(profile.join("Default/Cookies"), "session=1").expect("cookies");
    let temp = tmp.join(temp);
    std::fs::create_dir_all(&temp).expect("temp");
    std::os::unix::fs::symlink(temp.join("SingletonSocket"), profile.join("SingletonSocket")).expect("link");
    (profile, temp)
}

#[test]
fn a_start_removes_what_a_killed_run_left_and_keeps_a_live_runs() {
    require_chromium();
    let dir = workspace(1);
    let tmp = tempfile::tempdir().expect("temp dir");
    // No process has this id (above the kernel's largest pid): its run is gone.
    let (stale, stale_temp) = fake_profile(tmp.path(), 4_000_000_000, "org.chromium.Chromium.stale1");
    // This test's own process is alive: a live run's folders.
    let (live, live_temp) = fake_profile(tmp.path(), std::process::id(), "org.chromium.Chromium.live1");
    let m = mark("sweep");
    let out = trailblaze(dir.path(), &m, &["snapshot", "--device", "web"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("trailblaze runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stale.exists(), "the killed run's profile stayed");
    assert!(!stale_temp.exists(), "the killed run's browser temporary folder stayed");
    assert!(live.exists() && live_temp.exists(), "a live run's folders were removed");
    // And the run left nothing of its own.
    assert_eq!(
        names(tmp.path()),
        vec![
            "org.chromium.Chromium.live1".to_string(),
            format!("trailblaze-chromium-{}-0-test", std::process::id())
        ]
    );
}

#[test]
fn sigkill_leaves_the_browsers_temporary_folder_inside_its_profile_and_the_next_start_removes_both() {
    require_chromium();
    let dir = workspace(60);
    let tmp = tempfile::tempdir().expect("temp dir");
    let m = mark("leftover");
    let mut child = trailblaze(dir.path(), &m, &["run", "web.trail.yaml"])
        .env("TMPDIR", tmp.path())
        .spawn()
        .expect("spawn");
    let profile_prefix = format!("trailblaze-chromium-{}-", child.id());
    // The browser is up once it made its singleton socket's folder (inside its profile).
    let until = Instant::now() + Duration::from_secs(60);
    let in_profile = |tmp: &Path| -> bool {
        names(tmp).iter().filter(|n| n.starts_with(&profile_prefix)).any(|p| {
            let inner = tmp.join(p).join("tmp");
            inner.is_dir() && names(&inner).iter().any(|n| n.starts_with("org.chromium."))
        })
    };
    while !in_profile(tmp.path()) {
        assert!(
            Instant::now() < until,
            "the browser never made its temporary folder inside its profile: {:?}",
            names(tmp.path())
        );
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            panic!(
                "the browser never made its temporary folder inside its profile before trailblaze ended: {:?}\n{}\n{}",
                names(tmp.path()),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    assert_eq!(
        wait_for_none(Duration::from_secs(10), || marked(&m)),
        0,
        "SIGKILL left a browser"
    );
    // Only the profile is left, nothing of the browser's beside it.
    let left = names(tmp.path());
    assert!(
        !left.is_empty() && left.iter().all(|n| n.starts_with(&profile_prefix)),
        "{left:?}"
    );
    // The next start removes it.
    let m = mark("leftover-next");
    let out = trailblaze(dir.path(), &m, &["snapshot", "--device", "web"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("trailblaze runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}
