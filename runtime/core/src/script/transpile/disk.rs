//! The on-disk half of the transpile cache: where it lives, how entries are keyed, and
//! writes that a concurrent reader never sees half done.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

use super::{Key, TRANSPILER_VERSION, Transpiled, Transpiler};

impl Transpiler {
    fn disk_path(&self, key: &Key) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(dir.join(format!("{}.json", hex(key))))
    }

    pub(super) fn disk_get(&self, key: &Key) -> Option<Transpiled> {
        let path = self.disk_path(key)?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "transpile cache unreadable; ignoring");
                return None;
            }
        };
        match serde_json::from_slice::<Transpiled>(&bytes) {
            Ok(t) if t.line_map.len() == count_lines(&t.code) => Some(t),
            Ok(_) => {
                tracing::debug!(path = %path.display(), "transpile cache entry inconsistent; ignoring");
                None
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "transpile cache entry corrupt; ignoring");
                None
            }
        }
    }

    pub(super) fn disk_put(&self, key: &Key, value: &Transpiled) {
        let Some(path) = self.disk_path(key) else {
            return;
        };
        // The cache is an optimisation: failing to write it must not fail the transpile.
        if let Err(e) = write_atomically(&path, value) {
            tracing::debug!(path = %path.display(), error = %e, "could not write transpile cache");
        }
    }
}

pub(super) fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let non_empty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("TRAILBLAZE_CACHE_DIR") {
        return Some(dir);
    }
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("trailblaze").join("transpile"));
    }
    non_empty("HOME").map(|home| home.join(".cache").join("trailblaze").join("transpile"))
}

pub(super) fn cache_key(source: &str) -> Key {
    let mut h = Sha256::new();
    // Length-prefix each part so no two different triples hash the same bytes.
    for part in [TRANSPILER_VERSION, swc_core::SWC_CORE_VERSION, source] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The entry as JSON, written whole or not at all ([`crate::files::write_atomically`]).
fn write_atomically(path: &Path, value: &Transpiled) -> io::Result<()> {
    let json = serde_json::to_vec(value).map_err(io::Error::other)?;
    crate::files::write_atomically(path, &json)
}

/// Number of lines as an editor (and QuickJS's line numbers) counts them; a trailing newline
/// does not open a new line.
fn count_lines(code: &str) -> usize {
    code.lines().count()
}
