//! No secret through a derived value. A built-in that computes on, compares, parses or echoes an
//! argument (`assertMath`, `assertEquals`, a regex, memory, `scrollUntilTextIsVisible`, ...) would
//! carry what it made of a secret into its message, where the redaction cannot recognise it
//! (`*** + 1` is 1235). So a secret — a `{{secret:NAME}}` placeholder, or a secret's value written
//! out (a script that looked one up) — is refused in every argument of a built-in except those it
//! declares as going to the device (`BuiltinTool::SECRET_ARGS`: `inputText.text`, a selector), and
//! refused before anything is resolved or the device is touched.

use serde_json::Value;

use crate::secret::{Redaction, has_placeholder};

/// The first argument path (`expression`, `steps[0].args.text`) that holds a secret outside
/// `allowed` (top-level argument names), or `None`.
pub fn secret_outside(args: &Value, allowed: &[&str], redact: &Redaction) -> Option<String> {
    let Value::Object(map) = args else {
        return first_secret(args, String::new(), redact);
    };
    map.iter()
        .filter(|(k, _)| !allowed.contains(&k.as_str()))
        .find_map(|(k, v)| first_secret(v, k.clone(), redact))
}

/// Whether `args` holds a secret anywhere (the tool is told, so it suggests nothing derived from one).
pub fn holds_secret(args: &Value, redact: &Redaction) -> bool {
    first_secret(args, String::new(), redact).is_some()
}

fn first_secret(v: &Value, path: String, redact: &Redaction) -> Option<String> {
    match v {
        Value::String(s) => {
            (has_placeholder(s) || matches!(redact.text(s), std::borrow::Cow::Owned(_))).then_some(path)
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| first_secret(x, format!("{path}[{i}]"), redact)),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            first_secret(x, at, redact)
        }),
        _ => None,
    }
}

/// The refusal: the tool, the path, why, and where secrets do go. Never a value.
pub fn refusal(tool: &str, path: &str, allowed: &[&str]) -> String {
    let here = if allowed.is_empty() {
        format!("{tool} takes no secrets")
    } else {
        let names: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
        format!("{tool} takes secrets only in {}", names.join(", "))
    };
    format!(
        "`{path}` holds a secret (a `{{{{secret:...}}}}` placeholder or a secret's value): {here}, since what it computes \
         from, compares or shows of an argument would carry the secret into its result or its error. Type a secret with \
         `type {{text}}` / `inputText {{text}}`"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_secret_is_found_by_placeholder_or_by_value_outside_the_allowed_arguments() {
        let r = Redaction::new(&["hunter2".to_string()]);
        let allowed = ["text"];
        assert_eq!(
            secret_outside(&json!({"expression": "{{secret:PIN}} + 1"}), &allowed, &r).as_deref(),
            Some("expression")
        );
        assert_eq!(
            secret_outside(&json!({"a": {"b": ["x", "my hunter2"]}}), &allowed, &r).as_deref(),
            Some("a.b[1]")
        );
        // Control: where it is allowed, or nowhere, nothing is found.
        assert_eq!(
            secret_outside(&json!({"text": "{{secret:PIN}} hunter2"}), &allowed, &r),
            None
        );
        assert_eq!(
            secret_outside(&json!({"expression": "1 + 1", "n": 3}), &allowed, &r),
            None
        );
        assert!(holds_secret(&json!({"text": "{{secret:PIN}}"}), &r));
        assert!(!holds_secret(&json!({"text": "plain"}), &r));
        let msg = refusal("assertMath", "expression", &[]);
        assert!(
            msg.starts_with("`expression` holds a secret") && msg.contains("assertMath takes no secrets"),
            "{msg}"
        );
    }
}
