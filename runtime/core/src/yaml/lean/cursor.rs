//! The quick reader's pieces, for a reader that knows the shape of what it reads (a trail's steps):
//! it walks the lines itself and asks here for keys and values, read exactly as the whole-document
//! reader reads them, with the same limits, and with no position tree kept.
//!
//! Whoever walks with a cursor takes on the whole-document reader's rules for the structure it
//! walks (indentation, duplicate keys, an empty value, the last line read); anything it does not
//! know is for the whole-document path. Its tests hold the two to the same result.

use serde_json::Value;

use super::{Line, Reader, is_entry};
use crate::yaml::Pos;

/// A document's lines with content, or `None` when the document leaves the subset at its first
/// byte or line (a byte-order mark, a tab, a carriage return, a document marker, a first line
/// indented).
pub(crate) fn lines(text: &str) -> Option<Vec<Line>> {
    if text.starts_with('\u{feff}') || text.bytes().any(|b| b == b'\t' || b == b'\r') {
        return None;
    }
    let lines = super::lines(text)?;
    match lines.first() {
        Some(first) if first.indent != 0 => None,
        _ => Some(lines),
    }
}

impl Line {
    pub(crate) fn indent(&self) -> usize {
        self.indent
    }

    /// Where the line starts in the text.
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// Where the line ends, its `\n` not included.
    pub(crate) fn end(&self) -> usize {
        self.end
    }
}

/// A place in a document's lines, read forward.
pub(crate) struct Cursor<'a> {
    r: Reader<'a>,
}

impl<'a> Cursor<'a> {
    /// At line `at` of `lines` (the lines past the last are out of its sight).
    pub(crate) fn new(text: &'a str, lines: &'a [Line], at: usize) -> Self {
        let mut r = Reader::new(text, lines, at, 0);
        r.positions = false;
        Cursor { r }
    }

    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.r.b
    }

    /// The line the cursor is at; `None` past the last.
    pub(crate) fn line(&self) -> Option<Line> {
        self.r.lines.get(self.r.at).copied()
    }

    /// On to the next line.
    pub(crate) fn advance(&mut self) {
        self.r.at += 1;
    }

    pub(crate) fn pos(&self, line: &Line, at: usize) -> Pos {
        self.r.pos(line, at)
    }

    pub(crate) fn skip_spaces(&self, p: usize, end: usize) -> usize {
        self.r.skip_spaces(p, end)
    }

    /// Whether `line` holds a block sequence's entry (`- `, or a lone `-`) at column `col`.
    pub(crate) fn is_entry(&self, line: &Line, col: usize) -> bool {
        line.start + col <= line.end && is_entry(&self.r.b[line.start + col..line.end])
    }

    /// Whether byte `p` of `line` ends the line's content (its end, or a comment).
    pub(crate) fn ends(&self, line: &Line, p: usize) -> bool {
        p == line.end || self.r.b[p] == b'#'
    }

    /// The key at byte `p` (`key: ` or `key:` at the line's end) and the byte after its `:`.
    pub(crate) fn key(&self, line: &Line, p: usize) -> Option<(String, usize)> {
        self.r.key(line, p)
    }

    /// The value at byte `p` of `line`, to the line's end, as the value of a mapping at column
    /// `limit` nested `depth` collections deep; the cursor moves past it.
    pub(crate) fn inline(&mut self, line: &Line, p: usize, limit: usize, depth: usize) -> Option<Value> {
        self.r.depth = depth;
        self.r.inline(line, p, limit).map(|(v, _)| v)
    }

    /// The block collection whose first line is the cursor's, at column `col`, nested `depth`
    /// collections deep; the cursor moves past it.
    pub(crate) fn block(&mut self, col: usize, depth: usize) -> Option<Value> {
        let line = self.line()?;
        self.r.depth = depth;
        self.r.block(col, line.start + col).map(|(v, _)| v)
    }
}
