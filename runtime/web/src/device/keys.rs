//! Keys as Playwright names them (`Enter`, `ArrowDown`, `Control+A`, `a`), turned into the DevTools
//! key events a real keyboard sends.

use serde_json::{Value, json};

/// One key: what `Input.dispatchKeyEvent` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub key: String,
    pub code: String,
    pub key_code: i64,
    /// The text the key types (printable keys, Enter).
    pub text: Option<String>,
    /// A modifier key's bit (Alt 1, Control 2, Meta 4, Shift 8).
    pub modifier: i64,
}

const NAMED: &[(&str, &str, i64, Option<&str>)] = &[
    ("Enter", "Enter", 13, Some("\r")),
    ("Tab", "Tab", 9, None),
    ("Escape", "Escape", 27, None),
    ("Backspace", "Backspace", 8, None),
    ("Delete", "Delete", 46, None),
    ("Insert", "Insert", 45, None),
    ("ArrowUp", "ArrowUp", 38, None),
    ("ArrowDown", "ArrowDown", 40, None),
    ("ArrowLeft", "ArrowLeft", 37, None),
    ("ArrowRight", "ArrowRight", 39, None),
    ("Home", "Home", 36, None),
    ("End", "End", 35, None),
    ("PageUp", "PageUp", 33, None),
    ("PageDown", "PageDown", 34, None),
    (" ", "Space", 32, Some(" ")),
    ("Shift", "ShiftLeft", 16, None),
    ("Control", "ControlLeft", 17, None),
    ("Alt", "AltLeft", 18, None),
    ("Meta", "MetaLeft", 91, None),
    ("CapsLock", "CapsLock", 20, None),
    ("ContextMenu", "ContextMenu", 93, None),
];

fn modifier_bit(key: &str) -> i64 {
    match key {
        "Alt" => 1,
        "Control" => 2,
        "Meta" => 4,
        "Shift" => 8,
        _ => 0,
    }
}

/// One key by its name; `None` for a name no keyboard has.
pub fn key(name: &str) -> Option<Key> {
    let name = match name {
        "Space" => " ",
        "Esc" => "Escape",
        "Return" => "Enter",
        "Up" => "ArrowUp",
        "Down" => "ArrowDown",
        "Left" => "ArrowLeft",
        "Right" => "ArrowRight",
        "Ctrl" | "ControlOrMeta" => "Control",
        "Cmd" | "Command" => "Meta",
        "Option" => "Alt",
        other => other,
    };
    if let Some((k, code, kc, text)) = NAMED.iter().find(|(k, ..)| *k == name) {
        return Some(Key {
            key: k.to_string(),
            code: code.to_string(),
            key_code: *kc,
            text: text.map(str::to_string),
            modifier: modifier_bit(k),
        });
    }
    if let Some(n) = name.strip_prefix('F').and_then(|d| d.parse::<i64>().ok())
        && (1..=12).contains(&n)
    {
        return Some(Key {
            key: name.to_string(),
            code: name.to_string(),
            key_code: 111 + n,
            text: None,
            modifier: 0,
        });
    }
    let mut chars = name.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let (code, key_code) = if c.is_ascii_alphabetic() {
        (format!("Key{}", c.to_ascii_uppercase()), c.to_ascii_uppercase() as i64)
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as i64)
    } else {
        (String::new(), 0)
    };
    Some(Key {
        key: c.to_string(),
        code,
        key_code,
        text: Some(c.to_string()),
        modifier: 0,
    })
}

/// A combination (`Control+Shift+A`, `Shift++`): the modifiers held, then the key.
pub fn combo(spec: &str) -> Result<Vec<Key>, String> {
    if spec.is_empty() {
        return Err("`key` is empty: name a key such as `Enter`, `Tab` or `Control+A`".into());
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = spec;
    // `+` alone (or last, as in `Shift++`) is the plus key.
    while let Some(i) = rest.find('+') {
        if i == 0 {
            parts.push("+");
            rest = &rest[1..];
            rest = rest.strip_prefix('+').unwrap_or(rest);
            continue;
        }
        parts.push(&rest[..i]);
        rest = &rest[i + 1..];
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts
        .into_iter()
        .map(|p| {
            key(p)
                .ok_or_else(|| format!("`{spec}`: `{p}` is not a key name (e.g. Enter, Tab, ArrowDown, a, Control+A)"))
        })
        .collect()
}

/// The `Input.dispatchKeyEvent` parameters of `k` going down or up, with `modifiers` held.
pub fn event(k: &Key, down: bool, modifiers: i64) -> Value {
    let typed = k.text.as_ref().filter(|_| down && modifiers & !8 == 0);
    let mut e = json!({
        "type": if down { if typed.is_some() { "keyDown" } else { "rawKeyDown" } } else { "keyUp" },
        "key": k.key,
        "code": k.code,
        "windowsVirtualKeyCode": k.key_code,
        "nativeVirtualKeyCode": k.key_code,
        "modifiers": modifiers,
    });
    if let Some(t) = typed {
        let t = if modifiers & 8 != 0 {
            t.to_uppercase()
        } else {
            t.clone()
        };
        e["text"] = Value::String(t.clone());
        e["unmodifiedText"] = Value::String(t);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_combinations_read_as_playwright_writes_them() {
        assert_eq!(key("Enter").unwrap().key_code, 13);
        assert_eq!(key("a").unwrap().code, "KeyA");
        assert_eq!(key("F5").unwrap().key_code, 116);
        let c = combo("Control+Shift+A").unwrap();
        assert_eq!(c.iter().map(|k| k.modifier).collect::<Vec<_>>(), [2, 8, 0]);
        assert_eq!(combo("Shift++").unwrap().last().unwrap().key, "+");
        assert!(combo("Hyper+A").unwrap_err().contains("Hyper"));
        assert!(combo("").is_err());
        // A printable key types its text; with Control held it types nothing.
        assert_eq!(event(&key("a").unwrap(), true, 0)["text"], "a");
        assert!(event(&key("a").unwrap(), true, 2).get("text").is_none());
    }
}
