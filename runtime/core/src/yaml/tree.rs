//! Where each part of a document stands: a tree shaped like its value, walked by path on demand.
//!
//! A long trail has eight or so nodes a step, so a node is kept small: positions in two `u32`s,
//! its key as a span of the document's text when the key is written as it reads (no copy of it),
//! and its children in one boxed slice (a mapping's entries or a sequence's items, in file order):
//! building the tree is a large part of a parse.

use super::Pos;

/// A 1-based line and column, in half the room of a [`Pos`]; line 0 stands for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct At {
    line: u32,
    col: u32,
}

impl At {
    const NONE: At = At { line: 0, col: 0 };

    pub(super) fn of(p: Pos) -> At {
        At {
            line: u32::try_from(p.line).unwrap_or(u32::MAX),
            col: u32::try_from(p.col).unwrap_or(u32::MAX),
        }
    }

    fn pos(self) -> Pos {
        Pos {
            line: self.line as usize,
            col: self.col as usize,
        }
    }

    fn get(self) -> Option<Pos> {
        (self.line != 0).then(|| self.pos())
    }
}

/// A mapping entry's key.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) enum Key {
    /// A sequence's item, or the root.
    #[default]
    None,
    /// `len` bytes of the document's text from `start`: the key as written there.
    Text { start: u32, len: u32 },
    /// A key that reads otherwise than it is written (quoted, escaped).
    Own(Box<str>),
}

impl Key {
    /// Key `key`, written from byte `start` of `text`: a span of it when it reads there as it is.
    pub(super) fn of(text: &str, start: usize, key: &str) -> Key {
        let span = text.get(start..start + key.len()).filter(|s| *s == key);
        match (span, u32::try_from(start), u32::try_from(key.len())) {
            (Some(_), Ok(start), Ok(len)) => Key::Text { start, len },
            _ => Key::Own(key.into()),
        }
    }

    fn name<'t>(&'t self, text: &'t str) -> Option<&'t str> {
        match self {
            Key::None => None,
            Key::Text { start, len } => text.get(*start as usize..(*start + *len) as usize),
            Key::Own(k) => Some(k),
        }
    }
}

/// A node's position, its key and where the key stands (in a mapping), and its children.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PosNode {
    pos: At,
    key_at: At,
    key: Key,
    children: Box<[PosNode]>,
}

impl Default for PosNode {
    fn default() -> Self {
        PosNode::at(Pos::default())
    }
}

impl PosNode {
    /// A node at `pos` with no children yet.
    pub(super) fn at(pos: Pos) -> PosNode {
        PosNode {
            pos: At::of(pos),
            key_at: At::NONE,
            key: Key::None,
            children: Box::default(),
        }
    }

    pub(super) fn set_pos(&mut self, pos: Pos) {
        self.pos = At::of(pos);
    }

    /// This node as the value of mapping key `key`, which stands at `at`.
    pub(super) fn keyed(mut self, key: Key, at: Pos) -> PosNode {
        self.key = key;
        self.key_at = At::of(at);
        self
    }

    /// Its children, in file order (a vector made at its final size is not copied).
    pub(super) fn with_children(mut self, children: Vec<PosNode>) -> PosNode {
        self.children = children.into_boxed_slice();
        self
    }

    pub(super) fn pos(&self) -> Pos {
        self.pos.pos()
    }

    /// Where the key holding it stands, else where it starts.
    pub(super) fn key_or_pos(&self) -> Pos {
        self.key_at.get().unwrap_or(self.pos())
    }

    /// A mapping's keys with where each stands, or a sequence's items (no key) with where each starts.
    pub(super) fn children(&self, text: &str) -> Vec<(Option<String>, Pos)> {
        self.children
            .iter()
            .map(|n| match n.key.name(text) {
                Some(k) => (Some(k.to_string()), n.key_or_pos()),
                None => (None, n.pos()),
            })
            .collect()
    }

    /// The node at `path` (`a.b[2]`), or the deepest one along it, and whether the whole path was
    /// found; `text` is the document's, which its keys are spans of. Nothing is collected:
    /// positions are looked up per finding and per call on the parse gate's path.
    pub(super) fn walk(&self, text: &str, path: &str) -> (&PosNode, bool) {
        let (mut at, mut rest) = (self, path);
        loop {
            rest = rest.trim_start_matches('.');
            if rest.is_empty() {
                return (at, true);
            }
            match at.child_named_by(text, rest) {
                Some((node, used)) => {
                    at = node;
                    rest = &rest[used..];
                }
                None => return (at, false),
            }
        }
    }

    /// The child that `rest` starts with, and how many bytes of it name the child. Paths are built
    /// from the document's own keys, which may hold `.`, `[` or `]` (`'x[1]é]': 1`), so a mapping's
    /// child is the longest of its keys that `rest` starts with (up to a `.`, a `[` or the end), never
    /// a split of the text; otherwise `[n]` indexes a sequence and `[name]` names a key.
    fn child_named_by(&self, text: &str, rest: &str) -> Option<(&PosNode, usize)> {
        let names = |name: &str| {
            !name.is_empty()
                && rest.starts_with(name)
                && matches!(rest[name.len()..].chars().next(), None | Some('.' | '['))
        };
        // A sequence's items have no keys: not looked through (a long trail has thousands).
        let mapping = self.children.first().is_some_and(|n| n.key != Key::None);
        let keyed = || {
            let entries = if mapping { &self.children[..] } else { &[] };
            entries.iter().filter_map(|n| Some((n.key.name(text)?, n)))
        };
        if let Some((name, node)) = keyed()
            .filter(|(name, _)| names(name))
            .max_by_key(|(name, _)| name.len())
        {
            return Some((node, name.len()));
        }
        let body = rest.strip_prefix('[')?;
        let end = body.find(']')?;
        let inner = &body[..end];
        let node = match inner.parse::<usize>() {
            Ok(i) => self.children.get(i).filter(|n| n.key == Key::None),
            Err(_) => keyed().find(|(name, _)| *name == inner).map(|(_, n)| n),
        }?;
        Some((node, end + 2))
    }

    /// The same tree with every key its own (no spans of `text`): trees of two readers compare.
    #[cfg(test)]
    pub(super) fn resolved(&self, text: &str) -> PosNode {
        PosNode {
            key: match self.key.name(text) {
                Some(k) => Key::Own(k.into()),
                None => Key::None,
            },
            children: self.children.iter().map(|c| c.resolved(text)).collect(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{Pos, parse};
    use super::*;

    #[test]
    fn a_key_written_as_it_reads_is_a_span_of_the_text_and_any_other_its_own() {
        let text = "name: x\n'quoted': y\n";
        let plain = Key::of(text, 0, "name");
        assert_eq!(plain, Key::Text { start: 0, len: 4 });
        assert_eq!(plain.name(text), Some("name"));
        // Control: the quoted key's text starts with its quote, so it keeps its own copy.
        let quoted = Key::of(text, 8, "quoted");
        assert_eq!(quoted, Key::Own("quoted".into()));
        assert_eq!(quoted.name(text), Some("quoted"));
        // Past the end, or not on a character's boundary: its own, never a wrong span.
        assert_eq!(Key::of("é: 1", 1, "x"), Key::Own("x".into()));
        assert_eq!(Key::of("ab", 1, "bcd"), Key::Own("bcd".into()));
    }

    #[test]
    fn positions_are_found_by_key_and_by_index_in_a_long_document() {
        let mut text = String::from("'top key': 1\ntrail:\n");
        for i in 0..1_000 {
            text.push_str(&format!("  - step: s{i}\n    'q.k': {{ a: [1, 2] }}\n"));
        }
        let doc = parse(&text, Path::new("x.yaml")).expect("parses");
        // Item 999 starts on line 3 + 2 × 999; the `2` of its quoted key's list on the next, column 21.
        assert_eq!(doc.position("trail[999].step"), Pos { line: 2001, col: 5 });
        assert_eq!(doc.position("trail[999].q.k.a[1]"), Pos { line: 2002, col: 21 });
        assert_eq!(doc.position("top key"), Pos { line: 1, col: 1 });
        let keys = doc.children("trail[3]").expect("a mapping");
        assert_eq!(
            keys,
            [
                (Some("step".to_string()), Pos { line: 9, col: 5 }),
                (Some("q.k".to_string()), Pos { line: 10, col: 5 })
            ]
        );
        // Controls: an index past the end, and an index into a mapping, find only what encloses them.
        assert_eq!(doc.value_position("trail[1000]"), doc.position("trail"));
        assert!(doc.children("trail[1000]").is_none());
        assert_eq!(doc.value_position("trail[0][0]"), doc.position("trail[0]"));
    }
}
