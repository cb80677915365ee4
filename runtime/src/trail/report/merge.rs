//! `trailblaze merge`: the `report.json` of shard runs (a CI matrix, several machines) put together
//! into one run folder — `report.html`, `report.json`, `junit.xml`, the screens and the logs — in
//! the order an unsharded run lists its trails.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{LlmCost, ReportFiles, RunReport, Shard, write_all};

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

fn read(dir: &Path) -> Result<RunReport, MergeError> {
    let fail = |error: String| MergeError::Read {
        dir: dir.to_path_buf(),
        error,
    };
    let text = std::fs::read_to_string(dir.join("report.json")).map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| fail(e.to_string()))
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

/// Copies `from/rel` to `out/rel`, or to `out/shard-K/rel` when another shard took that name;
/// the path used, relative to `out`.
fn copy_log(from: &Path, rel: &str, out: &Path, shard: usize) -> Option<String> {
    let source = from.join(rel);
    if !source.is_file() {
        return Some(rel.to_string());
    }
    let mut target = rel.to_string();
    if out.join(&target).exists() {
        target = format!("shard-{shard}/{rel}");
    }
    let dest = out.join(&target);
    std::fs::create_dir_all(dest.parent()?).ok()?;
    std::fs::copy(&source, &dest).ok()?;
    Some(target)
}

/// Merges the runs in `dirs` into `out`; the trails in the order of the unsharded run (shard I of N
/// holds trails I, I+N, I+2N, ... of the suite).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    let runs = dirs
        .iter()
        .map(|d| read(d).map(|r| (d.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let Some((_, first)) = runs.first() else {
        return Err(MergeError::Empty);
    };
    check(&runs)?;
    let written = |error: std::io::Error| MergeError::Write {
        dir: out.to_path_buf(),
        error: error.to_string(),
    };
    std::fs::create_dir_all(out.join(super::screens::SCREENS_DIR)).map_err(written)?;
    let total = shard_of(first).total;
    let mut placed = Vec::new();
    let mut devices: Vec<String> = Vec::new();
    for (dir, run) in &runs {
        let shard = shard_of(run).index;
        // Screens are named by their content: the same screen from two shards is one file.
        if let Ok(entries) = std::fs::read_dir(dir.join(super::screens::SCREENS_DIR)) {
            for e in entries.flatten() {
                let dest = out.join(super::screens::SCREENS_DIR).join(e.file_name());
                if !dest.exists() {
                    std::fs::copy(e.path(), dest).map_err(written)?;
                }
            }
        }
        for (j, mut trail) in run.trails.iter().cloned().enumerate() {
            trail.log = trail.log.as_deref().and_then(|rel| copy_log(dir, rel, out, shard));
            placed.push((j * total + (shard - 1), trail));
        }
        if !devices.contains(&run.device) {
            devices.push(run.device.clone());
        }
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
