//! One run at a time per report folder: `run --report-dir DIR` twice at once would interleave two
//! runs' reports and logs in one place. The lock is the operating system's (`flock`), so a run that
//! is killed releases it; the file itself stays (removing it would race a run taking it).

use std::path::Path;

/// The lock's file in the report folder.
pub const LOCK_FILE: &str = ".trailblaze-run.lock";

/// Held while a run writes into its folder; dropping it releases the lock.
#[derive(Debug)]
pub struct DirLock {
    _file: std::fs::File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}: another run is writing its reports in this folder; give each run its own --report-dir", .0.display())]
    Busy(std::path::PathBuf),
    #[error("cannot lock {}: {source}", .path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Takes `dir`'s lock without waiting: a second run fails at once, clearly, instead of mixing.
pub fn lock(dir: &Path) -> Result<DirLock, LockError> {
    let path = dir.join(LOCK_FILE);
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io)?;
    try_lock(&file).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => LockError::Busy(dir.to_path_buf()),
        _ => io(e),
    })?;
    Ok(DirLock { _file: file })
}

#[cfg(unix)]
fn try_lock(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this function's caller owns for as long as the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    // EWOULDBLOCK reads as `ErrorKind::WouldBlock`.
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_folder_fails_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tmp");
        let first = lock(dir.path()).expect("the first run locks");
        assert!(matches!(lock(dir.path()), Err(LockError::Busy(_))));
        // Control: another folder is free, and the folder is free again once the first run ends.
        let other = tempfile::tempdir().expect("tmp");
        assert!(lock(other.path()).is_ok());
        drop(first);
        assert!(lock(dir.path()).is_ok());
    }
}
