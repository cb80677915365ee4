//! The session's memory, as the original keeps it: `rememberText`/`rememberNumber` store a value
//! under a name, and a later call's arguments use it as `{{name}}`, `${name}` or
//! `{{memory.name}}`. Tokens resolve when the call executes (the step keeps the token, so a
//! recording replays with the values of its own run), in the one expansion pass of `placeholder`.

use std::collections::BTreeMap;

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
}

/// A variable name: what `remember*` accepts and tokens may name (`memory.` prefix allowed).
pub(crate) fn valid_name(name: &str) -> bool {
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
