//! `uiautomator dump` XML into the same [`ViewTree`] the simulated device gives.
//!
//! A real dump: `<?xml ...?><hierarchy rotation="0"><node index="0" text="" resource-id="" class=...
//! package=... content-desc=... checkable checked clickable enabled focusable focused scrollable
//! long-clickable password selected bounds="[l,t][r,b]">`, optionally `NAF="true"` first (a clickable
//! node with no label) and, from Android 16 on, `hint`. uiautomator has no "editable": `EditText` and
//! its subclasses are; only a checkable node has `checked`.

use crate::device::{Bounds, ViewNode, ViewTree};

/// Parses a dump. `Err` says what is wrong (with line:column for malformed XML).
pub fn parse_dump(xml: &str) -> Result<ViewTree, String> {
    let xml = trim_to_document(xml)?;
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("uiautomator dump is not XML: {e}"))?;
    let hierarchy = doc.root_element();
    if hierarchy.tag_name().name() != "hierarchy" {
        return Err(format!(
            "uiautomator dump starts with <{}>, expected <hierarchy>",
            hierarchy.tag_name().name()
        ));
    }
    let mut tops = Vec::new();
    let mut app_id = None;
    for node in hierarchy.children().filter(|n| n.has_tag_name("node")) {
        if app_id.is_none() {
            app_id = node.attribute("package").filter(|p| !p.is_empty()).map(str::to_owned);
        }
        tops.push(view(node, 0)?);
    }
    let root = match tops.len() {
        1 => tops.remove(0),
        0 => return Err("uiautomator dump has no <node>".to_owned()),
        // Several windows: a frame around them, as the screen shows them.
        _ => ViewNode {
            class_name: "android.widget.FrameLayout".to_owned(),
            bounds: tops.iter().fold(Bounds::default(), |a, n| union(a, n.bounds)),
            enabled: true,
            children: tops,
            ..ViewNode::default()
        },
    };
    Ok(ViewTree {
        app_id,
        width: root.bounds.right,
        height: root.bounds.bottom,
        root,
    })
}

/// Nesting deeper than this is refused: a real screen is far shallower, and recursion stays bounded.
const MAX_DEPTH: usize = 256;

fn view(node: roxmltree::Node, depth: usize) -> Result<ViewNode, String> {
    if depth > MAX_DEPTH {
        return Err(format!("uiautomator dump nests deeper than {MAX_DEPTH} nodes"));
    }
    let attr = |name: &str| node.attribute(name).filter(|v| !v.is_empty()).map(str::to_owned);
    let flag = |name: &str| node.attribute(name) == Some("true");
    let class_name = attr("class").unwrap_or_else(|| "android.view.View".to_owned());
    let editable = is_editable_class(&class_name);
    let hint_text = attr("hint");
    let mut text = attr("text");
    // An empty field shows its hint as its text; with the `hint` attribute we can tell them apart.
    if editable && text.is_some() && text == hint_text {
        text = None;
    }
    let bounds = match node.attribute("bounds") {
        Some(b) => parse_bounds(b).ok_or_else(|| at(node, &format!("bad bounds {b:?}")))?,
        None => Bounds::default(),
    };
    let mut children = Vec::new();
    for child in node.children().filter(|n| n.has_tag_name("node")) {
        children.push(view(child, depth + 1)?);
    }
    Ok(ViewNode {
        class_name,
        text,
        hint_text,
        resource_id: attr("resource-id"),
        content_description: attr("content-desc"),
        bounds,
        enabled: flag("enabled"),
        clickable: flag("clickable"),
        editable,
        focused: flag("focused"),
        checked: flag("checkable").then(|| flag("checked")),
        password: flag("password"),
        selected: flag("selected"),
        scrollable: flag("scrollable"),
        children,
        web: None,
    })
}

fn at(node: roxmltree::Node, what: &str) -> String {
    let pos = node.document().text_pos_at(node.range().start);
    format!("uiautomator dump:{}:{}: {what}", pos.row, pos.col)
}

/// `EditText` and its framework subclasses accept text; uiautomator has no "editable" attribute.
fn is_editable_class(class: &str) -> bool {
    let simple = class.rsplit('.').next().unwrap_or(class);
    simple.ends_with("EditText") || simple.ends_with("AutoCompleteTextView")
}

/// `[l,t][r,b]`.
pub fn parse_bounds(s: &str) -> Option<Bounds> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let (a, b) = inner.split_once("][")?;
    let pair = |p: &str| -> Option<(i32, i32)> {
        let (x, y) = p.split_once(',')?;
        Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
    };
    let (left, top) = pair(a)?;
    let (right, bottom) = pair(b)?;
    Some(Bounds {
        left,
        top,
        right,
        bottom,
    })
}

fn union(a: Bounds, b: Bounds) -> Bounds {
    Bounds {
        left: a.left.min(b.left),
        top: a.top.min(b.top),
        right: a.right.max(b.right),
        bottom: a.bottom.max(b.bottom),
    }
}

/// The XML document inside the command's output: `uiautomator dump /dev/tty` appends
/// `UI hierchary dumped to: /dev/tty`, and some devices print warnings before it.
fn trim_to_document(out: &str) -> Result<&str, String> {
    let start = out
        .find("<?xml")
        .or_else(|| out.find("<hierarchy"))
        .ok_or_else(|| format!("uiautomator dump gave no XML: {}", first_line(out)))?;
    let end = out
        .rfind("</hierarchy>")
        .map(|e| e + "</hierarchy>".len())
        .filter(|&e| e > start)
        .ok_or_else(|| "uiautomator dump is cut short (no </hierarchy>)".to_owned())?;
    Ok(&out[start..end])
}

/// The first line of a device's answer, short enough for an error message.
pub fn first_line(out: &str) -> String {
    let line = out.trim().lines().next().unwrap_or("(nothing)");
    line.chars().take(200).collect()
}
