//! `trailblaze session`: live sessions that outlive a command. `session start` runs one in a
//! background process of its own (docs/sessions.md); `tool`, `snapshot`, `step`, `ask`, `verify`,
//! `shell` and `mcp` join it with `--session NAME` (or `TRAILBLAZE_SESSION`, or by themselves when
//! exactly one is running) and act on its device, which keeps its state, its snapshot cache, its
//! remembered values and its recording between them.

pub mod client;
mod daemon;
pub mod place;
mod wire;

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::output::{err, out};
use super::{Cli, Failure, MapArg, SessionArgs, open_project, usage_help};
use place::{Files, Meta};
use wire::Request;

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze session start                       a session on the simulated device; prints its name
  trailblaze tool tap ref=c422 --step \"Open the inbox\"
  trailblaze snapshot                            the session's screen (the only session is joined)
  trailblaze session save sim-1 trails/inbox.trail.yaml
  trailblaze session stop sim-1

See docs/sessions.md for the whole workflow.")]
pub struct SessionCmd {
    #[command(subcommand)]
    pub command: SessionCommand,
}

// Parsed once per process: the largest variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum SessionCommand {
    /// Start a session in a background process and print its name.
    Start(StartArgs),
    /// The running sessions.
    List {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// One session: its device, trailmap, recording, files.
    Info {
        /// The session [default: the only one running].
        name: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// End a session: its device freed (a browser closed), its trace written, its process gone.
    Stop {
        /// The session [default: the only one running].
        #[arg(required_unless_present = "all")]
        name: Option<String>,
        /// Every running session.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
    /// Write a session's recording as a trail that checks and replays.
    Save(SaveArgs),
    /// Write a session's trace so far and open it in the browser (docs/trace.md).
    Report {
        /// The session [default: the only one running].
        name: Option<String>,
        /// Write it only: print its folder, open nothing.
        #[arg(long)]
        no_open: bool,
    },
    /// The session's own process (started by `session start`; reads its settings on stdin).
    #[command(hide = true)]
    Serve { name: String },
}

#[derive(Args)]
pub struct StartArgs {
    /// Its name (letters, digits, `-`, `_`) [default: the device's kind and a number: `sim-1`].
    #[arg(long)]
    pub name: Option<String>,
    /// End it after this long without a call, freeing its device: `30m`, `90s`, `2h` (a bare
    /// number is minutes).
    #[arg(long, default_value = "30m", value_parser = idle_secs, value_name = "TIME")]
    pub idle: u64,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub trace: super::live::TraceArg,
    /// With a model: `step`, `ask` and `verify` in the session, and `assertWithAi`.
    #[command(flatten)]
    pub llm: super::llm::LlmArgs,
}

#[derive(Args)]
pub struct SaveArgs {
    /// The session.
    pub name: String,
    /// The trail file to write (`.trail.yaml`).
    pub path: PathBuf,
    /// The trail's title [default: the file's name].
    #[arg(long)]
    pub title: Option<String>,
    /// Replace the file if it exists.
    #[arg(long)]
    pub overwrite: bool,
}

/// `--session`, for the commands that can act in a running session.
#[derive(Args)]
pub struct JoinArg {
    /// Act in this running session (`trailblaze session list`) instead of on a fresh device; `none`
    /// for a fresh device even when exactly one session is running (which is otherwise joined).
    #[arg(
        long = "session",
        id = "join_session",
        env = "TRAILBLAZE_SESSION",
        value_name = "NAME"
    )]
    pub name: Option<String>,
}

fn idle_secs(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (n, unit) = match s.char_indices().last() {
        Some((i, 's')) => (&s[..i], 1),
        Some((i, 'm')) => (&s[..i], 60),
        Some((i, 'h')) => (&s[..i], 3600),
        _ => (s, 60),
    };
    match n.trim().parse::<u64>() {
        Ok(v) if v > 0 && v * unit <= 7 * 24 * 3600 => Ok(v * unit),
        _ => Err("expected a time like 30m, 90s or 2h (more than 0, at most a week)".into()),
    }
}

/// A running session a command joined.
pub struct Joined {
    pub meta: Meta,
    pub files: Files,
}

impl Joined {
    fn ask(&self, req: &Request) -> Result<Value, Failure> {
        wire::ask(&self.meta.name, &self.files.socket, &self.files.log, req).map_err(|e| Failure::Usage(anyhow!(e)))
    }
}

/// The session a command acts in: the one `--session` / `TRAILBLAZE_SESSION` names, else the only
/// one running when no `--device` was given (said on stderr), else none (a fresh device).
pub fn join(arg: &JoinArg, device_given: bool) -> Result<Option<Joined>, Failure> {
    match arg.name.as_deref().map(str::trim) {
        Some("none") => Ok(None),
        Some(name) => named(name).map(Some),
        None if device_given => Ok(None),
        None => {
            // A folder that is not private is never read; a command that named no session still
            // runs, on a fresh device.
            let root = match place::existing_root() {
                Ok(Some(root)) => root,
                Ok(None) => return Ok(None),
                Err(e) => {
                    err!("warning: sessions are not looked for: {e}");
                    return Ok(None);
                }
            };
            let running: Vec<Meta> = place::all(&root)
                .into_iter()
                .filter(|(_, alive)| *alive)
                .map(|(m, _)| m)
                .collect();
            match running.as_slice() {
                [only] => {
                    err!(
                        "trailblaze: in session `{}` ({}), the only one running (`--session none` for a fresh device)",
                        only.name,
                        only.device
                    );
                    Ok(Some(Joined {
                        files: Files::of(&root, &only.name),
                        meta: only.clone(),
                    }))
                }
                [] => Ok(None),
                more => {
                    err!(
                        "trailblaze: {} sessions are running; this command uses a fresh device (`--session NAME` joins one)",
                        more.len()
                    );
                    Ok(None)
                }
            }
        }
    }
}

/// The running session `name`.
fn named(name: &str) -> Result<Joined, Failure> {
    place::check_name(name).map_err(|e| usage_help(format!("--session: {e}"), "see `trailblaze session list`"))?;
    let root = place::existing_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
    let found = root.as_ref().and_then(|r| {
        let files = Files::of(r, name);
        files.read_meta().map(|meta| Joined { meta, files })
    });
    found.ok_or_else(|| {
        usage_help(
            format!("no session named `{name}` is running"),
            "`trailblaze session list` shows them; `trailblaze session start` starts one",
        )
    })
}

/// A name given, or the only session running.
fn named_or_only(name: Option<&str>) -> Result<Joined, Failure> {
    if let Some(n) = name {
        return named(n);
    }
    let root = place::existing_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
    let all = root.as_deref().map(place::all).unwrap_or_default();
    match all.as_slice() {
        [(meta, _)] => named(&meta.name),
        [] => Err(usage_help(
            "no session is running",
            "`trailblaze session start` starts one",
        )),
        _ => Err(usage_help(
            format!("{} sessions are running: name one", all.len()),
            "`trailblaze session list` shows them",
        )),
    }
}

pub fn session(cli: &Cli, a: &SessionCmd) -> Result<(), Failure> {
    match &a.command {
        SessionCommand::Start(s) => start(cli, s),
        SessionCommand::List { json } => list(*json),
        SessionCommand::Info { name, json } => info(name.as_deref(), *json),
        SessionCommand::Stop { name, all } => stop(name.as_deref(), *all),
        SessionCommand::Save(s) => save(s),
        SessionCommand::Report { name, no_open } => report(cli, name.as_deref(), *no_open),
        SessionCommand::Serve { name } => daemon::serve(name),
    }
}

/// The variables a session's process does not inherit: secrets, keys and tokens by their names
/// (what it needs of them it is handed on stdin), and the join of `TRAILBLAZE_SESSION`.
fn withheld(name: &str, key_env: Option<&str>) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with(trailblaze_host_functions::secrets::ENV_PREFIX)
        || [
            "TRAILBLAZE_SESSION",
            "TRAILBLAZE_SECRETS_FILE",
            "TRAILBLAZE_LLM_API_KEY",
        ]
        .contains(&upper.as_str())
        || ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
            .iter()
            .any(|w| upper.contains(w))
        || key_env == Some(name)
}

fn start(cli: &Cli, a: &StartArgs) -> Result<(), Failure> {
    let spec = a.session.device.spec()?;
    let root = place::private_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
    let name = match &a.name {
        Some(n) => {
            place::check_name(n).map_err(|e| usage_help(format!("--name: {e}"), "e.g. --name checkout"))?;
            n.clone()
        }
        None => {
            let kind = match spec {
                trailblaze::device::DeviceSpec::Sim => "sim",
                trailblaze::device::DeviceSpec::Android { .. } => "android",
                trailblaze::device::DeviceSpec::Web(_) => "web",
                trailblaze::device::DeviceSpec::Ios(_) => "ios",
            };
            (1..)
                .map(|i| format!("{kind}-{i}"))
                .find(|n| !Files::of(&root, n).meta.exists())
                .unwrap_or_else(|| kind.to_string())
        }
    };
    let files = Files::of(&root, &name);
    if let Some(meta) = files.read_meta() {
        if place::alive(meta.pid) {
            return Err(usage_help(
                format!("session `{name}` is already running (pid {})", meta.pid),
                "pick another --name, or `trailblaze session stop` it first",
            ));
        }
        files.remove(true);
    }
    // Read here, where the workspace and the secrets are: the process is handed the result.
    let (project, located) = open_project(cli, Some(&a.session.secrets))?;
    // Said here, before a process is started for it: an unknown trailmap, a tool that does not load.
    let id = project.trailmap_for(a.map.trailmap.as_deref(), &spec)?;
    super::warn_all(&project.catalog(&id)?.warnings);
    let workspace = super::llm::workspace_llm(&located)?;
    let llm = a
        .llm
        .config(workspace.as_ref())?
        .map(|_| a.llm.with_key_read(workspace.as_ref()));
    let key_env = workspace.as_ref().and_then(|w| w.key_env.clone());
    let config = daemon::Config {
        name: name.clone(),
        idle_secs: a.idle,
        trailmaps: cli.trailmaps.clone(),
        map: MapArg {
            trailmap: a.map.trailmap.clone(),
        },
        session: SessionArgs {
            device: a.session.device.clone(),
            secrets: super::SecretsArg { secrets: None },
            out: super::OutArg {
                out: Some(std::path::absolute(super::out_dir(&located, &a.session.out)).unwrap_or_default()),
            },
            limits: a.session.limits.clone(),
        },
        llm,
        trace: a.trace.trace == super::live::OnOff::On,
        secrets: project.secrets.named_values(),
    };
    drop(project);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode_0600()
        .open(&files.log)
        .map_err(|e| anyhow!("cannot write {}: {e}", files.log.display()))?;
    let exe = std::env::current_exe().map_err(|e| anyhow!("cannot find the trailblaze binary: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["session", "serve", &name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log);
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_none_or(|k| withheld(k, key_env.as_deref())) {
            cmd.env_remove(&k);
        }
    }
    // SAFETY: setsid only makes the child the leader of a new session (no terminal's Ctrl-C or
    // hang-up reaches it); it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow!("cannot start the session's process: {e}"))?;
    let settings = serde_json::to_string(&config).unwrap_or_default();
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = writeln!(stdin, "{settings}");
    }
    drop(settings);
    let stdout = child.stdout.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(s) = stdout {
            let _ = std::io::BufReader::new(s).read_line(&mut line);
        }
        let _ = tx.send(line);
    });
    let said = rx.recv_timeout(Duration::from_secs(180)).unwrap_or_default();
    let said: Value = serde_json::from_str(&said).unwrap_or(Value::Null);
    if said["ready"] != true {
        let _ = child.kill();
        let _ = child.wait();
        // What it said is printed here: its log is kept only when it said nothing.
        files.remove(said["error"].is_string());
        let why = said["error"].as_str().map(str::to_string).unwrap_or_else(|| {
            format!(
                "its process ended before it was ready; its log: {}",
                files.log.display()
            )
        });
        return Err(Failure::Usage(anyhow!("session `{name}` did not start: {why}")));
    }
    out!("{name}");
    err!(
        "session `{name}` is running on {} (ends after {} idle); join it with `--session {name}` or TRAILBLAZE_SESSION={name}",
        config.session.device.device.first().map_or("sim", String::as_str),
        show_secs(a.idle)
    );
    Ok(())
}

trait Mode0600 {
    fn mode_0600(&mut self) -> &mut Self;
}

impl Mode0600 for std::fs::OpenOptions {
    fn mode_0600(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::mode(self, 0o600)
    }
}

fn show_secs(s: u64) -> String {
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

/// The status a running session reports, or `None` when it does not answer.
fn status(j: &Joined) -> Option<Value> {
    j.ask(&Request::Info).ok().map(|v| v["status"].clone())
}

fn describe(meta: &Meta, status: Option<&Value>, files: &Files) -> Value {
    let idle_left = status.and_then(|s| {
        let last = s["last_active_unix_ms"].as_u64()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_millis() as u64;
        Some((meta.idle_secs * 1000).saturating_sub(now.saturating_sub(last)) / 1000)
    });
    json!({
        "name": meta.name,
        "running": status.is_some(),
        "pid": meta.pid,
        "device": meta.device,
        "trailmap": meta.trailmap,
        "trailmaps": meta.trailmaps,
        "startedUnixMs": meta.started_unix_ms,
        "idleSecs": meta.idle_secs,
        "idleLeftSecs": idle_left,
        "busy": status.map(|s| s["busy"] == true),
        "calls": status.and_then(|s| s["calls"].as_u64()),
        "steps": status.and_then(|s| s["steps"].as_u64()),
        "folder": meta.dir,
        "socket": files.socket,
        "log": files.log,
    })
}

fn list(json_out: bool) -> Result<(), Failure> {
    let root = place::existing_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
    let mut rows = Vec::new();
    for (meta, alive) in root.as_deref().map(place::all).unwrap_or_default() {
        let files = Files::of(root.as_deref().unwrap_or(std::path::Path::new(".")), &meta.name);
        let joined = Joined { meta, files };
        let status = alive.then(|| status(&joined)).flatten();
        if status.is_none() {
            // Its process is gone: forgotten here, its log kept for reading why.
            err!(
                "session `{}` had ended (its process is gone); its log: {}",
                joined.meta.name,
                joined.files.log.display()
            );
            joined.files.remove(false);
            continue;
        }
        rows.push(describe(&joined.meta, status.as_ref(), &joined.files));
    }
    if json_out {
        super::output::out_json!(&rows);
        return Ok(());
    }
    if rows.is_empty() {
        err!("no session is running (`trailblaze session start` starts one)");
        return Ok(());
    }
    out!(
        "{:<16} {:<24} {:<14} {:>5} {:>9} {:>8}",
        "NAME",
        "DEVICE",
        "TRAILMAP",
        "STEPS",
        "IDLE LEFT",
        "PID"
    );
    for r in &rows {
        out!(
            "{:<16} {:<24} {:<14} {:>5} {:>9} {:>8}",
            r["name"].as_str().unwrap_or(""),
            r["device"].as_str().unwrap_or(""),
            r["trailmap"].as_str().unwrap_or(""),
            r["steps"].as_u64().unwrap_or(0),
            r["idleLeftSecs"].as_u64().map(show_secs).unwrap_or_default(),
            r["pid"].as_u64().unwrap_or(0)
        );
    }
    Ok(())
}

fn info(name: Option<&str>, json_out: bool) -> Result<(), Failure> {
    let j = named_or_only(name)?;
    let status = status(&j);
    let v = describe(&j.meta, status.as_ref(), &j.files);
    if json_out {
        super::output::out_json!(&v);
    } else {
        for (k, val) in v.as_object().into_iter().flatten() {
            let shown = match val {
                Value::String(s) => s.clone(),
                Value::Null => "-".into(),
                other => other.to_string(),
            };
            out!("{k:<14} {shown}");
        }
    }
    if status.is_none() {
        return Err(Failure::Usage(anyhow!(
            "session `{}` is not running: its process is gone (its log: {})",
            j.meta.name,
            j.files.log.display()
        )));
    }
    Ok(())
}

fn stop(name: Option<&str>, all: bool) -> Result<(), Failure> {
    let targets: Vec<Joined> = if all {
        let root = place::existing_root().map_err(|e| Failure::Usage(anyhow!(e)))?;
        match root {
            Some(r) => place::all(&r)
                .into_iter()
                .map(|(meta, _)| Joined {
                    files: Files::of(&r, &meta.name),
                    meta,
                })
                .collect(),
            None => Vec::new(),
        }
    } else {
        vec![named_or_only(name)?]
    };
    if targets.is_empty() {
        err!("no session is running");
    }
    for j in targets {
        // A call running now is cancelled first (as a signal's stop does), or the stop would wait
        // in line behind it, up to its wall-clock limit.
        let _ = j.ask(&Request::Cancel);
        let answered = j
            .ask(&Request::Stop {
                why: "`session stop`".into(),
            })
            .is_ok();
        // It frees its device before it answers; it is given a moment to exit, then killed.
        let gone = (0..100).any(|_| {
            if place::alive(j.meta.pid) {
                std::thread::sleep(Duration::from_millis(50));
                false
            } else {
                true
            }
        });
        if !gone && let Ok(pid) = i32::try_from(j.meta.pid) {
            // SAFETY: kill(2) of a pid we read from our own private folder's description.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        j.files.remove(true);
        if answered {
            err!("session `{}` stopped", j.meta.name);
        } else {
            err!(
                "session `{}` was not running (its process had gone): cleared",
                j.meta.name
            );
        }
    }
    Ok(())
}

fn save(a: &SaveArgs) -> Result<(), Failure> {
    let j = named(&a.name)?;
    let name = a.path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    if !name.ends_with(".trail.yaml") || name.len() == ".trail.yaml".len() {
        return Err(usage_help(
            format!("{}: a trail's file name ends in `.trail.yaml`", a.path.display()),
            "e.g. trails/sign-in.trail.yaml",
        ));
    }
    let path = std::path::absolute(&a.path).map_err(|e| anyhow!("{}: {e}", a.path.display()))?;
    let v = j.ask(&Request::Save {
        path,
        title: a.title.clone(),
        overwrite: a.overwrite,
    })?;
    if v["ok"] != true {
        return Err(Failure::Failed(anyhow!(
            "session save: {}",
            v["error"].as_str().unwrap_or("failed")
        )));
    }
    // Its secrets are placeholders: a replay needs their values, as the session had them.
    let secrets = std::fs::read_to_string(&a.path).is_ok_and(|t| t.contains("{{secret:"));
    err!(
        "saved {} ({} steps); check it with `trailblaze check {}`, replay it with `trailblaze run {}`{}",
        a.path.display(),
        v["steps"].as_u64().unwrap_or(0),
        a.path.display(),
        a.path.display(),
        if secrets {
            " (its secrets from TRAILBLAZE_SECRET_<NAME> or --secrets FILE, as `session start` had them)"
        } else {
            ""
        }
    );
    Ok(())
}

fn report(cli: &Cli, name: Option<&str>, no_open: bool) -> Result<(), Failure> {
    let j = named_or_only(name)?;
    let v = j.ask(&Request::Trace)?;
    let Some(trace) = v["path"].as_str().map(PathBuf::from) else {
        return Err(Failure::Usage(anyhow!(
            "session report: {}",
            v["error"].as_str().unwrap_or("no trace")
        )));
    };
    let dir = trace.parent().map(PathBuf::from).unwrap_or_default();
    super::report::report(
        cli,
        &super::report::ReportArgs {
            path: Some(dir),
            open: !no_open,
            gif: None,
            webp: None,
            storyboard: None,
        },
    )
}
