//! `check` over a generated corpus of 1,000 trails × 20 recorded calls: the native type gate beside
//! `--tsc` (the real TypeScript compiler), in one run: cold, warm (the cache), and their ratios.
//!
//! `cargo bench -p trailblaze --bench check` (needs `npm ci --prefix sdk-ts` for tsc). Cold runs
//! start with no check cache, warm ones read every result from it. For a profile of the native gate
//! alone, `CHECK_BENCH_PROFILE=N` runs it N times uncached (`CHECK_BENCH_WARM=1`: cached) and nothing
//! else: `CHECK_BENCH_PROFILE=20 perf record -g target/release/deps/check-* --bench`.

use std::path::Path;
use std::time::Instant;

use trailblaze::ProjectOptions;
use trailblaze::gates::{CheckOptions, check_native, check_native_with, check_tsc};

const CALLS: usize = 20;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; under `cargo test` this is a smoke-sized pass.
    let trails_n: usize = if std::env::args().any(|a| a == "--bench") {
        1000
    } else {
        20
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("trailmaps");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps/demo"),
        &root.join("demo"),
    );
    let calls = [
        "launchApp: { appId: com.example.demo }",
        "inputText: { text: 'jane@example.com', nodeSelector: { androidAccessibility: { resourceIdRegex: '.*:id/email' } } }",
        "inputText: { text: '{{secret:DEMO_PASSWORD}}', nodeSelector: { androidAccessibility: { hintTextRegex: Password } } }",
        "tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in }, below: { androidAccessibility: { hintTextRegex: Password } } } }",
        "assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Inbox } } }",
        "pressKey: { keyCode: BACK }",
        "tapOnPoint: { x: 540, y: 700 }",
        "openMessage: { index: 2 }",
        "setDarkMode: { enabled: true }",
        "eraseText: { charactersToErase: 4 }",
    ];
    let bench_dir = root.join("demo/trails/bench");
    std::fs::create_dir_all(&bench_dir).expect("mkdir");
    let mut files = Vec::new();
    for t in 0..trails_n {
        let mut text = format!(
            "config:\n  id: bench/{t}\n  target: demo\ntrail:\n  - step: Step {t}\n    recording:\n      tools:\n"
        );
        for c in 0..CALLS {
            text.push_str(&format!("        - {}\n", calls[(t + c) % calls.len()]));
        }
        let file = bench_dir.join(format!("t{t:04}.trail.yaml"));
        std::fs::write(&file, text).expect("write");
        files.push(file);
    }
    let project = trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..ProjectOptions::default()
        },
    )
    .expect("project");
    // `CHECK_BENCH_PROFILE=N`: N native checks and nothing else, for `perf record`.
    if let Some(n) = std::env::var("CHECK_BENCH_PROFILE")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let opts = CheckOptions {
            cache: std::env::var_os("CHECK_BENCH_WARM").is_some(),
        };
        for _ in 0..n {
            check_native_with(&project, &files, &opts);
        }
        return;
    }
    let t = Instant::now();
    for f in &files {
        trailblaze::Trail::load(f).expect("parses");
    }
    println!("  (parsing alone: {:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    let t = Instant::now();
    for (f, s) in files.iter().zip(&texts) {
        let _ = <saphyr::MarkedYaml as saphyr::LoadableYamlNode>::load_from_str(s);
        let _ = f;
    }
    println!("  (saphyr alone: {:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    for (f, s) in files.iter().zip(&texts) {
        let _ = trailblaze::gates::parse_yaml(s, f);
    }
    println!("  (yaml::parse: {:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let _ = project.catalog("demo");
    println!("  (catalog: {:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    let median = |mut runs: Vec<std::time::Duration>| {
        runs.sort();
        runs[runs.len() / 2]
    };
    let expect_clean = |r: &trailblaze::gates::CheckReport| {
        assert_eq!(
            (r.trails, r.calls, r.findings.len()),
            (trails_n, trails_n * CALLS, 0),
            "{:?}",
            r.findings.first()
        );
    };
    let check_cache = dir.path().join("cache/check");
    // Cold: nothing reused, the cache written (what a first `trailblaze check` does).
    let mut cold = Vec::new();
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(&check_cache);
        let t = Instant::now();
        let r = check_native(&project, &files);
        cold.push(t.elapsed());
        expect_clean(&r);
        assert_eq!(r.stats.cached, 0);
    }
    // Cold without the cache at all (`--no-cache`).
    let mut uncached = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = check_native_with(&project, &files, &CheckOptions { cache: false });
        uncached.push(t.elapsed());
        expect_clean(&r);
    }
    // Warm: the files unchanged since the last run, every result read from the cache.
    let mut warm = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = check_native(&project, &files);
        warm.push(t.elapsed());
        expect_clean(&r);
        assert_eq!((r.stats.cached, r.stats.checked), (trails_n, 0), "every result reused");
    }
    let t = Instant::now();
    let r = check_tsc(&project, &files).expect("tsc runs (npm ci --prefix sdk-ts)");
    let tsc = t.elapsed();
    assert_eq!(r.findings.len(), 0, "{:?}", r.findings.first());
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let (cold, uncached, warm) = (median(cold), median(uncached), median(warm));
    println!("check over {trails_n} trails x {CALLS} calls (medians of 5 runs):");
    println!("  native cold:  {:.1} ms (nothing cached; the cache written)", ms(cold));
    println!("  native --no-cache: {:.1} ms", ms(uncached));
    println!("  native warm:  {:.1} ms (every result from the cache)", ms(warm));
    println!("  --tsc:  {:.1} ms (one run)", ms(tsc));
    println!(
        "  ratio: native cold is {:.0}x faster than --tsc, warm {:.0}x",
        ms(tsc) / ms(cold),
        ms(tsc) / ms(warm)
    );
}
