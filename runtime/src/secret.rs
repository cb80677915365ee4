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

/// Every form a secret value can take in our outputs: as it is, JSON-escaped (inside a log line or
/// `report.json`), and XML/HTML-escaped in each dialect the writers use (`&apos;`, `&#39;`, `&#x27;`).
fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    let json = serde_json::to_string(value).unwrap_or_default();
    let json = json.trim_matches('"').to_string();
    let mut html = vec![
        crate::markup::escape(value, crate::markup::Dialect::Xml),
        crate::markup::escape(value, crate::markup::Dialect::XmlAndHtml),
    ];
    // Hex apostrophes and text escaped only where needed (`'` left alone) are written by others.
    html.push(html[0].replace("&apos;", "&#x27;"));
    html.push(html[0].replace("&apos;", "'"));
    for f in std::iter::once(json).chain(html) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// `text` with every secret value (in any of its escaped forms) replaced by `***`. Values are tried
/// longest first, so a secret that contains another is replaced whole, not around the shorter one.
pub fn redact_text<'a>(text: &'a str, values: &[String]) -> std::borrow::Cow<'a, str> {
    if values.is_empty() || !values.iter().any(|v| !v.is_empty()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut sorted: Vec<&String> = values.iter().filter(|v| !v.is_empty()).collect();
    sorted.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    let mut out: Option<String> = None;
    for v in sorted {
        for f in forms(v) {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(f.as_str()) {
                out = Some(current.replace(f.as_str(), "***"));
            }
        }
    }
    match out {
        Some(s) => std::borrow::Cow::Owned(s),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// [`redact_text`] over every string of a JSON value, object keys included.
pub fn redact_value(v: &mut Value, values: &[String]) {
    if values.is_empty() {
        return;
    }
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redact_text(s, values) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_value(i, values)),
        Value::Object(map) => {
            let needs_key = map
                .keys()
                .any(|k| matches!(redact_text(k, values), std::borrow::Cow::Owned(_)));
            if needs_key {
                let old = std::mem::take(map);
                for (k, mut item) in old {
                    redact_value(&mut item, values);
                    map.insert(redact_text(&k, values).into_owned(), item);
                }
            } else {
                map.values_mut().for_each(|i| redact_value(i, values));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod redact_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn longest_first_in_every_escaped_form_and_in_keys() {
        let values = vec![
            "CANARY".to_string(),
            "CANARY-long".to_string(),
            "it's <a&b>".to_string(),
        ];
        assert_eq!(redact_text("x CANARY-long y", &values), "x *** y", "not `***-long`");
        assert_eq!(redact_text("CANARY", &values), "***");
        for form in [
            "it's <a&b>",
            "it&apos;s &lt;a&amp;b&gt;",
            "it&#39;s &lt;a&amp;b&gt;",
            "it&#x27;s &lt;a&amp;b&gt;",
        ] {
            assert_eq!(redact_text(&format!("[{form}]"), &values), "[***]", "{form}");
        }
        let json_form = serde_json::to_string("say \"CANARY\"\n").expect("json");
        assert!(!redact_text(&json_form, &values).contains("CANARY"));
        let mut v = json!({ "CANARY": { "k": ["it's <a&b>", 1] }, "plain": "ok" });
        redact_value(&mut v, &values);
        assert_eq!(v, json!({ "***": { "k": ["***", 1] }, "plain": "ok" }));
        // Control: nothing to redact leaves text as it is (and unallocated).
        assert!(matches!(
            redact_text("nothing here", &values),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
