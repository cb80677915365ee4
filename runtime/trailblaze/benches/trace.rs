//! What a trace costs (docs/trace.md): the demo suite on the simulated device, and the web demo's
//! trails in real Chromium, run whole (reports included) with `--trace on` and with `--trace off`,
//! rounds interleaved so both see the same machine; medians, the ratio, and the bytes a traced step
//! costs on disk (each trail's trace folder, over its steps).
//!
//! `cargo bench -p trailblaze --bench trace` (20 rounds each; a smoke-sized 2 under `cargo test`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use trailblaze::trace::{TracePolicy, TraceSettings};
use trailblaze::{ProjectOptions, RunOptions, run_trails};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn settings(trace: TracePolicy) -> TraceSettings {
    TraceSettings {
        trace,
        video: TracePolicy::Off,
    }
}

/// The bytes under `dir` (recursively).
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                bytes_under(&p)
            } else {
                e.metadata().map_or(0, |m| m.len())
            }
        })
        .sum()
}

/// Runs `files` `rounds` times with the trace on and off, interleaved; prints the figures.
fn compare(label: &str, project: &trailblaze::Project, files: &[PathBuf], base: &RunOptions, rounds: usize) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (mut on, mut off) = (Vec::new(), Vec::new());
    let mut traced_bytes = 0;
    let mut steps = 0;
    for round in 0..rounds {
        for (trace, times) in [(TracePolicy::Off, &mut off), (TracePolicy::On, &mut on)] {
            let dir = tmp.path().join(format!("{round}-{}", times.len()));
            let opts = RunOptions {
                report_dir: Some(dir.clone()),
                trace: settings(trace),
                ..base.clone()
            };
            let t = Instant::now();
            let out = run_trails(project, files, &opts, &mut ()).expect("runs");
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            let failed: Vec<&str> = out
                .report
                .trails
                .iter()
                .filter(|t| t.outcome != trailblaze::report::Outcome::Passed)
                .map(|t| t.file.as_str())
                .collect();
            assert!(failed.is_empty(), "{label}: trails did not pass: {failed:?}");
            if trace == TracePolicy::On && round == 0 {
                for t in &out.report.trails {
                    let rel = t.trace.as_deref().expect("a trace kept");
                    traced_bytes += bytes_under(dir.join(rel).parent().expect("folder")) - bytes_under_log(&dir, t);
                    steps += t.steps.len() as u64;
                }
            }
        }
    }
    let (on, off) = (median(on), median(off));
    println!(
        "{label}: --trace off {off:.1} ms, --trace on {on:.1} ms: {:.3}× the wall time ({:+.1}%); a traced step costs {} bytes on disk ({} steps, {:.1} KiB of traces)",
        on / off,
        (on / off - 1.0) * 100.0,
        traced_bytes / steps.max(1),
        steps,
        traced_bytes as f64 / 1024.0
    );
}

/// The size of the trail's log and storyboard, which a run writes with or without a trace.
fn bytes_under_log(dir: &Path, t: &trailblaze::report::TrailReport) -> u64 {
    [t.log.as_deref(), t.storyboard.as_deref()]
        .into_iter()
        .flatten()
        .map(|rel| std::fs::metadata(dir.join(rel)).map_or(0, |m| m.len()))
        .sum()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 20 } else { 2 };
    let root = trailblaze_e2e::repo_root();
    let cache = tempfile::tempdir().expect("cache dir");
    let open = |secrets: &str| {
        let store = trailblaze_host_functions::SecretStore::from_env_and_file(Some(&root.join(secrets)))
            .expect("the demo's secrets");
        trailblaze::open(
            &root.join("trailmaps"),
            ProjectOptions {
                cache_dir: Some(cache.path().to_path_buf()),
                ..ProjectOptions::default()
            },
        )
        .expect("project")
        .with_secrets(store)
    };
    let trails_of = trailblaze_e2e::replay::trails_of;
    let project = open("trailmaps/demo/demo.secrets");
    let base = RunOptions {
        out: cache.path().join("out"),
        ..RunOptions::default()
    };
    compare(
        "demo suite (sim, 3 trails)",
        &project,
        &trails_of("demo"),
        &base,
        rounds * 5,
    );

    #[cfg(feature = "web")]
    {
        trailblaze_e2e::web_site::require_chromium();
        let project = open("trailmaps/web-demo/web-demo.secrets");
        let web = RunOptions {
            device: trailblaze::device::DeviceSpec::parse("web", None).expect("web"),
            ..base
        };
        compare(
            "web demo (Chromium, 3 trails)",
            &project,
            &trails_of("web-demo"),
            &web,
            rounds,
        );
    }
}
