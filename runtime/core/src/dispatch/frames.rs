//! A trace's frames: the screen as a call found it and left it. A frame is taken through the session's screen,
//! so a call that reads the screen next reads the same capture (a traced replay captures no more
//! than the trace's own frames need), and the time it costs is kept out of the calls' split.

use std::time::Instant;

use crate::state::SessionCore;

/// The frame of the screen now: the last one while the screen's snapshot is still the one it
/// showed, else a capture and a picture of it. `None` when nothing is traced or the device failed.
pub(super) fn capture_frame(s: &SessionCore) -> Option<usize> {
    {
        let trace = s.trace.borrow();
        let r = trace.as_ref()?;
        if r.captures_stopped {
            return r.last_frame();
        }
        if r.last_snap.as_ref().is_some_and(|last| s.screen.is_current(last)) {
            return r.last_frame();
        }
    }
    let started = Instant::now();
    let busy = s.screen.busy();
    let frame = take(s);
    let mut trace = s.trace.borrow_mut();
    let r = trace.as_mut()?;
    r.overhead += started.elapsed();
    r.overhead_busy += s.screen.busy().saturating_sub(busy);
    frame
}

fn take(s: &SessionCore) -> Option<usize> {
    let started = Instant::now();
    let snap = match s.screen.snapshot() {
        Ok(snap) => snap,
        Err(e) => {
            let mut trace = s.trace.borrow_mut();
            let r = trace.as_mut()?;
            // A device that cannot be read now would hold every later call up as long again.
            if matches!(e, crate::device::DeviceError::Io(_)) {
                r.captures_stopped = true;
                r.notes.push(format!(
                    "the screen could not be read, so no more frames were taken: {e}"
                ));
            }
            return r.last_frame();
        }
    };
    {
        let mut trace = s.trace.borrow_mut();
        let r = trace.as_mut()?;
        // The same screen as the last frame (a read-only call between): that frame again.
        if r.last_snap.as_ref().is_some_and(|last| last.same_screen(&snap)) {
            r.last_snap = Some(snap);
            return r.last_frame();
        }
    }
    let read = started.elapsed();
    let text = snap.render(&s.redact);
    // A screen that shows nothing (a browser's blank page before the first navigation) is not
    // pictured: the picture would be blank, and a browser takes tens of ms to make one.
    let picture = if text.is_empty() {
        None
    } else {
        Some(s.screen.trace_picture(&s.redact))
    };
    let shot = match picture {
        None => None,
        Some(Ok(shot)) => Some(shot),
        Some(Err(e)) => {
            if let Some(r) = s.trace.borrow_mut().as_mut() {
                r.notes.push(format!("a screen was not pictured: {e}"));
            }
            None
        }
    };
    let pictured = started.elapsed();
    let mut trace = s.trace.borrow_mut();
    let frame = trace.as_mut()?.add_frame(snap, text, shot, &s.redact);
    tracing::debug!(
        read_ms = read.as_secs_f64() * 1000.0,
        picture_ms = (pictured - read).as_secs_f64() * 1000.0,
        keep_ms = (started.elapsed() - pictured).as_secs_f64() * 1000.0,
        "trace frame"
    );
    frame
}
