//! Where live sessions are found: one private folder per user (the runtime dir, else the cache dir)
//! holding each session's socket, its description and its process's log. The folder is the guard:
//! mode 0700 and owned by this user, or nothing is read from it or written in it.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Names the folder outright (tests, several users' setups); else `$XDG_RUNTIME_DIR/trailblaze`,
/// else `$XDG_CACHE_HOME/trailblaze/sessions` (or `~/.cache/...`).
pub const DIR_ENV: &str = "TRAILBLAZE_SESSIONS_DIR";

#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    #[error("no folder for sessions: set XDG_RUNTIME_DIR, HOME or {DIR_ENV}")]
    NoHome,
    #[error("{}: owned by uid {owner}, not by you (uid {me}): sessions are not kept in another user's folder", .dir.display())]
    NotYours { dir: PathBuf, owner: u32, me: u32 },
    #[error("{}: {source}", .dir.display())]
    Io { dir: PathBuf, source: std::io::Error },
}

/// The sessions' folder, as configured (not created, not checked).
pub fn root() -> Result<PathBuf, PlaceError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var(DIR_ENV) {
        return Ok(d);
    }
    if let Some(d) = var("XDG_RUNTIME_DIR") {
        return Ok(d.join("trailblaze"));
    }
    let cache = var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .ok_or(PlaceError::NoHome)?;
    Ok(cache.join("trailblaze").join("sessions"))
}

/// The folder, made (0700) when missing; refused when another user owns it, tightened to 0700
/// when it is ours but open to others.
pub fn private_root() -> Result<PathBuf, PlaceError> {
    let dir = root()?;
    let io = |source| PlaceError::Io {
        dir: dir.clone(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(io)?;
    check_private(&dir)?;
    Ok(dir)
}

/// The folder when it exists and is private, for readers that must not create it.
pub fn existing_root() -> Result<Option<PathBuf>, PlaceError> {
    let dir = root()?;
    if !dir.is_dir() {
        return Ok(None);
    }
    check_private(&dir)?;
    Ok(Some(dir))
}

fn check_private(dir: &Path) -> Result<(), PlaceError> {
    let io = |source| PlaceError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    // Not followed: a link planted in place of the folder is judged as the link.
    let meta = std::fs::symlink_metadata(dir).map_err(io)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me || !meta.is_dir() {
        return Err(PlaceError::NotYours {
            dir: dir.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    }
    Ok(())
}

/// A session's name: what `--session` takes and what its files are called.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name != "none"
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err("a session's name is 1 to 40 letters, digits, `-` and `_` (and not `none`)".into())
    }
}

/// What a running session tells other commands about itself (`<name>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub name: String,
    pub pid: u32,
    /// The device as `--device` names it.
    pub device: String,
    pub trailmap: String,
    /// The trailmaps folder, absolute.
    pub trailmaps: PathBuf,
    pub started_unix_ms: u64,
    pub idle_secs: u64,
    /// The device session's folder (its log, its trace), once it has one.
    pub dir: Option<PathBuf>,
}

/// One session's files.
#[derive(Debug, Clone)]
pub struct Files {
    pub socket: PathBuf,
    pub meta: PathBuf,
    pub log: PathBuf,
}

impl Files {
    pub fn of(root: &Path, name: &str) -> Files {
        Files {
            socket: root.join(format!("{name}.sock")),
            meta: root.join(format!("{name}.json")),
            log: root.join(format!("{name}.log")),
        }
    }

    pub fn read_meta(&self) -> Option<Meta> {
        serde_json::from_slice(&std::fs::read(&self.meta).ok()?).ok()
    }

    /// Written whole or not at all: a reader never sees half of it.
    pub fn write_meta(&self, meta: &Meta) -> std::io::Result<()> {
        let tmp = self.meta.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(meta).unwrap_or_default())?;
        std::fs::rename(&tmp, &self.meta)
    }

    /// The socket and the description; the log stays for reading why a session ended, unless `all`.
    pub fn remove(&self, all: bool) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.meta);
        if all {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Whether process `pid` is alive (a zombie counts as gone once reaped by its parent).
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // SAFETY: signal 0 checks existence and permission only; it sends nothing.
    let r = unsafe { libc::kill(pid, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A zombie (ended, not yet reaped: a container's init may never reap it) is gone.
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')))
}

/// Every session described in `root`, by name, with whether its process is alive.
pub fn all(root: &Path) -> Vec<(Meta, bool)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut found: Vec<(Meta, bool)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".json")?.to_string();
            check_name(&name).ok()?;
            let meta = Files::of(root, &name).read_meta()?;
            let alive = alive(meta.pid);
            Some((meta, alive))
        })
        .collect();
    found.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_words() {
        for good in ["sim-1", "web_2", "A"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "none", "../x", "a/b", "a.b", "x y", &"n".repeat(41)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_open_folder_of_ours_is_tightened_and_a_link_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("s");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        check_private(&dir).expect("ours");
        let mode = std::fs::metadata(&dir).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A link to a folder is not the folder: refused even when it points at one of ours.
        let link = tmp.path().join("l");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        assert!(matches!(check_private(&link), Err(PlaceError::NotYours { .. })));
    }
}
