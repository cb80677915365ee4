//! The quick reader's scalars: plain ones typed as saphyr types them, and a double-quoted one's
//! escapes.

use std::borrow::Cow;

use saphyr::Scalar;
use serde_json::Value;

use super::super::{map_key, scalar};

/// A plain scalar's value, typed by YAML's core schema as saphyr types it.
pub(super) fn plain(s: &str) -> Option<Value> {
    if surely_text(s) {
        return Some(Value::String(s.to_string()));
    }
    scalar(Scalar::parse_from_cow(Cow::Borrowed(s)))
}

/// A plain mapping key's name.
pub(super) fn plain_key(s: &str) -> Option<String> {
    if surely_text(s) {
        return Some(s.to_string());
    }
    map_key(Scalar::parse_from_cow(Cow::Borrowed(s)))
}

/// A plain scalar YAML's core schema can only read as text: it starts with a letter and is not
/// one of the spellings of null, true or false (a number starts with a digit, a sign or a dot).
/// Most keys and values of a trail are, and are then taken without trying each other type.
pub(super) fn surely_text(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && !matches!(
            s,
            "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        )
}

/// The character a `\` escape in a double-quoted scalar stands for, and the bytes it used.
pub(super) fn escape(rest: &[u8]) -> Option<(char, usize)> {
    let hex = |n: usize| -> Option<(char, usize)> {
        let digits = std::str::from_utf8(rest.get(1..=n)?).ok()?;
        if !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
            return None;
        }
        Some((char::from_u32(u32::from_str_radix(digits, 16).ok()?)?, n + 1))
    };
    let c = match *rest.first()? {
        b'\\' => '\\',
        b'"' => '"',
        b'/' => '/',
        b' ' => ' ',
        b'n' => '\n',
        b't' => '\t',
        b'r' => '\r',
        b'0' => '\0',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b'e' => '\u{1b}',
        b'f' => '\u{c}',
        b'v' => '\u{b}',
        b'x' => return hex(2),
        b'u' => return hex(4),
        b'U' => return hex(8),
        _ => return None,
    };
    Some((c, 1))
}
