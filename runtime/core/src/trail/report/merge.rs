//! `trailblaze merge`: the `report.json` of shard runs (a CI matrix, several machines) put together
//! into one run folder — `report.html`, `report.json`, `junit.xml`, the screens and the logs — in
//! the order an unsharded run lists its trails. A shard's folder is untrusted: only the files its
//! report names, each checked to be inside it ([`inside`]), are read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{LlmCost, ReportFiles, RunReport, Shard, TrailReport, write_all};
use inside::ShardDir;

mod inside;
#[cfg(test)]
mod tests;

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give the folders of the shard runs")]
    Empty,
    #[error("{}: cannot read its report.json: {error}", dir.display())]
    Read { dir: PathBuf, error: String },
    #[error(
        "{} and {} are runs of different suites (the trails they were cut from differ): merge the shards of one run",
        a.display(),
        b.display()
    )]
    Suites { a: PathBuf, b: PathBuf },
    #[error("{} and {} are both shard {index}/{total}: give each shard once", a.display(), b.display())]
    SameShard {
        a: PathBuf,
        b: PathBuf,
        index: usize,
        total: usize,
    },
    #[error("{} is a shard of {a_total} and {} a shard of {b_total}: merge the shards of one run", a.display(), b.display())]
    Totals {
        a: PathBuf,
        b: PathBuf,
        a_total: usize,
        b_total: usize,
    },
    #[error("cannot write the merged report in {}: {error}", dir.display())]
    Write { dir: PathBuf, error: String },
    /// A path the report names that merge does not read (the path itself is not quoted).
    #[error("{}: {field}: {why}", report.display())]
    Field {
        report: PathBuf,
        field: String,
        why: &'static str,
    },
    #[error("{}/report.json: {why}", dir.display())]
    Report { dir: PathBuf, why: &'static str },
    #[error(
        "{} {how} the shard folder {}: write the merged report to a folder of its own",
        out.display(),
        shard.display()
    )]
    Overlaps {
        out: PathBuf,
        how: &'static str,
        shard: PathBuf,
    },
}

/// What [`merge`] wrote.
#[derive(Debug, Clone)]
pub struct Merged {
    pub report: RunReport,
    pub files: ReportFiles,
    /// Shards of the suite that were not given (a matrix job that never reported).
    pub missing: Vec<usize>,
}

/// The suite a run belongs to: a short digest of the trails selected before sharding, in order,
/// named relative to the current folder (two CI machines check out to different places).
pub fn suite_digest(files: &[PathBuf]) -> String {
    let here = std::env::current_dir().unwrap_or_default();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(&here).unwrap_or(f).to_string_lossy().as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The largest shard report read: far past any suite's (a 2,000-step trail's is ~1 MiB).
const MAX_REPORT: u64 = 512 << 20;

fn read(shard: &ShardDir) -> Result<RunReport, MergeError> {
    let fail = |error: String| MergeError::Read {
        dir: shard.given.clone(),
        error,
    };
    // A regular file, read as checked and not without end: a FIFO or `/dev/zero` put in a shard's
    // place fails here instead of holding the merge.
    let bytes = crate::files::open_bounded(&shard.report_json(), MAX_REPORT)
        .and_then(|(file, meta)| crate::files::read_bounded(file, &meta, MAX_REPORT))
        .map_err(|e| fail(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))
}

/// A run without `--shard` is the whole suite: shard 1 of 1.
fn shard_of(r: &RunReport) -> Shard {
    r.shard.unwrap_or(Shard { index: 1, total: 1 })
}

/// Refuses runs of different suites, of different shard counts, and a shard given twice.
fn check(runs: &[(PathBuf, RunReport)]) -> Result<(), MergeError> {
    for (dir, r) in runs {
        let s = shard_of(r);
        if s.index == 0 || s.index > s.total {
            return Err(MergeError::Read {
                dir: dir.clone(),
                error: format!("shard {}/{} is no shard", s.index, s.total),
            });
        }
    }
    for (i, (a, ra)) in runs.iter().enumerate() {
        for (b, rb) in &runs[i + 1..] {
            if ra.suite != rb.suite {
                return Err(MergeError::Suites {
                    a: a.clone(),
                    b: b.clone(),
                });
            }
            let (sa, sb) = (shard_of(ra), shard_of(rb));
            if sa.total != sb.total {
                return Err(MergeError::Totals {
                    a: a.clone(),
                    b: b.clone(),
                    a_total: sa.total,
                    b_total: sb.total,
                });
            }
            if sa.index == sb.index {
                return Err(MergeError::SameShard {
                    a: a.clone(),
                    b: b.clone(),
                    index: sa.index,
                    total: sa.total,
                });
            }
        }
    }
    Ok(())
}

/// A file to copy from a shard into the merged folder: its resolved source, and where it goes
/// (relative to the merged folder).
struct Copy {
    from: PathBuf,
    to: String,
}

/// One shard's trails with their files' paths as they will be in the merged folder, and the copies
/// that make them true; nothing is written yet. `claimed`: the merged folder's paths taken so far.
fn plan(
    shard: &ShardDir,
    run: &RunReport,
    claimed: &mut HashSet<String>,
) -> Result<(Vec<TrailReport>, Vec<Copy>), MergeError> {
    let index = shard_of(run).index;
    let mut trails = Vec::with_capacity(run.trails.len());
    let mut copies = Vec::new();
    for (i, t) in run.trails.iter().enumerate() {
        let mut t = t.clone();
        // A file the shard does not have is not linked (another shard's of that name would be).
        for (j, s) in t.steps.iter_mut().enumerate() {
            let Some(rel) = s.screen.take() else { continue };
            let Some(from) = shard.file(&format!("trails[{i}].steps[{j}].screen"), &rel)? else {
                continue;
            };
            // Screens are named by their content: the same name from two shards is one file.
            if claimed.insert(rel.clone()) {
                copies.push(Copy { from, to: rel.clone() });
            }
            s.screen = Some(rel);
        }
        let log = match t.log.take() {
            Some(rel) => shard.file(&format!("trails[{i}].log"), &rel)?.map(|from| (from, rel)),
            None => None,
        };
        let storyboard = match t.storyboard.take() {
            Some(rel) => shard
                .file(&format!("trails[{i}].storyboard"), &rel)?
                .map(|from| (from, rel)),
            None => None,
        };
        let trace = match t.trace.take() {
            Some(rel) => shard.file(&format!("trails[{i}].trace"), &rel)?.map(|from| (from, rel)),
            None => None,
        };
        // The trace's companions: the files beside it that it names by relative path.
        let beside = match &trace {
            Some((_, rel)) => trace_files(shard, i, rel)?,
            None => Vec::new(),
        };
        // The trail's own files (its session folder's) move together: under `shard-K/` when an
        // earlier trail took their folder or one of their names.
        let folder = |rel: &str| rel.rsplit_once('/').map_or(rel, |(dir, _)| dir).to_string();
        let taken = [&log, &storyboard, &trace]
            .into_iter()
            .flatten()
            .any(|(_, rel)| claimed.contains(rel) || claimed.contains(&folder(rel)));
        let mut place = |file: Option<(PathBuf, String)>| {
            file.map(|(from, rel)| {
                let to = if taken { format!("shard-{index}/{rel}") } else { rel };
                claimed.insert(folder(&to));
                claimed.insert(to.clone());
                copies.push(Copy { from, to: to.clone() });
                to
            })
        };
        t.log = place(log);
        t.storyboard = place(storyboard);
        t.trace = place(trace);
        for file in beside {
            place(Some(file));
        }
        trails.push(t);
    }
    Ok((trails, copies))
}

/// The files a trace at `rel` keeps beside it (`trace.js`, `network.har`, a video, `trace/*`), each
/// resolved inside the shard as the report's own fields are.
fn trace_files(shard: &ShardDir, i: usize, rel: &str) -> Result<Vec<(PathBuf, String)>, MergeError> {
    let dir = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
    let at = |name: &str| {
        if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        }
    };
    let mut names: Vec<String> = ["trace.js", "network.har", "video.mp4", "video.webm"]
        .iter()
        .map(|n| at(n))
        .collect();
    if let Ok(Some(json)) = shard.file(&format!("trails[{i}].trace"), rel)
        && let Some(pictures) = json.parent().map(|p| p.join("trace"))
        && let Ok(entries) = std::fs::read_dir(pictures)
    {
        names.extend(
            entries
                .flatten()
                .filter_map(|e| Some(at(&format!("trace/{}", e.file_name().to_str()?)))),
        );
    }
    let mut files = Vec::new();
    for name in names {
        if let Some(from) = shard.file(&format!("trails[{i}].trace"), &name)? {
            files.push((from, name));
        }
    }
    Ok(files)
}

/// Merges the runs in `dirs` into `out`; the trails in the order of the unsharded run (shard I of N
/// holds trails I, I+N, I+2N, ... of the suite). Everything is read and checked before anything is
/// written: a refused merge leaves no folder behind.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    let shards = dirs.iter().map(|d| ShardDir::open(d)).collect::<Result<Vec<_>, _>>()?;
    inside::check_out(out, &shards)?;
    let runs = shards
        .iter()
        .map(|s| read(s).map(|r| (s.given.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let Some((_, first)) = runs.first() else {
        return Err(MergeError::Empty);
    };
    check(&runs)?;
    let total = shard_of(first).total;
    let mut claimed = HashSet::new();
    let mut placed = Vec::new();
    let mut copies = Vec::new();
    let mut devices: Vec<String> = Vec::new();
    for (shard, (_, run)) in shards.iter().zip(&runs) {
        let (trails, files) = plan(shard, run, &mut claimed)?;
        let index = shard_of(run).index;
        placed.extend(
            trails
                .into_iter()
                .enumerate()
                .map(|(j, t)| (j * total + (index - 1), t)),
        );
        copies.extend(files);
        if !devices.contains(&run.device) {
            devices.push(run.device.clone());
        }
    }
    let written = |error: std::io::Error| MergeError::Write {
        dir: out.to_path_buf(),
        error: error.to_string(),
    };
    std::fs::create_dir_all(out).map_err(written)?;
    for c in &copies {
        let dest = out.join(&c.to);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(written)?;
        }
        std::fs::copy(&c.from, &dest).map_err(written)?;
    }
    placed.sort_by_key(|(at, _)| *at);
    let given: Vec<usize> = runs.iter().map(|(_, r)| shard_of(r).index).collect();
    let report = RunReport {
        started_unix_ms: runs.iter().map(|(_, r)| r.started_unix_ms).min().unwrap_or(0),
        // The shards ran side by side: the merged run took as long as the longest.
        duration_ms: runs.iter().map(|(_, r)| r.duration_ms).fold(0.0, f64::max),
        device: devices.join(", "),
        shard: None,
        suite: first.suite.clone(),
        llm: LlmCost::total(placed.iter().map(|(_, t)| &t.llm)),
        trails: placed.into_iter().map(|(_, t)| t).collect(),
    };
    let files = write_all(&report, out).map_err(written)?;
    Ok(Merged {
        report,
        files,
        missing: (1..=total).filter(|i| !given.contains(i)).collect(),
    })
}
