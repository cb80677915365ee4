//! Writing YAML that reads back as the same values: block style for what does not fit a line, flow
//! style for what does, strings plain only when nothing could take them for another type (so a
//! digit-only text stays a string). Recordings and `trailblaze migrate` write trails with it.

use serde_json::Value;

/// `- key: value` (or `key: value`) with `prefix` before the key; nested maps and lists in block
/// style below it, indented by `indent`, unless the value fits on the line in flow style.
pub fn emit_map_entry(out: &mut String, prefix: &str, indent: &str, key: &str, v: &Value) {
    let head = format!("{prefix}{}:", key_text(key));
    let flow = flow(v);
    if head.len() + 1 + flow.len() <= 100 || !is_nonempty_container(v) {
        out.push_str(&format!("{head} {flow}\n"));
        return;
    }
    out.push_str(&head);
    out.push('\n');
    emit_block(out, indent, v);
}

pub fn emit_block(out: &mut String, indent: &str, v: &Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                emit_map_entry(out, indent, &format!("{indent}  "), k, x);
            }
        }
        Value::Array(items) => {
            for x in items {
                let f = flow(x);
                if indent.len() + 2 + f.len() <= 100 || !is_nonempty_container(x) {
                    out.push_str(&format!("{indent}- {f}\n"));
                } else if let Value::Object(m) = x {
                    // `- k: v` then the other keys aligned under the first.
                    let inner = format!("{indent}  ");
                    for (i, (k, y)) in m.iter().enumerate() {
                        let prefix = if i == 0 { format!("{indent}- ") } else { inner.clone() };
                        emit_map_entry(out, &prefix, &format!("{inner}  "), k, y);
                    }
                } else {
                    out.push_str(&format!("{indent}-\n"));
                    emit_block(out, &format!("{indent}  "), x);
                }
            }
        }
        other => out.push_str(&format!("{indent}{}\n", scalar(other))),
    }
}

fn is_nonempty_container(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// The flow form: `{ a: 1, b: [x, y] }`.
fn flow(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, x)| format!("{}: {}", key_text(k), flow(x))).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(flow).collect::<Vec<_>>().join(", ")),
        other => scalar(other),
    }
}

fn key_text(k: &str) -> String {
    scalar(&Value::String(k.to_string()))
}

/// A scalar as YAML that reads back as the same JSON value: strings plain only when nothing could
/// take them for another type or for syntax, double-quoted (JSON escapes are YAML escapes) otherwise.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) if plain_is_safe(s) => s.clone(),
        // JSON's escapes are YAML's double-quoted ones; C1 controls, which YAML forbids raw, and
        // bidi overrides, which would reorder the file as an editor shows it, go escaped too.
        Value::String(s) => {
            crate::markup::json_escape_invisible(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()))
                .into_owned()
        }
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn plain_is_safe(s: &str) -> bool {
    const WORDS: [&str; 11] = ["true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", "nan"];
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && !s.ends_with(' ')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || " _.-/@".contains(c))
        && !WORDS.iter().any(|w| s.eq_ignore_ascii_case(w))
}
