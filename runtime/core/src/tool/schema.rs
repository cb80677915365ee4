//! JSON Schemas of Rust types as values, in the keyword order schemars writes them.

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// Keywords a schema object starts and ends with when schemars serializes it; the rest keep the
/// order they were generated in.
const FIRST: [&str; 7] = ["$id", "$schema", "title", "description", "type", "format", "properties"];
const LAST: [&str; 2] = ["$defs", "definitions"];

/// The JSON Schema of `T`, keywords ordered as `serde_json::to_value` of schemars' schema orders
/// them (`$schema`, `title`, `description`, `type`, ..., `$defs` last): what users read in `tools
/// --json` and the MCP tool list. Reordered in place: serializing into a new value would cost most
/// of building the built-in tools at each start.
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

/// The selector's schema (`TrailblazeNodeSelector`, without `$schema`) and the definitions it
/// refers to, as the `$defs` of a tool schema that takes one. Made once per process: it is the
/// largest schema, and every tool with a selector argument carries it.
pub fn selector_defs() -> &'static Map<String, Value> {
    static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let mut root = of::<crate::selector::TrailblazeNodeSelector>();
        let mut defs = match root.as_object_mut().and_then(|o| o.remove("$defs")) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(o) = root.as_object_mut() {
            o.remove("$schema");
        }
        defs.insert(crate::tool::rules::SELECTOR_TYPE.to_string(), root);
        defs
    })
}

/// A value made the first time it is read; clones share it.
pub struct Made<T>(Arc<MadeCell<T>>);

struct MadeCell<T> {
    made: OnceLock<T>,
    make: Box<dyn Fn() -> T + Send + Sync>,
}

impl<T> Made<T> {
    pub fn new(make: impl Fn() -> T + Send + Sync + 'static) -> Made<T> {
        Made(Arc::new(MadeCell {
            made: OnceLock::new(),
            make: Box::new(make),
        }))
    }

    pub fn get(&self) -> &T {
        self.0.made.get_or_init(&self.0.make)
    }
}

impl<T> Clone for Made<T> {
    fn clone(&self) -> Self {
        Made(self.0.clone())
    }
}

/// A built-in tool's input schema and description (its doc comment, which schemars puts in the
/// schema), made when first read. Generating every built-in's schema was a fifth of the work of a
/// short process (`trailblaze tool`, `run`), which reads the schemas of the few tools it calls;
/// listing tools (MCP, `tools`, the agent) reads them all.
#[derive(Clone)]
pub struct Generated(Made<(String, Value)>);

impl Generated {
    pub fn new(make: impl Fn() -> Value + Send + Sync + 'static) -> Generated {
        Generated(Made::new(move || {
            let schema = make();
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            (description, schema)
        }))
    }

    pub fn schema(&self) -> &Value {
        &self.0.get().1
    }

    pub fn description(&self) -> &String {
        &self.0.get().0
    }
}

/// A tool's input schema: given (a scripted or composed tool's, read from its file) or
/// [`Generated`] when first read. Reads as a `serde_json::Value`.
#[derive(Clone)]
pub enum SchemaField {
    Given(Value),
    Generated(Generated),
}

/// A tool's description, given or taken from its [`Generated`] schema. Reads as a `String`.
#[derive(Clone)]
pub enum TextField {
    Given(String),
    Generated(Generated),
}

/// A tool's result schema (`None`: typed `unknown`): given, or made when first read (a built-in's,
/// from its result type). Reads as an `Option<serde_json::Value>`.
#[derive(Clone)]
pub enum OutputField {
    Given(Option<Value>),
    Generated(Made<Option<Value>>),
}

impl std::ops::Deref for SchemaField {
    type Target = Value;
    fn deref(&self) -> &Value {
        match self {
            SchemaField::Given(v) => v,
            SchemaField::Generated(g) => g.schema(),
        }
    }
}

impl std::ops::DerefMut for SchemaField {
    /// Changing a generated schema makes it a given one (tests plant rule violations this way).
    fn deref_mut(&mut self) -> &mut Value {
        if let SchemaField::Generated(g) = self {
            *self = SchemaField::Given(g.schema().clone());
        }
        match self {
            SchemaField::Given(v) => v,
            SchemaField::Generated(_) => unreachable!("made given above"),
        }
    }
}

impl std::ops::Deref for TextField {
    type Target = String;
    fn deref(&self) -> &String {
        match self {
            TextField::Given(t) => t,
            TextField::Generated(g) => g.description(),
        }
    }
}

impl std::ops::Deref for OutputField {
    type Target = Option<Value>;
    fn deref(&self) -> &Option<Value> {
        match self {
            OutputField::Given(v) => v,
            OutputField::Generated(m) => m.get(),
        }
    }
}

impl From<Value> for SchemaField {
    fn from(v: Value) -> Self {
        SchemaField::Given(v)
    }
}

impl From<String> for TextField {
    fn from(t: String) -> Self {
        TextField::Given(t)
    }
}

impl From<&str> for TextField {
    fn from(t: &str) -> Self {
        TextField::Given(t.to_string())
    }
}

impl From<Option<Value>> for OutputField {
    fn from(v: Option<Value>) -> Self {
        OutputField::Given(v)
    }
}

/// The fields print, compare and serialize as the value they read as.
macro_rules! as_what_it_reads {
    ($($field:ty),*) => {$(
        impl std::fmt::Debug for $field {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&**self, f)
            }
        }

        impl PartialEq for $field {
            fn eq(&self, other: &Self) -> bool {
                **self == **other
            }
        }

        impl serde::Serialize for $field {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                (**self).serialize(s)
            }
        }
    )*};
}

as_what_it_reads!(SchemaField, TextField, OutputField);

impl std::fmt::Display for TextField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
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
        // Reading each built-in's schema makes it, and making it compares it with schemars' text.
        let tools = crate::tool::builtin_tools();
        assert!(tools.len() > 100, "the built-ins are listed");
        for t in &tools {
            assert!(t.input_schema.is_object(), "{}", t.name);
            assert!(t.output_schema.as_ref().is_none_or(Value::is_object), "{}", t.name);
        }
    }

    #[test]
    fn a_generated_schema_is_made_once_when_first_read_and_shared_by_clones() {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let g = Generated::new(|| {
            MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            json!({ "description": "Taps.", "type": "object" })
        });
        let schema = SchemaField::Generated(g.clone());
        let text = TextField::Generated(g);
        assert_eq!(
            MADE.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "not made before it is read"
        );
        assert_eq!(text.as_str(), "Taps.");
        assert_eq!(schema["type"], "object");
        assert_eq!(MADE.load(std::sync::atomic::Ordering::SeqCst), 1, "made once for both");
        // Changing it makes it a given schema; the shared one is left as it was.
        let mut changed = schema.clone();
        changed["type"] = json!("string");
        assert_eq!(schema["type"], "object");
        assert!(matches!(changed, SchemaField::Given(_)));
    }

    #[test]
    fn the_selector_definitions_hold_the_selector_and_what_it_refers_to() {
        let defs = selector_defs();
        let root = &defs[crate::tool::rules::SELECTOR_TYPE];
        assert!(root.get("$defs").is_none() && root.get("$schema").is_none());
        let text = root.to_string();
        // Control: every definition the selector refers to is there.
        for r in text.split("\"#/$defs/").skip(1) {
            let name = r.split('"').next().unwrap_or_default();
            assert!(defs.contains_key(name), "{name} is referred to and not defined");
        }
        assert!(text.contains("#/$defs/"), "the selector refers to definitions");
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
