//! Strict argument decoding shared by tools and host functions.
//!
//! Arguments arrive as `serde_json::Value` from every way in (trails, scripts, MCP, the CLI). They are
//! decoded into the tool's or host function's own Rust type with unknown keys denied at every level.
//! An error names the path and what was expected, and never the value: arguments may carry secrets.

use std::fmt;

use serde::de::{self, DeserializeOwned, Expected, Unexpected};

/// Why an argument did not decode. `path` is where (`account`, `filters[2].name`); the message never
/// holds a value from the arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct DecodeError {
    pub path: String,
    pub kind: DecodeErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A key the type does not declare. The key itself is a name, not a value, so it is shown.
    UnknownKey {
        key: String,
        expected: Vec<String>,
    },
    MissingKey {
        key: String,
    },
    /// The value had the wrong JSON type: `found` is the kind (`a string`), never the value.
    WrongType {
        expected: String,
        found: &'static str,
    },
    /// The value had the right type but is not allowed (an enum name, a range).
    InvalidValue {
        expected: String,
    },
    Other(String),
}

impl DecodeError {
    fn render(&self) -> String {
        let at = |p: &str| {
            if p.is_empty() {
                "the arguments".to_string()
            } else {
                format!("`{p}`")
            }
        };
        match &self.kind {
            DecodeErrorKind::UnknownKey { key, expected } => {
                let full = join_path(&self.path, key);
                let mut s = format!("unknown key `{full}`");
                s.push_str(&did_you_mean(nearest(key, expected).as_slice()));
                if !expected.is_empty() {
                    s.push_str(&format!(" (expected one of: {})", expected.join(", ")));
                }
                s
            }
            DecodeErrorKind::MissingKey { key } => {
                format!("missing required key `{}`", join_path(&self.path, key))
            }
            DecodeErrorKind::WrongType { expected, found } => {
                format!("{}: expected {expected}, found {found}", at(&self.path))
            }
            DecodeErrorKind::InvalidValue { expected } => {
                format!("{}: invalid value, expected {expected}", at(&self.path))
            }
            DecodeErrorKind::Other(msg) => format!("{}: {msg}", at(&self.path)),
        }
    }

    /// The path of the offending key or value, including an unknown or missing key itself.
    pub fn full_path(&self) -> String {
        match &self.kind {
            DecodeErrorKind::UnknownKey { key, .. } | DecodeErrorKind::MissingKey { key } => join_path(&self.path, key),
            _ => self.path.clone(),
        }
    }
}

fn join_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `; did you mean `x`?` or `; did you mean one of: `x`, `y`?` (nothing for no names): the one
/// wording of a suggestion, wherever a name or key is not found.
pub fn did_you_mean<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean `{}`?", one.as_ref()),
        many => format!(
            "; did you mean one of: {}?",
            many.iter()
                .map(|n| format!("`{}`", n.as_ref()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The candidate closest to `word`, if any is close enough to be a plausible typo.
pub fn nearest<'a, S: AsRef<str>>(word: &str, candidates: &'a [S]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| {
            (
                c.as_ref(),
                strsim::jaro_winkler(&word.to_lowercase(), &c.as_ref().to_lowercase()),
            )
        })
        .filter(|(_, score)| *score >= 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
}

/// Names from `candidates` near `word`, best first, at most `limit`.
pub fn nearest_names<S: AsRef<str>>(word: &str, candidates: &[S], limit: usize) -> Vec<String> {
    let lower = word.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| {
            let c = c.as_ref();
            let mut score = strsim::jaro_winkler(&lower, &c.to_lowercase());
            if c.to_lowercase().contains(&lower) || lower.contains(&c.to_lowercase()) {
                score += 0.2;
            }
            (score, c)
        })
        .filter(|(s, _)| *s >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(limit).map(|(_, c)| c.to_string()).collect()
}

/// The error type handed to serde while decoding: it records what went wrong without the value.
#[derive(Debug)]
pub(crate) struct RawError(DecodeErrorKind);

impl fmt::Display for RawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for RawError {}

/// The error of a first, quick pass: only that it failed (no message is made, and results stay
/// small: a `Result` of `RawError` was moved around in every step of a decoding). A failure
/// decodes again with [`RawError`] and paths to say what and where.
#[derive(Debug)]
pub(crate) struct Failed;

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("does not decode")
    }
}

impl std::error::Error for Failed {}

impl de::Error for Failed {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Failed
    }
}

fn kind_of(unexp: &Unexpected<'_>) -> &'static str {
    match unexp {
        Unexpected::Bool(_) => "a boolean",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) => "an integer",
        Unexpected::Float(_) => "a number",
        Unexpected::Char(_) | Unexpected::Str(_) => "a string",
        Unexpected::Bytes(_) => "bytes",
        Unexpected::Unit | Unexpected::Option => "null",
        Unexpected::Seq => "an array",
        Unexpected::Map => "an object",
        Unexpected::Enum | Unexpected::UnitVariant => "an enum value",
        Unexpected::NewtypeStruct | Unexpected::NewtypeVariant => "a value",
        Unexpected::TupleVariant | Unexpected::StructVariant => "an object",
        Unexpected::Other(_) => "a value",
    }
}

impl de::Error for RawError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        // Only reached from Deserialize impls' own messages (ours or serde's), never with a raw value
        // from the input in the paths serde derives.
        RawError(DecodeErrorKind::Other(msg.to_string()))
    }
    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        RawError(DecodeErrorKind::WrongType {
            expected: exp.to_string(),
            found: kind_of(&unexp),
        })
    }
    fn invalid_value(_unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        RawError(DecodeErrorKind::InvalidValue {
            expected: exp.to_string(),
        })
    }
    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        RawError(DecodeErrorKind::Other(format!("{len} elements, expected {exp}")))
    }
    fn unknown_variant(_variant: &str, expected: &'static [&'static str]) -> Self {
        let names: Vec<String> = expected.iter().map(|s| format!("`{s}`")).collect();
        RawError(DecodeErrorKind::InvalidValue {
            expected: format!("one of {}", names.join(", ")),
        })
    }
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        RawError(DecodeErrorKind::UnknownKey {
            key: field.to_string(),
            expected: expected.iter().map(|s| s.to_string()).collect(),
        })
    }
    fn missing_field(field: &'static str) -> Self {
        RawError(DecodeErrorKind::MissingKey { key: field.to_string() })
    }
}

fn render_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Decodes `value` into `T` strictly. `T` should deny unknown fields (`#[serde(deny_unknown_fields)]`)
/// on every struct; the catalog tests hold every tool and host function to that.
pub fn decode<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, DecodeError> {
    // A deserializer generic over its error type lets `RawError` drop values. The first pass runs
    // without path tracking or messages (this is a host call's hot path); only a failure pays for
    // the second pass that says what failed and where.
    if let Ok(v) = T::deserialize(crate::value_de::ValueDe::<Failed>::new(value)) {
        return Ok(v);
    }
    let de = crate::value_de::ValueDe::<RawError>::new(value);
    serde_path_to_error::deserialize(de).map_err(located)
}

/// A decoding failure with where it happened.
pub(crate) fn located(e: serde_path_to_error::Error<RawError>) -> DecodeError {
    let path = render_path(e.path());
    let kind = e.into_inner().0;
    // serde_path_to_error reports an unknown key at the key itself; keep the parent as `path`.
    let path = match &kind {
        DecodeErrorKind::UnknownKey { key, .. } => strip_last(&path, key),
        _ => path,
    };
    DecodeError { path, kind }
}

fn strip_last(path: &str, key: &str) -> String {
    if path == key {
        String::new()
    } else if let Some(parent) = path.strip_suffix(&format!(".{key}")) {
        parent.to_string()
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        count: u32,
        #[serde(default)]
        mode: Option<Mode>,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    enum Mode {
        Fast,
        Slow,
    }

    const CANARY: &str = "CANARY-7f3a9";

    #[test]
    fn a_correct_value_decodes() {
        let v: Outer = decode(&json!({"name": CANARY, "inner": {"count": 3, "mode": "Fast"}})).unwrap();
        assert_eq!(v.inner.unwrap().count, 3);
        assert_eq!(v.name, CANARY);
    }

    #[test]
    fn unknown_key_names_key_and_path_at_depth() {
        let e =
            decode::<Outer>(&json!({"name": "x", "list": [{"count": 1}, {"count": 2, "cuont": CANARY}]})).unwrap_err();
        assert_eq!(e.full_path(), "list[1].cuont");
        let msg = e.to_string();
        assert!(msg.contains("unknown key `list[1].cuont`"), "{msg}");
        assert!(msg.contains("did you mean `count`"), "{msg}");
        assert!(!msg.contains(CANARY), "{msg}");
    }

    #[test]
    fn unknown_key_at_top_level() {
        let e = decode::<Outer>(&json!({"name": "x", "nmae": CANARY})).unwrap_err();
        assert_eq!(e.full_path(), "nmae");
        assert!(!e.to_string().contains(CANARY));
    }

    #[test]
    fn wrong_type_names_path_and_type_not_value() {
        let e = decode::<Outer>(&json!({"name": "x", "inner": {"count": CANARY}})).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.path, "inner.count");
        assert!(msg.contains("expected u32") && msg.contains("found a string"), "{msg}");
        assert!(!msg.contains(CANARY), "{msg}");
    }

    #[test]
    fn bad_enum_value_does_not_echo_it() {
        let e = decode::<Outer>(&json!({"name": "x", "inner": {"count": 1, "mode": CANARY}})).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("inner.mode") && msg.contains("`Fast`"), "{msg}");
        assert!(!msg.contains(CANARY), "{msg}");
    }

    #[test]
    fn missing_key_is_named() {
        let e = decode::<Outer>(&json!({"inner": {"count": 1}})).unwrap_err();
        assert_eq!(e.to_string(), "missing required key `name`");
    }

    #[test]
    fn nearest_names_ranks_typos_first() {
        let names = ["tapOnPoint", "inputText", "pressKey", "launchApp"];
        assert_eq!(nearest_names("inptText", &names, 3)[0], "inputText");
        assert!(nearest_names("zzzzzz", &names, 3).is_empty());
    }
}
