//! `{{secret:NAME}}` placeholders: resolved at the last moment before the device, so the step log,
//! errors and traces only ever hold the placeholder.

use serde_json::Value;
use trailblaze_host_functions::secrets::SecretStore;

const OPEN: &str = "{{secret:";

/// Whether `text` holds a placeholder (a syntactic check: resolves nothing).
pub fn has_placeholder(text: &str) -> bool {
    text.contains(OPEN)
}

/// A copy of `args` with every placeholder in every string replaced by its value. An unknown name is an
/// error that names the secret (a name, not a value) and the names that exist.
pub fn resolve_placeholders(store: &SecretStore, args: &Value) -> Result<Value, String> {
    match args {
        Value::String(s) if has_placeholder(s) => resolve_str(store, s).map(Value::String),
        Value::Array(items) => items
            .iter()
            .map(|i| resolve_placeholders(store, i))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, v) in map {
                out.insert(k.clone(), resolve_placeholders(store, v)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn resolve_str(store: &SecretStore, text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find("}}") else {
            return Err("an unterminated `{{secret:` placeholder".into());
        };
        let name = after[..end].trim();
        match store.get(name) {
            Some(v) => out.push_str(v),
            None => {
                let names = store.names();
                let known = if names.is_empty() {
                    "none are set".to_string()
                } else {
                    names.join(", ")
                };
                return Err(format!(
                    "unknown secret `{name}` (known: {known}); set TRAILBLAZE_SECRET_{name}"
                ));
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}
