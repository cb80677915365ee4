//! The reports while a run goes on. They are kept current so that a run killed by a CI timeout
//! (SIGTERM, SIGKILL) still leaves the trails that finished reported; but rendering all of them
//! after every trail, on the trail loop, would grow with the square of the folder (rendering is
//! most of a write). So a second thread keeps a copy: it takes each finished
//! trail, writes the three files once nothing more is waiting, and paces itself so that at most a
//! fifth of its time goes to writing. A finished trail is on disk within about five writes' time
//! (milliseconds for a short run) and the trail loop never waits for a write.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::trail::{self, RunReport, TrailReport};

/// The wait after a write, as a multiple of how long it took.
const PACE: u32 = 4;

/// A finished trail, its place in the run's order and the run's duration so far.
type Finished = (usize, TrailReport, f64);

pub(super) struct InterimReports {
    /// `None` when the thread could not start: then each trail's reports are written in line.
    writer: Option<(Sender<Finished>, JoinHandle<usize>)>,
    dir: PathBuf,
    /// Writes made in line (no writer thread).
    inline_writes: usize,
}

impl InterimReports {
    /// `report` is the run's header (no trails yet).
    pub(super) fn start(report: &RunReport, dir: &Path) -> Self {
        let (tx, rx) = mpsc::channel();
        let (copy, at) = (report.clone(), dir.to_path_buf());
        let writer = std::thread::Builder::new()
            .name("reports".into())
            .spawn(move || write_while_running(copy, &at, &rx))
            .ok()
            .map(|handle| (tx, handle));
        Self {
            writer,
            dir: dir.to_path_buf(),
            inline_writes: 0,
        }
    }

    /// Trail number `index` of the run finished (`--jobs`: in any order); `so_far` is the run's
    /// report with the trails finished so far, in trail order, made only when no thread writes.
    pub(super) fn finished_at(
        &mut self,
        index: usize,
        trail: &TrailReport,
        header: &RunReport,
        so_far: impl FnOnce() -> RunReport,
    ) {
        let sent = match &self.writer {
            Some((tx, _)) => tx.send((index, trail.clone(), header.duration_ms)).is_ok(),
            None => false,
        };
        if !sent {
            let _ = trail::report::write_all(&so_far(), &self.dir);
            self.inline_writes += 1;
        }
    }

    /// Waits out a write under way, so the run's final reports are the last written; how many
    /// interim writes there were.
    pub(super) fn finish(self) -> usize {
        let threaded = match self.writer {
            Some((tx, handle)) => {
                drop(tx);
                handle.join().unwrap_or(0)
            }
            None => 0,
        };
        threaded + self.inline_writes
    }
}

/// Takes every trail waiting, waits out its pace (still taking trails), writes; returns when the
/// run hangs up, without writing (the run writes the final reports).
fn write_while_running(mut report: RunReport, dir: &Path, rx: &Receiver<Finished>) -> usize {
    let mut next_write = Instant::now();
    let mut writes = 0;
    // Each trail's place in the run, parallel to `report.trails`: they may finish in any order.
    let mut places: Vec<usize> = Vec::new();
    let mut take = |report: &mut RunReport, (index, trail, duration_ms): Finished| {
        let at = places.partition_point(|&p| p < index);
        places.insert(at, index);
        report.trails.insert(at, trail);
        report.duration_ms = duration_ms;
    };
    while let Ok(m) = rx.recv() {
        take(&mut report, m);
        loop {
            let wait = next_write.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(m) => take(&mut report, m),
                Err(RecvTimeoutError::Timeout) if Instant::now() >= next_write => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return writes,
            }
        }
        let started = Instant::now();
        // A panic while rendering loses nothing: the run holds its own report and writes it at the end.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| trail::report::write_all(&report, dir)));
        next_write = Instant::now() + started.elapsed() * PACE;
        writes += 1;
    }
    writes
}

#[cfg(test)]
mod tests;
