//! The folder `check --tsc` writes its generated files in (`*.trail.gen.ts`, the recordable
//! surface's `.d.ts`, the tsconfigs): one per check under the cache folder, removed when the check
//! ends, so a trail's folder never holds them and a deleted trail leaves nothing behind. One folder
//! per check (not a shared one) keeps two checks at once from compiling each other's files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A folder removed (with everything in it) when dropped.
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A new empty folder under `<cache>/tsc-check/`, or the system's temporary folder without a cache.
    pub(crate) fn new(cache: Option<&Path>) -> std::io::Result<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = match cache {
            Some(c) => c.join("tsc-check"),
            None => std::env::temp_dir().join("trailblaze-tsc-check"),
        };
        std::fs::create_dir_all(&base)?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{}-{nanos}-{n}", std::process::id()));
        // `create_dir`, not `_all`: a folder already there is someone else's.
        std::fs::create_dir(&dir)?;
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Ok(Scratch { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
