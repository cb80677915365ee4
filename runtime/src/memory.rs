//! The session's memory, as the original keeps it: `rememberText`/`rememberNumber` store a value
//! under a name, and a later call's arguments use it as `{{name}}`, `${name}` or
//! `{{memory.name}}`. Tokens resolve when the call executes (the step keeps the token, so a
//! recording replays with the values of its own run). An unknown token stays as written, so a
//! typo shows as `{{typo}}` in what was typed or asserted instead of an empty string.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

/// At most this many values: a loop that remembers under fresh names cannot grow without bound.
pub const MAX_VARIABLES: usize = 10_000;
/// A remembered value is cut to this many bytes (on a char boundary).
pub const MAX_VALUE_BYTES: usize = 64 << 10;

#[derive(Debug, Default, Clone)]
pub struct Memory {
    values: BTreeMap<String, String>,
}

impl Memory {
    /// Stores `value` under `name`, replacing what was there.
    pub fn remember(&mut self, name: &str, value: &str) -> Result<(), String> {
        if !valid_name(name) {
            return Err("`variable` must be a name of letters, digits, `_`, `-` or `.`".into());
        }
        if self.values.len() >= MAX_VARIABLES && !self.values.contains_key(name) {
            return Err(format!("the session already remembers {MAX_VARIABLES} values"));
        }
        let mut end = value.len().min(MAX_VALUE_BYTES);
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        self.values.insert(name.to_string(), value[..end].to_string());
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        let bare = name.strip_prefix("memory.").unwrap_or(name);
        self.values.get(bare).map(String::as_str)
    }

    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// `text` with every known token replaced by its value, in one pass: a value that holds a token
    /// is not expanded again. `{{secret:…}}` and `{{args.…}}` are other placeholders and stay.
    pub fn interpolate<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.values.is_empty() || !(text.contains("{{") || text.contains("${")) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((start, open, close)) = next_token(rest) {
            let after = &rest[start + open.len()..];
            let Some(end) = after.find(close) else { break };
            let name = &after[..end];
            out.push_str(&rest[..start]);
            match self.get(name).filter(|_| valid_name(name)) {
                Some(value) => out.push_str(value),
                None => {
                    out.push_str(open);
                    out.push_str(name);
                    out.push_str(close);
                }
            }
            rest = &after[end + close.len()..];
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// Every string of `args`, interpolated; `None` when nothing changed (the common case).
    pub fn interpolate_value(&self, args: &Value) -> Option<Value> {
        if self.values.is_empty() {
            return None;
        }
        let mut changed = false;
        let out = self.walk(args, &mut changed);
        changed.then_some(out)
    }

    fn walk(&self, v: &Value, changed: &mut bool) -> Value {
        match v {
            Value::String(s) => match self.interpolate(s) {
                Cow::Owned(o) if o != *s => {
                    *changed = true;
                    Value::String(o)
                }
                _ => v.clone(),
            },
            Value::Array(a) => Value::Array(a.iter().map(|x| self.walk(x, changed)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), self.walk(x, changed))).collect()),
            other => other.clone(),
        }
    }
}

/// The earliest `{{` or `${` in `text`: its offset and its delimiters.
fn next_token(text: &str) -> Option<(usize, &'static str, &'static str)> {
    let a = text.find("{{").map(|i| (i, "{{", "}}"));
    let b = text.find("${").map(|i| (i, "${", "}"));
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// A variable name: what `remember*` accepts and tokens may name (`memory.` prefix allowed).
fn valid_name(name: &str) -> bool {
    let bare = name.strip_prefix("memory.").unwrap_or(name);
    !bare.is_empty()
        && bare.len() <= 128
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Memory {
        let mut m = Memory::default();
        m.remember("total", "12.50").unwrap();
        m.remember("name", "{{total}}").unwrap();
        m
    }

    #[test]
    fn tokens_of_every_spelling_resolve_and_unknown_ones_stay() {
        let m = memory();
        assert_eq!(
            m.interpolate("{{total}} / ${total} / {{memory.total}}"),
            "12.50 / 12.50 / 12.50"
        );
        assert_eq!(m.interpolate("{{typo}} and ${typo}"), "{{typo}} and ${typo}");
        // Other placeholders are not memory's.
        assert_eq!(
            m.interpolate("{{secret:PIN}} {{args.user}}"),
            "{{secret:PIN}} {{args.user}}"
        );
        // One pass: a value holding a token is not expanded again.
        assert_eq!(m.interpolate("{{name}}"), "{{total}}");
        assert_eq!(m.interpolate("{{total"), "{{total");
        // Control: no memory, nothing changes and nothing is copied.
        assert!(matches!(Memory::default().interpolate("{{total}}"), Cow::Borrowed(_)));
    }

    #[test]
    fn values_interpolate_at_every_depth_and_report_no_change() {
        let m = memory();
        let args = serde_json::json!({"a": ["x {{total}}"], "b": {"c": "${total}"}, "n": 3});
        let out = m.interpolate_value(&args).unwrap();
        assert_eq!(out, serde_json::json!({"a": ["x 12.50"], "b": {"c": "12.50"}, "n": 3}));
        assert!(m.interpolate_value(&serde_json::json!({"a": "plain"})).is_none());
    }

    #[test]
    fn names_and_sizes_are_bounded() {
        let mut m = Memory::default();
        assert!(m.remember("has space", "v").is_err());
        assert!(m.remember("", "v").is_err());
        m.remember("big", &"é".repeat(MAX_VALUE_BYTES)).unwrap();
        assert!(m.get("big").unwrap().len() <= MAX_VALUE_BYTES);
        for i in 0..MAX_VARIABLES {
            m.remember(&format!("v{i}"), "x").ok();
        }
        assert!(m.remember("one_more", "x").is_err());
        // Replacing a known name is always allowed.
        assert!(m.remember("v1", "y").is_ok());
    }
}
