//! Reading derived schemas: the description, and whether every struct denies unknown keys.

use serde_json::Value;

/// The description schemars took from the type's doc comment. schemars makes a leading `# Heading`
/// line the title; otherwise the title is the type's schema name, which is no description.
pub(crate) fn description(schema: &schemars::Schema, schema_name: &str) -> String {
    let text = |key| {
        schema
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let title = text("title").filter(|t| *t != schema_name);
    match (title, text("description")) {
        (Some(title), Some(rest)) => format!("{title}\n\n{rest}"),
        (Some(only), None) | (None, Some(only)) => only.to_string(),
        (None, None) => String::new(),
    }
}

/// A schemars transform listing every property as required. serde always writes an `Option` field
/// (as `null`), so a result type using this says `value: string | null`, not `value?: ...`.
pub(crate) fn require_all_properties(schema: &mut schemars::Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let names: Vec<Value> = match object.get("properties") {
        Some(Value::Object(props)) => props.keys().map(|k| Value::String(k.clone())).collect(),
        _ => return,
    };
    object.insert("required".to_string(), Value::Array(names));
}

/// JSON pointers of object schemas that accept unknown keys (`additionalProperties` absent or
/// `true`). A map (`additionalProperties: {schema}`) is deliberately open and not reported.
pub(crate) fn open_objects(schema: &schemars::Schema) -> Vec<String> {
    let mut found = Vec::new();
    walk(schema.as_value(), &mut String::new(), &mut found);
    found
}

fn walk(value: &Value, pointer: &mut String, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let is_object_type = match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            };
            // `unevaluatedProperties: false` is how a flattened struct says the same.
            let closed = matches!(
                map.get("additionalProperties"),
                Some(Value::Bool(false) | Value::Object(_))
            ) || map.get("unevaluatedProperties") == Some(&Value::Bool(false));
            if is_object_type && !closed {
                found.push(if pointer.is_empty() {
                    "/".to_string()
                } else {
                    pointer.clone()
                });
            }
            for (key, child) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(child, pointer, found);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                walk(child, pointer, found);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}
