//! The one expansion of a call's arguments, at the last moment before the device: `{{secret:NAME}}`
//! becomes the secret, `{{name}}` / `${name}` / `{{memory.name}}` a remembered value. One pass over
//! the text as it was written (by a trail, the model, a script): what a placeholder put in — text
//! read off the screen, a secret, a remembered value — is never scanned again, so a screen that
//! shows `{{secret:PIN}}` cannot make the runner type the PIN. (`{{args.NAME}}` are filled in before
//! the trail runs, and their values may hold no placeholder at all: see `Trail::with_args`.)

use serde_json::Value;
use trailblaze_host_functions::secrets::SecretStore;

use crate::memory::{Memory, valid_name};

const SECRET_OPEN: &str = "{{secret:";

/// `args` with every placeholder expanded; `None` when nothing changed (the common case). An unknown
/// secret, or a `{{secret:` left open, is an error that names the secret, never a value.
pub fn expand(args: &Value, memory: &Memory, secrets: &SecretStore) -> Result<Option<Value>, String> {
    if !has_opener(args) {
        return Ok(None);
    }
    let mut changed = false;
    let out = walk(args, memory, secrets, &mut changed)?;
    Ok(changed.then_some(out))
}

fn has_opener(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{{") || s.contains("${"),
        Value::Array(items) => items.iter().any(has_opener),
        Value::Object(map) => map.values().any(has_opener),
        _ => false,
    }
}

fn walk(v: &Value, memory: &Memory, secrets: &SecretStore, changed: &mut bool) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => {
            let out = expand_str(s, memory, secrets)?;
            if out != *s {
                *changed = true;
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| walk(x, memory, secrets, changed))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, x) in map {
                out.insert(k.clone(), walk(x, memory, secrets, changed)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// `text` expanded in one pass: each placeholder is replaced where it stands and the scan goes on
/// after it, never into what was put in. An unknown memory token stays as written (a typo shows as
/// `{{typo}}`), and its inside is still read (`{{ {{secret:A}} }}` holds a secret placeholder).
pub fn expand_str(text: &str, memory: &Memory, secrets: &SecretStore) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, open, close)) = next_opener(rest) {
        out.push_str(&rest[..start]);
        let at = &rest[start..];
        if let Some(after) = at.strip_prefix(SECRET_OPEN) {
            let end = after.find("}}").ok_or("an unterminated `{{secret:` placeholder")?;
            let name = after[..end].trim();
            out.push_str(secrets.get(name).ok_or_else(|| unknown_secret(secrets, name))?);
            rest = &after[end + 2..];
            continue;
        }
        let after = &at[open.len()..];
        let value = after
            .find(close)
            .map(|end| &after[..end])
            .filter(|name| valid_name(name))
            .and_then(|name| memory.get(name).map(|v| (v, name.len())));
        match value {
            Some((v, len)) => {
                out.push_str(v);
                rest = &after[len + close.len()..];
            }
            None => {
                out.push_str(open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The earliest `{{` or `${` in `text`: its offset and its delimiters.
fn next_opener(text: &str) -> Option<(usize, &'static str, &'static str)> {
    let a = text.find("{{").map(|i| (i, "{{", "}}"));
    let b = text.find("${").map(|i| (i, "${", "}"));
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn unknown_secret(secrets: &SecretStore, name: &str) -> String {
    let names = secrets.names();
    let known = if names.is_empty() {
        "none are set".to_string()
    } else {
        names.join(", ")
    };
    format!("unknown secret `{name}` (known: {known}); set TRAILBLAZE_SECRET_{name}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn memory() -> Memory {
        let mut m = Memory::default();
        m.remember("total", "12.50").unwrap();
        m.remember("name", "{{total}}").unwrap();
        m.remember("shown", "{{secret:PIN}} and ${total}").unwrap();
        m
    }

    fn secrets() -> SecretStore {
        SecretStore::from_pairs([
            ("PIN".to_string(), "4242".to_string()),
            ("ODD".to_string(), "{{total}}".to_string()),
        ])
    }

    fn x(text: &str) -> String {
        expand_str(text, &memory(), &secrets()).unwrap()
    }

    #[test]
    fn every_spelling_expands_and_unknown_tokens_stay() {
        assert_eq!(x("{{total}} / ${total} / {{memory.total}}"), "12.50 / 12.50 / 12.50");
        assert_eq!(x("{{typo}} and ${typo}"), "{{typo}} and ${typo}");
        assert_eq!(x("{{secret:PIN}} {{args.user}}"), "4242 {{args.user}}");
        assert_eq!(x("{{total"), "{{total");
        assert_eq!(x("{{ {{secret:PIN}} }}"), "{{ 4242 }}");
        assert!(expand_str("{{secret:PIN", &memory(), &secrets()).is_err());
        let e = expand_str("{{secret:NOPE}}", &memory(), &secrets()).unwrap_err();
        assert!(e.contains("unknown secret `NOPE`") && !e.contains("4242"), "{e}");
    }

    #[test]
    fn what_a_placeholder_put_in_is_never_expanded_again() {
        // A remembered value (text off the screen) holding a secret placeholder or a token.
        assert_eq!(x("{{name}}"), "{{total}}");
        assert_eq!(x("{{shown}}"), "{{secret:PIN}} and ${total}");
        // A secret whose value looks like a token.
        assert_eq!(x("{{secret:ODD}}"), "{{total}}");
        // Control: the same placeholders written directly do expand.
        assert_eq!(x("{{secret:PIN}} and ${total}"), "4242 and 12.50");
    }

    #[test]
    fn values_expand_at_every_depth_and_report_no_change() {
        let args = json!({"a": ["x {{total}}"], "b": {"c": "${total}"}, "n": 3});
        let out = expand(&args, &memory(), &secrets()).unwrap().unwrap();
        assert_eq!(out, json!({"a": ["x 12.50"], "b": {"c": "12.50"}, "n": 3}));
        assert!(expand(&json!({"a": "plain"}), &memory(), &secrets()).unwrap().is_none());
        assert!(
            expand(&json!({"a": "{{typo}}"}), &memory(), &secrets())
                .unwrap()
                .is_none()
        );
    }
}
