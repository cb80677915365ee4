//! WebDriverAgent's page source (`GET /session/{id}/source`, XML) into a [`ViewTree`].
//!
//! WDA writes `<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name=".."
//! label=".." enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852"
//! index="0">...`: each element's tag is its type, its attributes `type value name label enabled
//! visible accessible x y width height index` and, where the element has them, `placeholderValue
//! selected focused`. Coordinates are points, as taps take them.

use trailblaze_core::device::limits::{self, TreeBuilder, TreeError};
use trailblaze_core::device::{Bounds, IOS_TYPE_PREFIX, ViewNode, ViewTree};

/// Parses a page source into a tree of `width` × `height` points whose app is `app_id`. Elements
/// that are not visible (`visible="false"`, no width or height) are left out and their children
/// kept in their place. `Err` says what is wrong, with line:column, and never quotes a text.
pub fn parse_source(xml: &str, width: i32, height: i32, app_id: Option<String>) -> Result<ViewTree, String> {
    // roxmltree recurses once per open element: the nesting is measured first. Two levels more
    // than the tree may have: `<AppiumAUT>`, and the frame below.
    if limits::xml_nesting(xml, limits::MAX_DEPTH + 2) > limits::MAX_DEPTH + 2 {
        return Err(format!("page source: {}", TreeError::TooDeep(limits::MAX_DEPTH)));
    }
    let opts = roxmltree::ParsingOptions {
        // DTDs (and so entities) stay refused. Elements and the whitespace between them count:
        // a source over the node cap stops here, before it is whole in memory.
        allow_dtd: false,
        nodes_limit: u32::try_from(limits::MAX_NODES * 3).unwrap_or(u32::MAX),
    };
    let doc = roxmltree::Document::parse_with_options(xml, opts).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => format!("page source: {}", TreeError::TooManyNodes(limits::MAX_NODES)),
        e => format!("page source is not XML: {e}"),
    })?;
    let top = doc.root_element();
    let name = top.tag_name().name();
    // Older WDA versions give the application element itself, with no `<AppiumAUT>` around it.
    let scope = match name {
        "AppiumAUT" => top,
        n if n.starts_with(IOS_TYPE_PREFIX) => doc.root(),
        n => {
            let n: String = n.chars().take(40).collect();
            return Err(format!("page source starts with <{n}>, expected <AppiumAUT>"));
        }
    };
    let whole = |e: TreeError| format!("page source: {e}");
    let mut b = TreeBuilder::new();
    let screen = Bounds {
        left: 0,
        top: 0,
        right: width,
        bottom: height,
    };
    // A frame around the top elements; a source of one application is that application.
    let frame = ViewNode {
        class_name: format!("{IOS_TYPE_PREFIX}Other"),
        bounds: screen,
        enabled: true,
        ..ViewNode::default()
    };
    b.open(frame).map_err(whole)?;
    // Document order, without recursion. `open` holds the elements entered and whether each became
    // a node: an element left out closes nothing, so its children land in the nearest kept one.
    let mut open: Vec<(roxmltree::NodeId, bool)> = Vec::new();
    let mut elements = 0usize;
    for node in scope.descendants().skip(1).filter(roxmltree::Node::is_element) {
        let parent = node.parent().map(|p| p.id());
        while let Some(&(id, kept)) = open.last() {
            if Some(id) == parent {
                break;
            }
            open.pop();
            if kept {
                b.close().map_err(whole)?;
            }
        }
        elements += 1;
        let view = element(node)?;
        let kept = view.is_some();
        if let Some(view) = view {
            b.open(view).map_err(|e| at(node, &e.to_string()))?;
        }
        open.push((node.id(), kept));
    }
    if elements == 0 {
        return Err("page source has no element".into());
    }
    for (_, kept) in open {
        if kept {
            b.close().map_err(whole)?;
        }
    }
    b.close().map_err(whole)?;
    let mut frame = b.finish().map_err(whole)?;
    let root = match frame.children.len() {
        1 => frame.children.remove(0),
        _ => frame,
    };
    Ok(ViewTree {
        app_id,
        width,
        height,
        root,
    })
}

/// One element's node, or `None` when it is not visible; its children come as elements of their own.
fn element(node: roxmltree::Node) -> Result<Option<ViewNode>, String> {
    let attr = |name: &str| node.attribute(name).filter(|v| !v.is_empty());
    let flag = |name: &str| node.attribute(name) == Some("true");
    let class_name = attr("type").unwrap_or(node.tag_name().name()).to_string();
    let kind = class_name.strip_prefix(IOS_TYPE_PREFIX).unwrap_or(&class_name);
    let number = |name: &str| -> Result<f64, String> {
        let Some(raw) = node.attribute(name) else {
            return Ok(0.0);
        };
        let v: f64 = raw
            .trim()
            .parse()
            .map_err(|_| at(node, &format!("`{name}` is not a number")))?;
        if !v.is_finite() {
            return Err(at(node, &format!("`{name}` is not a finite number")));
        }
        Ok(v)
    };
    let (x, y, w, h) = (number("x")?, number("y")?, number("width")?, number("height")?);
    if w < 0.0 || h < 0.0 {
        return Err(at(node, "an element has a negative width or height"));
    }
    let max = f64::from(limits::MAX_COORD);
    if [x, y, x + w, y + h].iter().any(|c| c.abs() > max) {
        return Err(at(node, &TreeError::OutOfRange(limits::MAX_COORD).to_string()));
    }
    if node.attribute("visible") == Some("false") || w == 0.0 || h == 0.0 {
        return Ok(None);
    }
    // Within ±MAX_COORD, checked above: the casts cannot saturate.
    let bounds = Bounds {
        left: x.round() as i32,
        top: y.round() as i32,
        right: (x + w).round() as i32,
        bottom: (y + h).round() as i32,
    };
    let label = attr("label");
    let placeholder = attr("placeholderValue");
    // What the element shows as text: a field's value (a SecureTextField's is already dots `•`:
    // the tree holds no secret; an empty field's value is its placeholder), a switch's label (its
    // value `1`/`0` is its checked state), any other element's value, else its label. So the
    // generic text tools (`tapOnElementWithText`, ...) read a button's title as on Android.
    let value = attr("value").filter(|v| Some(*v) != placeholder);
    let switch = matches!(kind, "Switch" | "Toggle");
    let text = match () {
        _ if editable_kind(kind) => value,
        _ if switch => label,
        _ => value.or(label),
    };
    // WDA's `name` is the accessibility identifier, or the label when the element has none: a name
    // equal to the label is that fallback. An identifier equal to its label is lost with it.
    let resource_id = attr("name").filter(|n| Some(*n) != label);
    let editable = editable_kind(kind);
    let clickable = editable
        || matches!(
            kind,
            "Button" | "Cell" | "Link" | "Switch" | "Toggle" | "Tab" | "MenuItem" | "Key" | "SegmentedControl"
        )
        || (kind == "Image" && label.is_some());
    Ok(Some(ViewNode {
        text: text.map(str::to_string),
        hint_text: placeholder.map(str::to_string),
        resource_id: resource_id.map(str::to_string),
        content_description: label.map(str::to_string),
        bounds,
        enabled: flag("enabled"),
        clickable,
        editable,
        focused: flag("focused"),
        checked: switch.then(|| node.attribute("value") == Some("1")),
        password: kind == "SecureTextField",
        // WDA writes `selected` on tvOS only; on iOS the element's accessibility traits tell it.
        selected: flag("selected") || trait_of(node, "Selected"),
        scrollable: matches!(kind, "ScrollView" | "Table" | "CollectionView"),
        children: Vec::new(),
        web: None,
        class_name,
    }))
}

/// Whether the element's `traits` attribute (`Button, Selected`) holds `name`.
fn trait_of(node: roxmltree::Node, name: &str) -> bool {
    node.attribute("traits")
        .is_some_and(|t| t.split(',').any(|x| x.trim() == name))
}

/// The element types that take typed text.
fn editable_kind(kind: &str) -> bool {
    matches!(kind, "TextField" | "SecureTextField" | "SearchField" | "TextView")
}

fn at(node: roxmltree::Node, what: &str) -> String {
    let pos = node.document().text_pos_at(node.range().start);
    format!("page source:{}:{}: {what}", pos.row, pos.col)
}
