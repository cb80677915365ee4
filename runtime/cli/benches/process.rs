//! The CLI as a user runs it: whole processes, wall time and peak RSS, beside anchors measured in
//! the same run, with the ratios printed.
//!
//! - `trailblaze tool snapshot` and `trailblaze tool signIn account=demo` (a scripted tool that calls
//!   a host function and four tools),
//!   each a fresh process on a fresh simulated device, beside `node -e ''` started the same way;
//! - `trailblaze check --no-cache` over 1,000 trails × 20 calls beside `check --tsc` (one run: it
//!   takes seconds; needs `npm ci --prefix sdk-ts`);
//! - `trailblaze run` of one 2,000-step trail, per step, beside the same calls made in this process
//!   through `Session::call`.
//!
//! `cargo bench -p trailblaze-cli --bench process`; under `cargo test` a smoke-sized pass (20 trails,
//! 20 steps, 2 starts each).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;
use trailblaze::{ProjectOptions, SessionOptions};

/// One finished child process: wall time from spawn to exit, its own peak RSS, whether it exited 0.
struct Ran {
    ms: f64,
    max_rss_kib: i64,
    ok: bool,
}

/// Runs `cmd` to its end, timing it and reading its peak RSS from `wait4`'s rusage (the child's own,
/// not every child's so far as `RUSAGE_CHILDREN` would give).
#[allow(clippy::zombie_processes)] // reaped by `wait4`, not `Child::wait`: that one gives no rusage
fn run(cmd: &mut Command) -> Ran {
    let t = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the process starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill; `pid` is our own child, not yet
    // reaped (`child` is never waited on through std, and dropping it neither waits nor kills).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(r, pid, "wait4 reaped the child");
    Ran {
        ms,
        max_rss_kib: usage.ru_maxrss,
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
}

/// Median wall time and median peak RSS (MiB) of `n` runs of `make()`, each of which must succeed.
fn medians(n: usize, what: &str, mut make: impl FnMut() -> Command) -> (f64, f64) {
    let mut ms = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..n {
        let r = run(&mut make());
        assert!(r.ok, "{what} exited non-zero");
        ms.push(r.ms);
        rss.push(r.max_rss_kib as f64 / 1024.0);
    }
    (median(ms), median(rss))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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

/// `check`'s corpus, as in the library's `check` bench: `n` trails × 20 recorded calls.
fn check_corpus(dir: &Path, n: usize) {
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
    std::fs::create_dir_all(dir).expect("mkdir");
    for t in 0..n {
        let mut text = format!(
            "config:\n  id: bench/{t}\n  target: demo\ntrail:\n  - step: Step {t}\n    recording:\n      tools:\n"
        );
        for c in 0..20 {
            text.push_str(&format!("        - {}\n", calls[(t + c) % calls.len()]));
        }
        std::fs::write(dir.join(format!("t{t:04}.trail.yaml")), text).expect("write");
    }
}

const OPEN: &str = "{ androidAccessibility: { textRegex: Build Bot } }";
const BACK: &str = "{ androidAccessibility: { textRegex: Back to inbox } }";

/// A trail that signs in, then opens a message and goes back, `steps` steps after signing in (as in
/// the library's `replay` bench).
fn long_trail(steps: usize) -> String {
    let mut t = String::from(
        "config:\n  id: demo/long\n  target: demo\ntrailhead:\n  step: Sign in\n  recording:\n    tools:\n      - launchApp: { appId: com.example.demo }\n      - inputText: { text: jane@example.com, nodeSelector: { androidAccessibility: { hintTextRegex: Email } } }\n      - inputText: { text: hunter2, nodeSelector: { androidAccessibility: { hintTextRegex: Password } } }\n      - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in } } }\ntrail:\n",
    );
    for i in 0..steps {
        let sel = if i % 2 == 0 { OPEN } else { BACK };
        t.push_str(&format!(
            "  - step: Step {i}\n    recording:\n      tools:\n        - tapOnElementBySelector: {{ nodeSelector: {sel} }}\n"
        ));
    }
    t
}

/// The same calls as [`long_trail`], in this process through `Session::call`: µs per step. With
/// `log`, the session writes its `log.jsonl` there, as every session `run` opens does.
fn in_process_per_step(root: &Path, cache: &Path, steps: usize, log: Option<&Path>) -> f64 {
    let project = trailblaze::open(
        root,
        ProjectOptions {
            cache_dir: Some(cache.to_path_buf()),
            ..ProjectOptions::default()
        },
    )
    .expect("project");
    let options = SessionOptions {
        out_dir: log.map(Path::to_path_buf),
        ..SessionOptions::default()
    };
    let session = project.open_session("demo", options).expect("session");
    let sel = |t: &str| json!({ "nodeSelector": { "androidAccessibility": { "textRegex": t } } });
    let field = |hint: &str, text: &str| json!({ "text": text, "nodeSelector": { "androidAccessibility": { "hintTextRegex": hint } } });
    session
        .call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    session
        .call("inputText", field("Email", "jane@example.com"))
        .expect("email");
    session
        .call("inputText", field("Password", "hunter2"))
        .expect("password");
    session.call("tapOnElementBySelector", sel("Sign in")).expect("sign in");
    let t = Instant::now();
    for i in 0..steps {
        let target = if i % 2 == 0 { "Build Bot" } else { "Back to inbox" };
        session.call("tapOnElementBySelector", sel(target)).expect("tap");
    }
    t.elapsed().as_secs_f64() * 1e6 / steps as f64
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (starts, trails_n, steps) = if full { (21, 1_000, 2_000) } else { (2, 20, 20) };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_trailblaze"));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("trailmaps");
    copy_dir(&repo.join("trailmaps/demo"), &root.join("demo"));
    // Only the bench's own trails: the demo's would be checked and run too.
    let _ = std::fs::remove_dir_all(root.join("demo/trails"));
    let cache = dir.path().join("cache");
    let out = dir.path().join("out");
    let cli = |args: &[&str]| {
        let mut c = Command::new(&bin);
        c.arg("--trailmaps")
            .arg(&root)
            .args(args)
            .env("TRAILBLAZE_CACHE_DIR", &cache)
            .env("TRAILBLAZE_OUT", &out)
            .env("TRAILBLAZE_SECRET_DEMO_USERNAME", "jane@example.com")
            .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", "hunter2")
            .env_remove("RUST_LOG");
        c
    };

    // Cold starts. The first `tool` run transpiles the demo's tools into the cache, as a user's first
    // run does once; the medians are of the runs after it (a fresh process each).
    let first = run(&mut cli(&["tool", "signIn", "account=demo"]));
    assert!(first.ok, "the scripted tool runs");
    let node = Command::new("node").arg("--version").output().is_ok();
    let (node_ms, node_rss) = if node {
        medians(starts, "node -e ''", || {
            let mut c = Command::new("node");
            c.args(["-e", ""]);
            c
        })
    } else {
        eprintln!("notice: no `node` on PATH: the anchor is missing");
        (f64::NAN, f64::NAN)
    };
    let (snap_ms, snap_rss) = medians(starts, "tool snapshot", || cli(&["tool", "snapshot"]));
    let (script_ms, script_rss) = medians(starts, "tool signIn", || cli(&["tool", "signIn", "account=demo"]));
    let (version_ms, version_rss) = medians(starts, "--version", || cli(&["--version"]));
    println!(
        "cold starts, medians of {starts}: `node -e ''` {node_ms:.2} ms ({node_rss:.1} MiB peak RSS); \
         `trailblaze --version` {version_ms:.2} ms ({version_rss:.1} MiB)"
    );
    println!(
        "  `trailblaze tool snapshot` {snap_ms:.2} ms ({snap_rss:.1} MiB): {:.3}× node",
        snap_ms / node_ms
    );
    println!(
        "  `trailblaze tool signIn account=demo` (scripted, one host call) {script_ms:.2} ms ({script_rss:.1} MiB): {:.3}× node; \
         its first run, transpiling into an empty cache: {:.2} ms ({:.1} MiB)",
        script_ms / node_ms,
        first.ms,
        first.max_rss_kib as f64 / 1024.0
    );

    // `check --no-cache` over the corpus, beside `--tsc` once.
    check_corpus(&root.join("demo/trails/bench"), trails_n);
    let (check_ms, check_rss) = medians(if full { 7 } else { 1 }, "check --no-cache", || {
        cli(&["check", "demo", "--no-cache"])
    });
    let tsc_installed = repo.join("sdk-ts/node_modules/.bin/tsc").exists();
    let tsc = if full && tsc_installed {
        let r = run(cli(&["check", "demo", "--tsc"]).env("TRAILBLAZE_TSC", repo.join("sdk-ts/node_modules/.bin/tsc")));
        Some(r)
    } else {
        None
    };
    let mut line = format!(
        "`trailblaze check demo --no-cache`, {trails_n} trails × 20 calls, median: {check_ms:.1} ms ({check_rss:.1} MiB)"
    );
    match tsc {
        Some(r) => line.push_str(&format!(
            "; `--tsc` {:.0} ms ({:.1} MiB, {}): native is {:.0}× faster",
            r.ms,
            r.max_rss_kib as f64 / 1024.0,
            if r.ok { "exit 0" } else { "exit non-zero" },
            r.ms / check_ms
        )),
        None => line.push_str("; `--tsc` not run (smoke pass, or no `npm ci --prefix sdk-ts`)"),
    }
    println!("{line}");
    std::fs::remove_dir_all(root.join("demo/trails/bench")).expect("corpus removed");

    // `run` of one long trail, per step, beside the same calls in this process.
    let trail = root.join("demo/trails/long.trail.yaml");
    std::fs::write(&trail, long_trail(steps)).expect("trail");
    // Both sides are medians: one pass of either moved by a fifth from run to run on this machine.
    let passes = if full { 5 } else { 1 };
    let direct = median(
        (0..passes)
            .map(|_| in_process_per_step(&root, &cache, steps, None))
            .collect(),
    );
    // The goal's anchor writes no session log; `run` must (two flushed lines a step): the same
    // calls with the log, to say what of the ratio is the log's.
    let logs = dir.path().join("logs");
    let logged = median(
        (0..passes)
            .map(|_| in_process_per_step(&root, &cache, steps, Some(&logs)))
            .collect(),
    );
    let trail_arg = trail.to_string_lossy().into_owned();
    let mut line = format!(
        "`trailblaze run` of a {steps}-step trail (+4 to sign in): in-process Session::call {direct:.1} µs/step \
         ({logged:.1} writing its session log, as `run` does)"
    );
    for (name, extra) in [
        ("default", &[][..]),
        ("--screenshots none", &["--screenshots", "none"][..]),
    ] {
        let (ms, rss) = medians(if full { 7 } else { 1 }, "run", || {
            let mut c = cli(&["run", &trail_arg]);
            c.args(extra);
            c
        });
        let per = ms * 1e3 / steps as f64;
        // What is left after the process's own start (a `tool snapshot` is one start and one call).
        let beyond = (ms - snap_ms) * 1e3 / steps as f64;
        line.push_str(&format!(
            "; {name}: {ms:.0} ms ({rss:.1} MiB), {per:.1} µs/step ({:.2}× in-process, {:.2}× with its log), \
             {beyond:.1} µs/step past a `tool` start ({:.2}×)",
            per / direct,
            per / logged,
            beyond / direct
        ));
    }
    println!("{line}");
}
