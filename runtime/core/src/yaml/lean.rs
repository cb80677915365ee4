//! A quick reader for the part of YAML that trails, tools and trailmaps are written in.
//!
//! saphyr reads all of YAML, and its scanner was most of a cold `check`. The files trailblaze reads
//! keep to a small part of it: block mappings and sequences, flow collections on one line, plain,
//! `'single'` and `"double"` quoted scalars on one line, `|` and `>` block scalars, and comments.
//! This reader takes exactly that and gives up (`None`) at the first thing it does not know: an
//! anchor, an alias, a tag, a multi-line plain or quoted scalar, an empty value, a tab, a document
//! marker, a duplicate key. saphyr then reads
//! the file, and it alone reports errors, so what a user sees never depends on which reader ran. The
//! tests hold the two to the same value and the same positions on every document this one accepts.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Key, Pos, PosNode};

mod scalars;
use scalars::{escape, plain, plain_key};

/// Nesting followed here; deeper documents go to saphyr, which refuses them past `MAX_DEPTH`.
const DEPTH: usize = 64;
/// Bytes from a key's start to its `:` followed here: under YAML's limit of 1,024 characters for an
/// implicit key, so saphyr alone decides near it.
const MAX_KEY: usize = 1000;

type Node = (Value, PosNode);

/// The document's value and positions, or `None` when it leaves the subset (saphyr reads it then).
pub(super) fn parse(text: &str) -> Option<Node> {
    let lines = content_lines(text)?;
    let mut r = Reader::new(text, &lines, 0, 0);
    let Some(first) = r.lines.first().copied() else {
        return Some((Value::Null, PosNode::default()));
    };
    let node = r.block(0, first.start)?;
    (r.at == r.lines.len()).then_some(node)
}

/// A line with content (not blank, not only a comment).
#[derive(Clone, Copy)]
struct Line {
    /// 1-based.
    no: usize,
    start: usize,
    /// Where the line ends, its `\n` not included.
    end: usize,
    /// Leading spaces.
    indent: usize,
    ascii: bool,
}

/// A document's lines with content, or `None` when the document leaves the subset at its first
/// byte or line (a byte-order mark, a tab, a carriage return, a document marker, a first line
/// indented).
fn content_lines(text: &str) -> Option<Vec<Line>> {
    if text.starts_with('\u{feff}') || text.bytes().any(|b| b == b'\t' || b == b'\r') {
        return None;
    }
    let lines = lines(text)?;
    match lines.first() {
        Some(first) if first.indent != 0 => None,
        _ => Some(lines),
    }
}

fn lines(text: &str) -> Option<Vec<Line>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in text.split('\n').enumerate() {
        let end = start + line.len();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if !rest.is_empty() && !rest.starts_with('#') {
            if indent == 0 && (rest.starts_with("---") || rest.starts_with("...") || rest.starts_with('%')) {
                return None;
            }
            out.push(Line {
                no: i + 1,
                start,
                end,
                indent,
                ascii: line.is_ascii(),
            });
        }
        start = end + 1;
    }
    Some(out)
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    lines: &'a [Line],
    /// The line being read.
    at: usize,
    depth: usize,
    /// Per depth, the children of the collection being read there, kept between collections: a
    /// collection's vectors are then made once at their final size (most hold one or two children,
    /// and growing a vector starts at four; a long trail's tree was a third slack).
    items: Vec<Vec<Node>>,
    entries: Vec<Vec<(String, Node)>>,
    /// Whether collections keep their children's positions (a cursor's reader keeps none).
    positions: bool,
}

/// Mapping keys a collection may hold here: duplicates are found by comparing keys, and saphyr
/// reads a larger mapping.
const MAX_KEYS: usize = 256;

/// A sequence's value and positions from its children, each vector made at its final size.
fn seq_node(tree: PosNode, children: &mut Vec<Node>, positions: bool) -> Node {
    let mut items = Vec::with_capacity(children.len());
    let mut trees = Vec::with_capacity(if positions { children.len() } else { 0 });
    for (v, t) in children.drain(..) {
        items.push(v);
        if positions {
            trees.push(t);
        }
    }
    (Value::Array(items), tree.with_children(trees))
}

/// A mapping's value and positions from its entries (no key twice), each made at its final size.
fn map_node(tree: PosNode, children: &mut Vec<(String, Node)>, positions: bool) -> Node {
    let mut map = Map::with_capacity(children.len());
    let mut trees = Vec::with_capacity(if positions { children.len() } else { 0 });
    for (k, (v, t)) in children.drain(..) {
        if positions {
            trees.push(t);
        }
        map.insert(k, v);
    }
    (Value::Object(map), tree.with_children(trees))
}

/// `- ` or a lone `-`: a block sequence's entry.
fn is_entry(rest: &[u8]) -> bool {
    rest == b"-" || rest.starts_with(b"- ")
}

/// A byte no plain scalar may start with here (or that starts something this reader leaves alone).
fn bad_plain_start(b: &[u8], p: usize, end: usize) -> bool {
    match b[p] {
        b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' | b'?' | b':' | b'#' | b',' | b'[' | b']' | b'{'
        | b'}' | b'\'' | b'"' => true,
        b'-' => p + 1 == end || b[p + 1] == b' ',
        _ => false,
    }
}

/// Items a block sequence needs before its second half is read on another core (a long trail's
/// `trail:`): fewer take less time than starting a thread.
const SPLIT_ITEMS: usize = 256;

impl<'a> Reader<'a> {
    fn new(text: &'a str, lines: &'a [Line], at: usize, depth: usize) -> Self {
        Reader {
            text,
            b: text.as_bytes(),
            lines,
            at,
            depth,
            items: Vec::new(),
            entries: Vec::new(),
            positions: true,
        }
    }

    fn pos(&self, line: &Line, at: usize) -> Pos {
        let col = if line.ascii {
            at - line.start
        } else {
            self.text[line.start..at].chars().count()
        };
        Pos {
            line: line.no,
            col: col + 1,
        }
    }

    fn node(&self, line: &Line, at: usize) -> PosNode {
        PosNode::at(self.pos(line, at))
    }

    fn skip_spaces(&self, mut p: usize, end: usize) -> usize {
        while p < end && self.b[p] == b' ' {
            p += 1;
        }
        p
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= DEPTH).then_some(())
    }

    /// The children buffer of the current depth, taken (it is put back by [`Reader::leave`]).
    fn take_items(&mut self) -> Vec<Node> {
        self.items.get_mut(self.depth).map(std::mem::take).unwrap_or_default()
    }

    fn take_entries(&mut self) -> Vec<(String, Node)> {
        self.entries.get_mut(self.depth).map(std::mem::take).unwrap_or_default()
    }

    /// Leaves the current depth, keeping its (emptied) buffers for the next collection there.
    fn leave(&mut self, items: Vec<Node>, entries: Vec<(String, Node)>) {
        let d = self.depth;
        if self.items.len() <= d {
            self.items.resize_with(d + 1, Vec::new);
            self.entries.resize_with(d + 1, Vec::new);
        }
        if items.capacity() > 0 {
            self.items[d] = items;
        }
        if entries.capacity() > 0 {
            self.entries[d] = entries;
        }
        self.depth -= 1;
    }

    /// The block collection starting at byte `p` of the current line, at column `col`.
    fn block(&mut self, col: usize, p: usize) -> Option<Node> {
        let line = self.lines[self.at];
        if is_entry(&self.b[p..line.end]) {
            self.seq(col)
        } else {
            self.map(col, p, None)
        }
    }

    fn seq(&mut self, col: usize) -> Option<Node> {
        self.enter()?;
        let first = self.lines[self.at];
        let mut items = self.take_items();
        let tree = self.node(&first, first.start + col);
        match self.halves(col) {
            // The second half's items are read on another thread, from the same lines (positions
            // are the file's), while this one reads the first half's.
            Some((mid, end)) => {
                let (text, lines, depth) = (self.text, self.lines, self.depth);
                let second = std::thread::scope(|s| {
                    let second = s.spawn(move || {
                        let mut r = Reader::new(text, &lines[..end], mid, depth);
                        let mut items = Vec::new();
                        r.items(col, &mut items)?;
                        (r.at == end).then_some(items)
                    });
                    // This reader sees the lines up to the middle item only while it reads.
                    self.lines = &lines[..mid];
                    let first = self.items(col, &mut items).filter(|()| self.at == mid);
                    self.lines = lines;
                    let second = second.join().ok().flatten();
                    first.and(second)
                })?;
                items.extend(second);
                self.at = end;
            }
            None => self.items(col, &mut items)?,
        }
        let node = seq_node(tree, &mut items, self.positions);
        self.leave(items, Vec::new());
        Some(node)
    }

    /// Where a long block sequence at `col` starting at the current line splits in two: the line
    /// of its middle item and the line after its last (its items start at `col` with `- `; deeper
    /// lines are inside them). `None` for a short one, or with one core.
    fn halves(&self, col: usize) -> Option<(usize, usize)> {
        if self.depth > 2 {
            return None;
        }
        let mut starts = Vec::new();
        let mut end = self.lines.len();
        for (i, line) in self.lines.iter().enumerate().skip(self.at) {
            if line.indent < col || (line.indent == col && !is_entry(&self.b[line.start + col..line.end])) {
                end = i;
                break;
            }
            if line.indent == col {
                starts.push(i);
            }
        }
        (starts.len() >= SPLIT_ITEMS && crate::cores::second()).then(|| (starts[starts.len() / 2], end))
    }

    /// A block sequence's items at `col`, from the current line to the sequence's end (or, in a
    /// reader given the lines up to a point, to that point).
    fn items(&mut self, col: usize, items: &mut Vec<Node>) -> Option<()> {
        while let Some(line) = self.lines.get(self.at).copied() {
            if line.indent < col {
                break;
            }
            if line.indent > col {
                return None;
            }
            if !is_entry(&self.b[line.start + col..line.end]) {
                break;
            }
            let p = self.skip_spaces(line.start + col + 1, line.end);
            if p == line.end || self.b[p] == b'#' || is_entry(&self.b[p..line.end]) {
                return None; // the item is on the lines below, or a sequence in a sequence
            }
            let item = if let Some(key) = self.key(&line, p) {
                self.map(p - line.start, p, Some(key))?
            } else {
                self.inline(&line, p, col)?
            };
            items.push(item);
        }
        Some(())
    }

    /// A block mapping at column `col`, its first key at byte `p` of the current line (`first_key`: that
    /// key, when the caller has read it already).
    fn map(&mut self, col: usize, mut p: usize, mut first_key: Option<(String, usize)>) -> Option<Node> {
        self.enter()?;
        let first = self.lines[self.at];
        let mut entries = self.take_entries();
        let tree = self.node(&first, p);
        loop {
            let line = self.lines[self.at];
            let (key, after) = match first_key.take() {
                Some(k) => k,
                None => self.key(&line, p)?,
            };
            if entries.len() == MAX_KEYS || entries.iter().any(|(k, _)| *k == key) {
                return None;
            }
            let key_at = self.pos(&line, p);
            let q = self.skip_spaces(after, line.end);
            let (v, t) = if q == line.end || self.b[q] == b'#' {
                // The value is on the lines below: a deeper collection, or a sequence at this column.
                self.at += 1;
                let next = *self.lines.get(self.at)?;
                let rest = &self.b[next.start + next.indent..next.end];
                if next.indent > col {
                    self.block(next.indent, next.start + next.indent)?
                } else if next.indent == col && is_entry(rest) {
                    // saphyr places a sequence at its key's column where its first item's text starts.
                    let item = self.skip_spaces(next.start + col + 1, next.end);
                    let (v, mut t) = self.seq(col)?;
                    t.set_pos(self.pos(&next, item));
                    (v, t)
                } else {
                    return None; // an empty value
                }
            } else {
                self.inline(&line, q, col)?
            };
            let t = t.keyed(Key::of(self.text, p, &key), key_at);
            entries.push((key, (v, t)));
            match self.lines.get(self.at) {
                Some(next) if next.indent == col && !is_entry(&self.b[next.start + col..next.end]) => {
                    p = next.start + col;
                }
                Some(next) if next.indent > col => return None,
                _ => break,
            }
        }
        let node = map_node(tree, &mut entries, self.positions);
        self.leave(Vec::new(), entries);
        Some(node)
    }

    /// The key at `p` and the byte after its `:`, when `p` starts `key: ` (or `key:` at the end).
    fn key(&self, line: &Line, p: usize) -> Option<(String, usize)> {
        let b = self.b;
        let (key, colon) = if matches!(b[p], b'\'' | b'"') {
            let (s, q) = self.quoted(line, p)?;
            (s.into_owned(), q)
        } else if bad_plain_start(b, p, line.end) {
            return None;
        } else {
            let mut i = p;
            while !(b[i] == b':' && (i + 1 == line.end || b[i + 1] == b' ')) {
                i += 1;
                if i == line.end || (b[i] == b'#' && b[i - 1] == b' ') {
                    return None;
                }
            }
            let s = self.text[p..i].trim_end_matches(' ');
            (plain_key(s)?, i)
        };
        let is_colon = colon < line.end && b[colon] == b':' && (colon + 1 == line.end || b[colon + 1] == b' ');
        (is_colon && colon - p <= MAX_KEY).then_some((key, colon + 1))
    }

    /// A value on the current line from `p` to its end (or its comment); the line is then done. A
    /// line below indented past `limit` would continue it: that is for saphyr.
    fn inline(&mut self, line: &Line, p: usize, limit: usize) -> Option<Node> {
        if matches!(self.b[p], b'|' | b'>') {
            return self.block_scalar(line, p, limit);
        }
        let (v, end) = match self.b[p] {
            b'{' | b'[' => self.flow(line, p)?,
            b'\'' | b'"' => {
                let (s, end) = self.quoted(line, p)?;
                ((Value::String(s.into_owned()), self.node(line, p)), end)
            }
            _ => {
                if bad_plain_start(self.b, p, line.end) {
                    return None;
                }
                let mut i = p;
                while i < line.end && !(self.b[i] == b'#' && i > p && self.b[i - 1] == b' ') {
                    if self.b[i] == b':' && (i + 1 == line.end || self.b[i + 1] == b' ') {
                        return None;
                    }
                    i += 1;
                }
                let s = self.text[p..i].trim_end_matches(' ');
                ((plain(s)?, self.node(line, p)), p + s.len())
            }
        };
        let rest = self.skip_spaces(end, line.end);
        if rest != line.end && !(self.b[rest] == b'#' && rest > end) {
            return None;
        }
        self.at += 1;
        if self.lines.get(self.at).is_some_and(|next| next.indent > limit) {
            return None;
        }
        Some(v)
    }

    /// A `|` literal or `>` folded scalar whose header is at `p`, its lines below indented past
    /// `limit`; the lines after it are next. Left to saphyr: an indentation digit, leading or
    /// over-long blank lines, a folded line indented more than the first, no line break at the end.
    fn block_scalar(&mut self, line: &Line, p: usize, limit: usize) -> Option<Node> {
        let b = self.b;
        let literal = b[p] == b'|';
        let mut i = p + 1;
        let chomp = match b.get(i).filter(|_| i < line.end) {
            Some(&c @ (b'-' | b'+')) => {
                i += 1;
                c
            }
            _ => b' ',
        };
        let rest = self.skip_spaces(i, line.end);
        if rest != line.end && !(b[rest] == b'#' && rest > i) {
            return None;
        }
        let (body, at, end) = self.block_body(line, limit, literal)?;
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        let lines = &body[..body.len() - trailing];
        if lines.is_empty() {
            return None;
        }
        let value = fold_block(lines, literal, chomp, trailing);
        let tree = PosNode::at(at?);
        let node = (Value::String(value), tree);
        self.at = self.lines.partition_point(|l| l.start < end);
        if self.lines.get(self.at).is_some_and(|next| next.indent > limit) {
            return None;
        }
        Some(node)
    }

    /// A block scalar's lines below its header `line` (indentation removed, blank ones empty),
    /// where its text starts, and the byte where what follows it starts.
    fn block_body(&self, line: &Line, limit: usize, literal: bool) -> Option<(Vec<&'a str>, Option<Pos>, usize)> {
        let text = self.text;
        // Raw lines, not `self.lines`: a `#` line inside is text, and blank lines count.
        let mut body: Vec<&str> = Vec::new();
        let mut indent = None;
        let mut start = line.end + 1;
        let mut end = text.len();
        // saphyr places the scalar where its first line's text starts.
        let (mut no, mut at) = (line.no, None);
        while start < text.len() {
            no += 1;
            let stop = text[start..].find('\n').map_or(text.len(), |k| start + k);
            let raw = &text[start..stop];
            let spaces = raw.len() - raw.trim_start_matches(' ').len();
            if spaces == raw.len() {
                if indent.is_none_or(|n| spaces > n) {
                    return None;
                }
                body.push("");
            } else {
                let n = *indent.get_or_insert(spaces);
                at.get_or_insert(Pos { line: no, col: n + 1 });
                if spaces <= limit || spaces < n {
                    end = start;
                    break;
                }
                if spaces > n && !literal {
                    return None;
                }
                if stop == text.len() {
                    return None; // the last line has no line break
                }
                body.push(&raw[n..]);
            }
            start = stop + 1;
        }
        Some((body, at, end))
    }

    /// A flow collection that opens at `p` and closes on the same line, and the byte after it.
    fn flow(&mut self, line: &Line, p: usize) -> Option<(Node, usize)> {
        self.enter()?;
        let is_map = self.b[p] == b'{';
        let close = if is_map { b'}' } else { b']' };
        let tree = self.node(line, p);
        let mut entries = self.take_entries();
        let mut items = self.take_items();
        let mut i = self.skip_spaces(p + 1, line.end);
        if i < line.end && self.b[i] == close {
            i += 1;
        } else {
            loop {
                let mut key = None;
                if is_map {
                    let (k, colon) = self.flow_key(line, i)?;
                    if entries.len() == MAX_KEYS || entries.iter().any(|(e, _)| *e == k) {
                        return None;
                    }
                    key = Some((k, self.pos(line, i), i));
                    i = self.skip_spaces(colon + 1, line.end);
                }
                let ((v, t), end) = self.flow_value(line, i)?;
                match key {
                    Some((k, at, from)) => {
                        let t = t.keyed(Key::of(self.text, from, &k), at);
                        entries.push((k, (v, t)));
                    }
                    None => items.push((v, t)),
                }
                i = self.skip_spaces(end, line.end);
                match self.b.get(i).filter(|_| i < line.end) {
                    Some(b',') => {
                        i = self.skip_spaces(i + 1, line.end);
                        if i >= line.end || self.b[i] == close {
                            return None; // a trailing comma, or the collection goes on below
                        }
                    }
                    Some(&c) if c == close => {
                        i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let node = if is_map {
            map_node(tree, &mut entries, self.positions)
        } else {
            seq_node(tree, &mut items, self.positions)
        };
        self.leave(items, entries);
        Some((node, i))
    }

    /// A flow mapping's key at `p` and where its `:` (followed by a space) is.
    fn flow_key(&self, line: &Line, p: usize) -> Option<(String, usize)> {
        if p >= line.end {
            return None;
        }
        let b = self.b;
        if b[p] == b'\'' || b[p] == b'"' {
            let (s, q) = self.quoted(line, p)?;
            return (q + 1 < line.end && b[q] == b':' && b[q + 1] == b' ').then(|| (s.into_owned(), q));
        }
        let end = self.flow_plain_end(line, p)?;
        if !(end + 1 < line.end && b[end] == b':' && b[end + 1] == b' ') {
            return None;
        }
        if end - p > MAX_KEY {
            return None;
        }
        let s = self.text[p..end].trim_end_matches(' ');
        Some((plain_key(s)?, end))
    }

    /// A value inside a flow collection, and the byte after it.
    fn flow_value(&mut self, line: &Line, p: usize) -> Option<(Node, usize)> {
        if p >= line.end {
            return None;
        }
        match self.b[p] {
            b'{' | b'[' => self.flow(line, p),
            b'\'' | b'"' => {
                let (s, end) = self.quoted(line, p)?;
                Some(((Value::String(s.into_owned()), self.node(line, p)), end))
            }
            _ => {
                let end = self.flow_plain_end(line, p)?;
                if self.b[end] == b':' {
                    return None; // a pair in a sequence, or a second `:`
                }
                let s = self.text[p..end].trim_end_matches(' ');
                Some(((plain(s)?, self.node(line, p)), end))
            }
        }
    }

    /// Where a plain scalar in a flow collection ends: at `,`, the closing bracket, or a `: `.
    fn flow_plain_end(&self, line: &Line, p: usize) -> Option<usize> {
        let b = self.b;
        if bad_plain_start(b, p, line.end) {
            return None;
        }
        let mut i = p;
        loop {
            if i >= line.end {
                return None;
            }
            match b[i] {
                b',' | b']' | b'}' => return Some(i),
                b':' if i + 1 < line.end && matches!(b[i + 1], b' ' | b',' | b']' | b'}') => return Some(i),
                b':' if i + 1 == line.end => return None,
                b'[' | b'{' => return None,
                b'#' if i > p && b[i - 1] == b' ' => return None,
                _ => i += 1,
            }
        }
    }

    /// A quoted scalar opening at `p` and closing on the same line, and the byte after it.
    fn quoted<'t>(&'t self, line: &Line, p: usize) -> Option<(Cow<'t, str>, usize)> {
        let b = self.b;
        let quote = b[p];
        let mut out: Option<String> = None;
        let mut from = p + 1;
        let mut i = p + 1;
        loop {
            if i >= line.end {
                return None;
            }
            match b[i] {
                c if c == quote && quote == b'\'' && i + 1 < line.end && b[i + 1] == b'\'' => {
                    let s = out.get_or_insert_with(String::new);
                    s.push_str(&self.text[from..=i]);
                    i += 2;
                    from = i;
                }
                c if c == quote => {
                    let s = match out {
                        Some(mut s) => {
                            s.push_str(&self.text[from..i]);
                            Cow::Owned(s)
                        }
                        None => Cow::Borrowed(&self.text[from..i]),
                    };
                    return Some((s, i + 1));
                }
                b'\\' if quote == b'"' => {
                    let s = out.get_or_insert_with(String::new);
                    s.push_str(&self.text[from..i]);
                    let (c, used) = escape(&b[i + 1..line.end])?;
                    s.push(c);
                    i += 1 + used;
                    from = i;
                }
                _ => i += 1,
            }
        }
    }
}

/// A block scalar's value from its lines (trailing blank ones cut off and counted in
/// `trailing`): `literal` keeps line breaks, folded joins lines with a space; `chomp` is the
/// header's `-`, `+` or a space for neither.
fn fold_block(lines: &[&str], literal: bool, chomp: u8, trailing: usize) -> String {
    let mut value = String::new();
    let mut empties = 0;
    for (k, l) in lines.iter().enumerate() {
        if l.is_empty() {
            empties += 1;
            continue;
        }
        if k > 0 {
            let breaks = if literal { empties + 1 } else { empties };
            if breaks == 0 {
                value.push(' ');
            }
            value.extend(std::iter::repeat_n('\n', breaks));
        }
        empties = 0;
        value.push_str(l);
    }
    match chomp {
        b'-' => {}
        b'+' => value.extend(std::iter::repeat_n('\n', 1 + trailing)),
        _ => value.push('\n'),
    }
    value
}

#[cfg(test)]
#[path = "lean_tests.rs"]
mod tests;
