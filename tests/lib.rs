//! Shared helpers for the end-to-end tests: throwaway trailmaps, sessions on the simulated device,
//! and the `trailblaze` binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use trailblaze::{Project, ProjectOptions};
use trailblaze::{Session, Settings};

pub mod alarms_fixture;
pub mod android_fixture;
pub mod fake_adb;
pub mod fake_llm;
pub mod fake_wda;
pub mod replay;
pub mod trace_fixture;
pub mod web_site;

/// A value that must never show up in an error, a log or a trace.
pub const CANARY: &str = "CANARY-d41d8cd9-secret";

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A trailmaps folder in a temp dir holding one trailmap (`id`) that runs the demo app.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub id: String,
}

impl Fixture {
    pub fn new(id: &str) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = Fixture {
            dir,
            id: id.to_string(),
        };
        f.file("trailmap.yaml", &format!("id: {id}\n"));
        let app = std::fs::read_to_string(repo_root().join("trailmaps/demo/app.yaml")).expect("demo app.yaml");
        f.file("app.yaml", &app);
        f
    }

    /// The demo trailmap itself, copied (so generated files land in the temp dir).
    pub fn demo() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        copy_dir(&repo_root().join("trailmaps/demo"), &dir.path().join("trailmaps/demo"));
        Fixture { dir, id: "demo".into() }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("trailmaps")
    }

    pub fn map_dir(&self) -> PathBuf {
        self.root().join(&self.id)
    }

    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Writes `rel` (relative to the trailmap) with `content`.
    pub fn file(&self, rel: &str, content: &str) -> &Fixture {
        let path = self.map_dir().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        self
    }

    pub fn tool(&self, name: &str, source: &str) -> &Fixture {
        self.file(&format!("tools/{name}.ts"), source)
    }

    pub fn project(&self) -> Project {
        trailblaze::open(
            &self.root(),
            ProjectOptions {
                cache_dir: Some(self.cache()),
                ..ProjectOptions::default()
            },
        )
        .expect("project opens")
    }

    pub fn session(&self, settings: Settings) -> (Project, Session) {
        let project = self.project();
        let session = project
            .open_session(
                &self.id,
                trailblaze::SessionOptions {
                    out_dir: Some(self.out()),
                    settings,
                    ..Default::default()
                },
            )
            .expect("session starts");
        (project, session)
    }

    /// Every file under the session output folder, concatenated.
    pub fn all_output(&self) -> String {
        let mut out = String::new();
        read_all(&self.out(), &mut out);
        out
    }
}

fn read_all(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            read_all(&p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

/// The `trailblaze` binary, built once per test run with the same profile as the tests.
/// `trailblaze ARGS` in `cwd`, no `--trailmaps` (the workspace is found), colour off.
pub fn in_dir(f: &Fixture, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(trailblaze_bin())
        .current_dir(cwd)
        .args(args)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env_remove("TRAILBLAZE_TRAILMAP")
        .env_remove("TRAILBLAZE_OUT")
        .env_remove("TRAILBLAZE_DEVICE")
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs")
}

/// A finished command's stdout and stderr, as text.
pub fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `TRAILBLAZE_E2E_BIN` names one already built (test.sh: the workspace build's own, so the graph
/// is not compiled a second time with the CLI's features alone); without it, `cargo build -p
/// trailblaze-cli` makes it.
pub fn trailblaze_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("TRAILBLAZE_E2E_BIN") {
            let bin = PathBuf::from(bin);
            assert!(bin.is_file(), "TRAILBLAZE_E2E_BIN names no file: {}", bin.display());
            return bin;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let release = !cfg!(debug_assertions);
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "trailblaze-cli", "--bin", "trailblaze"])
            .current_dir(repo_root());
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build runs");
        assert!(status.success(), "building the trailblaze binary failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"));
        target
            .join(if release { "release" } else { "debug" })
            .join("trailblaze")
    })
    .clone()
}

/// The log lines of the (only) session under `out`, parsed.
pub fn log_events(out: &Path) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    for e in std::fs::read_dir(out).expect("out dir").flatten() {
        let log = e.path().join("log.jsonl");
        if let Ok(text) = std::fs::read_to_string(&log) {
            for line in text.lines() {
                events.push(serde_json::from_str(line).expect("each log line is JSON"));
            }
        }
    }
    events
}

/// Everything any tracing span or event wrote in this test process, at every level. Installed once;
/// tests look for canaries in it.
pub fn traces() -> String {
    use std::sync::Mutex;
    static BUF: OnceLock<std::sync::Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    let buf = BUF.get_or_init(|| {
        let buf = std::sync::Arc::new(Mutex::new(Vec::new()));
        let writer = buf.clone();
        let make = move || Capture(writer.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
            .with_ansi(false)
            .with_writer(make)
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        buf
    });
    String::from_utf8_lossy(&buf.lock().map(|b| b.clone()).unwrap_or_default()).into_owned()
}

struct Capture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.0.lock() {
            b.extend_from_slice(data);
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A session for a fixture with explicit secrets and host functions (instead of the environment's).
pub fn session_with(
    f: &Fixture,
    secrets: trailblaze_host_functions::SecretStore,
    registry: trailblaze_host_functions::HostRegistry,
) -> (std::sync::Arc<trailblaze_host_functions::SecretStore>, Session) {
    let mut project = f.project();
    project.registry = std::sync::Arc::new(registry);
    let secrets = std::sync::Arc::new(secrets);
    let session = project
        .open_session(
            &f.id,
            trailblaze::SessionOptions {
                secrets: Some(secrets.clone()),
                out_dir: Some(f.out()),
                ..Default::default()
            },
        )
        .expect("session");
    (secrets, session)
}

/// The current view tree straight from the device, unscrubbed: what the app really holds.
pub fn device_tree(s: &Session) -> trailblaze::device::ViewTree {
    s.view_tree().expect("device")
}

/// The text of the node whose resource id ends in `:id/<id>` (`Some("")` for an empty field).
pub fn field_text(tree: &trailblaze::device::ViewTree, id: &str) -> Option<String> {
    fn find(n: &trailblaze::device::ViewNode, suffix: &str) -> Option<String> {
        if n.resource_id.as_deref().is_some_and(|r| r.ends_with(suffix)) {
            return Some(n.text.clone().unwrap_or_default());
        }
        n.children.iter().find_map(|c| find(c, suffix))
    }
    find(&tree.root, &format!(":id/{id}"))
}

/// xorshift64*: a deterministic generator for the property and fuzz tests, so a failing case replays
/// from its seed and number.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// What a test does when a program it checks against (Debian's `adb`, `chromium`, `valgrind`) is
/// not installed: it fails, naming the package, because `./test.sh` installs every one of them; a
/// person who knowingly runs without it sets `TRAILBLAZE_ALLOW_MISSING=adb,chromium,...` and the
/// test says loudly that it did not run. Returns whether the test may go on without the program.
pub fn missing_tool(tool: &str, package: &str) -> bool {
    let allowed = std::env::var("TRAILBLAZE_ALLOW_MISSING").is_ok_and(|v| v.split(',').any(|t| t.trim() == tool));
    assert!(
        allowed,
        "`{tool}` is not installed: ./test.sh installs it (apt-get install {package}); \
         set TRAILBLAZE_ALLOW_MISSING={tool} to skip what needs it"
    );
    eprintln!("notice: `{tool}` is not installed and TRAILBLAZE_ALLOW_MISSING names it: this check did not run");
    true
}
