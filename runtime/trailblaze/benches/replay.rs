//! Replay of one long trail on the simulated demo app, reports included, per step; beside the same
//! calls made straight through `Session::call` (no trail, no report) in the same run. Prints µs
//! per step for each, the ratio, and the size of `report.html`. Then a folder of short trails in
//! one run, per trail: the reports are kept current after every trail, which must not grow with the
//! square of the folder.
//!
//! `cargo bench -p trailblaze --bench replay` (2,000 steps, 1,000 trails; a smoke-sized 20 and 5
//! under `cargo test`).

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use trailblaze::report::ScreenshotPolicy;
use trailblaze::{ProjectOptions, RunOptions, run_trails};

const OPEN: &str = "{ androidAccessibility: { textRegex: Build Bot } }";
const BACK: &str = "{ androidAccessibility: { textRegex: Back to inbox } }";

/// A trail that signs in, then opens a message and goes back, `steps` steps in all.
fn trail(id: &str, steps: usize) -> String {
    let mut t = format!("config:\n  id: demo/{id}\n");
    t.push_str(
        "  target: demo\ntrailhead:\n  step: Sign in\n  recording:\n    tools:\n      - launchApp: { appId: com.example.demo }\n      - inputText: { text: jane@example.com, nodeSelector: { androidAccessibility: { hintTextRegex: Email } } }\n      - inputText: { text: hunter2, nodeSelector: { androidAccessibility: { hintTextRegex: Password } } }\n      - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in } } }\ntrail:\n",
    );
    for i in 0..steps {
        let sel = if i % 2 == 0 { OPEN } else { BACK };
        t.push_str(&format!(
            "  - step: Step {i}\n    recording:\n      tools:\n        - tapOnElementBySelector: {{ nodeSelector: {sel} }}\n"
        ));
    }
    t
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let steps = if full { 2_000 } else { 20 };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("trailmaps");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps/demo");
    std::fs::create_dir_all(root.join("demo/trails")).expect("dirs");
    for f in ["trailmap.yaml", "app.yaml"] {
        std::fs::copy(demo.join(f), root.join("demo").join(f)).expect("copy");
    }
    let file = root.join("demo/trails/long.trail.yaml");
    std::fs::write(&file, trail("long", steps)).expect("trail");
    let project = trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..ProjectOptions::default()
        },
    )
    .expect("project");

    // The anchor: the same calls straight through the dispatcher, in a session with a log.
    let direct = {
        let device = project.sim_device("demo").expect("device");
        let session = project
            .open_session(
                "demo",
                trailblaze::SessionOptions {
                    device: Some(device),
                    out_dir: Some(dir.path().join("direct")),
                    ..Default::default()
                },
            )
            .expect("session");
        let sel = |t: &str| json!({ "nodeSelector": { "androidAccessibility": { "textRegex": t } } });
        session
            .call("launchApp", json!({ "appId": "com.example.demo" }))
            .expect("launch");
        let field = |hint: &str, text: &str| json!({ "text": text, "nodeSelector": { "androidAccessibility": { "hintTextRegex": hint } } });
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
    };

    let mut line = format!("replay of a {steps}-step trail on the sim: direct Session::call {direct:.1} µs/step");
    for (name, policy) in [
        ("no screens", ScreenshotPolicy::None),
        ("every screen", ScreenshotPolicy::All),
    ] {
        // The median of three runs (one under `cargo test`): the first run in a process also pays
        // for growing the heap.
        let mut runs: Vec<(f64, u64)> = (0..if full { 3 } else { 1 })
            .map(|n| {
                let out = dir.path().join(format!("out-{name}-{n}"));
                let opts = RunOptions {
                    out: out.clone(),
                    screenshots: policy,
                    ..RunOptions::default()
                };
                let t = Instant::now();
                let run = run_trails(&project, std::slice::from_ref(&file), &opts, &mut ()).expect("run");
                let per = t.elapsed().as_secs_f64() * 1e6 / steps as f64;
                assert_eq!(run.report.summary().failed, 0, "the trail replays green");
                let html = std::fs::metadata(&run.files.html).map(|m| m.len()).unwrap_or(0);
                (per, html)
            })
            .collect();
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (per, html) = runs[runs.len() / 2];
        line.push_str(&format!(
            "; run_trails, {name}: {per:.1} µs/step ({:.1}× direct), report.html {:.0} KB",
            per / direct,
            html as f64 / 1024.0
        ));
    }
    println!("{line}");

    // A folder of short trails in one run: the cost per trail stays flat as the folder grows.
    let mut line = String::from("a folder in one run, no screens:");
    for trails in if full { [250, 1_000] } else { [5, 10] } {
        let folder = root.join(format!("demo/trails/folder-{trails}"));
        std::fs::create_dir_all(&folder).expect("folder");
        let files: Vec<_> = (0..trails)
            .map(|i| {
                let f = folder.join(format!("t{i:04}.trail.yaml"));
                std::fs::write(&f, trail(&format!("f{trails}-{i}"), 4)).expect("trail");
                f
            })
            .collect();
        let opts = RunOptions {
            out: dir.path().join(format!("out-folder-{trails}")),
            screenshots: ScreenshotPolicy::None,
            ..RunOptions::default()
        };
        let t = Instant::now();
        let run = run_trails(&project, &files, &opts, &mut ()).expect("run");
        let per = t.elapsed().as_secs_f64() * 1e3 / trails as f64;
        assert_eq!(run.report.summary().passed, trails, "the folder replays green");
        // Eight calls a trail: four to sign in, four steps.
        line.push_str(&format!(
            " {trails} trails {per:.2} ms/trail ({:.1} µs/call, {:.1}× direct);",
            per * 1e3 / 8.0,
            per * 1e3 / 8.0 / direct
        ));
    }
    println!("{}", line.trim_end_matches(';'));
}
