//! What `run` and `check` were pointed at: trailmap ids and paths become the trails' folders, and
//! `run`'s trails are filtered by tag and cut to its shard.

use std::path::PathBuf;

use anyhow::anyhow;
use trailblaze::Project;
use trailblaze::trails::{filter_by_tags, find_trails, shard};

use super::RunArgs;
use crate::cli::{Failure, Located, MapArg};

/// A trailmap named both as an argument and by `--trailmap`: the same one, or a usage error. The
/// argument wins over `TRAILBLAZE_TRAILMAP` (an environment default, not a second name).
pub(in crate::cli) fn one_trailmap<'a>(arg: Option<&'a str>, map: &'a MapArg) -> Result<Option<&'a str>, Failure> {
    match (arg, map.trailmap.as_deref()) {
        (Some(a), Some(m)) if a != m && !map.named_by_env() => Err(crate::cli::usage_help(
            format!("two trailmaps named: `{a}` and --trailmap `{m}`"),
            "name one",
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, m) => Ok(m),
    }
}

/// Every trailmap's `trails/` folder, or the named ones' (what a bare `run` searches without the
/// original's `trails/`).
pub(in crate::cli) fn trails_of(project: &Project, ids: &[&str]) -> Vec<PathBuf> {
    project
        .trailmaps
        .maps
        .values()
        .filter(|m| ids.is_empty() || ids.contains(&m.id.as_str()))
        .map(|m| m.dir.join("trails"))
        .filter(|d| d.is_dir())
        .collect()
}

/// The targets given, or with none (and no `--all`) the trailmap `--trailmap` names, which must exist.
pub(super) fn named_or(project: &Project, given: &[String], map: &MapArg, all: bool) -> Result<Vec<String>, Failure> {
    match map.trailmap.as_deref() {
        Some(id) if given.is_empty() && !all => {
            if project.trailmaps.get(id).is_none() {
                let known: Vec<&str> = project.trailmaps.maps.keys().map(String::as_str).collect();
                return Err(crate::cli::usage_help(
                    format!("--trailmap: no trailmap `{id}`"),
                    format!("the trailmaps here: {}", known.join(", ")),
                ));
            }
            Ok(vec![id.to_string()])
        }
        _ => Ok(given.to_vec()),
    }
}

/// What `run` and `check` were pointed at: trailmap ids become their trails folders, anything else
/// is a path. Returns the roots and the trailmap ids involved.
pub(super) fn targets(
    project: &Project,
    located: &Located,
    given: &[String],
    all: bool,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut roots = Vec::new();
    let mut maps: Vec<String> = Vec::new();
    if all || given.is_empty() {
        maps = project.trailmaps.maps.keys().cloned().collect();
        // The original's layout: every trail under `trails/`; ours: each trailmap's `trails/`.
        roots = match &located.trails {
            Some(trails) => vec![trails.clone()],
            None => trails_of(project, &[]),
        };
    }
    for t in given {
        // A path that exists wins over a trailmap id of the same name.
        if project.trailmaps.get(t).is_some() && !std::path::Path::new(t).exists() {
            maps.push(t.clone());
            roots.extend(trails_of(project, &[t.as_str()]));
        } else {
            roots.push(PathBuf::from(t));
        }
    }
    (roots, maps)
}

/// What `run` selected: this shard's trails, and the whole suite they were cut from.
pub(super) struct Selected {
    /// This shard's trails (every trail without `--shard`); none for a shard past the trails.
    pub files: Vec<PathBuf>,
    /// Every trail selected before sharding, in order.
    pub suite: Vec<PathBuf>,
    /// The suite's digest, for `merge`.
    pub digest: String,
}

/// The trails `run` was pointed at, filtered by tag and cut to its shard.
pub(super) fn select(a: &RunArgs, roots: &[PathBuf]) -> Result<Selected, Failure> {
    let all = find_trails(roots)?;
    let suite = filter_by_tags(&all, &a.tags, &a.exclude_tags);
    if suite.is_empty() && !all.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "none of the {} trail(s) found matches the --tag/--exclude-tag filter",
            all.len()
        )));
    }
    if suite.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "no trails found (looked in: {})",
            roots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let digest = trailblaze::report::suite_digest(&suite);
    let files = match a.shard {
        Some((i, n)) => shard(suite.clone(), i, n),
        None => suite.clone(),
    };
    Ok(Selected { files, suite, digest })
}

/// `suite` with the trails of `files` (a part of it) first.
pub(super) fn in_shard_first(files: &[PathBuf], suite: &[PathBuf]) -> Vec<PathBuf> {
    let mine: std::collections::HashSet<&PathBuf> = files.iter().collect();
    let rest = suite.iter().filter(|f| !mine.contains(f));
    files.iter().chain(rest).cloned().collect()
}
