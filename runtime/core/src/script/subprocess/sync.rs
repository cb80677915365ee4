//! The worker's `ctx.host` line (Unix): two pipes beside its stdio, its fd 3 (replies, host →
//! worker) and fd 4 (requests, worker → host), named to it in `TRAILBLAZE_HOST_FDS`. A `ctx.host`
//! call is synchronous in the worker: its main thread writes the request on fd 4 and blocks reading
//! fd 3. The session's thread reads fd 4 itself, beside a wake-up pipe the reader threads write a
//! byte to after each message they queue, so a call crosses two threads, not four (over stdio it
//! went worker → stdout reader thread → session → stdin reader thread in the worker → its main
//! thread; each hop is a wake-up, tens of microseconds on a small VM).

use std::cell::RefCell;
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::lines::{MAX_PROTOCOL_LINE, Pending, TooLong};

/// How much one look at the request pipe reads at most: a worker that writes without pause must
/// not keep the session's thread from its deadline.
const READ_PER_LOOK: usize = 1 << 20;

/// The worker's descriptors: replies in, requests out.
const REPLY_FD: RawFd = 3;
const REQUEST_FD: RawFd = 4;

/// The host's side of the line.
pub(super) struct HostLine {
    replies: RefCell<PipeWriter>,
    requests: RefCell<Requests>,
    wake: RefCell<Wake>,
}

struct Requests {
    pipe: PipeReader,
    pending: Pending,
    closed: bool,
}

struct Wake {
    pipe: PipeReader,
    closed: bool,
}

/// Written to by the reader threads after each message they queue for the session.
pub(super) struct Waker(PipeWriter);

impl Waker {
    pub fn try_clone(&self) -> io::Result<Waker> {
        self.0.try_clone().map(Waker)
    }

    /// Wakes the session's thread if it waits. A full pipe already will (the write does not block).
    pub fn wake(&self) {
        let _ = (&self.0).write(&[1]);
    }
}

/// The worker's ends, to close here once it has started (it holds its own copies).
pub(super) struct WorkerEnds(#[allow(dead_code)] OwnedFd, #[allow(dead_code)] OwnedFd);

/// Makes the pipes and has `cmd`'s child receive its ends as fd 3 and 4.
pub(super) fn setup(cmd: &mut Command) -> io::Result<(HostLine, Waker, WorkerEnds)> {
    let (reply_read, reply_write) = io::pipe()?;
    let (request_read, request_write) = io::pipe()?;
    let (wake_read, wake_write) = io::pipe()?;
    for fd in [request_read.as_raw_fd(), wake_read.as_raw_fd(), wake_write.as_raw_fd()] {
        nonblocking(fd)?;
    }
    // Above every descriptor the child's own `dup2`s write (its stdio, 3 and 4), so none of them
    // clobbers the other end before it is in place.
    let (reply_end, request_end) = (above(&reply_read)?, above(&request_write)?);
    let (from, to) = (reply_end.as_raw_fd(), request_end.as_raw_fd());
    cmd.env("TRAILBLAZE_HOST_FDS", format!("{REPLY_FD},{REQUEST_FD}"));
    // SAFETY: runs between fork and exec and calls only dup2, which is async-signal-safe; the
    // descriptors it makes are left open across exec (dup2 clears close-on-exec).
    unsafe {
        cmd.pre_exec(move || {
            for (fd, at) in [(from, REPLY_FD), (to, REQUEST_FD)] {
                if libc::dup2(fd, at) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let line = HostLine {
        replies: RefCell::new(reply_write),
        requests: RefCell::new(Requests {
            pipe: request_read,
            pending: Pending::new(MAX_PROTOCOL_LINE),
            closed: false,
        }),
        wake: RefCell::new(Wake {
            pipe: wake_read,
            closed: false,
        }),
    };
    Ok((line, Waker(wake_write), WorkerEnds(reply_end, request_end)))
}

impl HostLine {
    /// Writes the reply to the `ctx.host` call the worker is blocked in.
    pub fn reply(&self, line: &[u8]) -> io::Result<()> {
        self.replies.borrow_mut().write_all(line)
    }

    /// The next whole request line, if one has come (never blocks, and reads at most
    /// [`READ_PER_LOOK`] bytes: more waiting shows as the pipe still readable). A line that is not
    /// JSON is nobody's request and is skipped; one longer than [`MAX_PROTOCOL_LINE`] is `TooLong`
    /// (the worker no longer speaks the protocol).
    pub fn request(&self) -> Option<Result<Value, TooLong>> {
        let mut r = self.requests.borrow_mut();
        let mut read = 0;
        loop {
            match r.pending.next_line() {
                Some(Ok(line)) => match serde_json::from_slice(&line) {
                    Ok(v) => return Some(Ok(v)),
                    Err(_) => continue,
                },
                Some(Err(TooLong)) => return Some(Err(TooLong)),
                None => {}
            }
            if r.closed || read >= READ_PER_LOOK {
                return None;
            }
            let mut chunk = [0u8; 16 * 1024];
            let want = chunk.len().min(r.pending.room());
            match r.pipe.read(&mut chunk[..want]) {
                Ok(0) => r.closed = true,
                Ok(n) => {
                    read += n;
                    r.pending.push(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // WouldBlock: nothing more yet. Another error: the pipe is as good as closed.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(_) => r.closed = true,
            }
        }
    }

    /// Waits until a request or a wake-up may have come, or `timeout` passes. `false`: neither can
    /// come any more (the worker and the reader threads are gone), so the caller should wait on
    /// its channel alone.
    pub fn wait(&self, timeout: Duration) -> bool {
        let (requests, mut wake) = (self.requests.borrow(), self.wake.borrow_mut());
        if requests.closed && wake.closed {
            return false;
        }
        let watch = |fd: RawFd, closed: bool| libc::pollfd {
            // A closed pipe is left out (poll would report it at once, forever).
            fd: if closed { -1 } else { fd },
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = [
            watch(requests.pipe.as_raw_fd(), requests.closed),
            watch(wake.pipe.as_raw_fd(), wake.closed),
        ];
        let ms = i32::try_from(timeout.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: `fds` is a live array of two pollfd, as its length says.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if ready > 0 && fds[1].revents != 0 {
            // Drained: the messages it announced are in the channel already (sent before the byte).
            let mut sink = [0u8; 512];
            loop {
                match wake.pipe.read(&mut sink) {
                    Ok(0) => {
                        wake.closed = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        true
    }
}

fn nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own; no memory is involved.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A close-on-exec copy of `fd` numbered above the worker's 3 and 4.
fn above(fd: &impl AsRawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, REQUEST_FD + 1) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` was just made and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::Instant;

    /// Waits (bounded) for the next request the way `Worker::receive` does.
    fn next_request(line: &HostLine) -> Option<Value> {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Some(v) = line.request() {
                return v.ok();
            }
            if !line.wait(Duration::from_millis(100)) {
                return None;
            }
        }
        None
    }

    /// A child gets the line as its fd 3 and 4, named in its environment: what it writes on 4 is
    /// read here, what is written here it reads on 3. Once it is gone, the request side reads as
    /// closed, and with the waker dropped too the line says nothing can come any more.
    #[test]
    fn a_child_speaks_on_fd_4_and_hears_on_fd_3() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"[ "$TRAILBLAZE_HOST_FDS" = "3,4" ] || exit 9; echo '{"request":-1}' >&4; read -r reply <&3; echo "$reply" >&4"#)
            .stdin(Stdio::null());
        let (line, waker, ends) = setup(&mut cmd).expect("pipes");
        let mut child = cmd.spawn().expect("sh");
        drop(ends);
        assert_eq!(next_request(&line), Some(serde_json::json!({ "request": -1 })));
        line.reply(b"{\"reply\":-1,\"ok\":true}\n").expect("reply");
        // The child echoes what it read on fd 3 back on fd 4.
        assert_eq!(
            next_request(&line),
            Some(serde_json::json!({ "reply": -1, "ok": true }))
        );
        assert_eq!(child.wait().expect("waited").code(), Some(0));
        line.wait(Duration::from_millis(100));
        assert!(line.request().is_none(), "the child is gone");
        assert!(line.requests.borrow().closed, "its end reads as closed");
        // Control: a wake-up still reaches a waiting line while a waker lives; then none can.
        waker.wake();
        assert!(line.wait(Duration::from_millis(100)));
        drop(waker);
        assert!(line.wait(Duration::from_millis(100)), "the last bytes are read");
        assert!(!line.wait(Duration::from_millis(100)), "nothing can wake it any more");
    }
}
