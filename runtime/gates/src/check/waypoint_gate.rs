//! The type gate over a trailmap's navigation files: every waypoint condition's selector against the
//! selector grammar (and usable: a predicate, patterns that compile), every shortcut's and
//! trailhead's calls against the trailmap's surface, and every edge naming a waypoint the trailmap
//! knows. Findings read `waypoints/x.waypoint.yaml:7:7 · waypoint clock/android/alarm_tab: ...` and
//! `shortcuts/y.shortcut.yaml:9:5 · shortcut y · tapOnElementBySelector: ...`. With `--tsc` the
//! same calls and selectors go through the TypeScript compiler ([`check_nav_tsc`]).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::{CheckReport, Finding, TscCheckError, find_tsc_for, sort};
use crate::surface::client_files::{Surface, selectors, write_vendored_sdk};
use crate::surface::{self, check_value, client_dts, json_for_ts, trails_tsconfig};
use trailblaze_core::catalog::Edge;
use trailblaze_core::project::Project;
use trailblaze_core::trailmap::navigation::NavToolSpec;
use trailblaze_core::trailmap::{ParamType, Trailmap};
use trailblaze_core::waypoint::with_sample_app_id;
use trailblaze_core::yaml::{self, Document};

/// How many navigation files loaded, per kind: what `check` reports beside its findings.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NavCounts {
    pub waypoints: usize,
    pub shortcuts: usize,
    pub trailheads: usize,
    /// Toolset files (the built-in toolsets are not counted).
    pub toolsets: usize,
}

/// One thing to check: a waypoint's selector or a navigation tool's call, where it is.
struct Item<'a> {
    file: &'a Path,
    /// The path of the value in its file (`android.required[0].selector`, `tools[2].inputText`).
    path: String,
    /// `waypoint clock/android/alarm_tab`, `shortcut clock_openAlarms`.
    owner: String,
    /// `None`: a selector; `Some(tool)`: a call.
    tool: Option<String>,
    value: Value,
}

/// Every selector and call of trailmap `map`'s navigation files, in file order.
fn items(map: &Trailmap) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    for w in &map.waypoints {
        for (_, block) in &w.blocks {
            for c in block.required.iter().chain(&block.forbidden) {
                if let Some(sel) = &c.selector {
                    out.push(Item {
                        file: &w.file,
                        path: c.path.clone(),
                        owner: format!("waypoint {}", w.id),
                        tool: None,
                        value: with_sample_app_id(sel),
                    });
                }
            }
        }
    }
    for (file, kind, spec) in &map.nav_tools {
        let what = match kind {
            trailblaze_core::trailmap::navigation::NavKind::Shortcut => "shortcut",
            trailblaze_core::trailmap::navigation::NavKind::Trailhead => "trailhead",
        };
        for (i, entry) in spec.tools.iter().flatten().enumerate() {
            let Some((tool, args)) = entry.as_object().filter(|m| m.len() == 1).and_then(|m| m.iter().next()) else {
                continue;
            };
            let args = if args.is_null() {
                Value::Object(Default::default())
            } else {
                args.clone()
            };
            out.push(Item {
                file,
                path: format!("tools[{i}].{tool}"),
                owner: format!("{what} {}", spec.id),
                tool: Some(tool.clone()),
                value: sample_params(&args, spec),
            });
        }
    }
    out
}

/// `args` with each whole-string `{{params.x}}` replaced by a value of the parameter's type: what
/// the call's types are checked with (the real value comes with the call).
fn sample_params(args: &Value, spec: &NavToolSpec) -> Value {
    match args {
        Value::String(s) => {
            let name = s
                .trim()
                .strip_prefix("{{params.")
                .and_then(|r| r.strip_suffix("}}"))
                .map(str::trim);
            match name.and_then(|n| spec.parameters.iter().find(|p| p.name == n)) {
                Some(p) => match p.ty {
                    ParamType::String => Value::String("text".into()),
                    ParamType::Number | ParamType::Integer => Value::from(1),
                    ParamType::Boolean => Value::Bool(true),
                    ParamType::Object => Value::Object(Default::default()),
                    ParamType::Array => Value::Array(Vec::new()),
                },
                None => args.clone(),
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| sample_params(i, spec)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), sample_params(v, spec))).collect()),
        other => other.clone(),
    }
}

/// The parsed files findings point into, parsed once each.
#[derive(Default)]
struct Docs(Vec<(PathBuf, Option<Document>)>);

impl Docs {
    fn pos(&mut self, file: &Path, path: &str) -> (usize, usize) {
        if !self.0.iter().any(|(f, _)| f == file) {
            self.0.push((file.to_path_buf(), yaml::parse_file(file).ok()));
        }
        let doc = self.0.iter().find(|(f, _)| f == file).and_then(|(_, d)| d.as_ref());
        doc.map(|d| d.position(path)).map_or((1, 1), |p| (p.line, p.col))
    }
}

fn finding(docs: &mut Docs, item: &Item<'_>, sub: &str, message: String, warning: bool) -> Finding {
    let path = match sub {
        "" => item.path.clone(),
        s if s.starts_with('[') => format!("{}{s}", item.path),
        s => format!("{}.{s}", item.path),
    };
    let (line, col) = docs.pos(item.file, &path);
    Finding {
        file: item.file.to_path_buf(),
        line,
        col,
        step: Some(item.owner.clone()),
        tool: item.tool.clone(),
        message,
        warning,
    }
}

/// The native gate over the navigation files of the trailmaps `ids` (each once).
pub fn check_nav(project: &Project, ids: &[String]) -> CheckReport {
    let mut report = CheckReport::default();
    let mut docs = Docs::default();
    for id in ids {
        let Some(map) = project.trailmaps.get(id) else { continue };
        count(&mut report, map);
        let (Ok(catalog), Ok(surface)) = (project.catalog(id), crate::surface_of(project, id)) else {
            continue;
        };
        let warning = super::exempt(project, id);
        for item in items(map) {
            report.findings.extend(native(&mut docs, &surface, &item, warning));
        }
        report.findings.extend(edges(&mut docs, &catalog, map, warning));
    }
    sort(&mut report.findings);
    report
}

fn count(report: &mut CheckReport, map: &Trailmap) {
    use trailblaze_core::trailmap::navigation::NavKind;
    let n = &mut report.navigation;
    n.waypoints += map.waypoints.len();
    n.shortcuts += map.nav_tools.iter().filter(|(_, k, _)| *k == NavKind::Shortcut).count();
    n.trailheads += map
        .nav_tools
        .iter()
        .filter(|(_, k, _)| *k == NavKind::Trailhead)
        .count();
    n.toolsets += map.toolsets.len();
}

/// One item's findings from the native gate.
fn native(docs: &mut Docs, surface: &Surface, item: &Item<'_>, warning: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let schema = match &item.tool {
        None => selectors(),
        Some(tool) => match surface.tool(tool) {
            Some(entry) => &entry.args,
            None => {
                let names: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
                let near = trailblaze_host_functions::decode::nearest_names(tool, &names, 3);
                let message = format!("unknown tool `{tool}`{}", trailblaze_core::tool::did_you_mean(&near));
                return vec![finding(docs, item, "", message, warning)];
            }
        },
    };
    for f in check_value(schema, Some(selectors()), &item.value) {
        let message = if f.path.is_empty() {
            f.message.clone()
        } else {
            format!("`{}`: {}", f.path, f.message)
        };
        out.push(finding(docs, item, &f.path, message, warning));
    }
    if out.is_empty() && item.tool.is_none() {
        // A selector with no predicate would match nothing (or anything): the matcher refuses it.
        if let Ok(sel) = serde_json::from_value::<trailblaze_core::selector::TrailblazeNodeSelector>(item.value.clone())
            && let Some(p) = sel.without_predicate()
        {
            let sub = p.trim_start_matches('.');
            out.push(finding(
                docs,
                item,
                sub,
                format!("`selector{p}` {NO_PREDICATE}"),
                warning,
            ));
        }
    }
    out
}

const NO_PREDICATE: &str = "has no predicate, so it says nothing about which node; name at least one property";

/// Edges that name no waypoint the trailmap knows: the original's lint, a finding here.
fn edges(docs: &mut Docs, catalog: &trailblaze_core::catalog::Catalog, map: &Trailmap, warning: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for (file, _, spec) in &map.nav_tools {
        let ends: Vec<(&str, &String)> = match spec.edge() {
            Some(Edge::Shortcut { .. }) => spec
                .shortcut
                .iter()
                .flat_map(|s| [("shortcut.from", &s.from), ("shortcut.to", &s.to)])
                .collect(),
            Some(Edge::Trailhead { .. }) => spec
                .trailhead
                .iter()
                .filter_map(|t| t.to.as_ref().map(|to| ("trailhead.to", to)))
                .collect(),
            None => Vec::new(),
        };
        for (path, id) in ends {
            if catalog.waypoints.get(id).is_none() {
                let ids = catalog.waypoints.ids();
                let near = trailblaze_host_functions::decode::nearest_names(id, &ids, 3);
                let item = Item {
                    file,
                    path: path.to_string(),
                    owner: format!("{} {}", path.split('.').next().unwrap_or("shortcut"), spec.id),
                    tool: None,
                    value: Value::Null,
                };
                let message = format!(
                    "`{path}` names waypoint `{id}`, which no waypoint file of `{}` or its dependencies declares{}",
                    map.id,
                    trailblaze_core::tool::did_you_mean(&near)
                );
                out.push(finding(docs, &item, "", message, warning));
            }
        }
    }
    out
}

/// The `--tsc` gate over the navigation files of `ids`: the same selectors and calls as TypeScript
/// statements, one per line, compiled against the trailmap's whole surface; tsc cannot tell a bad
/// regular expression or an empty selector, so those native findings join its own.
pub fn check_nav_tsc(project: &Project, ids: &[String]) -> Result<CheckReport, TscCheckError> {
    let mut report = CheckReport::default();
    let mut docs = Docs::default();
    let mut tsc = None;
    let scratch = super::scratch::Scratch::new(project.cache_dir())?;
    for (n, id) in ids.iter().enumerate() {
        let Some(map) = project.trailmaps.get(id) else { continue };
        count(&mut report, map);
        let items = items(map);
        let Ok(catalog) = project.catalog(id) else { continue };
        let warning = super::exempt(project, id);
        report.findings.extend(edges(&mut docs, &catalog, map, warning));
        if items.is_empty() {
            continue;
        }
        let tsc = match &tsc {
            Some(t) => t,
            None => tsc.insert(find_tsc_for(project)?),
        };
        let Ok(surface) = crate::surface_of(project, id) else {
            continue;
        };
        let dir = scratch.path().join(n.to_string());
        std::fs::create_dir(&dir)?;
        let dts = dir.join("navigation.d.ts");
        std::fs::write(&dts, client_dts(&surface.tools, &surface.host_functions))?;
        let (text, first_line) = gen_ts(&items);
        let gen_file = dir.join("navigation.gen.ts");
        std::fs::write(&gen_file, &text)?;
        let abs = |p: &Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        let sdk = abs(&write_vendored_sdk(&map.dir.join("tools"))?);
        let config = dir.join("tsconfig.navigation.json");
        std::fs::write(&config, trails_tsconfig(&sdk, &abs(&dts), &[&abs(&gen_file)]))?;
        for d in surface::run_tsc(tsc, &config)? {
            let item = d.line.checked_sub(first_line).and_then(|i| items.get(i));
            match item {
                Some(item) => {
                    let message = format!("{}: {}", d.code, d.message);
                    report.findings.push(finding(&mut docs, item, "", message, warning));
                }
                None => report.findings.push(Finding {
                    file: gen_file.clone(),
                    line: d.line,
                    col: d.col,
                    step: None,
                    tool: None,
                    message: format!("the generated check file failed to compile: {}: {}", d.code, d.message),
                    warning: false,
                }),
            }
        }
        for item in &items {
            let native = native(&mut docs, &surface, item, warning);
            report.findings.extend(
                native
                    .into_iter()
                    .filter(|f| f.message.contains(super::REGEX_FINDING) || f.message.contains(NO_PREDICATE)),
            );
        }
    }
    sort(&mut report.findings);
    Ok(report)
}

/// The gen file's text and the line of its first item (1-based, as tsc counts): item `i` is on
/// line `first + i`.
fn gen_ts(items: &[Item<'_>]) -> (String, usize) {
    let header = [
        surface::dts::GENERATED_BANNER.to_string(),
        format!(
            "import type {{ ToolArgs, TrailblazeToolMap, TrailblazeNodeSelector }} from \"{}\";",
            surface::dts::SDK_MODULE
        ),
        "declare function call<K extends keyof TrailblazeToolMap>(tool: K, args: ToolArgs<K>): void;".to_string(),
        "declare function selector(s: TrailblazeNodeSelector): void;".to_string(),
    ];
    let mut text = header.join("\n");
    text.push('\n');
    for item in items {
        // One line per item whatever its values hold: JSON escapes line breaks (and json_for_ts the
        // two Unicode separators tsc counts as breaks); the comment is the item's owner, flattened.
        let owner: String = item
            .owner
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let owner = owner.replace(['\u{2028}', '\u{2029}'], " ");
        let line = match &item.tool {
            None => format!("selector({}); // {owner}", json_for_ts(&item.value)),
            Some(tool) => format!(
                "call({}, {}); // {owner}",
                json_for_ts(&Value::String(tool.clone())),
                json_for_ts(&item.value)
            ),
        };
        text.push_str(&line);
        text.push('\n');
    }
    (text, header.len() + 1)
}
