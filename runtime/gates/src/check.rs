//! `trailblaze check`: the two gates over trails. The parse gate is the strict trail reader; the type
//! gate checks every recorded call against the target trailmap's recordable surface, natively (the
//! default) or with the real TypeScript compiler over generated `.trail.gen.ts` files (`--tsc`). Both
//! report the same findings at the same trail · step · tool. With `--tsc` the trailmaps' own
//! `tools/*.ts` are type-checked too ([`check_tools_tsc`]); without it the report carries
//! [`TOOLS_NOT_TYPE_CHECKED`] as a notice.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::surface::client_files::{Surface, selectors};
use crate::surface::{self, GenCall, check_value, client_dts, trail_gen_ts, trails_tsconfig};
use trailblaze_core::catalog::Catalog;
use trailblaze_core::project::Project;
use trailblaze_core::trail::{Trail, load_trail};
use trailblaze_core::yaml::YamlError;

/// One finding: `trails/x.trail.yaml:12:9 · step 3 · inputText: message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub file: PathBuf,
    pub line: usize,
    pub col: usize,
    /// `trailhead`, `step 3`; `None` for a finding about the file itself.
    pub step: Option<String>,
    pub tool: Option<String>,
    pub message: String,
    /// An exempt trailmap's findings are warnings: reported, not failing.
    pub warning: bool,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)?;
        if let Some(step) = &self.step {
            write!(f, " · {step}")?;
        }
        match &self.tool {
            Some(tool) => write!(f, " · {tool}: {}", self.message),
            None => write!(f, ": {}", self.message),
        }
    }
}

impl Finding {
    fn at(e: &YamlError) -> Finding {
        Finding {
            file: e.file.clone(),
            line: e.pos.line,
            col: e.pos.col,
            step: None,
            tool: None,
            message: e.message.clone(),
            warning: false,
        }
    }

    /// What two gates must agree on: the trail, step and tool of a finding.
    pub fn identity(&self) -> (PathBuf, Option<String>, Option<String>) {
        (self.file.clone(), self.step.clone(), self.tool.clone())
    }
}

/// What a check found.
#[derive(Debug, Default, Serialize)]
pub struct CheckReport {
    pub trails: usize,
    pub calls: usize,
    /// Scripted tools' `.ts` files type-checked by tsc ([`check_tools_tsc`]).
    pub tool_files: usize,
    pub findings: Vec<Finding>,
    /// Things the reader should know that are not findings, each shown once (e.g.
    /// [`TOOLS_NOT_TYPE_CHECKED`]).
    pub notices: Vec<String>,
    /// The navigation files checked ([`check_nav`]): waypoints, shortcuts, trailheads, toolsets.
    pub navigation: NavCounts,
    /// How the native gate got each trail's result (checked now, or reused from the cache). Not
    /// part of what a check reports: a warm and a cold check differ only here.
    #[serde(skip)]
    pub stats: CheckStats,
}

/// How many trails the native gate checked now, and how many results it reused from its cache
/// ([`native::CheckOptions::cache`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CheckStats {
    pub checked: usize,
    pub cached: usize,
}

impl CheckReport {
    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| !f.warning).count()
    }

    /// Adds `other`'s counts, findings and notices to this report.
    pub fn absorb(&mut self, other: CheckReport) {
        self.trails += other.trails;
        self.calls += other.calls;
        self.tool_files += other.tool_files;
        let (a, b) = (&mut self.navigation, other.navigation);
        a.waypoints += b.waypoints;
        a.shortcuts += b.shortcuts;
        a.trailheads += b.trailheads;
        a.toolsets += b.toolsets;
        self.stats.checked += other.stats.checked;
        self.stats.cached += other.stats.cached;
        self.findings.extend(other.findings);
        sort(&mut self.findings);
        for n in other.notices {
            if !self.notices.contains(&n) {
                self.notices.push(n);
            }
        }
    }
}

/// The notice of a check that did not type-check the trailmaps' `tools/*.ts`: the native gate reads
/// tools' types with the analyzer but never compiles their bodies.
pub const TOOLS_NOT_TYPE_CHECKED: &str = "scripted tools (tools/*.ts) were not type-checked: \
`trailblaze check --tsc` runs the TypeScript compiler over them (or `tsc -p trailmaps/<id>/tools` after `trailblaze dts`)";

/// How many `.ts` files (not `.d.ts`) trailmap folder `map_dir` has in `tools/`: what `check --tsc`
/// compiles (the native gate's notice reads the trailmap's scripts, listed when it was loaded).
pub(crate) fn tool_scripts(map_dir: &Path) -> usize {
    std::fs::read_dir(map_dir.join("tools"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".ts") && !n.ends_with(".d.ts"))
                .count()
        })
        .unwrap_or(0)
}

/// A parsed trail and the catalog of its target, or why there is none.
struct Target {
    trail: Trail,
    map: Option<String>,
}

/// Parses `files`; parse errors become findings, the rest come back with their targets.
fn load(project: &Project, files: &[PathBuf], report: &mut CheckReport) -> Vec<Target> {
    let mut out = Vec::new();
    for parsed in parse_all(files) {
        report.trails += 1;
        match parsed {
            Ok(trail) => {
                let map = project.target_of(&trail);
                out.push(Target { trail, map });
            }
            Err(errors) => report.findings.extend(errors.iter().map(Finding::at)),
        }
    }
    out
}

/// Parses every file, on every core.
fn parse_all(files: &[PathBuf]) -> Vec<Result<Trail, Vec<YamlError>>> {
    native::in_parallel(files.len(), |i| load_trail(&files[i]))
        .into_iter()
        .zip(files)
        .map(|(parsed, f)| parsed.unwrap_or_else(|| Err(vec![native::failed(f)])))
        .collect()
}

/// Catalogs by trailmap id, built once per check; a trailmap that does not load is an error message.
struct Catalogs<'p> {
    project: &'p Project,
    built: BTreeMap<String, Result<Loaded, String>>,
}

/// A trailmap's catalog and its surface.
type Loaded = (Arc<Catalog>, Arc<Surface>);

impl<'p> Catalogs<'p> {
    fn get(&mut self, id: &str) -> &Result<Loaded, String> {
        let project = self.project;
        self.built.entry(id.to_string()).or_insert_with(|| {
            let catalog = project.catalog(id).map_err(|e| e.to_string())?;
            let surface = crate::surface_of(project, id).map_err(|e| e.to_string())?;
            Ok((catalog, surface))
        })
    }
}

/// Whether the type gate checks `trail`, whose target is `map`: its target is a trailmap that loads
/// (`load_error` says why one does not). A target that does not load is a finding; a trail with no
/// target, or one naming no loaded trailmap (an app's package id), is skipped with a notice, as the
/// original does — unless the name is a near miss of a loaded trailmap's id, which is a typo to fix,
/// not an app.
fn gate(
    project: &Project,
    trail: &Trail,
    map: Option<&str>,
    load_error: impl FnOnce(&str) -> Option<String>,
    notices: &mut Vec<String>,
    findings: &mut Vec<Finding>,
) -> bool {
    let known: Vec<&str> = project.trailmaps.maps.keys().map(String::as_str).collect();
    let message = match map {
        None => {
            notices.push(format!(
                "{}: not type-checked: it names no target (`config.target`), so only the built-ins apply",
                trail.file.display()
            ));
            return false;
        }
        Some(id) if project.trailmaps.get(id).is_none() => match did_you_mean_id(id, &known) {
            Some(near) => format!("target `{id}`: no loaded trailmap provides it; did you mean `{near}`?"),
            None => {
                notices.push(format!(
                    "{}: not type-checked: its target `{id}` is no loaded trailmap (an app id?), so only the built-ins apply",
                    trail.file.display()
                ));
                return false;
            }
        },
        Some(id) => match load_error(id) {
            None => return true,
            Some(e) => format!("target `{id}` does not load: {e}"),
        },
    };
    // Positioned only for a finding.
    let pos = trail.doc().position("config.target");
    findings.push(Finding {
        file: trail.file.clone(),
        line: pos.line,
        col: pos.col,
        step: None,
        tool: None,
        message,
        warning: false,
    });
    false
}

/// [`gate`] for the `--tsc` path, which builds its catalogs as it goes.
fn checkable(t: &Target, catalogs: &mut Catalogs<'_>, report: &mut CheckReport) -> bool {
    let project = catalogs.project;
    let load_error = |id: &str| catalogs.get(id).as_ref().err().cloned();
    gate(
        project,
        &t.trail,
        t.map.as_deref(),
        load_error,
        &mut report.notices,
        &mut report.findings,
    )
}

/// A loaded trailmap id `id` is a near miss of (`demoo` for `demo`); package ids (`com.x.y`) never are.
fn did_you_mean_id<'a>(id: &str, known: &'a [&'a str]) -> Option<&'a str> {
    if id.contains('.') {
        return None;
    }
    trailblaze_host_functions::decode::nearest(id, known)
}

fn exempt(project: &Project, id: &str) -> bool {
    project
        .trailmaps
        .get(id)
        .and_then(|m| m.spec.trail_validation.as_ref())
        .is_some()
}

/// The native type gate over one parsed trail: how many calls it holds, and its findings.
fn check_trail(trail: &Trail, surface: &Surface, selectors: &Value, warning: bool) -> (usize, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut calls = 0;
    for (step, _key, call) in trail.calls() {
        calls += 1;
        let mut push = |arg_path: &str, message: String| {
            let e = trail.error_in_call(call, arg_path, "");
            findings.push(Finding {
                file: trail.file.clone(),
                line: e.pos.line,
                col: e.pos.col,
                step: Some(step.label()),
                tool: Some(call.tool.clone()),
                message,
                warning,
            });
        };
        match surface.tool(&call.tool) {
            Some(_) if !surface.is_recordable(&call.tool) => push(
                "",
                format!(
                    "`{}` is not recordable: recordings hold the tools it runs (e.g. `tapOnElementBySelector`, `inputText`)",
                    call.tool
                ),
            ),
            Some(entry) => {
                for f in check_value(&entry.args, Some(selectors), &call.args) {
                    let message = if f.path.is_empty() {
                        f.message.clone()
                    } else {
                        format!("`{}`: {}", f.path, f.message)
                    };
                    push(&f.path, message);
                }
            }
            None => {
                let near = trailblaze_host_functions::decode::nearest_names(&call.tool, &surface.recordable, 3);
                push(
                    "",
                    format!(
                        "unknown tool `{}`{}",
                        call.tool,
                        trailblaze_core::dispatch::did_you_mean(&near)
                    ),
                );
            }
        }
    }
    (calls, findings)
}

fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (&a.file, a.line, a.col, &a.message).cmp(&(&b.file, b.line, b.col, &b.message)));
}

#[derive(Debug, thiserror::Error)]
pub enum TscCheckError {
    #[error("{0}")]
    Tsc(#[from] surface::TscError),
    #[error("cannot write the generated files: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "the TypeScript compiler was not found: install it where the trailmaps are (`npm install --save-dev typescript`), \
set TRAILBLAZE_TSC to a `tsc`, or in trailblaze's repository run `npm ci --prefix sdk-ts`"
    )]
    NoTsc,
}

/// The TypeScript compiler `check --tsc` uses: `$TRAILBLAZE_TSC`, else the nearest installed one from
/// the trailmaps' folder, the current folder or the binary (see [`surface::find_tsc`]).
fn find_tsc_for(project: &Project) -> Result<PathBuf, TscCheckError> {
    let starts = [
        Some(project.trailmaps.root.clone()),
        std::env::current_dir().ok(),
        std::env::current_exe().ok(),
    ];
    starts
        .into_iter()
        .flatten()
        .find_map(|s| surface::find_tsc(&s))
        .ok_or(TscCheckError::NoTsc)
}

/// Type-checks the scripted tools of each trailmap in `ids` with the real TypeScript compiler:
/// writes its client files (`trailblaze-client.d.ts`, `tsconfig.json`, the vendored SDK), runs
/// `tsc -p <map>/tools` and reports each diagnostic as a finding at `tools/<file>.ts:line:col`. A
/// trailmap with no `.ts` tool is skipped. Unknown ids are skipped too (the CLI resolves them first).
pub fn check_tools_tsc(project: &Project, ids: &[String]) -> Result<CheckReport, TscCheckError> {
    let tsc = find_tsc_for(project)?;
    let mut report = CheckReport::default();
    for id in ids {
        let Some(map) = project.trailmaps.get(id) else { continue };
        let tools = map.dir.join("tools");
        let scripts = tool_scripts(&map.dir);
        if scripts == 0 {
            continue;
        }
        let made = match crate::surface_of(project, id) {
            Ok(s) => s,
            Err(e) => {
                report.findings.push(Finding {
                    file: map.dir.join("trailmap.yaml"),
                    line: 1,
                    col: 1,
                    step: None,
                    tool: None,
                    message: format!("trailmap `{id}` does not load, so its tools were not type-checked: {e}"),
                    warning: false,
                });
                continue;
            }
        };
        let files = surface::client_files::write_surface_files(&made, &map.dir)?;
        report.tool_files += scripts;
        for d in surface::run_tsc(&tsc, &files.tsconfig)? {
            // A diagnostic about no file (a bad compiler option) is the tsconfig's.
            let (file, line, col) = if d.file.is_empty() {
                (files.tsconfig.clone(), 1, 1)
            } else {
                (tools.join(&d.file), d.line, d.col)
            };
            report.findings.push(Finding {
                file,
                line,
                col,
                step: None,
                tool: None,
                message: format!("{}: {}", d.code, d.message),
                warning: false,
            });
        }
    }
    sort(&mut report.findings);
    Ok(report)
}

/// The type gate through the real TypeScript compiler: writes a `.trail.gen.ts` per trail (one
/// statement per line, with a line table), a recordable-surface `.d.ts` and a tsconfig per target
/// trailmap into a folder of its own under the cache folder (removed when the check ends),
/// runs `tsc --noEmit`, and maps each diagnostic back to its trail · step.
pub fn check_tsc(project: &Project, files: &[PathBuf]) -> Result<CheckReport, TscCheckError> {
    let tsc = find_tsc_for(project)?;
    let mut report = CheckReport::default();
    let targets = load(project, files, &mut report);
    let mut catalogs = Catalogs {
        project,
        built: BTreeMap::new(),
    };
    let selectors = selectors();
    let scratch = scratch::Scratch::new(project.cache_dir())?;
    let groups = write_gen_files(&targets, &mut catalogs, scratch.path(), &mut report)?;
    let run = TscRun {
        project,
        tsc: &tsc,
        targets: &targets,
        selectors,
        dir: scratch.path(),
    };
    for (n, (id, gens)) in groups.iter().enumerate() {
        let Ok((_, surface)) = catalogs.get(id) else { continue };
        run.check_group(n, id, gens, surface, &mut report)?;
    }
    sort(&mut report.findings);
    Ok(report)
}

/// A trail's generated check file: the trail's index in the targets, the file and its line table.
type GenFile = (usize, PathBuf, Vec<surface::LineEntry>);

/// Writes a `.trail.gen.ts` into `dir` for every checkable target; returns them by target trailmap.
fn write_gen_files(
    targets: &[Target],
    catalogs: &mut Catalogs<'_>,
    dir: &Path,
    report: &mut CheckReport,
) -> Result<BTreeMap<String, Vec<GenFile>>, TscCheckError> {
    let mut groups: BTreeMap<String, Vec<GenFile>> = BTreeMap::new();
    for (i, t) in targets.iter().enumerate() {
        if !checkable(t, catalogs, report) {
            continue;
        }
        let Some(id) = t.map.clone() else { continue };
        let calls: Vec<GenCall> = t
            .trail
            .calls()
            .map(|(step, _, call)| {
                let pos = call.pos;
                GenCall {
                    step: step.label(),
                    tool: &call.tool,
                    args: &call.args,
                    yaml_line: pos.line,
                    yaml_col: pos.col,
                }
            })
            .collect();
        report.calls += calls.len();
        let (text, table) = trail_gen_ts(&format!("// {}", t.trail.file.display()), &calls);
        // Numbered: two trails of one name in different folders get different gen files.
        let stem = trailblaze_core::trail::trail_stem(&t.trail.file);
        let gen_file = dir.join(format!("{i}-{stem}.trail.gen.ts"));
        std::fs::write(&gen_file, &text)?;
        groups.entry(id).or_default().push((i, gen_file, table));
    }
    Ok(groups)
}

/// What every target trailmap's tsc run shares.
struct TscRun<'a> {
    project: &'a Project,
    tsc: &'a Path,
    targets: &'a [Target],
    selectors: &'a Value,
    /// The scratch folder the generated files go in.
    dir: &'a Path,
}

impl TscRun<'_> {
    /// Compiles the gen files of the trailmap `id` (the `n`th) against its `surface`, adding the
    /// findings to `report`.
    fn check_group(
        &self,
        n: usize,
        id: &str,
        gens: &[GenFile],
        surface: &Surface,
        report: &mut CheckReport,
    ) -> Result<(), TscCheckError> {
        let warning = exempt(self.project, id);
        let Some(map) = self.project.trailmaps.get(id) else {
            return Ok(());
        };
        let dir = self.dir;
        let dts = dir.join(format!("{n}.trails.d.ts"));
        std::fs::write(&dts, client_dts(&surface.recordable_tools(), &surface.host_functions))?;
        let abs = |p: &Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        let gen_names: Vec<String> = gens.iter().map(|(_, g, _)| abs(g)).collect();
        let gen_refs: Vec<&str> = gen_names.iter().map(String::as_str).collect();
        let sdk = abs(&crate::surface::client_files::write_vendored_sdk(
            &map.dir.join("tools"),
        )?);
        let config = dir.join(format!("tsconfig.{n}.json"));
        std::fs::write(&config, trails_tsconfig(&sdk, &abs(&dts), &gen_refs))?;
        for d in surface::run_tsc(self.tsc, &config)? {
            report.findings.push(self.finding(&d, gens, warning));
        }
        // TypeScript cannot tell a valid regular expression from an invalid one; the native gate
        // can, and both gates must refuse one, so its regex findings join tsc's.
        for (i, _, _) in gens {
            let (_, native) = check_trail(&self.targets[*i].trail, surface, self.selectors, warning);
            report
                .findings
                .extend(native.into_iter().filter(|f| f.message.contains(REGEX_FINDING)));
        }
        Ok(())
    }

    /// The finding for tsc's diagnostic `d`: at its trail · step when it is in one of `gens`.
    fn finding(&self, d: &surface::tsc::TscDiagnostic, gens: &[GenFile], warning: bool) -> Finding {
        let file = std::path::absolute(self.dir.join(&d.file)).unwrap_or_default();
        let Some((i, _, table)) = gens
            .iter()
            .find(|(_, g, _)| std::path::absolute(g).ok().as_ref() == Some(&file))
        else {
            return Finding {
                file,
                line: d.line,
                col: d.col,
                step: None,
                tool: None,
                message: format!("{}: {}", d.code, d.message),
                warning: false,
            };
        };
        let trail = &self.targets[*i].trail;
        match surface::entry_for_line(table, d.line) {
            Some(e) => Finding {
                file: trail.file.clone(),
                line: e.yaml_line,
                col: e.yaml_col,
                step: Some(e.step.clone()),
                tool: Some(e.tool.clone()),
                message: format!("{}: {}", d.code, d.message),
                warning,
            },
            None => Finding {
                file: trail.file.clone(),
                line: 1,
                col: 1,
                step: None,
                tool: None,
                message: format!("the generated check file failed to compile: {}: {}", d.code, d.message),
                warning: false,
            },
        }
    }
}

/// What every invalid-regex finding says (see [`trailblaze_core::selector::check_pattern`]).
const REGEX_FINDING: &str = "regular expression";

mod cache;
mod native;
mod scratch;
mod targets;
mod waypoint_gate;

pub use waypoint_gate::{NavCounts, check_nav, check_nav_tsc};

pub use native::{CheckOptions, check_native, check_native_with};

#[cfg(test)]
mod tests;
