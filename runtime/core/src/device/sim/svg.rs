//! The simulated device's screenshot: the view tree drawn as SVG.

use crate::device::{ViewNode, ViewTree};
use crate::markup::{Dialect, escape};

/// Draws the tree as SVG for reports: a box per node, its text (or hint, or description).
pub(super) fn render_svg(tree: &ViewTree) -> String {
    let (w, h) = (tree.width, tree.height);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"sans-serif\" font-size=\"40\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#fafafa\"/>\n",
        w / 3,
        h / 3
    );
    match &tree.app_id {
        Some(_) => tree.root.children.iter().for_each(|n| draw(n, &mut out)),
        None => out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">Home screen</text>\n",
            w / 2,
            h / 2
        )),
    }
    out.push_str("</svg>\n");
    out
}

fn draw(node: &ViewNode, out: &mut String) {
    let b = node.bounds;
    let (fill, stroke, width) = match () {
        _ if node.focused => ("#ffffff", "#1a73e8", 6),
        _ if node.editable => ("#ffffff", "#9e9e9e", 3),
        _ if node.clickable && node.enabled => ("#e8f0fe", "#1a73e8", 2),
        _ => ("none", "#d0d0d0", 2),
    };
    out.push_str(&format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"12\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>\n",
        b.left,
        b.top,
        b.right - b.left,
        b.bottom - b.top
    ));
    let (label, colour) = match (&node.text, &node.hint_text, &node.content_description) {
        (Some(t), _, _) => (t.as_str(), if node.enabled { "#212121" } else { "#9e9e9e" }),
        (None, Some(h), _) => (h.as_str(), "#9e9e9e"),
        // A description is not visible text; drawn only where a leaf (an icon) has nothing else.
        (None, None, Some(d)) if node.children.is_empty() => (d.as_str(), "#757575"),
        _ => ("", ""),
    };
    // A container's label sits at its top so its children do not cover it.
    let y = if node.children.is_empty() {
        (b.top + b.bottom) / 2 + 14
    } else {
        b.top + 56
    };
    if !label.is_empty() {
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{y}\" fill=\"{colour}\">{}</text>\n",
            b.left + 24,
            escape(label, Dialect::Xml)
        ));
    }
    if let Some(checked) = node.checked {
        let (x, cy) = (b.right - 140, (b.top + b.bottom) / 2);
        let (track, knob) = if checked {
            ("#8ab4f8", x + 84)
        } else {
            ("#bdbdbd", x + 36)
        };
        out.push_str(&format!(
            "<rect x=\"{x}\" y=\"{}\" width=\"120\" height=\"48\" rx=\"24\" fill=\"{track}\"/>\
             <circle cx=\"{knob}\" cy=\"{cy}\" r=\"30\" fill=\"{}\"/>\n",
            cy - 24,
            if checked { "#1a73e8" } else { "#f5f5f5" }
        ));
    }
    node.children.iter().for_each(|c| draw(c, out));
}
