//! YAML with positions: every file trailblaze reads (trails, trailmaps, app definitions, tool and host
//! descriptors) goes through here, so every error can say `file:line:col`.
//!
//! saphyr keeps each node's span and each scalar's quote style: `'12345678'` stays a string while
//! `12345678` is a number. The tree becomes a `serde_json::Value` plus a table from path (`a.b[0].c`,
//! the same form `decode` reports) to position, and is then decoded strictly.

use std::fmt;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde::de::DeserializeOwned;
use serde_json::Value;
use trailblaze_host_functions::decode::{self, DecodeError, DecodeErrorKind};

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

/// A parsed YAML document: its value and where each part of it stands in the file.
#[derive(Debug, Clone)]
pub struct Document {
    pub file: PathBuf,
    pub text: String,
    pub value: Value,
    /// Where each node is, shaped like the value: walked on demand, so parsing builds no path strings.
    tree: PosNode,
}

/// A node's position, the position of the key that holds it (in a mapping), and its children.
#[derive(Debug, Clone, Default)]
struct PosNode {
    pos: Pos,
    key: Option<Pos>,
    items: Vec<PosNode>,
    entries: Vec<(String, PosNode)>,
}

impl Default for Pos {
    fn default() -> Self {
        Pos { line: 1, col: 1 }
    }
}

/// One step of a path: `a.b[2]` is `Key(a)`, `Key(b)`, `Index(2)`.
enum Seg<'p> {
    Key(&'p str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(end) = rest.find(']') {
            match rest[1..end].parse() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(&rest[1..end])),
            }
            rest = &rest[end + 1..];
        }
    }
    out
}

impl PosNode {
    /// The nodes along `path` as far as it goes (the root first).
    fn walk(&self, path: &str) -> (Vec<&PosNode>, bool) {
        let mut trail = vec![self];
        for seg in segments(path) {
            let at = trail[trail.len() - 1];
            let next = match seg {
                Seg::Key(k) => at.entries.iter().find(|(name, _)| name == k).map(|(_, n)| n),
                Seg::Index(i) => at.items.get(i),
            };
            match next {
                Some(n) => trail.push(n),
                None => return (trail, false),
            }
        }
        (trail, true)
    }
}

impl Document {
    /// Where the value at `path` starts, or the nearest enclosing value that has a position.
    pub fn position(&self, path: &str) -> Pos {
        let (trail, _) = self.tree.walk(path);
        let last = trail[trail.len() - 1];
        last.key.unwrap_or(last.pos)
    }

    /// Where the value (not its key) at `path` starts.
    pub fn value_position(&self, path: &str) -> Pos {
        match self.tree.walk(path) {
            (trail, true) => trail[trail.len() - 1].pos,
            _ => self.position(path),
        }
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
pub fn parse(text: &str, file: &Path) -> Result<Document, YamlError> {
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        let m = e.marker();
        YamlError::new(
            file,
            text,
            Pos {
                line: m.line(),
                col: m.col() + 1,
            },
            e.info().to_string(),
        )
    })?;
    if docs.len() > 1 {
        return Err(YamlError::new(
            file,
            text,
            Pos { line: 1, col: 1 },
            "expected one YAML document, found several",
        ));
    }
    let mut doc = Document {
        file: file.to_path_buf(),
        text: text.to_string(),
        value: Value::Null,
        tree: PosNode::default(),
    };
    if let Some(root) = docs.first() {
        let (value, tree) = convert(root, &doc)?;
        doc.value = value;
        doc.tree = tree;
    }
    Ok(doc)
}

/// Reads and parses `path`.
pub fn parse_file(path: &Path) -> Result<Document, YamlError> {
    let text = crate::files::read_text(path).map_err(|e| YamlError {
        file: path.to_path_buf(),
        pos: Pos { line: 1, col: 1 },
        message: format!("cannot read: {e}"),
        source_line: String::new(),
    })?;
    parse(&text, path)
}

/// Parses and strictly decodes `text`.
pub fn from_str<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, YamlError> {
    parse(text, file)?.decode()
}

/// Reads, parses and strictly decodes `path`.
pub fn from_file<T: DeserializeOwned>(path: &Path) -> Result<T, YamlError> {
    parse_file(path)?.decode()
}

fn pos_of(node: &MarkedYaml<'_>) -> Pos {
    Pos {
        line: node.span.start.line(),
        col: node.span.start.col() + 1,
    }
}

fn convert(node: &MarkedYaml<'_>, doc: &Document) -> Result<(Value, PosNode), YamlError> {
    let pos = pos_of(node);
    let mut tree = PosNode {
        pos,
        ..PosNode::default()
    };
    let err = |doc: &Document, msg: &str| YamlError::new(&doc.file, &doc.text, pos, msg);
    let value = match &node.data {
        YamlData::Value(s) => scalar(s).ok_or_else(|| err(doc, "a number that JSON cannot hold (NaN or infinity)"))?,
        YamlData::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let (v, t) = convert(item, doc)?;
                out.push(v);
                tree.items.push(t);
            }
            Value::Array(out)
        }
        YamlData::Mapping(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                let key = match &k.data {
                    YamlData::Value(Scalar::String(s)) => s.to_string(),
                    YamlData::Value(Scalar::Integer(i)) => i.to_string(),
                    YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
                    _ => {
                        return Err(YamlError::new(
                            &doc.file,
                            &doc.text,
                            pos_of(k),
                            "a mapping key must be a plain name",
                        ));
                    }
                };
                let (value, mut child) = convert(v, doc)?;
                child.key = Some(pos_of(k));
                tree.entries.push((key.clone(), child));
                out.insert(key, value);
            }
            Value::Object(out)
        }
        YamlData::Tagged(_, inner) => return convert(inner, doc),
        YamlData::Alias(_) => return Err(err(doc, "YAML aliases are not supported")),
        YamlData::Representation(..) | YamlData::BadValue => {
            return Err(err(doc, "a value that does not match its tag"));
        }
    };
    Ok((value, tree))
}

fn scalar(s: &Scalar<'_>) -> Option<Value> {
    Some(match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::from(*i),
        Scalar::FloatingPoint(f) => Value::Number(serde_json::Number::from_f64(f.into_inner())?),
        Scalar::String(s) => Value::String(s.to_string()),
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
        assert!(e.pos.line >= 1);
    }

    #[test]
    fn parent_paths() {
        assert_eq!(parent_path("a.b[2]").as_deref(), Some("a.b"));
        assert_eq!(parent_path("a.b").as_deref(), Some("a"));
        assert_eq!(parent_path("a").as_deref(), Some(""));
        assert_eq!(parent_path(""), None);
    }
}
