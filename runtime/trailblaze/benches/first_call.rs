//! First call of a demo scripted tool in a fresh session (warm transpile cache), beside `node`
//! running the same transpiled tool cold, in the same run. Prints medians and the ratio.
//!
//! `cargo bench -p trailblaze --bench first_call`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use trailblaze::SessionOptions;
use trailblaze::{Project, ProjectOptions};

const TOOL: &str = "inboxSubjects";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps");
    let cache = tempfile::tempdir().expect("temp dir");
    let project = trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            ..ProjectOptions::default()
        },
    )
    .expect("the demo trailmap opens");
    // Warm the transpile cache (and check the tool works) once.
    let first = |project: &Project| open(project).call(TOOL, json!({})).expect("the tool runs");
    first(&project);

    // `cargo bench` passes `--bench`; under `cargo test` this is a smoke-sized pass.
    let full = std::env::args().any(|a| a == "--bench");
    let runs = if full { 200 } else { 3 };
    let timed = |open: &dyn Fn()| {
        let t = Instant::now();
        open();
        t.elapsed()
    };
    // Sessions opened now and then (a folder run's next trail, an MCP client, an app's next test):
    // the project's warm pool has an engine made for each.
    let mut phases = (Vec::new(), Vec::new(), Vec::new());
    let paced: Vec<Duration> = (0..runs)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            let t = Instant::now();
            let session = open(&project);
            let opened = t.elapsed();
            session.call(TOOL, json!({})).expect("the tool runs");
            let called = t.elapsed();
            drop(session);
            let ended = t.elapsed();
            phases.0.push(opened);
            phases.1.push(called - opened);
            phases.2.push(ended - called);
            called
        })
        .collect();
    // Sessions opened back to back: the pool drains, each waits for an engine being made.
    let back_to_back: Vec<Duration> = (0..runs)
        .map(|_| {
            timed(&|| {
                first(&project);
            })
        })
        .collect();
    // The same without the pool: the session makes its engine when it starts.
    let project = project.with_warm_sessions(0);
    let unpooled: Vec<Duration> = (0..runs)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            timed(&|| {
                let session = project
                    .open_session("demo", SessionOptions::default())
                    .expect("session");
                session.call(TOOL, json!({})).expect("the tool runs");
            })
        })
        .collect();

    let node_dir = tempfile::tempdir().expect("temp dir");
    write_node_bundle(&project, node_dir.path());
    let node_runs = if full { 20 } else { 1 };
    let node: Vec<Duration> = (0..node_runs)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new("node")
                .arg(node_dir.path().join("run.mjs"))
                .output()
                .expect("node runs");
            assert!(out.status.success(), "node: {}", String::from_utf8_lossy(&out.stderr));
            t.elapsed()
        })
        .collect();

    let n = median(node);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("first call of `{TOOL}` in a fresh session (warm transpile cache), median over {runs} runs:");
    let o = median(paced);
    println!(
        "  warm pool, sessions 10 ms apart: {:.3} ms (open {:.3}, call {:.3}; then closing it {:.3})",
        ms(o),
        ms(median(phases.0)),
        ms(median(phases.1)),
        ms(median(phases.2))
    );
    println!("  warm pool, back to back:         {:.3} ms", ms(median(back_to_back)));
    println!("  no pool (with_warm_sessions(0)): {:.3} ms", ms(median(unpooled)));
    println!(
        "node running the same transpiled tool cold: {:.3} ms median over {node_runs} runs",
        ms(n)
    );
    println!(
        "ratio: trailblaze (warm pool) is {:.0}x faster",
        n.as_secs_f64() / o.as_secs_f64()
    );
}

/// The transpiled tool and its imports as `.mjs` files, the SDK build, and a runner that hands the
/// tool a `ctx` whose tool calls answer with a canned snapshot.
fn write_node_bundle(project: &Project, dir: &Path) {
    let tools: PathBuf = project.trailmaps.root.join("demo/tools");
    for name in ["inboxSubjects", "screen"] {
        let src = std::fs::read_to_string(tools.join(format!("{name}.ts"))).expect("tool source");
        let js = project
            .transpiler
            .transpile(&format!("demo/tools/{name}.ts"), &src)
            .expect("transpiles")
            .code
            .clone();
        let js = js
            .replace("\"@trailblaze/scripting\"", "\"./scripting.mjs\"")
            .replace("\"./screen\"", "\"./screen.mjs\"");
        std::fs::write(dir.join(format!("{name}.mjs")), js).expect("write");
    }
    let sdk = trailblaze::scripting::sdk_javascript().expect("the SDK builds");
    std::fs::write(dir.join("scripting.mjs"), sdk).expect("write");
    let snapshot = json!({ "appId": "com.example.demo", "text": "", "root": { "ref": "a000", "className": "android.widget.FrameLayout", "children": [] } });
    let runner = format!(
        "import {{ makeContext }} from './scripting.mjs';\n\
         const ctx = makeContext({{ callTool: () => ({snapshot}), callHost: () => {{ throw new Error('none'); }} }});\n\
         const m = await import('./inboxSubjects.mjs');\n\
         const r = await m.inboxSubjects.handler({{}}, ctx);\n\
         if (!Array.isArray(r.subjects)) throw new Error('unexpected result');\n"
    );
    std::fs::write(dir.join("run.mjs"), runner).expect("write");
}

/// A session on the demo's simulated device, as a command opens one (the device made first).
fn open(project: &Project) -> trailblaze::Session {
    let device = project.sim_device("demo").expect("device");
    project
        .open_session(
            "demo",
            trailblaze::SessionOptions {
                device: Some(device),
                ..Default::default()
            },
        )
        .expect("session")
}
