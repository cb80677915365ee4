//! A shard's folder is untrusted input (another machine, a CI artifact anyone with write access to
//! the pipeline can shape): every file its `report.json` names is read only when the name is one a
//! run writes and the file, symlinks resolved, is a regular file inside the shard folder.

use std::path::{Component, Path, PathBuf};

use super::MergeError;

/// Why a path a shard's report names is refused (the path itself is never quoted: it is the
/// shard's text, and what it points at may be anything).
pub(super) const OUTSIDE: &str = "a path outside the shard folder";
const NAME: &str = "not a name a run writes (letters, digits, `.`, `_` and `-`, folders separated by `/`)";
const NOT_A_FILE: &str = "not a regular file";
const UNREADABLE: &str = "cannot be read";

/// One shard's folder: as given (for messages) and resolved (for the containment check).
pub(super) struct ShardDir {
    pub given: PathBuf,
    root: PathBuf,
}

impl ShardDir {
    /// The folder `dir`, resolved; `report.json` in it must be a regular file inside it too.
    pub(super) fn open(dir: &Path) -> Result<ShardDir, MergeError> {
        let read = |error: String| MergeError::Read {
            dir: dir.to_path_buf(),
            error,
        };
        let root = std::fs::canonicalize(dir).map_err(|e| read(e.to_string()))?;
        let shard = ShardDir {
            given: dir.to_path_buf(),
            root,
        };
        match shard.resolve("report.json") {
            Ok(Some(_)) => Ok(shard),
            Ok(None) => Err(read("it has no report.json".into())),
            Err(why) => Err(MergeError::Report {
                dir: dir.to_path_buf(),
                why,
            }),
        }
    }

    /// `report.json`, resolved.
    pub(super) fn report_json(&self) -> PathBuf {
        self.root.join("report.json")
    }

    /// The file `rel` names (`field` of the report, for the message): `Some` resolved path when it
    /// is a regular file inside the folder, `None` when there is no such file (nothing to read).
    pub(super) fn file(&self, field: &str, rel: &str) -> Result<Option<PathBuf>, MergeError> {
        self.resolve(rel).map_err(|why| MergeError::Field {
            report: self.given.join("report.json"),
            field: field.to_string(),
            why,
        })
    }

    fn resolve(&self, rel: &str) -> Result<Option<PathBuf>, &'static str> {
        check_name(rel)?;
        let path = match std::fs::canonicalize(self.root.join(rel)) {
            Ok(p) => p,
            // Nothing there (or a link to nothing): nothing is read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(_) => return Err(UNREADABLE),
        };
        if !path.starts_with(&self.root) {
            return Err(OUTSIDE);
        }
        // A FIFO or a device named like a log would block or never end the copy.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Some(path)),
            Ok(_) => Err(NOT_A_FILE),
            Err(_) => Err(UNREADABLE),
        }
    }
}

/// A relative path of the names a run gives its files (session folders, `screens/<sha256>.svg`,
/// `log.jsonl`): no root, no `..`, and no character a browser would read as a scheme (`:`), a
/// host (`\\`) or a query when the merged report links it.
pub(super) fn check_name(rel: &str) -> Result<(), &'static str> {
    if rel.starts_with('/') {
        return Err(OUTSIDE);
    }
    let safe = |ch: char| ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-');
    // Split by hand: `Path::components` would quietly drop the `.` and empty parts of `a/./b//c`.
    for name in rel.split('/') {
        match name {
            ".." => return Err(OUTSIDE),
            "" | "." => return Err(NAME),
            name if !name.chars().all(safe) => return Err(NAME),
            _ => {}
        }
    }
    Ok(())
}

/// Refuses a merged report's folder that is a shard folder, is inside one, or holds one: writing
/// there would overwrite or mix with a shard's own files.
pub(super) fn check_out(out: &Path, shards: &[ShardDir]) -> Result<(), MergeError> {
    let target = resolved(out);
    for s in shards {
        let how = if target == s.root {
            "is"
        } else if target.starts_with(&s.root) {
            "is inside"
        } else if s.root.starts_with(&target) {
            "holds"
        } else {
            continue;
        };
        return Err(MergeError::Overlaps {
            out: out.to_path_buf(),
            how,
            shard: s.given.clone(),
        });
    }
    Ok(())
}

/// `path` made absolute with its existing part's symlinks resolved (the rest does not exist yet).
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            for part in rest.iter().rev() {
                match part {
                    // `..` past a part that does not exist: lexically (nothing there to resolve).
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (at.parent(), at.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                at = parent;
            }
            _ => return abs,
        }
    }
}
