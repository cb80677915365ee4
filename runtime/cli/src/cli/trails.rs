//! `trailblaze run`, `check` and `dts`.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use trailblaze::Project;
use trailblaze::Settings;
use trailblaze::internals::summary_line;
use trailblaze::internals::write_client_files;
use trailblaze::internals::{find_trails, parse_shard, shard};
use trailblaze::{CheckReport, check_native, check_tsc};
use trailblaze::{RunOptions, run_trails};

use super::output::{err, out};
use super::{Cli, Failure, open_project};

#[derive(Args)]
pub struct RunArgs {
    /// Trail files or folders (searched for `*.trail.yaml`). Default: every trailmap's trails.
    pub paths: Vec<PathBuf>,
    /// The device: `sim` (the simulated device running the trailmap's app.yaml).
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// Run only shard I of N (1-based), e.g. `--shard 2/4`: a deterministic split for CI matrices.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Trailmap ids, trail files or folders.
    pub targets: Vec<String>,
    /// Check every trailmap's trails.
    #[arg(long)]
    pub all: bool,
    /// Also run the real TypeScript compiler over generated `.trail.gen.ts` files (needs
    /// `npm ci --prefix sdk-ts`).
    #[arg(long)]
    pub tsc: bool,
}

#[derive(Args)]
pub struct DtsArgs {
    /// The trailmap (defaults to `--trailmap`, or the only one).
    pub trailmap: Option<String>,
}

/// Every trail of every trailmap, or of the ones named.
fn trails_of(project: &Project, ids: &[&str]) -> Vec<PathBuf> {
    project
        .trailmaps
        .maps
        .values()
        .filter(|m| ids.is_empty() || ids.contains(&m.id.as_str()))
        .map(|m| m.dir.join("trails"))
        .filter(|d| d.is_dir())
        .collect()
}

pub fn run(cli: &Cli, a: &RunArgs) -> Result<(), Failure> {
    if a.device != "sim" {
        return Err(Failure::Usage(anyhow!(
            "unknown device `{}`: only `sim` (the simulated device) is available",
            a.device
        )));
    }
    let project = open_project(cli)?;
    let roots = if a.paths.is_empty() {
        trails_of(&project, &[])
    } else {
        a.paths.clone()
    };
    let mut files = find_trails(&roots)?;
    if let Some((i, n)) = a.shard {
        files = shard(files, i, n);
    }
    if files.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "no trails found (looked in: {})",
            roots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let opts = RunOptions {
        out: cli.out.clone(),
        settings: Settings::default(),
    };
    let out = run_trails(&project, &files, &opts, &mut |line| err!("{line}"))?;
    if cli.json {
        out!("{}", serde_json::to_string_pretty(&out.report).unwrap_or_default());
    }
    err!("{}", summary_line(&out.report));
    err!("report: {}", out.files.html.display());
    err!("        {}", out.files.json.display());
    err!("        {}", out.files.junit.display());
    let summary = out.report.summary();
    if summary.errors > 0 {
        // The device failed: not the app's fault, so not exit 1.
        Err(Failure::Usage(anyhow!(
            "the device failed during {} trail(s) (see the report); exit 2",
            summary.errors
        )))
    } else if summary.ok() {
        Ok(())
    } else {
        Err(Failure::Failed(anyhow!("some trails did not pass")))
    }
}

pub fn check(cli: &Cli, a: &CheckArgs) -> Result<(), Failure> {
    let project = open_project(cli)?;
    let mut roots = Vec::new();
    let mut maps: Vec<String> = Vec::new();
    if a.all || a.targets.is_empty() {
        maps = project.trailmaps.maps.keys().cloned().collect();
        roots = trails_of(&project, &[]);
    }
    for t in &a.targets {
        if project.trailmaps.get(t).is_some() {
            maps.push(t.clone());
            roots.extend(trails_of(&project, &[t.as_str()]));
        } else {
            roots.push(PathBuf::from(t));
        }
    }
    let files = find_trails(&roots)?;
    // Regenerate the typed surface of every trailmap involved.
    let mut problems = Vec::new();
    for id in project
        .trailmaps
        .maps
        .keys()
        .filter(|id| maps.is_empty() || maps.contains(id))
    {
        let catalog = project.catalog(id)?;
        if let Some(map) = project.trailmaps.get(id) {
            write_client_files(&catalog, &map.dir)?;
        }
        problems.extend(catalog.problems.iter().cloned());
    }
    let report = if a.tsc {
        check_tsc(&project, &files)?
    } else {
        check_native(&project, &files)
    };
    print_findings(cli, &report, &problems);
    if report.errors() + problems.len() > 0 {
        Err(Failure::Failed(anyhow!(
            "{} finding(s)",
            report.errors() + problems.len()
        )))
    } else {
        Ok(())
    }
}

fn print_findings(cli: &Cli, report: &CheckReport, problems: &[String]) {
    if cli.json {
        let v = serde_json::json!({ "trails": report.trails, "calls": report.calls, "findings": report.findings, "toolProblems": problems });
        out!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return;
    }
    for p in problems {
        out!("{p}");
    }
    for f in &report.findings {
        out!("{}{f}", if f.warning { "warning: " } else { "" });
    }
    err!(
        "checked {} trail(s), {} recorded call(s): {} finding(s)",
        report.trails,
        report.calls,
        report.findings.len() + problems.len()
    );
}

pub fn dts(cli: &Cli, a: &DtsArgs) -> Result<(), Failure> {
    let project = open_project(cli)?;
    let id = project.trailmap_id(a.trailmap.as_deref().or(cli.trailmap.as_deref()))?;
    let catalog = project.catalog(&id)?;
    let map = project
        .trailmaps
        .get(&id)
        .ok_or_else(|| Failure::Usage(anyhow!("unknown trailmap `{id}`")))?;
    for p in &catalog.problems {
        err!("{p}");
    }
    let files = write_client_files(&catalog, &map.dir)?;
    out!("{}", files.dts.display());
    out!("{}", files.tsconfig.display());
    if catalog.problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Failed(anyhow!("some tools could not be typed")))
    }
}
