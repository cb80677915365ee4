//! The session's memory: `remember*` store values by name, later arguments use them as `{{name}}`,
//! and the `assert*` tools compare them.

use super::BuiltinEntry;

/// Every built-in of this module.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![]
}
