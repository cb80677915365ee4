//! The original's Android built-ins that need the device's shell or its extras (`scrollUntilTextIsVisible`,
//! `hideKeyboard`, `openUrl`, `android_*`, `mobile_*`, `networkConnection`).

use super::BuiltinEntry;

/// Every built-in of this module.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![]
}
