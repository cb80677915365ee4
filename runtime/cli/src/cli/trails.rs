//! `trailblaze run`, `check` and `dts`.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use trailblaze::gates::{
    CheckOptions, CheckReport, check_native, check_native_with, check_nav, check_nav_tsc, check_tools_tsc, check_tsc,
};
use trailblaze::report::ScreenshotPolicy;
use trailblaze::tools::{bind_schemas, write_client_files, write_schemas, write_surface_files};
use trailblaze::trails::{find_trails, parse_shard};
use trailblaze::{Project, ProjectError};
use trailblaze::{RunOptions, run_trails};

use super::diag::{self, Diagnostic};
use super::output::{Stream, err, out};
use super::progress::{ProgressLines, summary_line};
use super::{Cli, Failure, MapArg, SessionArgs, open_project, open_project_for, out_dir, warn_all};
use targets::{Selected, in_shard_first, named_or, one_trailmap, select, targets};
// MCP's `listTrails` searches where a bare `run` does.
pub(super) use targets::trails_of;

mod targets;

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze run                              every trail of every trailmap
  trailblaze run demo                         trailmap `demo`'s trails
  trailblaze run trailmaps/demo/trails/sign-in.trail.yaml
  trailblaze run --shard 2/4                  one quarter of the trails, for a CI matrix
  trailblaze run --tag smoke --junit out/junit.xml
  trailblaze run --device android:emulator-5554 --arg user=qa1
  trailblaze run --jobs 4                     four trails at once, each on its own simulated device
  trailblaze run --device android:all         every phone on the adb server, one trail per phone
  TRAILBLAZE_LLM_MODEL=gpt-4.1 TRAILBLAZE_LLM_API_KEY=... trailblaze run --agent
                                              steps with no recording run by an LLM, written
                                              back to <trail>.healed.yaml
  trailblaze run --self-heal --write-back --llm-provider anthropic --llm-model claude-sonnet-4-5
                                              recorded steps that fail too, fixed in the trail itself
  trailblaze run --agent --llm-base-url http://127.0.0.1:8080/v1 --llm-model local
                                              an OpenAI-compatible server on this machine (no key)

The type gate runs first: a trail `check` rejects is not run (`--no-check` runs it anyway).
The agent: docs/agent.md (providers, budgets, write-back, secrets).")]
pub struct RunArgs {
    /// Trailmap ids, trail files or folders (searched for trails). Default: every trailmap's trails.
    pub paths: Vec<String>,
    /// Run only shard I of N (1-based), e.g. `--shard 2/4`: a deterministic split for CI matrices.
    #[arg(long, value_parser = parse_shard, value_name = "I/N")]
    pub shard: Option<(usize, usize)>,
    /// Skip the type gate before the run.
    #[arg(long)]
    pub no_check: bool,
    /// Run only trails with this tag (`config.tags`); repeat for any of several.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Skip trails with this tag; wins over `--tag`.
    #[arg(long = "exclude-tag", value_name = "TAG")]
    pub exclude_tags: Vec<String>,
    /// A value for `{{args.NAME}}` in the trails, over the trail's default: `--arg NAME=VALUE`.
    // Parsed in `run`, not by clap: clap's error would quote the value, which may be a secret.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Write the run's folder here instead of `<out>/run-<stamp>/` (a fixed path for CI).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Also write the JUnit XML here (for CI test-result uploaders).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Which steps keep a screenshot in the report: `all`, `failures` (a phone spends about a
    /// second per screenshot) or `none`.
    #[arg(long, value_enum, default_value = "all", value_name = "WHICH")]
    pub screenshots: Screenshots,
    /// Which trails keep a trace beside their log (each call's screens, trees, selector, time;
    /// requests, console, device log; docs/trace.md): `on`, `off` or `retain-on-failure`.
    #[arg(long, value_enum, default_value = "retain-on-failure", value_name = "WHEN")]
    pub trace: Keep,
    /// Which trails keep a video (Android `screenrecord`, a page's screencast): `on`, `off` or
    /// `retain-on-failure`; a trail whose video is kept keeps its trace too.
    #[arg(long, value_enum, default_value = "off", value_name = "WHEN")]
    pub video: Keep,
    /// Print the run's report as JSON on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Trails run at once, each on its own session and device: a simulated device or a browser
    /// context of its own per job, or a phone of the pool (`--device` given several times, `android:all`)
    /// [default: one per phone of the pool, else one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    /// Keep watching: on save, run again the trails whose file, tools, app or trailmap changed
    /// (one warm project all along); Ctrl-C ends it.
    #[arg(long)]
    pub watch: bool,
    /// With no paths: this trailmap's trails, as `run ID` (paths given win).
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The agent's flags (`run --agent`, `--self-heal`).
#[derive(Args)]
#[command(next_help_heading = "The agent (docs/agent.md)")]
pub struct AgentArgs {
    /// Run the steps that have no recording for this device through an LLM, and write what it did
    /// back as their recordings (to `<trail>.healed.yaml`, or the trail itself with --write-back).
    #[arg(long)]
    pub agent: bool,
    /// Also give a recorded step that fails (after its maxRetries) to the LLM; implies --agent.
    #[arg(long)]
    pub self_heal: bool,
    /// Write the agent's recordings into the trail file itself, its comments and layout kept,
    /// instead of `<trail>.healed.yaml` beside it.
    #[arg(long, conflicts_with = "no_write_back")]
    pub write_back: bool,
    /// Write the agent's recordings nowhere (the report still shows them).
    #[arg(long)]
    pub no_write_back: bool,
    #[command(flatten)]
    pub llm: super::llm::LlmArgs,
}

impl AgentArgs {
    /// The agent's config when --agent or --self-heal is given (a usage error names what is
    /// missing); else the LLM `assertWithAi` / `rememberWithAi` ask, when one is configured.
    fn config(
        &self,
        workspace: Option<&trailblaze::workspace::WorkspaceLlm>,
    ) -> Result<
        (
            Option<trailblaze::agent::AgentConfig>,
            Option<trailblaze::agent::AgentConfig>,
        ),
        Failure,
    > {
        use trailblaze::agent::WriteBack;
        if !self.agent && !self.self_heal {
            if self.write_back || self.no_write_back {
                return Err(super::usage_help(
                    "--write-back and --no-write-back are about the agent's recordings",
                    "add --agent (or --self-heal)",
                ));
            }
            return Ok((None, self.llm.config(workspace)?));
        }
        let mut config = self.llm.required(workspace, "--agent")?;
        config.self_heal = self.self_heal;
        config.write_back = match (self.write_back, self.no_write_back) {
            (true, _) => WriteBack::InPlace,
            (_, true) => WriteBack::Off,
            _ => WriteBack::Sibling,
        };
        Ok((Some(config), None))
    }
}

/// `--trace` and `--video`: Playwright's words.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Keep {
    On,
    Off,
    RetainOnFailure,
}

impl Keep {
    fn policy(self) -> trailblaze::trace::TracePolicy {
        match self {
            Keep::On => trailblaze::trace::TracePolicy::On,
            Keep::Off => trailblaze::trace::TracePolicy::Off,
            Keep::RetainOnFailure => trailblaze::trace::TracePolicy::RetainOnFailure,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Screenshots {
    All,
    Failures,
    None,
}

/// `--arg` values as a map; a malformed one is named by its position, never by its text.
fn parse_args(given: &[String]) -> Result<std::collections::BTreeMap<String, String>, Failure> {
    given
        .iter()
        .enumerate()
        .map(|(i, s)| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(Failure::Usage(anyhow!(
                "--arg #{}: expected NAME=VALUE (the value is not shown: it may be a secret)",
                i + 1
            ))),
        })
        .collect()
}

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze check                every trailmap's trails, native type gate
  trailblaze check demo --tsc     trailmap `demo`, with the real TypeScript compiler
  trailblaze check trails/x.trail.yaml --json
  trailblaze check --no-cache     check every trail again, ignoring the cache

The native gate keeps each trail's result in the cache folder ($TRAILBLAZE_CACHE_DIR/check, else
~/.cache/trailblaze/transpile/check) and reuses it while the trail and the types of the tools it
calls are unchanged: a warm check reports exactly what a cold one does.")]
pub struct CheckArgs {
    /// Trailmap ids, trail files or folders.
    pub targets: Vec<String>,
    /// Check every trailmap's trails.
    #[arg(long)]
    pub all: bool,
    /// Run the real TypeScript compiler over generated `.trail.gen.ts` files and over the
    /// trailmaps' scripted tools (`tools/*.ts`); needs `typescript` installed (see docs/sdk.md).
    #[arg(long)]
    pub tsc: bool,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Check every trail again instead of reusing cached results, and record none (the native
    /// gate; `--tsc` never uses the cache).
    #[arg(long)]
    pub no_cache: bool,
    /// Keep watching: on save, check again the trails whose file, tools or trailmap changed;
    /// Ctrl-C ends it.
    #[arg(long, conflicts_with = "json")]
    pub watch: bool,
    /// With no targets: this trailmap, as `check ID` (targets given win).
    #[command(flatten)]
    pub map: MapArg,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze dts              the only trailmap's tools/trailblaze-client.d.ts and tools/tsconfig.json\n  trailblaze dts demo         trailmap `demo`'s\n  tsc -p trailmaps/demo/tools type-check its scripted tools afterwards"
)]
pub struct DtsArgs {
    /// The trailmap, as `--trailmap ID` names it (defaults to the only one).
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub map: MapArg,
}

impl DtsArgs {
    /// The trailmap named by the argument or by `--trailmap`/`TRAILBLAZE_TRAILMAP`; the argument
    /// wins over the environment, and two different names given at once are refused.
    fn trailmap(&self) -> Result<Option<&str>, Failure> {
        one_trailmap(self.id.as_deref(), &self.map)
    }
}

pub fn run(cli: &Cli, a: &RunArgs) -> Result<(), Failure> {
    let pool = a.session.device.pool()?;
    let Some((device, pool)) = pool.split_first() else {
        return Err(Failure::Usage(anyhow!("no device to run on")));
    };
    let (device, pool) = (device.clone(), pool.to_vec());
    let args = parse_args(&a.args)?;
    let (project, located) = open_project_for(cli, Some(&a.session.secrets), &a.paths)?;
    let (agent, judge) = a.agent.config(super::llm::workspace_llm(&located)?.as_ref())?;
    let paths = named_or(&project, &a.paths, &a.map, false)?;
    let (roots, _) = targets(&project, &located, &paths, false);
    let Selected { files, suite, digest } = select(a, &roots)?;
    if files.is_empty() {
        // A matrix wider than the trails: this shard has nothing to do, which is not a failure. Its
        // report folder is written all the same (an empty report that merges): a CI step that
        // uploads it finds it.
        let (i, n) = a.shard.unwrap_or((1, 1));
        err!(
            "notice: shard {i}/{n} has no trails ({} in all); nothing to run",
            suite.len()
        );
    }
    // No device named: when every trail of the suite names only a web device, they run on the web,
    // as the original's do. The suite's trails decide, never the shard's: a shard must run each
    // trail as the whole run would (web trails alone in a shard would run where the whole run
    // skips them). This shard's first: they are the ones the run reads again (kept parses).
    let probe = in_shard_first(&files, &suite);
    // Reading the trails is the longest part of a run's start: their trailmaps' tools (which the
    // type gate and the sessions use) are built on another core meanwhile.
    let for_web = std::thread::scope(|s| {
        s.spawn(|| trailblaze::gates::load_for(&project, &files));
        project.device_for_trails(&probe)
    });
    let device = match for_web {
        Some(web) if !a.session.device.given() => a.session.device.with_browser_flags(web)?,
        _ => device,
    };
    let mut opts = RunOptions {
        out: out_dir(&located, &a.session.out),
        settings: a.session.limits.settings(),
        report_dir: a.report_dir.clone(),
        junit: a.junit.clone(),
        args,
        device,
        pool,
        jobs: a.jobs.map_or(0, usize::from),
        shard: a.shard.map(|(index, total)| trailblaze::report::Shard { index, total }),
        suite: Some(digest),
        screenshots: match a.screenshots {
            Screenshots::All => ScreenshotPolicy::All,
            Screenshots::Failures => ScreenshotPolicy::Failures,
            Screenshots::None => ScreenshotPolicy::None,
        },
        agent: None,
        trace: trailblaze::trace::TraceSettings {
            trace: a.trace.policy(),
            video: a.video.policy(),
        },
    };
    trailblaze::agent::for_run(&project, agent.as_ref(), judge.as_ref(), &mut opts);
    if !a.watch || files.is_empty() {
        return run_files(&project, &files, a, &opts, None);
    }
    let watch = super::watch::Watch::start(&project, &roots, Some(&opts.out))?;
    let cancels = super::watch::Cancels::default();
    if let Err(e) = cancels.during(|| run_files(&project, &files, a, &opts, Some(&cancels))) {
        super::watch::show(e);
    }
    super::watch::rounds(
        project,
        watch,
        &mut |_| Ok(select(a, &roots)?.files),
        &mut |project, files, _| match files.is_empty() {
            // A save that touched none of the selected trails: nothing to run again.
            true => Ok(()),
            false => cancels.during(|| run_files(project, files, a, &opts, Some(&cancels))),
        },
    )
}

/// Runs `files` once: the type gate, the run, the summary; the exit it calls for. Under a watch,
/// `cancels` keeps the sessions so Ctrl-C can stop them.
fn run_files(
    project: &Project,
    files: &[PathBuf],
    a: &RunArgs,
    opts: &RunOptions,
    cancels: Option<&super::watch::Cancels>,
) -> Result<(), Failure> {
    // Results go to stdout; with --json stdout is the report alone.
    let stream = if a.json { Stream::Err } else { Stream::Out };
    if !a.no_check && !files.is_empty() {
        let report = check_native(project, files);
        let errors = report.errors();
        if errors > 0 {
            for f in report.findings.iter().filter(|f| !f.warning) {
                diag::emit(&diag::finding(f));
            }
            diag::emit(
                &Diagnostic::error(format!(
                    "the type gate found {errors} problem(s) in {} trail(s): nothing was run",
                    files.len()
                ))
                .with_help("fix them (`trailblaze check` lists them), or pass --no-check to run anyway"),
            );
            return Err(Failure::Reported(1));
        }
    }
    let jobs = match (opts.jobs, &opts.device) {
        (0, d) if d.is_phone() => 1 + opts.pool.len(),
        (0, _) => std::thread::available_parallelism().map_or(1, usize::from),
        (n, _) => n,
    };
    let mut lines = ProgressLines::with_status(stream, files.len(), jobs);
    let out = match cancels {
        Some(cancels) => {
            let mut sink = super::watch::Cancelling {
                inner: &mut lines,
                cancels,
            };
            run_trails(project, files, opts, &mut sink)
        }
        None => run_trails(project, files, opts, &mut lines),
    };
    lines.finish();
    let out = out.map_err(|e| match e {
        // The trails ran but their results could not be kept: the run failed (exit 1), as a
        // failed trail does; a CI job must not take it for bad usage.
        ProjectError::Output(_) => Failure::Failed(anyhow!(e)),
        e => Failure::Usage(anyhow!(e)),
    })?;
    if a.json {
        super::output::out_json!(&out.report);
    }
    let print = |text: String| super::output::line(stream, &text);
    print(summary_line(&out.report));
    print(format!("report: {}", out.files.html.display()));
    print(format!("        {}", out.files.json.display()));
    print(format!("        {}", out.files.junit.display()));
    if let Some(junit) = &out.junit {
        print(format!("        {}", junit.display()));
    }
    exit_for(&out.report)
}

/// A run's (or a merge's) exit: 0 when every trail passed, 1 when one failed, 2 when the device failed
/// during one (not the app's fault, so not 1).
pub(super) fn exit_for(report: &trailblaze::report::RunReport) -> Result<(), Failure> {
    let summary = report.summary();
    if summary.errors > 0 {
        Err(Failure::Usage(anyhow!(
            "the device failed during {} trail(s) (see the report); exit 2",
            summary.errors
        )))
    } else if summary.ok() {
        Ok(())
    } else {
        Err(Failure::Reported(1))
    }
}

pub fn check(cli: &Cli, a: &CheckArgs) -> Result<(), Failure> {
    let (project, located) = open_project_for(cli, None, &a.targets)?;
    let given = named_or(&project, &a.targets, &a.map, a.all)?;
    let (roots, maps) = targets(&project, &located, &given, a.all);
    let files = std::thread::scope(|scope| {
        // The catalogs in scope are built while the trails are found (neither needs the other);
        // one that does not load is reported by the check itself.
        scope.spawn(|| {
            for id in in_scope(&project, &maps) {
                let _ = project.catalog(id);
            }
        });
        find_trails(&roots)
    })?;
    if !a.watch {
        return check_files(&project, a, &files, &maps);
    }
    let watch = super::watch::Watch::start(&project, &roots, None)?;
    if let Err(e) = check_files(&project, a, &files, &maps) {
        super::watch::show(e);
    }
    super::watch::rounds(
        project,
        watch,
        &mut |_| Ok(find_trails(&roots)?),
        &mut |project, files, touched| {
            // The trailmaps a save touched, of those in scope; none touched: the trails' own.
            let scope: Vec<String> = touched
                .trailmaps
                .iter()
                .filter(|id| maps.is_empty() || maps.contains(id))
                .cloned()
                .collect();
            let scope = if scope.is_empty() { maps.clone() } else { scope };
            check_files(project, a, files, &scope)
        },
    )
}

/// The project's trailmaps among `maps` (none: every trailmap).
fn in_scope<'p>(project: &'p Project, maps: &'p [String]) -> impl Iterator<Item = &'p String> {
    project
        .trailmaps
        .maps
        .keys()
        .filter(move |id| maps.is_empty() || maps.contains(id))
}

/// Checks `files` and the trailmaps `maps` (none: every trailmap), printing the findings.
fn check_files(project: &Project, a: &CheckArgs, files: &[PathBuf], maps: &[String]) -> Result<(), Failure> {
    // Regenerate the typed surface of every trailmap involved.
    let mut problems = Vec::new();
    let mut client_dirs = Vec::new();
    for id in in_scope(project, maps) {
        let catalog = project.catalog(id)?;
        warn_all(&catalog.warnings);
        // The client files type a trailmap's own scripts: one with no `tools/` (a library, a legacy
        // flat target) gets none, rather than a folder it never had.
        if let Some(map) = project.trailmaps.get(id).filter(|m| m.dir.join("tools").is_dir()) {
            client_dirs.push((id.as_str(), map.dir.as_path()));
        }
        problems.extend(catalog.problems.iter().cloned());
    }
    let write_client_files = || -> Result<(), Failure> {
        for (id, dir) in &client_dirs {
            write_surface_files(&*trailblaze::gates::surface_of(project, id)?, dir)?;
        }
        Ok(())
    };
    let report = if a.tsc {
        write_client_files()?;
        let mut report = check_tsc(project, files)?;
        let ids: Vec<String> = if maps.is_empty() {
            project.trailmaps.maps.keys().cloned().collect()
        } else {
            maps.to_vec()
        };
        report.absorb(check_tools_tsc(project, &ids)?);
        report.absorb(check_nav_tsc(project, maps)?);
        report
    } else {
        // The client files and the navigation files need nothing of the trails' check: they are
        // made beside it (a tenth of a cold check, on one thread, before it started).
        let ((written, nav), mut report) = std::thread::scope(|scope| {
            let beside = scope.spawn(|| (write_client_files(), check_nav(project, maps)));
            let report = check_native_with(project, files, &CheckOptions { cache: !a.no_cache });
            let beside = beside.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (beside, report)
        });
        written?;
        report.absorb(nav);
        report
    };
    print_findings(a.json, &report, &problems);
    let count = report.errors() + problems.len();
    if count > 0 { Err(Failure::Reported(1)) } else { Ok(()) }
}

fn print_findings(json: bool, report: &CheckReport, problems: &[String]) {
    if json {
        let v = serde_json::json!({
            "trails": report.trails,
            "calls": report.calls,
            "toolFiles": report.tool_files,
            "findings": report.findings,
            "toolProblems": problems,
            "notices": report.notices,
            "navigation": report.navigation,
        });
        super::output::out_json!(&v);
        return;
    }
    for p in problems {
        diag::emit_to(Stream::Out, &Diagnostic::parse(diag::Severity::Error, p));
    }
    for f in &report.findings {
        diag::emit_to(Stream::Out, &diag::finding(f));
    }
    for n in &report.notices {
        err!("notice: {n}");
    }
    let tools = match report.tool_files {
        0 => String::new(),
        n => format!(", {n} tool script(s)"),
    };
    let n = report.navigation;
    let nav = if n == Default::default() {
        String::new()
    } else {
        format!(
            ", {} waypoint(s), {} shortcut(s), {} trailhead(s), {} toolset file(s)",
            n.waypoints, n.shortcuts, n.trailheads, n.toolsets
        )
    };
    // The summary is the check's result, as the findings are: stdout (a run's is too).
    out!(
        "checked {} trail(s), {} recorded call(s){tools}{nav}: {} finding(s)",
        report.trails,
        report.calls,
        report.findings.len() + problems.len()
    );
}

pub fn dts(cli: &Cli, a: &DtsArgs) -> Result<(), Failure> {
    let (project, located) = open_project(cli, None)?;
    let id = project.trailmap_id(a.trailmap()?)?;
    let written = write_generated(&project, &id, &located.root)?;
    for path in &written {
        out!("{}", path.display());
    }
    let catalog = project.catalog(&id)?;
    if catalog.problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Failed(anyhow!("some tools could not be typed")))
    }
}

/// What `dts` (and `init`) write for trailmap `id`: the tools' types and tsconfig for the editor
/// and `tsc`, the JSON Schemas of its files, and `.vscode/settings.json` in `workspace` binding them.
/// The catalog's problems are printed; the files are written all the same.
pub(super) fn write_generated(project: &Project, id: &str, workspace: &Path) -> Result<Vec<PathBuf>, Failure> {
    let catalog = project.catalog(id)?;
    let map = project
        .trailmaps
        .get(id)
        .ok_or_else(|| Failure::Usage(anyhow!("unknown trailmap `{id}`")))?;
    for p in &catalog.problems {
        diag::emit(&Diagnostic::parse(diag::Severity::Error, p));
    }
    let files = write_client_files(&catalog, &map.dir)?;
    let mut written = vec![files.dts, files.tsconfig];
    let schemas = write_schemas(&catalog, &map.dir)?;
    // Patterns are relative to the workspace folder the editor opens; a trailmap outside it (given
    // with --trailmaps) gets its schemas but no binding.
    let abs = |p: &Path| {
        let p = if p.as_os_str().is_empty() { Path::new(".") } else { p };
        std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
    };
    let (root, dir) = (abs(workspace), abs(&map.dir));
    if let Ok(rel) = dir.strip_prefix(&root) {
        let slash = |p: &Path| p.to_string_lossy().replace('\\', "/");
        let base = slash(rel);
        let under = |s: &str| {
            if base.is_empty() {
                s.to_string()
            } else {
                format!("{base}/{s}")
            }
        };
        let bindings: Vec<(String, Vec<String>)> = schemas
            .iter()
            .map(|(file, globs)| {
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let schema = under(&format!("{}/{name}", trailblaze::tools::SCHEMA_DIR));
                (schema, globs.iter().map(|g| under(g)).collect())
            })
            .collect();
        match bind_schemas(&root, &bindings) {
            Ok(settings) => written.push(workspace.join(settings.strip_prefix(&root).unwrap_or(&settings))),
            Err(e) => warn_all(&[e.to_string()]),
        }
    }
    written.extend(schemas.into_iter().map(|(p, _)| p));
    Ok(written)
}
