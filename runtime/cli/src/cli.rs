//! Argument parsing and output for the `trailblaze` binary.

mod call_args;
mod commands;
mod device;
mod diag;
mod doctor;
mod init;
mod live;
mod llm;
mod mcp;
mod merge;
mod migrate;
mod output;
mod progress;
mod report;
mod session;
mod shell;
mod skill;
mod snapshot_out;
mod tool;
mod toolsets;
mod trails;
mod watch;
mod waypoints;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, Parser, Subcommand};
use trailblaze::{Limits, Project, ProjectError, ProjectOptions, Settings};

use diag::{Diagnostic, Severity};

/// A failure with the exit code it maps to.
pub enum Failure {
    /// A tool or trail failed, or findings were reported: exit 1.
    Failed(anyhow::Error),
    /// Bad usage or input: exit 2.
    Usage(anyhow::Error),
    /// Already reported (diagnostics printed): just the exit code.
    Reported(u8),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Usage(e.into())
    }
}

const EXAMPLES: &str = "\
Examples:
  trailblaze init shop                           a new workspace in ./shop that checks and runs at once
  trailblaze run                                 replay every trail of every trailmap
  trailblaze run demo --shard 1/4 --junit j.xml  one shard of trailmap `demo`'s trails, for CI
  trailblaze check --all --tsc                   both gates, with the real TypeScript compiler
  trailblaze tools                               the tools an LLM sees
  trailblaze tool tap ref=c422                   one tool on a fresh simulated device
  trailblaze dts                                 types for the IDE: tools/trailblaze-client.d.ts

Trailmaps are found in ./trailmaps/ (or trails/config/trailmaps/) here or in the nearest parent
folder; outputs go to trailblaze-out/ beside them. Exit codes: 0 ok, 1 a failed tool or trail or
findings, 2 bad usage or input, or a device failure.";

#[derive(Parser)]
#[command(
    name = "trailblaze",
    version,
    about = "Run TypeScript scripted tools and trails against mobile apps",
    after_help = EXAMPLES
)]
pub struct Cli {
    /// Folder holding the trailmaps [default: ./trailmaps or trails/config/trailmaps, here or in
    /// the nearest parent folder].
    #[arg(long, global = true, env = "TRAILBLAZE_TRAILMAPS", value_name = "DIR")]
    pub trailmaps: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the largest variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Command {
    /// Run one LLM-visible tool on a fresh device: `trailblaze tool NAME key=value ...` (`shell` and
    /// `mcp` keep one device across calls).
    Tool(tool::ToolArgs),
    /// List the tools the LLM sees, or show one in full.
    Tools(tool::ToolsArgs),
    /// Run one objective through the agent on a live device: `trailblaze step "open settings"`;
    /// prints the calls it made as a trail step to paste (docs/agent.md).
    Step(commands::OneLineArgs),
    /// Answer a question from the device's screen, acting on nothing: `trailblaze ask "what is the
    /// first subject?"`.
    Ask(commands::OneLineArgs),
    /// Judge a statement about the device's screen: exit 0 when it holds, 1 when it does not.
    Verify(commands::OneLineArgs),
    /// Print the device's current screen.
    Snapshot(tool::SnapshotArgs),
    /// Replay trails on a device and write report.html, report.json and junit.xml.
    Run(trails::RunArgs),
    /// Check trails: the strict parse gate and the type gate (native, or `--tsc`).
    Check(trails::CheckArgs),
    /// Write a trailmap's `tools/trailblaze-client.d.ts` and `tools/tsconfig.json`.
    Dts(trails::DtsArgs),
    /// Start a workspace (or a new trailmap in one): an app or page, a scripted tool, a trail, types.
    Init(init::InitArgs),
    /// Serve the LLM-visible tools over MCP (stdio, or streamable HTTP with `--http PORT`).
    Mcp(mcp::McpArgs),
    /// List the devices `--device` can name: `sim`, `web` and the adb server's Android devices.
    Devices(device::DevicesArgs),
    /// Merge the reports of shard runs (`run --shard I/N`) into one report.
    Merge(merge::MergeArgs),
    /// Rebuild a run's report.html (and its traces' trace.js), or a session's from its trace; or
    /// export a trail's steps as a GIF or a storyboard PNG (docs/trace.md).
    Report(report::ReportArgs),
    /// Live sessions that outlive a command: `session start`, then `tool`, `snapshot`, `step`, `ask`,
    /// `verify`, `shell`, `mcp` act in it; `session save NAME PATH` writes its trail (docs/sessions.md).
    Session(session::SessionCmd),
    /// Write the instructions coding agents read to drive a device through a session (Claude Code's
    /// skill, AGENTS.md, a Cursor rule), or print them: `trailblaze skill install`.
    Skill(skill::SkillCmd),
    /// A live session for a person: `snapshot`, `tap REF`, `type TEXT`, any tool, `save NAME`.
    Shell(shell::ShellArgs),
    /// Rewrite trails in the original's older list form (`- config:` / `- prompts:`) into the current form.
    Migrate(migrate::MigrateArgs),
    /// List the trailmap's waypoints (named screens) and which the device's screen is at.
    Waypoints(waypoints::WaypointsArgs),
    /// What this machine has for trailblaze (adb, Chromium, Node.js, a WebDriverAgent, the LLM's
    /// settings) and what to install: exit 1 when the workspace's trailmaps need something missing.
    Doctor(doctor::DoctorArgs),
    /// Print a shell completion script: `trailblaze completions bash|zsh|fish|elvish|powershell`.
    Completions(doctor::CompletionsArgs),
}

/// `--trailmap`, for commands that work with one trailmap.
#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct MapArg {
    /// The trailmap to use (defaults to the only one).
    #[arg(long, env = "TRAILBLAZE_TRAILMAP", value_name = "ID")]
    pub trailmap: Option<String>,
}

impl MapArg {
    /// Whether the name came from `TRAILBLAZE_TRAILMAP` rather than the flag (the same value as the
    /// variable counts as the variable's: either way it names the same trailmap).
    pub fn named_by_env(&self) -> bool {
        self.trailmap.is_some() && std::env::var(TRAILMAP_ENV).ok() == self.trailmap
    }
}

/// The environment variable `--trailmap` defaults to.
pub const TRAILMAP_ENV: &str = "TRAILBLAZE_TRAILMAP";

/// `--secrets`, for commands that reach the device.
#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct SecretsArg {
    /// A `NAME=value` file of secrets, besides the `TRAILBLAZE_SECRET_<NAME>` environment variables.
    #[arg(long, env = "TRAILBLAZE_SECRETS_FILE", value_name = "FILE")]
    pub secrets: Option<PathBuf>,
}

/// `--out`, for commands that write session logs.
#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct OutArg {
    /// Folder the session logs and reports are written under [default: trailblaze-out/ beside the
    /// trailmaps' project].
    #[arg(long, env = "TRAILBLAZE_OUT", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// What a command that opens a session on the device takes: the device, secrets, the output
/// folder, budgets.
#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct SessionArgs {
    #[command(flatten)]
    pub device: device::DeviceArgs,
    #[command(flatten)]
    pub secrets: SecretsArg,
    #[command(flatten)]
    pub out: OutArg,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The per-call budgets, for commands that run tools.
#[derive(Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct LimitArgs {
    /// Seconds a top-level call's scripts may run; time inside device actions does not count.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    pub script_timeout: f64,
    /// Seconds a whole top-level call may take, device time included.
    #[arg(long, value_name = "SECS", default_value_t = 300.0, value_parser = seconds)]
    pub wall_timeout: f64,
    /// MiB a call may add to the embedded script engine's heap.
    #[arg(long, value_name = "MIB", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub memory_limit: u64,
}

impl LimitArgs {
    pub fn settings(&self) -> Settings {
        Settings {
            limits: Limits {
                timeout: Duration::from_secs_f64(self.script_timeout),
                wall_timeout: Duration::from_secs_f64(self.wall_timeout),
                memory_bytes: usize::try_from(self.memory_limit << 20).unwrap_or(usize::MAX),
                ..Limits::default()
            },
            console: Some(output::console_sink()),
            ..Settings::default()
        }
    }
}

pub fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err("expected a number of seconds, more than 0 and at most 86400".into()),
    }
}

/// Runs the command line; the process's exit code.
pub fn main() -> u8 {
    let cli = Cli::parse();
    output::init_tracing();
    // A write past a file-size limit (`ulimit -f`, a quota) then fails with an error the run reports,
    // as a full disk does, instead of killing the process before it says anything.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // A browser started for `--device web` is killed (and its profile removed) on SIGINT, SIGTERM
    // or SIGHUP; the kernel kills it if we are killed outright (see device/web/launch.rs).
    trailblaze::web::device::install_signal_cleanup();
    // Panics in tools and host functions are caught and reported as that call's error; the default
    // hook would also print the panic message, which may quote an argument value.
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(location = %at, "a panic was caught (message withheld: it may hold argument values)");
    }));
    let result = match &cli.command {
        Command::Tool(a) => tool::run_tool(&cli, a),
        Command::Tools(a) => tool::list_tools(&cli, a),
        Command::Snapshot(a) => tool::snapshot(&cli, a),
        Command::Step(a) => commands::step(&cli, a),
        Command::Ask(a) => commands::ask(&cli, a),
        Command::Verify(a) => commands::verify(&cli, a),
        Command::Run(a) => trails::run(&cli, a),
        Command::Check(a) => trails::check(&cli, a),
        Command::Dts(a) => trails::dts(&cli, a),
        Command::Init(a) => init::init(a),
        Command::Mcp(a) => mcp::mcp(&cli, a),
        Command::Devices(a) => device::devices(a),
        Command::Merge(a) => merge::merge(a),
        Command::Report(a) => report::report(&cli, a),
        Command::Session(a) => session::session(&cli, a),
        Command::Skill(a) => skill::skill(a),
        Command::Shell(a) => shell::shell(&cli, a),
        Command::Migrate(a) => migrate::migrate(a),
        Command::Waypoints(a) => waypoints::waypoints(&cli, a),
        Command::Doctor(a) => doctor::doctor(&cli, a),
        Command::Completions(a) => doctor::completions(a),
    };
    match result {
        Ok(()) => 0,
        Err(Failure::Failed(e)) => {
            report(&e);
            1
        }
        Err(Failure::Usage(e)) => {
            report(&e);
            2
        }
        Err(Failure::Reported(code)) => code,
    }
}

/// An error with a help line, drawn as `= help: ...` under it.
#[derive(Debug)]
pub struct WithHelp {
    pub message: String,
    pub help: String,
}

impl std::fmt::Display for WithHelp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.help)
    }
}

impl std::error::Error for WithHelp {}

/// A usage error with a help line.
pub fn usage_help(message: impl Into<String>, help: impl Into<String>) -> Failure {
    Failure::Usage(anyhow::Error::new(WithHelp {
        message: message.into(),
        help: help.into(),
    }))
}

/// Prints an error through the one renderer: each file error with its frame, anything else as one
/// message whose causes are added only when they say something new.
pub fn report(e: &anyhow::Error) {
    if let Some(ProjectError::Load(load)) = e.downcast_ref::<ProjectError>() {
        for y in &load.errors {
            diag::emit(&file_error(y));
        }
        return;
    }
    if let Some(h) = e.downcast_ref::<WithHelp>() {
        diag::emit(&Diagnostic::parse(Severity::Error, &h.message).with_help(h.help.clone()));
        return;
    }
    diag::emit(&Diagnostic::parse(Severity::Error, &error_text(e)));
}

/// An error and its causes on one line, each cause only when it says something new.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}

/// A YAML file error as a diagnostic; about a folder or an unreadable file, no frame.
pub fn file_error(y: &trailblaze::errors::YamlError) -> Diagnostic {
    if y.file.is_file() {
        Diagnostic::error(y.message.clone()).at(&y.file, y.pos.line, y.pos.col, Some(y.source_line.clone()))
    } else {
        Diagnostic::error(format!("{}: {}", y.file.display(), y.message))
    }
}

/// Where the trailmaps are and where outputs go.
pub struct Located {
    pub trailmaps: PathBuf,
    /// The folder outputs go under (`trailblaze-out/`), relative to the current one (empty: here).
    pub root: PathBuf,
    /// The original's layout: the `trails/` folder whose trails a bare `run`/`check` takes.
    pub trails: Option<PathBuf>,
    /// The original's layout: its `trails/config/trailblaze.yaml`.
    pub anchor: Option<PathBuf>,
}

/// The environment variable naming a workspace's config folder, as the original reads it.
pub const CONFIG_DIR_ENV: &str = "TRAILBLAZE_CONFIG_DIR";

/// `--trailmaps`, `$TRAILBLAZE_CONFIG_DIR`, or the nearest workspace above the current folder.
pub fn locate(cli: &Cli) -> Result<Located, Failure> {
    locate_in(cli.trailmaps.as_deref())
}

/// [`locate`] given `--trailmaps` (or not).
pub fn locate_in(trailmaps: Option<&Path>) -> Result<Located, Failure> {
    const HELP: &str = "run from the project root or pass --trailmaps DIR";
    if let Some(dir) = trailmaps {
        if !dir.is_dir() {
            return Err(usage_help(
                format!("--trailmaps: `{}` is not a folder", dir.display()),
                HELP,
            ));
        }
        return Ok(Located {
            trailmaps: dir.to_path_buf(),
            root: PathBuf::new(),
            trails: None,
            anchor: None,
        });
    }
    let cwd = std::env::current_dir().map_err(|e| anyhow!("the current folder cannot be read: {e}"))?;
    // The original's override of the workspace's config folder (`.../trails/config`), as its CI runs
    // one example's trails against another folder's trailmaps.
    if let Some(config) = std::env::var_os(CONFIG_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
    {
        if !config.is_dir() {
            return Err(usage_help(
                format!("{CONFIG_DIR_ENV}: `{}` is not a folder", config.display()),
                "point it at a workspace's `trails/config` folder, or unset it",
            ));
        }
        let anchor = config.join("trailblaze.yaml");
        return Ok(Located {
            trailmaps: config.join("trailmaps"),
            root: PathBuf::new(),
            trails: config.parent().map(Path::to_path_buf).filter(|t| t.is_dir()),
            anchor: anchor.is_file().then_some(anchor),
        });
    }
    match trailblaze::workspace::find(&cwd) {
        Some(w) => Ok(Located {
            trailmaps: relative_to(&w.trailmaps, &cwd),
            root: relative_to(&w.home, &cwd),
            // Run from inside `trails/` itself: `.`, a folder that can be opened (an empty path cannot).
            trails: w.anchored.as_ref().map(|a| relative_to(&a.trails, &cwd)).map(|t| {
                if t.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    t
                }
            }),
            anchor: w.anchored.map(|a| relative_to(&a.config, &cwd)),
        }),
        None => Err(usage_help(
            format!(
                "no trailmaps folder in {} or above it (looked for {})",
                cwd.display(),
                trailblaze::workspace::LAYOUTS.join(", ")
            ),
            HELP,
        )),
    }
}

/// `path` relative to `base` when it is under it (shorter to read, and what a terminal opens).
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    match path.strip_prefix(base) {
        Ok(p) => p.to_path_buf(),
        Err(_) => path.to_path_buf(),
    }
}

/// The output folder: `--out`, or `trailblaze-out/` beside the trailmaps' project.
pub fn out_dir(located: &Located, out: &OutArg) -> PathBuf {
    out.out.clone().unwrap_or_else(|| located.root.join("trailblaze-out"))
}

/// Opens the project: the trailmaps found by [`locate`], with `secrets` if given.
pub fn open_project(cli: &Cli, secrets: Option<&SecretsArg>) -> Result<(Project, Located), Failure> {
    open_project_for(cli, secrets, &[])
}

/// [`open_project`] for `run`/`check` given `paths`: outside any workspace, trail files named one by
/// one still run, with the built-in tools alone (`trailblaze run login.trail.yaml`).
pub fn open_project_for(
    cli: &Cli,
    secrets: Option<&SecretsArg>,
    paths: &[String],
) -> Result<(Project, Located), Failure> {
    let lone = !paths.is_empty() && cli.trailmaps.is_none() && paths.iter().all(|p| Path::new(p).is_file());
    let located = match locate(cli) {
        Err(_) if lone => Located {
            // No such folder: no trailmaps, only the built-ins.
            trailmaps: PathBuf::from("trailmaps"),
            root: PathBuf::new(),
            trails: None,
            anchor: None,
        },
        other => other?,
    };
    let project = open_located(&located, secrets.and_then(|s| s.secrets.clone()))?;
    Ok((project, located))
}

/// The project at `located`, its workspace's settings checked.
pub fn open_located(located: &Located, secrets_file: Option<PathBuf>) -> Result<Project, Failure> {
    let project = trailblaze::open(
        &located.trailmaps,
        ProjectOptions {
            cache_dir: None,
            secrets_file,
            ..ProjectOptions::default()
        },
    )?;
    output::set_secrets(project.secrets.values_to_redact());
    if let Some(anchor) = &located.anchor {
        let config = trailblaze::workspace::WorkspaceConfig::load(anchor).map_err(|e| {
            Failure::Usage(ProjectError::Load(trailblaze::errors::LoadErrors { errors: vec![e] }).into())
        })?;
        let ids: Vec<&str> = project.trailmaps.maps.keys().map(String::as_str).collect();
        warn_all(&config.unknown_targets(&ids));
    }
    Ok(project)
}

/// Prints the catalog's warnings once each, through the renderer.
pub fn warn_all(warnings: &[String]) {
    for w in warnings {
        diag::emit(&Diagnostic::parse(Severity::Warning, w));
    }
}
