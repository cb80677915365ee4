//! Where the Node runner's files live: a folder no other local user can create first or write to.
//! A fixed name in the shared temp folder could be made by a neighbour before us (then every
//! subprocess tool of everyone else was refused). So: under this user's cache folder (the
//! transpile cache's, `$TRAILBLAZE_CACHE_DIR` or `~/.cache/trailblaze/...`), created 0700 and
//! refused if it is not ours; with no cache folder, a fresh folder of an unpredictable name in the
//! temp folder (`tempfile`: 0700, created exclusively), kept for the process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::script::sdk;

const RUNNER: &str = include_str!("runner.mjs");
const HOST: &str = include_str!("host.mjs");
const REALM: &str = include_str!("realm.js");
const REALM_EVENTS: &str = include_str!("realm-events.js");
const REALM_BYTES: &str = include_str!("realm-bytes.js");
const REALM_URL: &str = include_str!("realm-url.js");
const CONSOLE: &str = include_str!("../console.mjs");

/// The runner and its parts, the console glue and the SDK build, written into a private folder named by their
/// hash (under `cache` when there is one). Known folders are reused while their runner is there: a
/// cache folder may go away under a long-lived process (a test's, an embedder's), and is made again.
pub(super) fn node_files(cache: Option<&Path>) -> Result<PathBuf, String> {
    static DIRS: Mutex<BTreeMap<Option<PathBuf>, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = cache.map(Path::to_path_buf);
    let mut dirs = DIRS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(dir) = dirs.get(&key)
        && dir.join("runner.mjs").is_file()
    {
        return Ok(dir.clone());
    }
    let dir = write_files(cache)?;
    dirs.insert(key, dir.clone());
    Ok(dir)
}

fn write_files(cache: Option<&Path>) -> Result<PathBuf, String> {
    let sdk = sdk::javascript().map_err(Clone::clone)?;
    let files = [
        ("runner.mjs", RUNNER),
        ("host.mjs", HOST),
        ("realm.js", REALM),
        ("realm-events.js", REALM_EVENTS),
        ("realm-bytes.js", REALM_BYTES),
        ("realm-url.js", REALM_URL),
        ("sdk.mjs", sdk),
        ("console.mjs", CONSOLE),
    ];
    let mut h = Sha256::new();
    for (name, text) in files {
        h.update(name);
        h.update(text);
    }
    let hash: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = match cache {
        Some(cache) => private_dir(&cache.join(format!("node-{hash}")))?,
        None => unpredictable_dir()?,
    };
    for (name, text) in files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            continue;
        }
        // Written beside and renamed, so a concurrent process never reads half a file.
        let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(dir)
}

/// A fresh folder in the temp folder under a random name, made exclusively and 0700; kept (not
/// removed when the process ends: a Node process of this run may still read it).
fn unpredictable_dir() -> Result<PathBuf, String> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("trailblaze-node-");
    // Said outright: the default mode of a temp folder is the process's umask's to decide.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
        .tempdir()
        .map(tempfile::TempDir::keep)
        .map_err(|e| format!("cannot make a private folder for the Node runner: {e}"))
}

/// `dir` (its parent created as needed), a folder only this user can write: created 0700, and
/// refused when it exists but belongs to someone else or others may write it (who could otherwise
/// swap the runner under us).
pub(super) fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    let shown = |e: std::io::Error| format!("{}: {e}", dir.display());
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(shown)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(shown(e)),
        }
        let meta = std::fs::symlink_metadata(dir).map_err(shown)?;
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me || meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "{}: not a private folder of this user; remove it and try again",
                dir.display()
            ));
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).map_err(shown)?;
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_runner_folder_is_private_and_a_shared_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("tmp");
        let mine = private_dir(&root.path().join("cache/node-x")).expect("made");
        let mode = std::fs::metadata(&mine).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Control: a folder others may write (made first by someone else) is refused, not used.
        let shared = root.path().join("shared");
        std::fs::create_dir(&shared).expect("mkdir");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(private_dir(&shared).is_err());
        // With no cache folder: a fresh, unpredictable, private folder each time.
        let (a, b) = (unpredictable_dir().expect("a"), unpredictable_dir().expect("b"));
        assert_ne!(a, b);
        assert_eq!(std::fs::metadata(&a).expect("meta").permissions().mode() & 0o777, 0o700);
        let _ = (std::fs::remove_dir(&a), std::fs::remove_dir(&b));
    }
}
