//! Argument parsing and output for the `trailblaze` binary.

mod output;
mod tool;
mod trails;

use output::err;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use trailblaze::{Project, ProjectOptions};

/// A failure with the exit code it maps to.
pub enum Failure {
    /// A tool or trail failed, or findings were reported: exit 1.
    Failed(anyhow::Error),
    /// Bad usage or input: exit 2.
    Usage(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Usage(e.into())
    }
}

#[derive(Parser)]
#[command(
    name = "trailblaze",
    version,
    about = "Run TypeScript scripted tools and trails against mobile apps"
)]
pub struct Cli {
    /// Folder holding the trailmaps.
    #[arg(long, global = true, default_value = "trailmaps", env = "TRAILBLAZE_TRAILMAPS")]
    pub trailmaps: PathBuf,
    /// Folder the session logs and reports are written under.
    #[arg(long, global = true, default_value = "trailblaze-out", env = "TRAILBLAZE_OUT")]
    pub out: PathBuf,
    /// The trailmap to use (defaults to the only one).
    #[arg(long, global = true, env = "TRAILBLAZE_TRAILMAP")]
    pub trailmap: Option<String>,
    /// A `NAME=value` file of secrets, besides the `TRAILBLAZE_SECRET_<NAME>` environment variables.
    #[arg(long, global = true, env = "TRAILBLAZE_SECRETS_FILE")]
    pub secrets: Option<PathBuf>,
    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run one LLM-visible tool on the device: `trailblaze tool NAME key=value ...`.
    Tool(tool::ToolArgs),
    /// List the tools the LLM sees.
    Tools(tool::ToolsArgs),
    /// Print the device's current screen.
    Snapshot(tool::SnapshotArgs),
    /// Replay trails on a device and write report.html, report.json and junit.xml.
    Run(trails::RunArgs),
    /// Check trails: the strict parse gate and the type gate (native, or `--tsc`).
    Check(trails::CheckArgs),
    /// Write a trailmap's `tools/trailblaze-client.d.ts` and `tools/tsconfig.json`.
    Dts(trails::DtsArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
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
        Command::Run(a) => trails::run(&cli, a),
        Command::Check(a) => trails::check(&cli, a),
        Command::Dts(a) => trails::dts(&cli, a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Failed(e)) => {
            err!("error: {e:#}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(e)) => {
            err!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAILBLAZE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::env::var_os("NO_COLOR").is_none())
        .try_init();
}

/// Opens the project named by the global flags.
pub fn open_project(cli: &Cli) -> Result<Project, Failure> {
    let project = Project::open(
        &cli.trailmaps,
        ProjectOptions {
            cache_dir: None,
            secrets_file: cli.secrets.clone(),
        },
    )?;
    output::set_secrets(project.secrets.values_to_redact());
    Ok(project)
}
