//! `/session/{id}/element/{eid}/...`: what a WebDriver client does with an element it found
//! (FBElementCommands.m): click, type, clear, and read its attributes.

use serde_json::{Value, json};

use super::element::Element;
use super::phone::{Phone, WdaError};

type Reply = Result<Value, WdaError>;

pub fn route(phone: &mut Phone, method: &str, id: &str, rest: &[&str], body: &Value) -> Option<Reply> {
    let e = match phone.element(id) {
        Ok(e) => e,
        Err(err) => return Some(Err(err)),
    };
    let screen = phone.screen_rect();
    let r = match (method, rest) {
        ("POST", ["click"]) => {
            let (x, y) = phone.tap_point(&e);
            phone.tap(x, y);
            Ok(Value::Null)
        }
        ("POST", ["value"]) => {
            // Selenium sends both `text` and `value` (characters); WDA prefers `value`.
            let text = match body.get("value").or_else(|| body.get("text")) {
                Some(Value::Array(keys)) => keys.iter().filter_map(Value::as_str).collect::<String>(),
                Some(Value::String(s)) => s.clone(),
                _ => {
                    return Some(Err(WdaError::invalid_argument(
                        "Neither 'value' nor 'text' parameter is provided",
                    )));
                }
            };
            focus(phone, &e);
            phone.type_keys(&text).map(|()| Value::Null)
        }
        ("POST", ["clear"]) => {
            focus(phone, &e);
            let n = e.value.as_deref().map_or(0, |v| v.chars().count());
            phone.type_keys(&"\u{8}".repeat(n)).map(|()| Value::Null)
        }
        ("GET", ["attribute", name]) => Ok(attribute(&e, name, screen)),
        ("GET", ["text"]) => Ok(json!(e.wd_text())),
        ("GET", ["rect"]) => Ok(rect(&e)),
        ("GET", ["displayed"]) => Ok(json!(e.rect.intersects(&screen))),
        ("GET", ["enabled"]) => Ok(json!(e.enabled)),
        ("GET", ["selected"]) => Ok(json!(e.selected)),
        ("GET", ["name"]) => Ok(json!(e.kind)),
        _ => return None,
    };
    Some(r)
}

/// Typing into an element taps it first unless it has keyboard focus, as WDA does.
fn focus(phone: &mut Phone, e: &Element) {
    if !e.focused {
        let (x, y) = phone.tap_point(e);
        phone.tap(x, y);
    }
}

fn rect(e: &Element) -> Value {
    let r = e.rect;
    json!({"x": r.x, "y": r.y, "width": r.width, "height": r.height})
}

/// WDA's attribute names; one it does not know is null.
fn attribute(e: &Element, name: &str, screen: super::element::Rect) -> Value {
    match name {
        "type" => json!(e.kind),
        "name" => json!(e.wd_name()),
        "label" => json!(e.wd_label()),
        "value" => json!(e.wd_value()),
        "placeholderValue" => json!(e.placeholder),
        "enabled" => json!(e.enabled),
        "visible" | "displayed" => json!(e.rect.intersects(&screen)),
        "selected" => json!(e.selected),
        "focused" => json!(e.focused),
        "rect" => rect(e),
        _ => Value::Null,
    }
}
