//! First call of a demo scripted tool in a fresh session (warm transpile cache), beside `node`
//! running the same transpiled tool cold, in the same run. Prints medians and the ratio.
//!
//! `cargo bench -p trailblaze --bench first_call`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use trailblaze::Settings;
use trailblaze::{Project, ProjectOptions};

const TOOL: &str = "inboxSubjects";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../trailmaps");
    let cache = tempfile::tempdir().expect("temp dir");
    let project = Project::open(
        &root,
        ProjectOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            secrets_file: None,
        },
    )
    .expect("the demo trailmap opens");
    // Warm the transpile cache (and check the tool works) once.
    let first = |project: &Project| {
        let device = project.sim_device("demo").expect("device");
        let session = project
            .session("demo", device, None, Settings::default())
            .expect("session");
        session.call(TOOL, json!({})).expect("the tool runs")
    };
    first(&project);

    // `cargo bench` passes `--bench`; under `cargo test` this is a smoke-sized pass.
    let full = std::env::args().any(|a| a == "--bench");
    let runs = if full { 200 } else { 3 };
    let ours: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            first(&project);
            t.elapsed()
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

    let (o, n) = (median(ours), median(node));
    println!(
        "first call of `{TOOL}` in a fresh session (warm transpile cache): median {:.3} ms over {runs} runs",
        o.as_secs_f64() * 1e3
    );
    println!(
        "node running the same transpiled tool cold:                 median {:.3} ms over {node_runs} runs",
        n.as_secs_f64() * 1e3
    );
    println!("ratio: trailblaze is {:.0}x faster", n.as_secs_f64() / o.as_secs_f64());
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
    let sdk = trailblaze::internals::sdk::javascript().expect("the SDK builds");
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
