//! A view tree as `uiautomator dump` writes it on a real device: one line, the XML declaration
//! Android's serializer writes, `<hierarchy rotation="0">`, and per node the attributes AOSP's
//! AccessibilityNodeInfoDumper writes in its order (`NAF` first when set; `hint` last from
//! Android 16, API 36).

use trailblaze::device::{ViewNode, ViewTree};

/// The package the launcher shows when no app is in the foreground.
pub const LAUNCHER: &str = "com.android.launcher3";

pub fn render(tree: &ViewTree, with_hint: bool) -> String {
    let package = tree.app_id.as_deref().unwrap_or(LAUNCHER);
    let mut out = String::from("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">");
    node(&tree.root, 0, package, with_hint, &mut out);
    out.push_str("</hierarchy>");
    out
}

fn node(n: &ViewNode, index: usize, package: &str, with_hint: bool, out: &mut String) {
    let text = match (&n.text, &n.hint_text) {
        (Some(t), _) => t.as_str(),
        // An empty field reports its hint as its text (TextView.getTextForAccessibility).
        (None, Some(h)) if n.editable => h.as_str(),
        _ => "",
    };
    out.push_str("<node");
    if naf(n) {
        out.push_str(" NAF=\"true\"");
    }
    let focusable = n.clickable || n.editable;
    let b = n.bounds;
    let attrs: [(&str, String); 17] = [
        ("index", index.to_string()),
        ("text", text.to_owned()),
        ("resource-id", n.resource_id.clone().unwrap_or_default()),
        ("class", n.class_name.clone()),
        ("package", package.to_owned()),
        ("content-desc", n.content_description.clone().unwrap_or_default()),
        ("checkable", n.checked.is_some().to_string()),
        ("checked", n.checked.unwrap_or(false).to_string()),
        ("clickable", n.clickable.to_string()),
        ("enabled", n.enabled.to_string()),
        ("focusable", focusable.to_string()),
        ("focused", n.focused.to_string()),
        ("scrollable", n.scrollable.to_string()),
        ("long-clickable", n.editable.to_string()),
        ("password", n.password.to_string()),
        ("selected", n.selected.to_string()),
        ("bounds", format!("[{},{}][{},{}]", b.left, b.top, b.right, b.bottom)),
    ];
    for (name, value) in attrs {
        attr(out, name, &value);
    }
    if with_hint {
        attr(out, "hint", n.hint_text.as_deref().unwrap_or(""));
    }
    if n.children.is_empty() {
        out.push_str(" />");
        return;
    }
    out.push('>');
    for (i, c) in n.children.iter().enumerate() {
        node(c, i, package, with_hint, out);
    }
    out.push_str("</node>");
}

fn attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// "Not accessibility friendly": clickable and enabled, yet neither it nor a descendant has a label.
fn naf(n: &ViewNode) -> bool {
    fn labelled(n: &ViewNode) -> bool {
        n.text.as_deref().is_some_and(|t| !t.is_empty())
            || n.content_description.as_deref().is_some_and(|t| !t.is_empty())
            || n.children.iter().any(labelled)
    }
    n.clickable && n.enabled && !n.editable && !labelled(n)
}
