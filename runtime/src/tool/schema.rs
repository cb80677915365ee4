//! JSON Schemas of Rust types as values, in the keyword order schemars writes them.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// Keywords a schema object starts and ends with when schemars serializes it; the rest keep the
/// order they were generated in.
const FIRST: [&str; 7] = ["$id", "$schema", "title", "description", "type", "format", "properties"];
const LAST: [&str; 2] = ["$defs", "definitions"];

/// The JSON Schema of `T`, keywords ordered as `serde_json::to_value` of schemars' schema orders
/// them (`$schema`, `title`, `description`, `type`, ..., `$defs` last): what users read in `tools
/// --json` and the MCP tool list. Reordering the generated value in place, instead of serializing
/// it into a new one, took most of the cost out of building the built-in tools at each start.
pub fn of<T: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(T).to_value();
    order(&mut value, false);
    value
}

/// Orders a schema's keywords (`within` false) or, for an object of named subschemas
/// (`properties`, `$defs`, ...), each subschema's, recursively.
fn order(value: &mut Value, within: bool) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| order(item, false)),
        Value::Object(map) if within => map.values_mut().for_each(|v| order(v, false)),
        Value::Object(map) => {
            let mut first: [Option<(String, Value)>; FIRST.len()] = Default::default();
            let mut last: [Option<(String, Value)>; LAST.len()] = Default::default();
            let mut rest = Vec::new();
            for (key, mut v) in std::mem::take(map) {
                // Examples, defaults and custom keywords hold plain values, not schemas.
                if !(matches!(key.as_str(), "examples" | "default") || key.starts_with("x-")) {
                    let named = matches!(
                        key.as_str(),
                        "properties" | "patternProperties" | "dependentSchemas" | "$defs" | "definitions"
                    );
                    order(&mut v, named);
                }
                if let Some(i) = FIRST.iter().position(|k| *k == key) {
                    first[i] = Some((key, v));
                } else if let Some(i) = LAST.iter().position(|k| *k == key) {
                    last[i] = Some((key, v));
                } else {
                    rest.push((key, v));
                }
            }
            let ordered: Map<String, Value> = first
                .into_iter()
                .flatten()
                .chain(rest)
                .chain(last.into_iter().flatten())
                .collect();
            *map = ordered;
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What serializing schemars' own schema gives, as text (key order included).
    fn serialized<T: JsonSchema>() -> String {
        serde_json::to_value(schemars::schema_for!(T))
            .map(|v| v.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn the_order_is_schemars_own_for_every_built_in_tool() {
        // Every built-in tool's input and result schema is made by `of` (`BuiltinEntry::of`
        // compares the two in tests); here the largest: the selector grammar, and a result.
        assert_eq!(
            of::<crate::selector::TrailblazeNodeSelector>().to_string(),
            serialized::<crate::selector::TrailblazeNodeSelector>()
        );
        assert_eq!(
            of::<super::super::results::SnapshotResult>().to_string(),
            serialized::<super::super::results::SnapshotResult>()
        );
        assert!(!crate::tool::builtin_tools().is_empty());
    }

    #[test]
    fn keywords_are_moved_and_values_left_alone() {
        let mut v = json!({
            "$defs": { "A": { "type": "string", "title": "A" } },
            "required": ["a"],
            "properties": { "z": { "minimum": 1, "type": "integer" }, "a": { "$ref": "#/$defs/A" } },
            "type": "object",
            "default": { "type": 1, "$schema": 2 },
            "title": "T",
        });
        order(&mut v, false);
        assert_eq!(
            v.to_string(),
            r##"{"title":"T","type":"object","properties":{"z":{"type":"integer","minimum":1},"a":{"$ref":"#/$defs/A"}},"required":["a"],"default":{"type":1,"$schema":2},"$defs":{"A":{"title":"A","type":"string"}}}"##
        );
        // Control: the comparison sees a moved keyword.
        let unordered = json!({ "type": "object", "title": "T" });
        assert_ne!(unordered.to_string(), r#"{"title":"T","type":"object"}"#);
    }
}
