//! What the gate reports: a finding, its kind and the path it is at (never the value).

use super::*;

/// One problem with a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Where: `nodeSelector.androidAccessibility.textRegx`, `steps[2].tool`; `""` for the args object.
    /// For a missing or unknown argument this is the argument's own path.
    pub path: String,
    pub message: String,
    /// What kind of problem, so the dispatcher can word it exactly as a built-in's strict decode does.
    pub kind: FindingKind,
}

/// The kinds of [`Finding`] that the strict decode of built-in arguments also reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingKind {
    /// `parent` is the path of the object holding the key.
    UnknownKey {
        parent: String,
        key: String,
        expected: Vec<String>,
    },
    MissingKey {
        parent: String,
        key: String,
    },
    WrongType {
        expected: String,
        found: &'static str,
    },
    Other,
}

impl Finding {
    /// The same problem as the strict decode of a built-in would word it: unknown key with its path
    /// and the nearest name, missing required key, wrong type with the path and the expected type.
    pub fn to_decode_error(&self) -> trailblaze_host_functions::decode::DecodeError {
        use trailblaze_host_functions::decode::{DecodeError, DecodeErrorKind};
        let (path, kind) = match &self.kind {
            FindingKind::UnknownKey { parent, key, expected } => (
                parent.clone(),
                DecodeErrorKind::UnknownKey {
                    key: key.clone(),
                    expected: expected.clone(),
                },
            ),
            FindingKind::MissingKey { parent, key } => {
                (parent.clone(), DecodeErrorKind::MissingKey { key: key.clone() })
            }
            FindingKind::WrongType { expected, found } => (
                self.path.clone(),
                DecodeErrorKind::WrongType {
                    expected: expected.clone(),
                    found,
                },
            ),
            FindingKind::Other => (self.path.clone(), DecodeErrorKind::Other(self.message.clone())),
        };
        DecodeError { path, kind }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A step of the path being checked, borrowed from the value or the schema (no allocation per key).
#[derive(Debug, Clone, Copy)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

pub(super) fn render_path(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if crate::surface::is_identifier(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Key(k) => {
                let _ = write!(s, "[{}]", Value::String(short(k)));
            }
            Seg::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
    s
}

pub(super) fn short(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

pub(super) fn push(out: &mut Vec<Finding>, path: &[Seg<'_>], message: String) {
    push_kind(out, path, message, FindingKind::Other);
}

pub(super) fn push_kind(out: &mut Vec<Finding>, path: &[Seg<'_>], message: String, kind: FindingKind) {
    out.push(Finding {
        path: render_path(path),
        message,
        kind,
    });
}
