//! The typed surface: everything that turns JSON Schema (the project's one type model) into checks
//! and TypeScript. Built-in tools and host functions get their schemas from schemars, scripted tools
//! from the swc analyzer; this module reads both dialects the same way.
//!
//! - [`value_check`]: a value against a schema (the dispatcher's argument check, the native type
//!   gate's);
//! - the schema readers the gates (`trailblaze-gates`: the `.d.ts`, `check`) and the agent share.

pub mod value_check;

use serde_json::Value;

use crate::tool::{OutputField, SchemaField, TextField};

pub use value_check::check_value;

/// One entry of the surface: a tool or a host function with its argument and result schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceEntry {
    pub name: String,
    pub description: TextField,
    /// JSON Schema of the arguments (an object schema). A built-in's is made when first read, so a
    /// surface costs nothing until a schema is read: a check reads the schemas of the tools its
    /// trails call, `dts` all of them.
    pub args: SchemaField,
    /// JSON Schema of the result; `None` when it is not known (rendered `unknown`).
    pub result: OutputField,
}

/// The SDK's selector type: a `$ref` to a definition of this name renders by name and is never
/// inlined, so the `.d.ts` and `selectors.ts` cannot drift apart.
pub use crate::script::analyze::SELECTOR_TYPE;

/// Where `$ref`s resolve while walking a schema.
///
/// `current` is the document the schema being walked belongs to (a `#` reference means its root),
/// `local` the schema the walk started from, `shared` an optional second document (such as the
/// selector grammar) that scripted tools' schemas point into without carrying `$defs` themselves.
/// `shared` may be a whole schema document (with `$defs` / `definitions`, possibly a root `title`)
/// or a bare map from definition name to schema.
#[derive(Debug, Clone, Copy)]
pub struct Defs<'a> {
    current: &'a Value,
    local: &'a Value,
    shared: Option<&'a Value>,
}

impl<'a> Defs<'a> {
    pub fn new(local: &'a Value, shared: Option<&'a Value>) -> Self {
        Defs {
            current: local,
            local,
            shared,
        }
    }

    /// The schema a `$ref` points at, and the scope to keep walking it in. `None` when it does not
    /// resolve (including remote references, which this project never emits).
    pub fn resolve(&self, reference: &str) -> Option<(&'a Value, Defs<'a>)> {
        let pointer = reference.strip_prefix('#')?;
        let within = |doc: &'a Value| Defs { current: doc, ..*self };
        for doc in [self.current, self.local].into_iter().chain(self.shared) {
            if let Some(found) = json_pointer(doc, pointer) {
                return Some((found, within(doc)));
            }
        }
        let shared = self.shared?;
        let name = def_name(reference)?;
        if let Some(found) = shared.get(name).filter(|_| !is_document(shared)) {
            return Some((found, *self));
        }
        // A shared document whose root is the definition itself (`schema_for!(TrailblazeNodeSelector)`).
        if shared.get("title").and_then(Value::as_str) == Some(name) {
            return Some((shared, within(shared)));
        }
        None
    }

    /// The definition name a `$ref` names: the last pointer segment, or the document's title for `#`.
    pub fn ref_name<'r>(&self, reference: &'r str) -> Option<&'r str>
    where
        'a: 'r,
    {
        if reference == "#" {
            return self.current.get("title").and_then(Value::as_str);
        }
        def_name(reference)
    }
}

/// The definition name at the end of `#/$defs/<name>` or `#/definitions/<name>`.
pub fn def_name(reference: &str) -> Option<&str> {
    let rest = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))?;
    (!rest.contains('/')).then_some(rest)
}

fn is_document(v: &Value) -> bool {
    v.get("$defs").is_some() || v.get("definitions").is_some() || v.get("type").is_some()
}

/// RFC 6901 lookup of a URI-fragment pointer (`""` is the root). Percent-encoding is not decoded:
/// schemars and the analyzer only emit plain names.
fn json_pointer<'v>(doc: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let mut at = doc;
    for raw in pointer.strip_prefix('/')?.split('/') {
        // Most segments escape nothing: unescape (and allocate) only those that do.
        let seg = if raw.contains('~') {
            std::borrow::Cow::Owned(raw.replace("~1", "/").replace("~0", "~"))
        } else {
            std::borrow::Cow::Borrowed(raw)
        };
        at = match at {
            Value::Object(map) => map.get(seg.as_ref())?,
            Value::Array(items) => items.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Whether `name` can be written bare as a TypeScript property key (reserved words are fine there).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// JSON text safe to embed in TypeScript source on one line. serde_json leaves U+2028 and U+2029
/// raw, which JavaScript accepts in strings but TypeScript counts as line breaks: that would
/// shift every line number after it.
pub fn json_for_ts(v: &Value) -> String {
    let text = v.to_string();
    if text.contains(['\u{2028}', '\u{2029}']) {
        text.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn refs_resolve_locally_then_in_the_shared_document() {
        let local = json!({"$defs": {"A": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/B"}}});
        let shared_doc = json!({"title": "B", "type": "object", "$defs": {"C": {"type": "integer"}}});
        let shared_map = json!({"B": {"type": "boolean"}});
        let d = Defs::new(&local, Some(&shared_doc));
        assert_eq!(d.resolve("#/$defs/A").map(|r| r.0), Some(&json!({"type": "string"})));
        assert_eq!(d.resolve("#/$defs/C").map(|r| r.0), Some(&json!({"type": "integer"})));
        // Inside the shared document `#` means its own root.
        let (b, inner) = d.resolve("#/$defs/B").unwrap();
        assert_eq!(b, &shared_doc);
        assert_eq!(inner.resolve("#").map(|r| r.0), Some(&shared_doc));
        let d = Defs::new(&local, Some(&shared_map));
        assert_eq!(d.resolve("#/$defs/B").map(|r| r.0), Some(&json!({"type": "boolean"})));
        assert!(d.resolve("#/$defs/Nope").is_none());
        assert!(d.resolve("https://example.com/s.json").is_none());
    }

    #[test]
    fn identifiers_and_line_safe_json() {
        assert!(is_identifier("type") && is_identifier("$x") && is_identifier("demo_signIn"));
        assert!(!is_identifier("demo-signIn") && !is_identifier("1a") && !is_identifier(""));
        assert_eq!(json_for_ts(&json!("a\u{2028}b")), "\"a\\u2028b\"");
    }
}
