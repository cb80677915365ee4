//! Reading the user's files: regular files only, and not without end. A `.ts` or `.yaml` name on a
//! FIFO would block a command forever, one on `/dev/zero` would allocate until the process dies.
//! And writing the caches' files so that a reader never sees half of one.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest source or YAML file read (a trail, a tool, an app): far beyond any real one.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// The whole text of `path`, if it is a regular file (a symlink to one is fine) of at most
/// [`MAX_FILE_BYTES`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let (file, meta) = open_bounded(path, MAX_FILE_BYTES)?;
    String::from_utf8(read_bounded(file, &meta, MAX_FILE_BYTES)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// `path` opened, with its metadata, if it is a regular file (a symlink to one is fine) of at most
/// `max` bytes: the kind and size are asked of the open file, so what is read is what was checked.
pub fn open_bounded(path: &Path, max: u64) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let file = open_regular(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > max {
        return Err(too_large(max));
    }
    Ok((file, meta))
}

/// All of `file` (opened by [`open_bounded`] with `meta`), refused past `max` bytes: its size can
/// change between the check and the read.
pub fn read_bounded(file: std::fs::File, meta: &std::fs::Metadata, max: u64) -> std::io::Result<Vec<u8>> {
    // Sized from the metadata, so the read does not grow the buffer step by step.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

fn too_large(max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("larger than {} MiB", max >> 20),
    )
}

/// `path` opened for reading without waiting: the kind of file is then asked of the open file (one
/// path lookup, not two: a cold check reads a thousand trails). Opening does not block on a FIFO
/// (`O_NONBLOCK`, which changes nothing for a regular file) nor make a terminal the controlling one.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK | libc::O_NOCTTY);
    opts.open(path)
}

/// Every file under `dir` (any depth) whose name ends with `suffix`, sorted. A missing or unreadable
/// folder has none. Symlinked folders are not followed (a link to an ancestor would never end), and
/// the walk stops 32 levels down.
pub fn files_under(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    fn walk(dir: &Path, suffix: &str, depth: usize, out: &mut Vec<std::path::PathBuf>) {
        if depth > 32 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                walk(&path, suffix, depth + 1, out);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffix, 0, &mut out);
    out.sort();
    out
}

/// Whether `path` still holds `expected`, the text a caller read and based an edit on: an edit made
/// since (by a person, another run) must be refused, never overwritten or misplaced.
pub fn still_holds(path: &Path, expected: &str) -> std::io::Result<bool> {
    Ok(read_text(path)? == expected)
}

/// Writes `data` to `path` through a temp file renamed over it, in the same folder (created if
/// missing): a concurrent reader sees the old file, no file, or the whole new one, never half of
/// it. The temp name is unique per process and call, so concurrent writers never share one; a
/// failed write removes its temp file.
pub fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |f| f.write_all(data))
}

/// [`write_atomically`] of what `write` writes, through a buffer of [`CHUNK`] bytes: a text of
/// megabytes (a long run's report) is never whole in memory.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the path has no parent folder"))?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        let mut f = std::io::BufWriter::with_capacity(CHUNK, f);
        write(&mut f)?;
        f.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The buffer [`write_atomically_with`] writes through. Data at least this long goes straight to
/// the file.
pub const CHUNK: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_the_file_whole_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub/entry.cache");
        write_atomically(&path, b"first").expect("writes, making the folder");
        write_atomically(&path, b"second").expect("replaces");
        assert_eq!(std::fs::read(&path).expect("reads"), b"second");
        // A folder where the file should be: the rename fails, and its temp file is gone too.
        let taken = dir.path().join("sub/taken");
        std::fs::create_dir_all(taken.join("inside")).expect("folder");
        assert!(write_atomically(&taken, b"x").is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .expect("lists")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left.len(), 2, "only the file and the folder: {left:?}");
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let ok = dir.path().join("a.ts");
        std::fs::write(&ok, "export const a = 1;").expect("write");
        assert_eq!(read_text(&ok).expect("reads"), "export const a = 1;");
        assert!(read_text(dir.path()).is_err(), "a folder");
        #[cfg(unix)]
        {
            let zero = dir.path().join("zero.ts");
            std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
            let e = read_text(&zero).expect_err("a device");
            assert!(e.to_string().contains("not a regular file"), "{e}");
            let fifo = dir.path().join("fifo.ts");
            let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
            // SAFETY: mkfifo(3) with a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let e = read_text(&fifo).expect_err("a FIFO must not block");
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        let big = dir.path().join("big.ts");
        std::fs::File::create(&big)
            .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
            .expect("sparse file");
        assert!(
            read_text(&big)
                .expect_err("too big")
                .to_string()
                .contains("larger than")
        );
    }
}
