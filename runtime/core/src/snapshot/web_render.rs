//! A page's nodes in the snapshot's line format: `[k123] button "Submit"`, with what a page adds
//! (a field's value and placeholder, a heading's level, expanded, selected), and the note of a
//! capture that left elements out.

use serde_json::{Value, json};

use super::{SnapNode, scrub};
use crate::device::WebNode;
use crate::secret::Redaction;

/// Roles worth a line even without a name: they give the page its structure.
const LANDMARKS: &[&str] = &[
    "navigation",
    "main",
    "banner",
    "contentinfo",
    "complementary",
    "form",
    "dialog",
    "region",
    "list",
    "table",
    "iframe",
    "alert",
    "search",
];

pub(super) fn shown(n: &SnapNode, w: &WebNode) -> bool {
    if w.note.is_some() || w.frame_url.is_some() {
        return true;
    }
    let own_text = !w.in_name && (n.text.as_deref().is_some_and(|t| !t.is_empty()));
    own_text
        || n.editable
        || n.checked.is_some()
        || (n.clickable && w.role != "generic")
        || w.role == "heading"
        || w.role == "img"
        || LANDMARKS.contains(&w.role.as_str())
        || n.hint_text.is_some()
}

/// One node's line; `tail` (its bounds, when asked) ends it.
pub(super) fn line(out: &mut String, n: &SnapNode, w: &WebNode, level: usize, redact: &Redaction, tail: &str) {
    let q = |s: &str| scrub(s, redact).replace('"', "\\\"");
    let mut line = format!("{}[{}] {}", "  ".repeat(level), n.r#ref, w.role);
    // A field shows its name, then its value; anything else its name (or its own text).
    let name = if n.editable {
        (!w.name.is_empty()).then_some(w.name.as_str())
    } else {
        n.text.as_deref().filter(|t| !t.is_empty())
    };
    if let Some(t) = name {
        line.push_str(&format!(" \"{}\"", q(t)));
    }
    if n.editable
        && let Some(v) = n.text.as_deref().filter(|t| !t.is_empty())
    {
        line.push_str(&format!(" value=\"{}\"", q(v)));
    }
    if let Some(v) = w.value.as_deref().filter(|t| !t.is_empty()) {
        line.push_str(&format!(" value=\"{}\"", q(v)));
    }
    if let Some(h) = &n.hint_text {
        line.push_str(&format!(" placeholder=\"{}\"", q(h)));
    }
    if let Some(l) = w.level {
        line.push_str(&format!(" level={l}"));
    }
    if let Some(u) = &w.frame_url {
        line.push_str(&format!(" url=\"{}\"", q(u)));
    }
    let mut flags = Vec::new();
    if n.focused {
        flags.push("focused");
    }
    match (n.checked, w.mixed) {
        (_, true) => flags.push("mixed"),
        (Some(true), _) => flags.push("checked"),
        (Some(false), _) => flags.push("unchecked"),
        (None, _) => {}
    }
    match w.expanded {
        Some(true) => flags.push("expanded"),
        Some(false) => flags.push("collapsed"),
        None => {}
    }
    if n.selected {
        flags.push("selected");
    }
    if !n.enabled {
        flags.push("disabled");
    }
    if w.offscreen {
        flags.push("offscreen");
    }
    if !flags.is_empty() {
        line.push_str(&format!(" ({})", flags.join(", ")));
    }
    out.push_str(&line);
    out.push_str(tail);
    out.push('\n');
    if let Some(note) = &w.note {
        out.push_str(&format!("{}(note: {note})\n", "  ".repeat(level)));
    }
}

/// What `--json` adds to a page's node.
pub(super) fn json(w: &WebNode, redact: &Redaction) -> Value {
    let s = |v: &Option<String>| v.as_deref().map(|t| scrub(t, redact));
    json!({
        "role": w.role, "name": scrub(&w.name, redact), "tag": w.tag, "level": w.level, "expanded": w.expanded,
        "testId": w.test_id, "value": s(&w.value), "frameUrl": w.frame_url, "note": w.note,
    })
}
