//! One capture of the page: the agent's list of visible elements from each frame (out-of-process
//! ones included), read with explicit bounds (the page controls all of it) and stitched into one
//! view tree, each frame's document under its `<iframe>` element, its boxes moved into the page's
//! viewport.

use std::time::Instant;

use serde_json::Value;

use super::page::{Frame, Page, PageError};
use trailblaze_core::device::{Bounds, ViewNode, ViewTree, WebHandle, WebNode};

/// Elements a capture keeps, all frames together; the rest is left out with a note.
pub const MAX_NODES: usize = 5000;
/// How deep the stitched tree may nest (frames inside frames add their depth).
const MAX_DEPTH: usize = 512;
/// The longest text kept from the page for one field.
const MAX_TEXT: usize = 400;

/// What the device keeps of a capture to act on its elements later.
#[derive(Debug, Default, Clone)]
pub struct Captured {
    pub generation: u64,
    pub frames: Vec<Frame>,
    /// Each frame's offset in the page's viewport (its content box's origin).
    pub offsets: Vec<(f64, f64)>,
}

/// Captures every frame of `page` as generation `generation`.
pub fn capture(
    page: &Page,
    generation: u64,
    viewport: (u32, u32),
    deadline: Instant,
) -> Result<(ViewTree, Captured), PageError> {
    let (frames, lists) = read_frames(page, generation, deadline)?;
    let url = lists
        .first()
        .and_then(|m| m.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut b = Builder {
        frames: &frames,
        lists: &lists,
        generation,
        offsets: vec![(0.0, 0.0); frames.len()],
        left_out: 0,
    };
    let mut root = b.frame_tree(0, (0.0, 0.0), 0).unwrap_or_else(empty_document);
    let truncated: u64 = lists
        .iter()
        .map(|l| l.get("truncated").and_then(Value::as_u64).unwrap_or(0))
        .sum::<u64>()
        + b.left_out;
    if truncated > 0
        && let Some(w) = root.web.as_mut()
    {
        w.note = Some(format!(
            "the page is large: {truncated} more elements were left out of this snapshot (at most {MAX_NODES} are kept)"
        ));
    }
    root.bounds = Bounds {
        left: 0,
        top: 0,
        right: viewport.0 as i32,
        bottom: viewport.1 as i32,
    };
    let offsets = b.offsets;
    Ok((
        ViewTree {
            app_id: Some(url),
            width: viewport.0 as i32,
            height: viewport.1 as i32,
            root,
        },
        Captured {
            generation,
            frames,
            offsets,
        },
    ))
}

/// Every frame of `page` and its capture, the main frame first.
fn read_frames(page: &Page, generation: u64, deadline: Instant) -> Result<(Vec<Frame>, Vec<Value>), PageError> {
    // The main frame first: a page without frames costs one call.
    let main = page.main_frame();
    let mut first = read(page, &main, generation, MAX_NODES, deadline)?;
    let iframes: Vec<&str> = first
        .get("nodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| n.get("fr").and_then(Value::as_str))
        .collect();
    let untagged = iframes.iter().any(|f| f.is_empty());
    if iframes.is_empty() {
        return Ok((vec![main], vec![first]));
    }
    let frames = page.frames(deadline)?;
    // Each child frame's owner is marked in its parent first, so the parent's capture names it.
    for f in frames.iter().skip(1) {
        if let Some(parent) = frames.iter().find(|p| Some(&p.id) == f.parent.as_ref()) {
            // A frame whose owner cannot be found (it is going away) is simply not stitched in.
            let _ = page.tag_owner(parent, f, deadline);
        }
    }
    if untagged {
        first = read(page, &main, generation, MAX_NODES, deadline)?;
    }
    let mut budget = MAX_NODES.saturating_sub(count(&first));
    let mut lists = vec![first];
    for f in frames.iter().skip(1) {
        let v = match read(page, f, generation, budget.max(1), deadline) {
            Ok(v) => v,
            // A child frame that cannot be read (navigating, detached) leaves a hole.
            Err(e) if !matches!(e, PageError::Cdp(super::cdp::CdpError::Timeout { .. })) => Value::Null,
            Err(e) => return Err(e),
        };
        budget = budget.saturating_sub(count(&v));
        lists.push(v);
    }
    Ok((frames, lists))
}

/// The root of a page whose main frame gave no elements.
fn empty_document() -> ViewNode {
    ViewNode {
        class_name: "document".into(),
        enabled: true,
        web: Some(Box::new(WebNode {
            role: "document".into(),
            tag: "body".into(),
            ..WebNode::default()
        })),
        ..ViewNode::default()
    }
}

/// One frame's capture, at most `max` elements.
fn read(page: &Page, frame: &Frame, generation: u64, max: usize, deadline: Instant) -> Result<Value, PageError> {
    // As one JSON text: the protocol's by-value copy of a thousand small objects costs more than
    // the page's JSON.stringify and one parse here.
    let expr = format!("JSON.stringify(__tb.capture({{gen: {generation}, max: {max}}}))");
    Ok(match page.agent(frame, &expr, deadline)? {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
        other => other,
    })
}

fn count(v: &Value) -> usize {
    v.get("nodes").and_then(Value::as_array).map_or(0, Vec::len)
}

struct Builder<'a> {
    frames: &'a [Frame],
    lists: &'a [Value],
    generation: u64,
    offsets: Vec<(f64, f64)>,
    left_out: u64,
}

impl Builder<'_> {
    /// Frame `f`'s document as a tree, its boxes moved by `offset`.
    fn frame_tree(&mut self, f: usize, offset: (f64, f64), depth: usize) -> Option<ViewNode> {
        self.offsets[f] = offset;
        let nodes = self.lists.get(f)?.get("nodes")?.as_array()?;
        if nodes.is_empty() {
            return None;
        }
        // Children by parent; a parent index that is not before its child is the page lying: the
        // node hangs from the root instead (never a cycle).
        let mut kids: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate().skip(1) {
            let p = n.get("p").and_then(Value::as_i64).unwrap_or(0);
            let p = if p >= 0 && (p as usize) < i { p as usize } else { 0 };
            kids[p].push(i);
        }
        // Iterative post-order build: no recursion on page data.
        let mut built: Vec<Option<ViewNode>> = vec![None; nodes.len()];
        let mut stack: Vec<(usize, bool)> = vec![(0, false)];
        while let Some((i, expanded)) = stack.pop() {
            if !expanded {
                stack.push((i, true));
                for &k in kids[i].iter().rev() {
                    stack.push((k, false));
                }
                continue;
            }
            let mut node = self.node(f, i, &nodes[i], offset);
            let mut children: Vec<ViewNode> = kids[i].iter().filter_map(|&k| built[k].take()).collect();
            if let Some(child_frame) = nodes[i].get("fr").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                let cb = nodes[i].get("cb").and_then(Value::as_array);
                let at = |j: usize| cb.and_then(|c| c.get(j)).and_then(Value::as_f64).unwrap_or(0.0);
                let inner = (offset.0 + at(0), offset.1 + at(1));
                let idx = self.frames.iter().position(|fr| fr.id == child_frame);
                match idx {
                    Some(c) if depth < 16 => {
                        if let Some(mut doc) = self.frame_tree(c, inner, depth + 1) {
                            if let Some(w) = doc.web.as_mut() {
                                w.frame_url = Some(clip(&self.frames[c].url));
                            }
                            children.push(doc);
                        }
                    }
                    _ => {}
                }
            }
            node.children = children;
            built[i] = Some(node);
        }
        let mut root = built.into_iter().next().flatten()?;
        cap_depth(&mut root, &mut self.left_out);
        Some(root)
    }

    fn node(&self, frame: usize, index: usize, n: &Value, offset: (f64, f64)) -> ViewNode {
        let text = |k: &str| n.get(k).and_then(Value::as_str).map(clip);
        let flag = |k: &str| {
            n.get(k)
                .is_some_and(|v| v.as_bool() == Some(true) || v.as_i64() == Some(1))
        };
        let role = text("r").unwrap_or_else(|| "generic".into());
        let name = text("n").unwrap_or_default();
        let own = text("o");
        let editable = flag("e");
        let b = n.get("b").and_then(Value::as_array);
        let at = |j: usize| b.and_then(|v| v.get(j)).and_then(Value::as_f64).unwrap_or(0.0);
        let (x, y) = (at(0) + offset.0, at(1) + offset.1);
        let bounds = Bounds {
            left: x.round() as i32,
            top: y.round() as i32,
            right: (x + at(2)).round() as i32,
            bottom: (y + at(3)).round() as i32,
        };
        let in_name = flag("in");
        let value = text("v");
        let description = text("d");
        // What the phone's fields say (see `WebNode`): a field's text is its value, so a secret
        // typed into it is masked like on a phone; anything else shows its name, else its own text.
        let (shown_text, desc) = if editable {
            (value.clone(), (!name.is_empty()).then(|| name.clone()).or(description))
        } else if !name.is_empty() && !in_name {
            (Some(name.clone()), description)
        } else if !in_name {
            (own.clone(), description)
        } else {
            (None, description)
        };
        let checked = n.get("c").and_then(|c| match c {
            Value::Bool(b) => Some(*b),
            Value::String(_) => Some(false),
            _ => None,
        });
        ViewNode {
            class_name: role.clone(),
            text: shown_text.filter(|t| !t.is_empty() || editable),
            hint_text: text("h"),
            resource_id: text("id"),
            content_description: desc,
            bounds,
            enabled: !flag("dis"),
            clickable: flag("ck"),
            editable,
            focused: flag("f"),
            checked,
            password: flag("pw"),
            selected: flag("s"),
            scrollable: flag("sc"),
            children: Vec::new(),
            web: Some(Box::new(WebNode {
                role,
                name,
                tag: text("t").unwrap_or_default(),
                own_text: own,
                level: n.get("l").and_then(Value::as_u64).map(|l| l.min(9) as u8),
                expanded: n.get("x").and_then(Value::as_bool),
                mixed: n.get("c").and_then(Value::as_str) == Some("mixed"),
                test_id: text("ti"),
                value: if editable { None } else { value },
                in_name,
                offscreen: flag("off"),
                nth_child: n.get("k").and_then(Value::as_u64).unwrap_or(0).min(u32::MAX as u64) as u32,
                detached_parent: flag("sk") || flag("sr"),
                frame_url: None,
                note: None,
                handle: WebHandle {
                    capture: self.generation,
                    frame: frame as u32,
                    index: index as u32,
                },
            })),
        }
    }
}

fn clip(s: &str) -> String {
    if s.len() <= MAX_TEXT {
        return s.to_string();
    }
    let mut end = MAX_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Cuts the tree below [`MAX_DEPTH`] (iteratively), counting what was cut.
fn cap_depth(root: &mut ViewNode, left_out: &mut u64) {
    let mut stack: Vec<(&mut ViewNode, usize)> = vec![(root, 0)];
    while let Some((n, d)) = stack.pop() {
        if d >= MAX_DEPTH {
            *left_out += n.children.len() as u64;
            n.children.clear();
            continue;
        }
        for c in n.children.iter_mut() {
            stack.push((c, d + 1));
        }
    }
}
