//! Assertions, waits and queries over the screen: read-only tools that never touch the device.

use super::BuiltinEntry;

/// Every built-in of this module.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![]
}
