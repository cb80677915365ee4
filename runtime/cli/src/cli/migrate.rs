//! `trailblaze migrate FILE...`: the original's older list-form trails rewritten in place.

use std::path::PathBuf;

use clap::Args;

use super::output::{err, out};
use super::{Failure, file_error};

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
        match trailblaze::trails::migrate_file(file) {
            Ok(Some(current)) if a.stdout => out!("{}", current.trim_end()),
            Ok(Some(current)) => match trailblaze::recording::write_trail(file, &current, true) {
                Ok(()) => out!("migrated {}", file.display()),
                Err(e) => {
                    err!("error: {e}");
                    failed = true;
                }
            },
            Ok(None) => err!("{}: already in the current form; left as it is", file.display()),
            Err(errors) => {
                for e in &errors {
                    super::diag::emit(&file_error(e));
                }
                failed = true;
            }
        }
    }
    if failed { Err(Failure::Reported(2)) } else { Ok(()) }
}
