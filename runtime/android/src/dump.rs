//! `uiautomator dump` XML into the same [`ViewTree`] the simulated device gives.
//!
//! A real dump: `<?xml ...?><hierarchy rotation="0"><node index="0" text="" resource-id="" class=...
//! package=... content-desc=... checkable checked clickable enabled focusable focused scrollable
//! long-clickable password selected bounds="[l,t][r,b]">`, optionally `NAF="true"` first (a clickable
//! node with no label) and, from Android 16 on, `hint`. uiautomator has no "editable": `EditText` and
//! its subclasses are; only a checkable node has `checked`.

use trailblaze_core::device::limits::{self, TreeBuilder};
use trailblaze_core::device::{Bounds, ViewNode, ViewTree};

/// Parses a dump. `Err` says what is wrong (with line:column for malformed XML). The tree is held to
/// the device layer's limits (`device::limits`) as it is built, without recursion.
pub fn parse_dump(xml: &str) -> Result<ViewTree, String> {
    let xml = trim_to_document(xml)?;
    // roxmltree's tokenizer recurses once per open element: the nesting is measured first.
    if limits::xml_nesting(xml, limits::MAX_DEPTH + 1) > limits::MAX_DEPTH + 1 {
        return Err(format!(
            "uiautomator dump: {}",
            limits::TreeError::TooDeep(limits::MAX_DEPTH)
        ));
    }
    let opts = roxmltree::ParsingOptions {
        // Elements and the text between them: a dump over the node cap stops here, before the
        // document is even whole in memory. DTDs (entities) stay refused, as by default.
        nodes_limit: u32::try_from(limits::MAX_NODES * 3).unwrap_or(u32::MAX),
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, opts).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => {
            format!(
                "uiautomator dump: {}",
                limits::TreeError::TooManyNodes(limits::MAX_NODES)
            )
        }
        e => format!("uiautomator dump is not XML: {e}"),
    })?;
    let hierarchy = doc.root_element();
    if hierarchy.tag_name().name() != "hierarchy" {
        return Err(format!(
            "uiautomator dump starts with <{}>, expected <hierarchy>",
            hierarchy.tag_name().name()
        ));
    }
    let mut app_id = None;
    // A frame around the windows, as the screen shows them; a dump of one window is that window.
    let mut b = TreeBuilder::new();
    let frame = ViewNode {
        class_name: "android.widget.FrameLayout".to_owned(),
        enabled: true,
        ..ViewNode::default()
    };
    let whole = |e: limits::TreeError| format!("uiautomator dump: {e}");
    b.open(frame).map_err(whole)?;
    // Depth first, in document order (roxmltree walks without recursion); `open` holds the
    // `<node>`s the builder has open, so each new one first closes those it is not inside.
    let mut open: Vec<roxmltree::NodeId> = Vec::new();
    for node in hierarchy.descendants().filter(|n| n.has_tag_name("node")) {
        let parent = node
            .ancestors()
            .skip(1)
            .find(|a| a.has_tag_name("node") || *a == hierarchy)
            .map(|a| a.id());
        while open.last().is_some_and(|&top| Some(top) != parent) {
            open.pop();
            b.close().map_err(whole)?;
        }
        if app_id.is_none() && open.is_empty() {
            app_id = node.attribute("package").filter(|p| !p.is_empty()).map(str::to_owned);
        }
        b.open(view(node)?).map_err(|e| at(node, &e.to_string()))?;
        open.push(node.id());
    }
    for _ in open {
        b.close().map_err(whole)?;
    }
    b.close().map_err(whole)?;
    let mut frame = b.finish().map_err(whole)?;
    let root = match frame.children.len() {
        1 => frame.children.remove(0),
        0 => return Err("uiautomator dump has no <node>".to_owned()),
        _ => {
            frame.bounds = frame.children.iter().fold(Bounds::default(), |a, n| union(a, n.bounds));
            frame
        }
    };
    Ok(ViewTree {
        app_id,
        width: root.bounds.right.max(0),
        height: root.bounds.bottom.max(0),
        root,
    })
}

/// One `<node>`'s own attributes (its children come as events of their own).
fn view(node: roxmltree::Node) -> Result<ViewNode, String> {
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
        children: Vec::new(),
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
