//! `trailblaze report`: a run's report.html (and each trace's trace.js) rebuilt from its folder, a
//! session folder's made from its trace, opened in the browser; and a trail's steps exported as a
//! GIF or a storyboard PNG for a pull request (docs/trace.md).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;

use super::output::{err, out};
use super::{Failure, usage_help};

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze report                                  rebuild trailblaze-out/latest/report.html
  trailblaze report trailblaze-out/latest --open     and open it in the browser
  trailblaze report trailblaze-out/shell-1234        a session's own report, from its trace.json
  trailblaze report --gif sign-in.gif trailblaze-out/latest/sign-in
  trailblaze report --storyboard sign-in.png trailblaze-out/latest/sign-in/trace.json

A run folder (report.json) gets its report.html again, and each trail's trace.js written from its
trace.json when missing or older. A session folder (an MCP or `shell` session with a trace.json and
no report.json) gets a report.html of that one session. --open runs the system's opener on the page
(xdg-open, or open on macOS; TRAILBLAZE_OPENER names another command).")]
pub struct ReportArgs {
    /// A run folder or a session folder [default: trailblaze-out/latest]; with --gif or
    /// --storyboard, a trail's folder in a run or its trace.json.
    #[arg(value_name = "DIR|TRAIL")]
    pub path: Option<PathBuf>,
    /// Open the page in the browser.
    #[arg(long, conflicts_with_all = ["gif", "webp", "storyboard"])]
    pub open: bool,
    /// Write the trail's steps as an animated GIF here.
    #[arg(long, value_name = "OUT")]
    pub gif: Option<PathBuf>,
    /// Write the trail's steps as an animated WebP here (refused: no pure-Rust encoder).
    #[arg(long, value_name = "OUT")]
    pub webp: Option<PathBuf>,
    /// Write the trail's steps as one PNG, a grid of their screens under their number and text.
    #[arg(long, value_name = "OUT")]
    pub storyboard: Option<PathBuf>,
}

/// The environment variable naming the command `--open` runs (a test's, another browser).
const OPENER_ENV: &str = "TRAILBLAZE_OPENER";

pub fn report(cli: &super::Cli, a: &ReportArgs) -> Result<(), Failure> {
    if a.webp.is_some() {
        return Err(usage_help(
            "--webp: no well-kept pure-Rust crate encodes animated WebP (those that do bind libwebp, a C library)",
            "use --gif for an animation, or --storyboard for one picture",
        ));
    }
    if a.gif.is_some() || a.storyboard.is_some() {
        return export(a);
    }
    let dir = match &a.path {
        Some(p) => p.clone(),
        None => default_dir(cli),
    };
    let built = trailblaze::report::rebuild(&dir).map_err(|e| Failure::Usage(anyhow!(e)))?;
    for s in &built.skipped {
        err!("warning: {s}");
    }
    for js in &built.trace_js {
        err!("wrote {}", js.display());
    }
    let traces = built.report.trails.iter().filter(|t| t.trace.is_some()).count();
    out!(
        "report: {} ({} trail{}, {traces} with a trace{})",
        built.html.display(),
        built.report.trails.len(),
        if built.report.trails.len() == 1 { "" } else { "s" },
        if built.session {
            ", from the session's trace"
        } else {
            ""
        }
    );
    if a.open {
        open(&built.html)?;
    }
    Ok(())
}

/// `$TRAILBLAZE_OUT/latest`, else the workspace's `trailblaze-out/latest` (found as `run` finds it,
/// from here or a parent folder), else `trailblaze-out/latest` here.
fn default_dir(cli: &super::Cli) -> PathBuf {
    if let Some(out) = std::env::var_os("TRAILBLAZE_OUT") {
        return PathBuf::from(out).join("latest");
    }
    match super::locate(cli) {
        Ok(located) => located.root.join("trailblaze-out").join("latest"),
        Err(_) => PathBuf::from("trailblaze-out").join("latest"),
    }
}

/// Runs the opener on `page` and waits for it (xdg-open and open return once they handed it on).
fn open(page: &Path) -> Result<(), Failure> {
    let page = page.canonicalize().unwrap_or_else(|_| page.to_path_buf());
    let opener = std::env::var(OPENER_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| if cfg!(target_os = "macos") { "open" } else { "xdg-open" }.to_string());
    let status = std::process::Command::new(&opener).arg(&page).status().map_err(|e| {
        Failure::Failed(anyhow!(
            "--open: {opener} could not be started ({e}); open {} yourself, or name an opener in {OPENER_ENV}",
            page.display()
        ))
    })?;
    if !status.success() {
        return Err(Failure::Failed(anyhow!(
            "--open: {opener} {} failed ({status})",
            page.display()
        )));
    }
    Ok(())
}

/// What makes an export's bytes from the trace's folder and its steps' screens.
type Export = fn(&Path, &[trailblaze::report::StepScreen]) -> Result<Vec<u8>, String>;

/// `--gif` and `--storyboard`: the trail's trace read, each picture written.
fn export(a: &ReportArgs) -> Result<(), Failure> {
    let Some(trail) = &a.path else {
        return Err(usage_help(
            "--gif and --storyboard take the trail: its folder in a run, or its trace.json",
            "trailblaze report --gif sign-in.gif trailblaze-out/latest/sign-in",
        ));
    };
    let trace = if trail.is_dir() {
        trail.join("trace.json")
    } else {
        trail.clone()
    };
    if !trace.is_file() {
        return Err(usage_help(
            format!("{}: no trace.json there", trail.display()),
            "a trail keeps a trace with `run --trace on` (or when it failed, by default)",
        ));
    }
    let dir = trace.parent().unwrap_or(Path::new("."));
    let t = trailblaze::report::read_trace(&trace).map_err(|e| Failure::Usage(anyhow!(e)))?;
    let steps = trailblaze::report::step_screens(&t);
    let exports: [(&Option<PathBuf>, Export, &str); 2] = [
        (&a.gif, trailblaze::reports::export::gif, "GIF"),
        (&a.storyboard, trailblaze::reports::export::storyboard_png, "storyboard"),
    ];
    for (out_path, make, what) in exports {
        let Some(out_path) = out_path else { continue };
        let bytes = make(dir, &steps).map_err(|e| Failure::Failed(anyhow!("{what} of {}: {e}", trace.display())))?;
        if let Some(parent) = out_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Failure::Failed(anyhow!("{}: {e}", parent.display())))?;
        }
        std::fs::write(out_path, &bytes).map_err(|e| Failure::Failed(anyhow!("{}: {e}", out_path.display())))?;
        out!(
            "{what}: {} ({} step{}, {} KiB)",
            out_path.display(),
            steps.len().min(trailblaze::reports::export::MAX_STEPS),
            if steps.len() == 1 { "" } else { "s" },
            bytes.len().div_ceil(1024)
        );
    }
    Ok(())
}
