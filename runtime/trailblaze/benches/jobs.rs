//! `run --jobs`: the same trails one at a time and several at once, in one run, the ratio printed.
//! 16 sign-in trails on 4 fake phones behind the adb protocol with a slow `uiautomator dump`
//! (`--jobs 4` over the pool vs `--jobs 1` on one phone), and 1,000 short trails on the simulated
//! device (`--jobs 2` vs `--jobs 1`), and 8 web trails in real Chromium (`--jobs 8` vs `--jobs 1`),
//! with the peak memory of the whole process tree (trailblaze and its browsers).
//!
//! `cargo bench -p trailblaze --bench jobs` (dump 300 ms; `TRAILBLAZE_DUMP_MS` changes it; under
//! `cargo test` a smoke-sized pass)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use trailblaze::device::DeviceSpec;
use trailblaze::report::ScreenshotPolicy;
use trailblaze::{RunOptions, run_trails};
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::replay::demo_project;

/// `n` copies of the demo's sign-in trail in `dir`.
fn trails(dir: &Path, n: usize) -> Vec<PathBuf> {
    let body = std::fs::read_to_string(trailblaze_e2e::repo_root().join("trailmaps/demo/trails/sign-in.trail.yaml"))
        .expect("the demo's sign-in trail");
    std::fs::create_dir_all(dir).expect("trails folder");
    (0..n)
        .map(|i| {
            let path = dir.join(format!("t{i:04}.trail.yaml"));
            std::fs::write(&path, &body).expect("write a trail");
            path
        })
        .collect()
}

/// Runs `files` with `opts`, checks every trail passed, and gives the time it took.
fn timed(project: &trailblaze::Project, files: &[PathBuf], opts: &RunOptions) -> Duration {
    let started = Instant::now();
    let out = run_trails(project, files, opts, &mut ()).expect("the run");
    let took = started.elapsed();
    let s = out.report.summary();
    assert_eq!(s.passed, files.len(), "every trail passes: {s:?}");
    took
}

/// CPU time (user and system) this process has used so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage, RUSAGE_SELF.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// `timed`, and how many cores the run kept busy on average (CPU time over wall time).
fn timed_busy(project: &trailblaze::Project, files: &[PathBuf], opts: &RunOptions) -> (Duration, f64) {
    let cpu = cpu_time();
    let took = timed(project, files, opts);
    (took, (cpu_time() - cpu).as_secs_f64() / took.as_secs_f64())
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let dump_ms: u64 = std::env::var("TRAILBLAZE_DUMP_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 300 } else { 5 });
    let (phone_trails, sim_trails) = if full { (16, 1000) } else { (4, 20) };
    let tmp = tempfile::tempdir().expect("temp dir");
    let project = demo_project(&tmp.path().join("cache"));
    let base = |name: &str| RunOptions {
        out: tmp.path().join("out"),
        report_dir: Some(tmp.path().join(name)),
        screenshots: ScreenshotPolicy::None,
        ..RunOptions::default()
    };

    let serials = ["phone-1", "phone-2", "phone-3", "phone-4"];
    let fake = FakeAdb::demo_many(&serials);
    for d in fake.devices() {
        d.set_dump_delay(Duration::from_millis(dump_ms));
    }
    let server = fake.addr().to_string();
    let phone = |s: &str| DeviceSpec::parse(&format!("android:{s}"), Some(&server)).expect("a phone");
    let files = trails(&tmp.path().join("phones"), phone_trails);
    let one = timed(
        &project,
        &files,
        &RunOptions {
            device: phone(serials[0]),
            jobs: 1,
            ..base("phones-1")
        },
    );
    let four = timed(
        &project,
        &files,
        &RunOptions {
            device: phone(serials[0]),
            pool: serials[1..].iter().map(|s| phone(s)).collect(),
            jobs: 4,
            ..base("phones-4")
        },
    );
    println!(
        "{phone_trails} trails on fake phones (dump {dump_ms} ms): --jobs 1 on one phone {:.2} s, --jobs 4 on four {:.2} s: {:.2}× faster",
        one.as_secs_f64(),
        four.as_secs_f64(),
        one.as_secs_f64() / four.as_secs_f64()
    );
    for d in fake.devices() {
        assert!(d.most_at_once() <= 1, "{} drove two trails at once", d.serial());
    }

    let files = trails(&tmp.path().join("sims"), sim_trails);
    let (one, one_busy) = timed_busy(
        &project,
        &files,
        &RunOptions {
            jobs: 1,
            ..base("sim-1")
        },
    );
    let (two, two_busy) = timed_busy(
        &project,
        &files,
        &RunOptions {
            jobs: 2,
            ..base("sim-2")
        },
    );
    println!(
        "{sim_trails} trails on the sim: --jobs 1 {:.2} s ({:.1} ms/trail, {one_busy:.2} cores busy), --jobs 2 {:.2} s ({two_busy:.2} cores busy): {:.2}× faster (cores: {})",
        one.as_secs_f64(),
        one.as_secs_f64() * 1000.0 / sim_trails as f64,
        two.as_secs_f64(),
        one.as_secs_f64() / two.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    #[cfg(feature = "web")]
    web(&project, tmp.path(), if full { 8 } else { 2 });
}

/// `n` copies of the web demo's counter trail at once vs one at a time, each in a context of its own.
#[cfg(feature = "web")]
fn web(project: &trailblaze::Project, tmp: &Path, n: usize) {
    let demo = trailblaze_e2e::repo_root().join("trailmaps/web-demo");
    let map = tmp.join("web/trailmaps/web-demo");
    trailblaze_e2e::copy_dir(&demo.join("site"), &map.join("site"));
    let body = std::fs::read_to_string(demo.join("trails/counter.trail.yaml")).expect("the counter trail");
    std::fs::create_dir_all(map.join("trails")).expect("trails folder");
    let files: Vec<PathBuf> = (0..n)
        .map(|i| {
            let path = map.join(format!("trails/counter-{i}.trail.yaml"));
            std::fs::write(&path, &body).expect("write a trail");
            path
        })
        .collect();
    let opts = |jobs: usize, name: &str| RunOptions {
        out: tmp.join("out"),
        report_dir: Some(tmp.join(name)),
        screenshots: ScreenshotPolicy::None,
        device: DeviceSpec::parse("web", None).expect("web"),
        jobs,
        ..RunOptions::default()
    };
    let (one, one_peak) = peak_while(|| timed(project, &files, &opts(1, "web-1")));
    let (all, all_peak) = peak_while(|| timed(project, &files, &opts(n, "web-n")));
    println!(
        "{n} web trails in Chromium: --jobs 1 {:.2} s (peak {:.0} MiB), --jobs {n} {:.2} s (peak {:.0} MiB): {:.2}× faster",
        one.as_secs_f64(),
        one_peak as f64 / 1024.0,
        all.as_secs_f64(),
        all_peak as f64 / 1024.0,
        one.as_secs_f64() / all.as_secs_f64()
    );
}

/// Runs `f` while sampling the resident memory of this process and every process under it; the
/// result and the peak in KiB.
#[cfg(feature = "web")]
fn peak_while<T>(f: impl FnOnce() -> T) -> (T, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let (stop, peak) = (AtomicBool::new(false), AtomicU64::new(0));
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(tree_rss_kib(std::process::id()), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        (out, peak.load(Ordering::Relaxed))
    })
}

/// The resident memory (KiB) of `root` and its descendants, from /proc.
#[cfg(feature = "web")]
fn tree_rss_kib(root: u32) -> u64 {
    let mut parent = std::collections::HashMap::new();
    let mut rss = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        parent.insert(pid, field("PPid:").unwrap_or(0) as u32);
        rss.insert(pid, field("VmRSS:").unwrap_or(0));
    }
    let under = |mut pid: u32| {
        while pid > 1 {
            if pid == root {
                return true;
            }
            pid = parent.get(&pid).copied().unwrap_or(0);
        }
        false
    };
    rss.iter().filter(|(pid, _)| under(**pid)).map(|(_, kib)| kib).sum()
}
