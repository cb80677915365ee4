//! Line framing for the pipes a Node worker writes (its stdout, stderr and `ctx.host` request
//! pipe): every byte is looked at once however the line arrives in pieces (no search from the
//! line's start again for each read), and no line is kept past a cap. A worker that writes an
//! endless line, on any of them, costs a bounded buffer and time in proportion to what it wrote.

use std::io::{self, BufRead};

/// The longest protocol line (a request or a result, on stdout or the `ctx.host` pipe). The runner
/// refuses to write a longer one; one that comes anyway stops the worker.
pub(super) const MAX_PROTOCOL_LINE: usize = 16 << 20;

/// The longest stderr line read whole; the rest of a longer one is skipped (the session keeps
/// 8 KiB of a console line).
pub(super) const MAX_STDERR_LINE: usize = 1 << 20;

/// A line up to this size is read into a buffer that grows as it needs; a longer one into one
/// the size of the cap, made once (only the part written to is memory in use).
const BIG: usize = 1 << 20;

/// What [`read_line`] found.
#[derive(Debug, PartialEq)]
pub(super) enum Read {
    /// A whole line (without its newline) is in the buffer; also a last line without one.
    Line,
    /// The line is longer than the cap: its first `cap` bytes are in the buffer and the reader is
    /// left inside it (`BufRead::skip_until` passes the rest).
    Long,
    /// The pipe is closed and nothing is left.
    Eof,
}

/// Reads the next line into `buf` (cleared first), keeping at most `cap` bytes of it.
pub(super) fn read_line(r: &mut impl BufRead, cap: usize, buf: &mut Vec<u8>) -> io::Result<Read> {
    buf.clear();
    loop {
        let available = fill(r)?;
        if available.is_empty() {
            return Ok(if buf.is_empty() { Read::Eof } else { Read::Line });
        }
        let room = cap - buf.len();
        if buf.len() + available.len() > buf.capacity() && buf.len() + available.len() > BIG {
            buf.reserve_exact(cap - buf.len());
        }
        // Only what this read brought is searched: the part already in `buf` had no newline.
        match available.iter().position(|&b| b == b'\n') {
            Some(i) if i <= room => {
                buf.extend_from_slice(&available[..i]);
                r.consume(i + 1);
                return Ok(Read::Line);
            }
            _ if room == 0 => return Ok(Read::Long),
            _ => {
                let take = available.len().min(room);
                buf.extend_from_slice(&available[..take]);
                r.consume(take);
            }
        }
    }
}

/// The reader's buffered bytes, read again after a signal interrupted the read; empty at the end.
fn fill(r: &mut impl BufRead) -> io::Result<&[u8]> {
    loop {
        match r.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            // Asked again to hand the slice out: the bytes are buffered now, so it reads nothing.
            Ok(_) => return r.fill_buf(),
        }
    }
}

/// Lines from a non-blocking pipe read a piece at a time: the bytes of a line not yet whole are
/// kept, and how far they were searched, so a piece is searched once.
pub(super) struct Pending {
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no newline.
    scanned: usize,
    cap: usize,
    /// Every byte searched so far (a test proves each is searched once).
    #[cfg(test)]
    searched: usize,
}

/// A line longer than the cap came (its bytes were not kept).
#[derive(Debug, PartialEq)]
pub(super) struct TooLong;

impl Pending {
    pub fn new(cap: usize) -> Pending {
        Pending {
            buf: Vec::new(),
            scanned: 0,
            cap,
            #[cfg(test)]
            searched: 0,
        }
    }

    /// The next whole line, if one is in what was added so far.
    pub fn next_line(&mut self) -> Option<Result<Vec<u8>, TooLong>> {
        #[cfg(test)]
        {
            self.searched += self.buf.len() - self.scanned;
        }
        if let Some(i) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
            let end = self.scanned + i;
            // What follows the line is at most one read's worth (see `room`): a short move.
            let mut line: Vec<u8> = self.buf.drain(..=end).collect();
            line.pop();
            self.scanned = 0;
            // A long line's room is not kept for the short ones after it.
            if self.buf.capacity() > BIG {
                self.buf.shrink_to(BIG);
            }
            return Some(Ok(line));
        }
        self.scanned = self.buf.len();
        (self.buf.len() > self.cap).then_some(Err(TooLong))
    }

    /// How many bytes may be added before the line in progress is known to be too long.
    pub fn room(&self) -> usize {
        (self.cap + 1).saturating_sub(self.buf.len())
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let len = self.buf.len() + bytes.len();
        // Past a short line's size the buffer is made as big as a line may be, once: growing it by
        // doubling would copy it each time and could leave twice the cap in use.
        if len > self.buf.capacity() && len > BIG {
            self.buf.reserve_exact((self.cap + 1).max(len) - self.buf.len());
        }
        self.buf.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    /// A reader of `len` bytes of `x` (then one newline when `newline`), made as they are read, in
    /// reads of at most 4 KiB; it counts the bytes handed out.
    struct Endless {
        left: usize,
        newline: bool,
        handed: usize,
    }

    impl io::Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                if self.newline {
                    self.newline = false;
                    out[0] = b'\n';
                    self.handed += 1;
                    return Ok(1);
                }
                return Ok(0);
            }
            let n = out.len().min(self.left).min(4096);
            out[..n].fill(b'x');
            self.left -= n;
            self.handed += n;
            Ok(n)
        }
    }

    #[test]
    fn a_line_past_the_cap_is_cut_there_and_the_next_one_is_read_whole() {
        let text = b"short\n0123456789abcdef\nnext\nlast".to_vec();
        let mut r = BufReader::with_capacity(4, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Line);
        assert_eq!(buf, b"short");
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Long);
        assert_eq!(buf, b"0123456789", "the first `cap` bytes");
        assert!(r.skip_until(b'\n').expect("skip") > 0);
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Line);
        assert_eq!(buf, b"next");
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Line);
        assert_eq!(buf, b"last", "a last line without its newline");
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Eof);
        // Control: a line of exactly the cap is whole.
        let mut r = BufReader::with_capacity(3, &b"0123456789\n"[..]);
        assert_eq!(read_line(&mut r, 10, &mut buf).expect("read"), Read::Line);
        assert_eq!(buf, b"0123456789");
    }

    #[test]
    fn an_endless_line_is_read_no_further_than_the_cap_and_skipped_in_one_pass() {
        let mut r = BufReader::new(Endless {
            left: 64 << 20,
            newline: true,
            handed: 0,
        });
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, 1 << 20, &mut buf).expect("read"), Read::Long);
        assert_eq!(buf.len(), 1 << 20);
        assert!(
            r.get_ref().handed <= (1 << 20) + 8192,
            "read past the cap: {}",
            r.get_ref().handed
        );
        assert!(buf.capacity() <= 2 << 20, "kept {} bytes", buf.capacity());
        assert!(r.skip_until(b'\n').expect("skip") > 0, "the rest was passed");
        assert_eq!(r.get_ref().handed, (64 << 20) + 1);
        assert_eq!(read_line(&mut r, 1 << 20, &mut buf).expect("read"), Read::Eof);
    }

    #[test]
    fn pending_bytes_are_searched_once_and_a_line_past_the_cap_is_refused() {
        let mut p = Pending::new(8);
        p.push(b"{\"a\":");
        assert_eq!(p.next_line(), None);
        p.push(b"1}\n{\"b\"");
        assert_eq!(p.next_line(), Some(Ok(b"{\"a\":1}".to_vec())));
        assert_eq!(p.next_line(), None, "the rest is not a whole line yet");
        assert_eq!(p.room(), 9 - 4);
        p.push(b":2}\n");
        assert_eq!(p.next_line(), Some(Ok(b"{\"b\":2}".to_vec())));
        // Past the cap without a newline: refused, however it arrived.
        for _ in 0..3 {
            p.push(b"xxx");
            let _ = p.next_line();
        }
        assert_eq!(p.next_line(), Some(Err(TooLong)));
        // Linear: a 32 MiB line in 16 KiB pieces is searched once, not from its start for each
        // piece (2,048 searches of up to 32 MiB).
        let mut p = Pending::new(MAX_PROTOCOL_LINE * 4);
        let piece = vec![b'x'; 16 << 10];
        for _ in 0..(32 << 20) / piece.len() {
            p.push(&piece);
            assert_eq!(p.next_line(), None);
        }
        assert_eq!(p.searched, 32 << 20, "each byte searched once");
    }
}
