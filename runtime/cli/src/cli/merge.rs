//! `trailblaze merge`: the reports of shard runs as one.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::Failure;
use super::output::{err, out};
use super::progress::summary_line;

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze merge shard-1 shard-2 shard-3 shard-4 --report-dir report
  trailblaze merge artifacts/trailblaze-shard-* --report-dir report --junit junit.xml

Each folder is a run's folder (its report.json, screens/ and logs), e.g. `run --shard I/N
--report-dir DIR` of a CI matrix job. Folders of different suites, or the same shard twice, are
refused. A shard's folder is untrusted: only files inside it that its report names are read (a path
that is absolute, has `..` or a symlink leading out is refused), and --report-dir must be a folder
of its own, not a shard's nor one holding a shard. Exit codes as `run`: 0 every trail passed, 1 a trail failed, 2 a device error or bad usage.")]
pub struct MergeArgs {
    /// The run folders to merge.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// Where the merged report.html, report.json, junit.xml and screens go.
    #[arg(long, value_name = "DIR")]
    pub report_dir: PathBuf,
    /// Also write the merged JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

pub fn merge(a: &MergeArgs) -> Result<(), Failure> {
    use trailblaze::report::MergeError;
    let merged = trailblaze::report::merge(&a.runs, &a.report_dir).map_err(|e| match e {
        MergeError::Overlaps { .. } => Failure::Usage(anyhow!("--report-dir: {e}")),
        e => Failure::Usage(anyhow!(e)),
    })?;
    if let Some(path) = &a.junit {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Failure::Failed(anyhow!("{}: {e}", parent.display())))?;
        }
        std::fs::copy(&merged.files.junit, path).map_err(|e| Failure::Failed(anyhow!("{}: {e}", path.display())))?;
    }
    if !merged.missing.is_empty() {
        let list: Vec<String> = merged.missing.iter().map(usize::to_string).collect();
        err!(
            "warning: shard(s) {} were not given: their trails are not in the report",
            list.join(", ")
        );
    }
    out!("{} (from {} run(s))", summary_line(&merged.report), a.runs.len());
    out!("report: {}", merged.files.html.display());
    super::trails::exit_for(&merged.report)
}
