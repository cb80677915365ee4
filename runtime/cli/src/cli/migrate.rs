//! `trailblaze migrate FILE...`: the original's older list-form trails rewritten in place.

use std::path::PathBuf;

use clap::Args;

use super::output::{Stream, err, out};
use super::{Failure, file_error};
use trailblaze::trails::MigrateError;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze migrate trails/login.trail.yaml\n  trailblaze migrate --stdout old.trail.yaml > new.trail.yaml"
)]
pub struct MigrateArgs {
    /// Trail files in the older list form (`- config:` / `- prompts:` / `- tools:`)
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the current form instead of rewriting the files
    #[arg(long)]
    pub stdout: bool,
}

/// Rewrites each file; a file already in the current form is left alone, one that does not pass the
/// parse gate is reported and left alone (exit 2 at the end, after every file was tried).
pub fn migrate(a: &MigrateArgs) -> Result<(), Failure> {
    let mut failed = false;
    for file in &a.files {
        if a.stdout {
            match trailblaze::trails::migrate_file(file) {
                // YAML for a program: valid whether or not stdout is a terminal.
                Ok(Some(current)) => super::output::machine(Stream::Out, current.trim_end()),
                Ok(None) => already(file),
                Err(errors) => failed |= report(&errors),
            }
            continue;
        }
        match trailblaze::trails::migrate_in_place(file) {
            Ok(true) => out!("migrated {}", file.display()),
            Ok(false) => already(file),
            Err(MigrateError::Parse(errors)) => failed |= report(&errors),
            Err(e) => {
                err!("error: {e}");
                failed = true;
            }
        }
    }
    if failed { Err(Failure::Reported(2)) } else { Ok(()) }
}

fn already(file: &std::path::Path) {
    err!("{}: already in the current form; left as it is", file.display());
}

/// Shows a file's parse errors; true (it failed).
fn report(errors: &[trailblaze::errors::YamlError]) -> bool {
    for e in errors {
        super::diag::emit(&file_error(e));
    }
    true
}
