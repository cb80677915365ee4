//! Host calls straight on QuickJS values (feature `quickjs`): arguments decode from the script's
//! object and the result is built as a script object, with no `serde_json::Value` in between. The
//! errors are those of the JSON path: a path and an expected type, never a value.

pub mod de;
pub mod ser;

#[cfg(test)]
mod tests;
