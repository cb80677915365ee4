//! YAML with positions: every file trailblaze reads (trails, trailmaps, app definitions, tool and host
//! descriptors) goes through here, so every error can say `file:line:col`.
//!
//! saphyr keeps each node's span and each scalar's quote style: `'12345678'` stays a string while
//! `12345678` is a number. The tree becomes a `serde_json::Value` plus a table from path (`a.b[0].c`,
//! the same form `decode` reports) to position, and is then decoded strictly.

#[cfg(test)]
pub(crate) mod corpus;
pub mod emit;
mod lean;
mod tree;

use std::fmt;
use std::path::{Path, PathBuf};

use saphyr::Scalar;
use saphyr_parser::Event;
use serde::de::DeserializeOwned;
use serde_json::Value;
use trailblaze_host_functions::decode::{self, DecodeError, DecodeErrorKind};

use tree::{Key, PosNode};

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// An error in a YAML file: where, what, and the line itself for a caret display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub file: PathBuf,
    pub pos: Pos,
    pub message: String,
    /// The source line at `pos`, for the caret display.
    pub source_line: String,
}

impl YamlError {
    pub fn new(file: &Path, text: &str, pos: Pos, message: impl Into<String>) -> Self {
        let pos = within(text, pos);
        let source_line = text.lines().nth(pos.line.saturating_sub(1)).unwrap_or("").to_string();
        YamlError {
            file: file.to_path_buf(),
            pos,
            message: message.into(),
            source_line,
        }
    }

    /// `file:line:col: message` on one line, for logs and compact lists.
    pub fn headline(&self) -> String {
        format!(
            "{}:{}:{}: {}",
            self.file.display(),
            self.pos.line,
            self.pos.col,
            self.message
        )
    }
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.headline())?;
        let gutter = self.pos.line.to_string();
        let pad = " ".repeat(gutter.len());
        writeln!(f, "{pad} |")?;
        writeln!(f, "{gutter} | {}", self.source_line)?;
        write!(f, "{pad} | {}^", " ".repeat(self.pos.col.saturating_sub(1)))
    }
}

impl std::error::Error for YamlError {}

/// `pos`, or, when it is past the text's last line (the end of the stream, where the parser reports
/// an unclosed `[`, `{` or quote), the end of the last line that holds something: the line the
/// reader must fix, shown with its caret, instead of an empty one.
fn within(text: &str, pos: Pos) -> Pos {
    if text.lines().nth(pos.line.saturating_sub(1)).is_some() {
        return pos;
    }
    match text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).last() {
        Some((i, l)) => Pos {
            line: i + 1,
            col: l.chars().count() + 1,
        },
        None => pos,
    }
}

/// A parsed YAML document: its value and where each part of it stands in the file.
#[derive(Debug, Clone)]
pub struct Document {
    pub file: PathBuf,
    pub text: String,
    pub value: Value,
    /// Where each node is, shaped like the value: walked on demand, so parsing builds no path strings.
    tree: PosNode,
}

impl Default for Pos {
    fn default() -> Self {
        Pos { line: 1, col: 1 }
    }
}

impl Document {
    /// Where the value at `path` starts, or the nearest enclosing value that has a position.
    pub fn position(&self, path: &str) -> Pos {
        let (last, _) = self.tree.walk(&self.text, path);
        last.key_or_pos()
    }

    /// Where the value (not its key) at `path` starts.
    pub fn value_position(&self, path: &str) -> Pos {
        match self.tree.walk(&self.text, path) {
            (node, true) => node.pos(),
            _ => self.position(path),
        }
    }

    /// Where each child of the collection at `path` starts, in file order: a mapping's keys (the key
    /// and where it stands) or a sequence's items (no key, where the item starts). `None` when
    /// `path` is not in the document. Write-back edits a trail's text with these.
    pub fn children(&self, path: &str) -> Option<Vec<(Option<String>, Pos)>> {
        let (node, found) = self.tree.walk(&self.text, path);
        found.then(|| node.children(&self.text))
    }

    pub fn error_at(&self, path: &str, message: impl Into<String>) -> YamlError {
        YamlError::new(&self.file, &self.text, self.position(path), message)
    }

    /// Decodes the whole document strictly; an unknown key points at that key, a wrong type at the value.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, YamlError> {
        self.decode_at("", &self.value)
    }

    /// Decodes `value`, found at `base` in this document, strictly.
    pub fn decode_at<T: DeserializeOwned>(&self, base: &str, value: &Value) -> Result<T, YamlError> {
        decode::decode(value).map_err(|e| self.decode_error(base, &e))
    }

    /// Positions a decode error found under `base`, naming the nearest valid key for a typo.
    pub fn decode_error(&self, base: &str, e: &DecodeError) -> YamlError {
        let path = join(base, &e.full_path());
        let pos = match e.kind {
            DecodeErrorKind::MissingKey { .. } => self.position(&join(base, &e.path)),
            _ => self.position(&path),
        };
        YamlError::new(&self.file, &self.text, pos, e.to_string())
    }
}

fn join(base: &str, path: &str) -> String {
    match (base.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (_, true) => base.to_string(),
        _ if path.starts_with('[') => format!("{base}{path}"),
        _ => format!("{base}.{path}"),
    }
}

/// `a.b[2]` → `a.b`, `a.b` → `a`, `a` → ``, `` → None.
#[cfg(test)]
pub fn parent_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let cut = path.rfind(['.', '[']).unwrap_or(0);
    Some(path[..cut].to_string())
}

/// Parses one YAML document. An empty file is `null`.
///
/// The tree is built straight from the parser's events (no intermediate YAML tree), which is where
/// the reader's limits hold: an alias is refused where it stands, before anything is expanded (1 MB
/// of aliases to a 10 KB anchor would otherwise cost gigabytes), and nesting deeper than
/// `MAX_DEPTH` is refused before anything recursive sees it.
pub fn parse(text: &str, file: &Path) -> Result<Document, YamlError> {
    let (value, tree) = parse_tree(text, file)?;
    Ok(Document {
        file: file.to_path_buf(),
        text: text.to_string(),
        value,
        tree,
    })
}

/// [`parse`] of text the document may keep (no copy of it).
pub fn parse_owned(text: String, file: &Path) -> Result<Document, YamlError> {
    let (value, tree) = parse_tree(&text, file)?;
    Ok(Document {
        file: file.to_path_buf(),
        text,
        value,
        tree,
    })
}

/// [`parse`] of a text already read once (a trail made without its document, whose positions are asked
/// for later). Should it fail where it should not, the document has no value and every position
/// is its first line's: an error then points at the file, not at nothing.
pub(crate) fn parse_again(text: &str, file: &Path) -> Document {
    parse(text, file).unwrap_or_else(|_| Document {
        file: file.to_path_buf(),
        text: text.to_string(),
        value: Value::Null,
        tree: PosNode::default(),
    })
}

fn parse_tree(text: &str, file: &Path) -> Result<(Value, PosNode), YamlError> {
    // The common subset first (several times quicker); saphyr reads the rest and reports every error.
    match lean::parse(text) {
        Some(done) => Ok(done),
        None => parse_events(text, file),
    }
}

/// The tree from saphyr's events: all of YAML, and its errors.
fn parse_events(text: &str, file: &Path) -> Result<(Value, PosNode), YamlError> {
    let mut tree = EventTree {
        file,
        text,
        stack: Vec::new(),
        root: None,
        documents: 0,
    };
    for event in saphyr_parser::Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let m = e.marker();
            tree.fail(
                Pos {
                    line: m.line(),
                    col: m.col() + 1,
                },
                e.info(),
            )
        })?;
        let pos = Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
        };
        if let Some((value, node)) = tree.event(event, pos)? {
            tree.attach(value, node);
        }
    }
    Ok(tree.root.unwrap_or_default())
}

/// [`parse_events`]' state: the collections open, and the root once closed.
struct EventTree<'t> {
    file: &'t Path,
    text: &'t str,
    stack: Vec<Frame>,
    root: Option<(Value, PosNode)>,
    documents: usize,
}

impl EventTree<'_> {
    fn fail(&self, pos: Pos, msg: &str) -> YamlError {
        YamlError::new(self.file, self.text, pos, msg)
    }

    /// Applies one event; returns the node it completes, if any.
    fn event(&mut self, event: Event<'_>, pos: Pos) -> Result<Option<(Value, PosNode)>, YamlError> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(self.fail(Pos { line: 1, col: 1 }, "expected one YAML document, found several"));
                }
                Ok(None)
            }
            Event::Alias(_) => Err(self.fail(pos, "YAML aliases are not supported")),
            Event::Scalar(v, style, _, tag) => {
                let Some(s) = Scalar::parse_from_cow_and_metadata(v, style, tag.as_ref()) else {
                    return Err(self.fail(pos, "a value that does not match its tag"));
                };
                self.on_scalar(s, pos)
            }
            Event::SequenceStart(..) => self.open(true, pos).map(|()| None),
            Event::MappingStart(..) => self.open(false, pos).map(|()| None),
            Event::SequenceEnd | Event::MappingEnd => Ok(self.close()),
            _ => Ok(None),
        }
    }

    /// A scalar: the pending key of the open mapping, or else a value.
    fn on_scalar(&mut self, s: Scalar<'_>, pos: Pos) -> Result<Option<(Value, PosNode)>, YamlError> {
        if let Some(Frame::Map { key: None, .. }) = self.stack.last() {
            let k = map_key(s).ok_or_else(|| self.fail(pos, "a mapping key must be a plain name"))?;
            if let Some(Frame::Map { key, .. }) = self.stack.last_mut() {
                *key = Some((k, pos));
            }
            Ok(None)
        } else {
            let value = scalar(s).ok_or_else(|| self.fail(pos, "a number that JSON cannot hold (NaN or infinity)"))?;
            Ok(Some((value, PosNode::at(pos))))
        }
    }

    /// Opens a sequence (`seq`) or a mapping, within the depth limit.
    fn open(&mut self, seq: bool, pos: Pos) -> Result<(), YamlError> {
        if matches!(self.stack.last(), Some(Frame::Map { key: None, .. })) {
            return Err(self.fail(pos, "a mapping key must be a plain name"));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.fail(pos, &format!("nested more than {MAX_DEPTH} levels deep")));
        }
        let (tree, trees) = (PosNode::at(pos), Vec::new());
        self.stack.push(if seq {
            Frame::Seq {
                items: Vec::new(),
                tree,
                trees,
            }
        } else {
            Frame::Map {
                map: serde_json::Map::new(),
                tree,
                trees,
                key: None,
            }
        });
        Ok(())
    }

    /// Closes the innermost collection into a node.
    fn close(&mut self) -> Option<(Value, PosNode)> {
        match self.stack.pop() {
            // Most collections hold one or two children but a vector grows four at a time:
            // trimmed, a long trail's value is smaller (and touches fewer pages).
            Some(Frame::Seq { mut items, tree, trees }) => {
                items.shrink_to_fit();
                Some((Value::Array(items), tree.with_children(trees)))
            }
            Some(Frame::Map { map, tree, trees, .. }) => Some((Value::Object(map), tree.with_children(trees))),
            None => None,
        }
    }

    /// Puts a completed node in its parent, or makes it the root.
    fn attach(&mut self, value: Value, tree: PosNode) {
        match self.stack.last_mut() {
            Some(Frame::Seq { items, trees, .. }) => {
                items.push(value);
                trees.push(tree);
            }
            Some(Frame::Map { map, trees, key, .. }) => {
                if let Some((k, at)) = key.take() {
                    // saphyr's reading: a key of its own (this reader is the rare path).
                    trees.push(tree.keyed(Key::Own(k.as_str().into()), at));
                    map.insert(k, value);
                }
            }
            None => self.root = Some((value, tree)),
        }
    }
}

/// A collection being built from events.
enum Frame {
    Seq {
        items: Vec<Value>,
        tree: PosNode,
        trees: Vec<PosNode>,
    },
    Map {
        map: serde_json::Map<String, Value>,
        tree: PosNode,
        trees: Vec<PosNode>,
        /// The key read, waiting for its value.
        key: Option<(String, Pos)>,
    },
}

/// A mapping key: a plain name (strings, and the integers and booleans YAML reads unquoted).
fn map_key(s: Scalar<'_>) -> Option<String> {
    match s {
        Scalar::String(s) => Some(s.into_owned()),
        Scalar::Integer(i) => Some(i.to_string()),
        Scalar::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads and parses `path`.
pub fn parse_file(path: &Path) -> Result<Document, YamlError> {
    let text = crate::files::read_text(path).map_err(|e| YamlError {
        file: path.to_path_buf(),
        pos: Pos { line: 1, col: 1 },
        message: format!("cannot read: {e}"),
        source_line: String::new(),
    })?;
    parse_owned(text, path)
}

/// Parses and strictly decodes `text`.
pub fn from_str<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, YamlError> {
    parse(text, file)?.decode()
}

/// Reads, parses and strictly decodes `path`.
pub fn from_file<T: DeserializeOwned>(path: &Path) -> Result<T, YamlError> {
    parse_file(path)?.decode()
}

/// Nesting followed before a document is refused: far deeper than any trail, tool or app, and shallow
/// enough that nothing recursive over the result (checks, decoding, drop) can run out of stack.
pub const MAX_DEPTH: usize = 128;

/// A scalar's value; its text is moved, not copied.
fn scalar(s: Scalar<'_>) -> Option<Value> {
    Some(match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(b),
        Scalar::Integer(i) => Value::from(i),
        Scalar::FloatingPoint(f) => Value::Number(serde_json::Number::from_f64(f.into_inner())?),
        Scalar::String(s) => Value::String(s.into_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Conf {
        #[allow(dead_code)]
        name: String,
        #[serde(default)]
        #[allow(dead_code)]
        items: Vec<Item>,
    }
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        #[allow(dead_code)]
        text: String,
    }

    fn file() -> PathBuf {
        PathBuf::from("x.yaml")
    }

    #[test]
    fn quote_style_is_kept() {
        let d = parse("a: '12345678'\nb: 12345678\nc: 'true'\nd: true\ne: \"1.5\"\n", &file()).unwrap();
        assert_eq!(d.value["a"], Value::String("12345678".into()));
        assert_eq!(d.value["b"], Value::from(12345678));
        assert_eq!(d.value["c"], Value::String("true".into()));
        assert_eq!(d.value["d"], Value::Bool(true));
        assert_eq!(d.value["e"], Value::String("1.5".into()));
    }

    /// An error the parser finds at the end of the stream (an unclosed flow collection or quote)
    /// points at the end of the last line with something on it, with that line shown; an error
    /// inside the text keeps its own place (the control).
    #[test]
    fn an_error_at_the_end_of_the_stream_shows_the_last_line() {
        for text in [
            "id: x\ntarget:\n  app_ids: [com.example\n",
            "id: x\ntarget:\n  app_ids: [com.example\n\n  \n",
            "id: x\ntarget:\n  app_ids: [com.example",
        ] {
            let e = parse(text, &file()).unwrap_err();
            assert_eq!(e.pos, Pos { line: 3, col: 24 }, "{text:?}: {e}");
            assert_eq!(e.source_line, "  app_ids: [com.example", "{text:?}");
        }
        let e = parse("id: x\ntarget: {a: 1\n", &file()).unwrap_err();
        assert_eq!((e.pos.line, e.source_line.as_str()), (2, "target: {a: 1"), "{e}");
        // Control: an error inside the text is where the parser says.
        let e = parse("id: x\nfoo: \"abc\nbar: 1\n", &file()).unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 6 }, "{e}");
        // Nothing to point at: the position stays.
        assert_eq!(within("", Pos { line: 1, col: 1 }), Pos { line: 1, col: 1 });
    }

    #[test]
    fn unknown_key_points_at_the_key_with_a_suggestion() {
        let e = from_str::<Conf>("name: x\nitems:\n  - text: a\n  - txet: b\n", &file()).unwrap_err();
        assert_eq!(e.pos, Pos { line: 4, col: 5 });
        assert!(e.message.contains("did you mean `text`"), "{}", e.message);
        let shown = e.to_string();
        assert!(shown.starts_with("x.yaml:4:5: unknown key `items[1].txet`"), "{shown}");
        assert!(
            shown.contains("4 |   - txet: b") && shown.ends_with("|     ^"),
            "{shown}"
        );
    }

    #[test]
    fn a_valid_document_decodes() {
        assert!(from_str::<Conf>("name: x\nitems:\n  - text: a\n", &file()).is_ok());
    }

    #[test]
    fn wrong_type_points_at_the_value() {
        let e = from_str::<Conf>("name: x\nitems:\n  - text: [1]\n", &file()).unwrap_err();
        assert_eq!(e.pos, Pos { line: 3, col: 5 });
        assert!(e.message.contains("items[0].text"), "{}", e.message);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("a: b\n  c: d\n", &file()).unwrap_err();
        assert_eq!(e.pos.line, 2);
        let e = parse("a: [1, 2\n", &file()).unwrap_err();
        // The flow sequence opened on line 1 never closes: the parser notices at the end of input,
        // which is shown as the end of the last line.
        assert_eq!(e.pos, Pos { line: 1, col: 9 });
    }

    #[test]
    fn paths_with_stray_brackets_and_wide_characters_never_slice_inside_a_character() {
        // Error paths are built from a document's own keys, so a key like `a[]]` or `x[1]é]` reaches
        // the path splitter; it once sliced at `[1..0]` or inside `é` and panicked.
        let doc = parse("'a[]]': 1\n'x[1]é]': [2]\nl:\n  - [3, 4]\n", &file()).expect("parses");
        for path in [
            "a[]]", "x[1]é]", "x[1]é]]", "l[0]]é", "[", "]", "l[", "é[é]", "l[0][1]]",
        ] {
            let _ = doc.position(path);
            let _ = doc.value_position(path);
            let _ = doc.children(path);
        }
        // Keys holding brackets are found as the keys they are.
        assert_eq!(doc.position("a[]]"), Pos { line: 1, col: 1 });
        assert_eq!(doc.value_position("x[1]é]"), Pos { line: 2, col: 11 });
        assert_eq!(doc.value_position("x[1]é][0]"), Pos { line: 2, col: 12 });
        // Positive control: well-formed indices still walk into sequences.
        assert_eq!(doc.value_position("l[0][1]"), Pos { line: 4, col: 9 });
        assert_eq!(doc.value_position("l[0]"), Pos { line: 4, col: 5 });
    }

    #[test]
    fn parent_paths() {
        assert_eq!(parent_path("a.b[2]").as_deref(), Some("a.b"));
        assert_eq!(parent_path("a.b").as_deref(), Some("a"));
        assert_eq!(parent_path("a").as_deref(), Some(""));
        assert_eq!(parent_path(""), None);
    }

    #[test]
    fn nesting_is_bounded_where_it_happens_and_aliases_are_refused_before_expansion() {
        let deep = format!("tools:\n  {}1\n", "- ".repeat(8000));
        let e = parse(&deep, &file()).expect_err("too deep");
        assert!(e.message.contains("nested more than 128 levels"), "{}", e.message);
        assert_eq!(e.pos.line, 2);
        let flow = format!("a: {}{}\n", "[".repeat(8000), "]".repeat(8000));
        assert!(parse(&flow, &file()).is_err(), "deep flow nesting is refused too");
        // A billion-laughs shape: refused at the first alias, with its position.
        let anchor = format!("[{}1]", "1,".repeat(5000));
        let laughs = format!("a: &a {anchor}\nb: [{}]\n", vec!["*a"; 5000].join(","));
        let e = parse(&laughs, &file()).expect_err("aliases");
        assert_eq!((e.pos.line, e.message.as_str()), (2, "YAML aliases are not supported"));
        // Positive controls: nesting up to the limit, and an anchor alone, read fine.
        let ok = format!("tools:\n  {}1\n", "- ".repeat(100));
        assert!(parse(&ok, &file()).is_ok());
        assert!(parse("a: &x 1\nb: 2\n", &file()).is_ok());
    }

    #[test]
    fn keys_positions_and_documents_read_as_before() {
        let doc = parse("a:\n  - x: 1\n    'y': '2'\n  - [3, 4]\n", &file()).expect("parses");
        assert_eq!(doc.value, serde_json::json!({ "a": [{ "x": 1, "y": "2" }, [3, 4]] }));
        assert_eq!(doc.position("a[0].y"), Pos { line: 3, col: 5 });
        assert_eq!(doc.value_position("a[0].y"), Pos { line: 3, col: 10 });
        assert!(
            parse("a: 1\n---\nb: 2\n", &file())
                .expect_err("two")
                .message
                .contains("several")
        );
        assert!(
            parse("? [a]\n: 1\n", &file())
                .expect_err("key")
                .message
                .contains("plain name")
        );
        assert_eq!(parse("", &file()).expect("empty").value, Value::Null);
    }
}
