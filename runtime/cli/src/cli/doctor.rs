//! `trailblaze doctor`: what this machine has for trailblaze (adb, Chromium, Node.js, a
//! WebDriverAgent, the LLM's settings) and what the workspace's trailmaps need of it; and
//! `trailblaze completions SHELL`. Every probe has a deadline: the command never hangs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, CommandFactory};
use trailblaze::trailmap::{ToolRuntime, Trailmaps};

use super::device::{AdbServerArg, WdaArg};
use super::output::out;
use super::{Cli, Failure};

#[derive(Args)]
#[command(after_help = "Examples:\n  trailblaze doctor\n  trailblaze doctor --json\n  \
                        trailblaze doctor --wda-url http://127.0.0.1:8101")]
pub struct DoctorArgs {
    #[command(flatten)]
    pub server: AdbServerArg,
    #[command(flatten)]
    pub wda: WdaArg,
    /// One JSON object: `checks` (one entry per check), `trailmaps`, `ok`.
    #[arg(long)]
    pub json: bool,
}

/// The Node.js the `runtime: subprocess` tools need at least (docs/scripted-tools.md).
const NODE_MIN: (u64, u64) = (20, 6);
/// How long a program's `--version` may take.
const VERSION_WITHIN: Duration = Duration::from_secs(10);
/// How long the adb server may take to answer.
const ADB_WITHIN: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Missing,
    Broken,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Broken => "broken",
        }
    }
}

/// One line of the report.
struct Check {
    name: &'static str,
    status: Status,
    /// What was found (or not): a path and a version, an address.
    found: String,
    path: Option<PathBuf>,
    version: Option<String>,
    /// The one command (or step) that fixes it; none when ok.
    fix: Option<String>,
    /// The trailmaps that need it (filled in from the workspace).
    needed_by: Vec<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, found: impl Into<String>) -> Check {
        Check {
            name,
            status,
            found: found.into(),
            path: None,
            version: None,
            fix: None,
            needed_by: Vec::new(),
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        if self.status != Status::Ok {
            self.fix = Some(fix.into());
        }
        self
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "status": self.status.word(),
            "found": self.found,
            "path": self.path.as_ref().map(|p| p.display().to_string()),
            "version": self.version,
            "fix": self.fix,
            "needed_by": self.needed_by,
        })
    }
}

/// What one trailmap needs of the machine.
struct Needs {
    id: String,
    platforms: Vec<String>,
    /// Each group is satisfied when any check it names is ok.
    groups: Vec<Vec<&'static str>>,
}

pub fn doctor(cli: &Cli, a: &DoctorArgs) -> Result<(), Failure> {
    let mut checks = vec![adb(), adb_server(a.server.adb_server.as_deref())];
    checks.push(chromium());
    checks.push(node());
    checks.push(wda(a.wda.wda_url.as_deref()));
    let located = match super::locate(cli) {
        Ok(l) if l.trailmaps.is_dir() => Some(l),
        Ok(_) => None,
        Err(e) if cli.trailmaps.is_some() => return Err(e),
        Err(_) => None,
    };
    checks.push(llm(located.as_ref()));
    let mut needs = Vec::new();
    let workspace = match &located {
        None => Check::new(
            "workspace",
            Status::Missing,
            "no trailmaps here or above (the machine only)",
        )
        .fix("trailblaze init"),
        Some(l) => match Trailmaps::discover(&l.trailmaps) {
            Ok(maps) => {
                needs = maps.maps.values().map(needs_of).collect();
                let list: Vec<String> = needs
                    .iter()
                    .map(|n| format!("{} ({})", n.id, n.platforms.join(", ")))
                    .collect();
                let mut c = Check::new(
                    "workspace",
                    Status::Ok,
                    format!(
                        "{}: {} trailmap(s): {}",
                        l.trailmaps.display(),
                        list.len(),
                        list.join("; ")
                    ),
                );
                c.path = Some(l.trailmaps.clone());
                c
            }
            Err(e) => Check::new(
                "workspace",
                Status::Broken,
                format!(
                    "{}: {}",
                    l.trailmaps.display(),
                    e.errors.first().map_or(String::new(), |y| y.to_string())
                ),
            )
            .fix("trailblaze check --all"),
        },
    };
    checks.push(workspace);
    // Who needs what, and whether they have it.
    let mut unmet = Vec::new();
    for n in &needs {
        for group in &n.groups {
            for name in group {
                if let Some(c) = checks.iter_mut().find(|c| c.name == *name)
                    && !c.needed_by.contains(&n.id)
                {
                    c.needed_by.push(n.id.clone());
                }
            }
            let met = group
                .iter()
                .any(|name| checks.iter().any(|c| c.name == *name && c.status == Status::Ok));
            if !met {
                unmet.push(format!("{} needs {}", n.id, group.join(" or ")));
            }
        }
    }
    let ok = unmet.is_empty();
    if a.json {
        let maps: Vec<_> = needs
            .iter()
            .map(|n| {
                serde_json::json!({
                    "id": n.id, "platforms": n.platforms,
                    "needs": n.groups.iter().map(|g| g.join(" or ")).collect::<Vec<_>>(),
                })
            })
            .collect();
        let report = serde_json::json!({
            "checks": checks.iter().map(Check::to_json).collect::<Vec<_>>(),
            "trailmaps": maps,
            "unmet": unmet,
            "ok": ok,
        });
        super::output::out_json!(&report);
    } else {
        for c in &checks {
            let needed = if c.needed_by.is_empty() {
                String::new()
            } else {
                format!(" [needed by {}]", c.needed_by.join(", "))
            };
            out!("{:<8} {:<10} {}{needed}", c.status.word(), c.name, c.found);
            if let Some(fix) = &c.fix {
                out!("{:<8} {:<10} fix: {fix}", "", "");
            }
        }
        if located.is_none() {
            out!("outside a workspace: the machine only, nothing required");
        } else if ok {
            out!("ready: nothing the workspace needs is missing");
        } else {
            out!("not ready: {}", unmet.join("; "));
        }
    }
    if ok { Ok(()) } else { Err(Failure::Reported(1)) }
}

/// A trailmap's platforms (its target's, or a library's) and what they need of the machine.
fn needs_of(m: &trailblaze::trailmap::Trailmap) -> Needs {
    let mut platforms: Vec<String> = m
        .spec
        .target
        .as_ref()
        .and_then(|t| t.platforms.as_ref())
        .or(m.spec.platforms.as_ref())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if platforms.is_empty() && m.spec.target.as_ref().is_some_and(|t| !t.app_ids.is_empty()) {
        platforms.push("android".into());
    }
    let has = |p: &str| platforms.iter().any(|q| q == p);
    let mut groups = Vec::new();
    if has("web") {
        groups.push(vec!["chromium"]);
    }
    // An `app.yaml` runs the mobile trails on the simulated device: no phone needed.
    if m.app_yaml.is_none() {
        match (has("android"), has("ios")) {
            (true, false) => groups.push(vec!["adb", "adb-server"]),
            (false, true) => groups.push(vec!["wda"]),
            (true, true) => groups.push(vec!["adb", "adb-server", "wda"]),
            (false, false) => {}
        }
    }
    let subprocess = m
        .tool_yamls
        .values()
        .any(|(_, y)| matches!(y.runtime, Some(ToolRuntime::Subprocess)));
    if subprocess {
        groups.push(vec!["node"]);
    }
    if platforms.is_empty() {
        platforms.push(if m.app_yaml.is_some() { "sim" } else { "none named" }.into());
    }
    Needs {
        id: m.id.clone(),
        platforms,
        groups,
    }
}

fn adb() -> Check {
    let fix = if cfg!(target_os = "macos") {
        "brew install --cask android-platform-tools"
    } else {
        "sudo apt-get install adb"
    };
    let Some(path) = on_path("adb") else {
        return Check::new("adb", Status::Missing, "no `adb` on PATH").fix(fix);
    };
    versioned("adb", path, "version", fix)
}

fn adb_server(flag: Option<&str>) -> Check {
    let addr = match trailblaze::device::spec::adb_server_address(flag) {
        Ok(a) => a,
        Err(e) => {
            return Check::new("adb-server", Status::Broken, e.to_string())
                .fix("unset ADB_SERVER_SOCKET/ANDROID_ADB_SERVER_PORT or pass --adb-server HOST:PORT");
        }
    };
    let asked = adb_version(addr);
    match asked {
        Ok(v) => {
            let mut c = Check::new("adb-server", Status::Ok, format!("answers at {addr} (protocol {v})"));
            c.version = Some(v);
            c
        }
        Err(e) => Check::new("adb-server", Status::Missing, format!("none at {addr} ({e})")).fix("adb start-server"),
    }
}

/// The adb server's protocol version at `addr` (`host:version`), within [`ADB_WITHIN`] each way.
fn adb_version(addr: std::net::SocketAddr) -> Result<String, String> {
    let mut s = TcpStream::connect_timeout(&addr, ADB_WITHIN).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(ADB_WITHIN)).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(ADB_WITHIN)).map_err(|e| e.to_string())?;
    s.write_all(b"000chost:version").map_err(|e| e.to_string())?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).map_err(|e| format!("no answer: {e}"))?;
    match (&head[..4], std::str::from_utf8(&head[8..]).ok()) {
        (b"OKAY", Some(hex)) => Ok(u32::from_str_radix(hex, 16).map_or_else(|_| "?".into(), |v| v.to_string())),
        _ => Err("the answer is not an adb server's".into()),
    }
}

fn chromium() -> Check {
    let fix = if cfg!(target_os = "macos") {
        "brew install --cask chromium (or set TRAILBLAZE_CHROMIUM to a Chrome)"
    } else {
        "sudo apt-get install chromium"
    };
    let named = std::env::var_os("TRAILBLAZE_CHROMIUM").is_some_and(|v| !v.is_empty());
    match trailblaze::web::device::find_chromium() {
        Ok(path) => versioned("chromium", path, "--version", fix),
        Err(e) if named => {
            Check::new("chromium", Status::Broken, e).fix("point TRAILBLAZE_CHROMIUM at a Chromium, or unset it")
        }
        Err(_) => Check::new(
            "chromium",
            Status::Missing,
            "no chromium, chromium-browser or google-chrome on PATH",
        )
        .fix(fix),
    }
}

fn node() -> Check {
    let fix = "install Node.js 20.6 or newer (https://nodejs.org), or set TRAILBLAZE_NODE";
    let named = std::env::var_os("TRAILBLAZE_NODE").filter(|v| !v.is_empty());
    let path = match &named {
        Some(n) if n.to_string_lossy().contains('/') => Some(PathBuf::from(n)),
        Some(n) => on_path(&n.to_string_lossy()),
        None => on_path("node"),
    };
    let Some(path) = path else {
        return Check::new("node", Status::Missing, "no `node` on PATH").fix(fix);
    };
    let mut c = versioned("node", path, "--version", fix);
    if c.status == Status::Ok {
        let v = c.version.clone().unwrap_or_default();
        let mut parts = v
            .trim_start_matches('v')
            .split('.')
            .map(|p| p.parse::<u64>().unwrap_or(0));
        let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if have < NODE_MIN {
            c.status = Status::Broken;
            c.found = format!("{} (needs {}.{} or newer)", c.found, NODE_MIN.0, NODE_MIN.1);
            c.fix = Some(fix.into());
        }
    }
    c
}

fn wda(flag: Option<&str>) -> Check {
    let url = match trailblaze::device::spec::wda_url(flag) {
        Ok(u) => u,
        Err(e) => return Check::new("wda", Status::Broken, e).fix("pass --wda-url http://HOST:PORT"),
    };
    match trailblaze::ios::status(&url) {
        Ok(s) => {
            let mut c = Check::new(
                "wda",
                Status::Ok,
                format!(
                    "WebDriverAgent at {url}: iOS {} {}{}",
                    s.os_version.as_deref().unwrap_or("?"),
                    s.device.as_deref().unwrap_or("device"),
                    if s.ready { "" } else { " (not ready)" }
                ),
            );
            c.version = s.os_version;
            c
        }
        Err(_) => Check::new(
            "wda",
            Status::Missing,
            format!("no WebDriverAgent answers at {url} (optional: only for --device ios)"),
        )
        .fix("start WebDriverAgent on the iPhone or simulator (docs/ios.md), or pass --wda-url"),
    }
}

/// The LLM's settings as `run --agent`, `step`, `ask` read them: the key is never shown.
fn llm(located: Option<&super::Located>) -> Check {
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let workspace = match located.map(super::llm::workspace_llm) {
        Some(Ok(w)) => w,
        Some(Err(_)) => {
            return Check::new("llm", Status::Broken, "the workspace's `llm:` settings do not load")
                .fix("trailblaze step --help (docs/agent.md, \"Workspace settings\")");
        }
        None => None,
    };
    let model = env("TRAILBLAZE_LLM_MODEL").or(workspace.as_ref().map(|w| w.model.clone()));
    let provider = env("TRAILBLAZE_LLM_PROVIDER")
        .or(workspace.as_ref().map(|w| w.wire.to_string()))
        .unwrap_or_else(|| "openai".into());
    let base = env("TRAILBLAZE_LLM_BASE_URL")
        .or(workspace.as_ref().and_then(|w| w.base_url.clone()))
        .unwrap_or_else(|| "the provider's default".into());
    let key_env = workspace.as_ref().and_then(|w| w.key_env.clone());
    let key = env("TRAILBLAZE_LLM_API_KEY").is_some() || key_env.as_deref().and_then(env).is_some();
    let key_word = if key { "set" } else { "not set" };
    let found = format!(
        "model {}, provider {provider}, base URL {base}, key {key_word}",
        model.as_deref().unwrap_or("not named")
    );
    let status = if model.is_some() && key {
        Status::Ok
    } else {
        Status::Missing
    };
    let mut c = Check::new(
        "llm",
        status,
        format!("{found} (optional: for the agent, step, ask, verify)"),
    );
    c.fix = match (model.is_some(), key) {
        (false, _) => Some("export TRAILBLAZE_LLM_MODEL=NAME TRAILBLAZE_LLM_API_KEY=... (docs/agent.md)".into()),
        (true, false) => Some(format!(
            "export {}=...",
            key_env.as_deref().unwrap_or("TRAILBLAZE_LLM_API_KEY")
        )),
        (true, true) => None,
    };
    c
}

/// A check of the program at `path`: ok with the first line `path arg` prints, broken when it
/// cannot start, fails or takes too long.
fn versioned(name: &'static str, path: PathBuf, arg: &str, fix: &str) -> Check {
    match run_within(&path, arg, VERSION_WITHIN) {
        Ok(line) => {
            let version = line
                .split_whitespace()
                .find(|w| w.trim_start_matches('v').starts_with(|c: char| c.is_ascii_digit()))
                .map(str::to_string);
            let mut c = Check::new(name, Status::Ok, format!("{} ({line})", path.display()));
            c.version = version;
            c.path = Some(path);
            c
        }
        Err(e) => {
            let mut c = Check::new(name, Status::Broken, format!("{}: {e}", path.display())).fix(fix);
            c.path = Some(path);
            c
        }
    }
}

/// The first line `exe arg` prints (stdout, else stderr), within `within`; the program and what it
/// started are killed after that.
fn run_within(exe: &Path, arg: &str, within: Duration) -> Result<String, String> {
    let mut child = Command::new(exe)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `{} {arg}`: {e}", exe.display()))?;
    let read = |r: Box<dyn Read + Send>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.take(64 * 1024).read_to_string(&mut s);
            let _ = tx.send(s);
        });
        rx
    };
    let out = read(Box::new(child.stdout.take().expect("piped")));
    let err = read(Box::new(child.stderr.take().expect("piped")));
    let deadline = Instant::now() + within;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // SAFETY: kill(2) on the process group this child leads; no memory is involved.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!("`{arg}` took more than {}s", within.as_secs()));
            }
        }
    };
    let grace = Duration::from_millis(500);
    let out = out.recv_timeout(grace).unwrap_or_default();
    let err = err.recv_timeout(grace).unwrap_or_default();
    let first = |s: &str| s.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
    if !status.success() {
        return Err(format!(
            "`{arg}` failed ({status}){}",
            first(&err).or(first(&out)).map_or(String::new(), |l| format!(": {l}"))
        ));
    }
    first(&out)
        .or(first(&err))
        .ok_or_else(|| format!("`{arg}` printed nothing"))
}

/// The first executable `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze completions bash > ~/.local/share/bash-completion/completions/trailblaze\n  \
                        trailblaze completions zsh > ~/.zfunc/_trailblaze\n  \
                        trailblaze completions fish > ~/.config/fish/completions/trailblaze.fish"
)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script for `a.shell` on stdout (hidden commands and flags are left out).
pub fn completions(a: &CompletionsArgs) -> Result<(), Failure> {
    let mut cmd = visible(&Cli::command());
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "trailblaze", &mut buf);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&buf)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::Failed(anyhow::anyhow!("cannot write the completion script: {e}")))
}

/// A name for clap (built without its `string` feature): the process prints the script and ends.
fn leak(s: &str) -> &'static str {
    s.to_string().leak()
}

/// `cmd` without its hidden subcommands (clap_complete would complete them): the same names,
/// arguments, groups and help, rebuilt, since clap removes no subcommand.
fn visible(cmd: &clap::Command) -> clap::Command {
    let mut new = clap::Command::new(leak(cmd.get_name()))
        .args(cmd.get_arguments().cloned())
        .groups(cmd.get_groups().cloned())
        .visible_aliases(cmd.get_visible_aliases().map(leak).collect::<Vec<_>>())
        .subcommands(cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(visible));
    if let Some(about) = cmd.get_about() {
        new = new.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        new = new.version(leak(version));
    }
    new
}
