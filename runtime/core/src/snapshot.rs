//! The snapshot: the device's view tree flattened, each node with a **ref** (`y778`) derived from its
//! content, stable across captures while the node is unchanged. The LLM picks nodes by ref; recordings
//! hold selectors (see `selector`).

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::device::{ViewNode, ViewTree};
use crate::secret::Redaction;

/// One node of the flattened tree: the device's node (its `children` moved out into the flat list),
/// its ref and where it sits.
#[derive(Debug, Clone)]
pub struct SnapNode {
    pub r#ref: String,
    pub parent: Option<usize>,
    pub depth: usize,
    pub view: ViewNode,
}

impl std::ops::Deref for SnapNode {
    type Target = ViewNode;
    fn deref(&self) -> &ViewNode {
        &self.view
    }
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub app_id: Option<String>,
    pub width: i32,
    pub height: i32,
    /// Tree order (depth first); node 0 is the root.
    pub nodes: Vec<SnapNode>,
    /// [`Snapshot::to_json`], made once: a cached snapshot is shown again and again (an agent's
    /// `snapshot` calls between actions) and the session's redaction does not change under it.
    json: std::sync::OnceLock<Value>,
}

/// FNV-1a: tiny, and stable across processes and releases (refs must not change between captures).
/// Fed part by part, each part ended by `0xff`, so a node's hash continues its parent's.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_feed(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn fnv_part(h: u64, part: &str) -> u64 {
    fnv_feed(fnv_feed(h, part.as_bytes()), &[0xff])
}

/// Tries at a short ref (a letter and three digits: 26,000 of them) before a longer one is taken.
const SHORT_TRIES: u32 = 32;
/// Tries at a letter and six digits before the last resort, a ref made from the node's index.
const LONG_TRIES: u32 = 64;
/// Nodes between two looks at the call's deadline while a snapshot is made.
const NODES_PER_CHECK: usize = 256;

/// What [`Snapshot::render_with`] adds to the LLM's text or leaves out of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Each line ends with the node's bounds, `{x,y,w,h}` in pixels.
    pub bounds: bool,
    /// Nodes wholly outside the visible screen: `None` as the LLM reads them (listed, a page's
    /// marked `offscreen`), `Some(false)` left out, `Some(true)` listed and each marked `offscreen`.
    pub offscreen: Option<bool>,
    /// A line for every node, static labels and layout containers included.
    pub all: bool,
}

/// A snapshot that could not be made: the running call's time ran out (or it was cancelled).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stopped while reading the screen: the call's time ran out or it was cancelled")]
pub struct Stopped;

/// A node still to be flattened: its parent's index, its depth and the hash of its lineage (the
/// classes and ids of its ancestors) so far.
struct Pending {
    node: ViewNode,
    parent: Option<usize>,
    depth: usize,
    lineage: u64,
}

impl Snapshot {
    /// The snapshot of a tree, with no deadline.
    pub fn from_tree(tree: ViewTree) -> Snapshot {
        match Self::within(tree, &|| false) {
            Ok(s) => s,
            Err(Stopped) => unreachable!("nothing stops a snapshot without a deadline"),
        }
    }

    /// The snapshot of a tree, checking `stop` as it goes: the work is linear in the tree's size
    /// (no recursion, so any depth the device layer let through is fine) and ends early when the
    /// running call has to.
    pub fn within(tree: ViewTree, stop: &dyn Fn() -> bool) -> Result<Snapshot, Stopped> {
        let mut snap = Snapshot {
            app_id: tree.app_id,
            width: tree.width,
            height: tree.height,
            nodes: Vec::new(),
            json: std::sync::OnceLock::new(),
        };
        let mut taken = HashSet::new();
        let mut todo = vec![Pending {
            node: tree.root,
            parent: None,
            depth: 0,
            lineage: FNV_OFFSET,
        }];
        while let Some(Pending {
            mut node,
            parent,
            depth,
            lineage,
        }) = todo.pop()
        {
            let index = snap.nodes.len();
            if index % NODES_PER_CHECK == NODES_PER_CHECK - 1 && stop() {
                return Err(Stopped);
            }
            let r = pick_ref(ref_hash(&node, lineage), index, &mut taken);
            let id = node.resource_id.as_deref().unwrap_or("");
            let inner = fnv_feed(
                fnv_feed(fnv_feed(fnv_feed(lineage, b"/"), node.class_name.as_bytes()), b"#"),
                id.as_bytes(),
            );
            let children = std::mem::take(&mut node.children);
            // Depth first, in order: the first child is popped next.
            todo.extend(children.into_iter().rev().map(|child| Pending {
                node: child,
                parent: Some(index),
                depth: depth + 1,
                lineage: inner,
            }));
            snap.nodes.push(SnapNode {
                r#ref: r,
                parent,
                depth,
                view: node,
            });
        }
        Ok(snap)
    }

    /// The node with ref `r` (`y778` or `[y778]`).
    pub fn by_ref(&self, r: &str) -> Option<usize> {
        let r = r.trim().trim_start_matches('[').trim_end_matches(']');
        self.nodes.iter().position(|n| n.r#ref == r)
    }

    /// Where to touch node `i`: the centre of its part on the screen; `None` when it has none.
    pub fn tap_point(&self, i: usize) -> Option<(i32, i32)> {
        self.nodes.get(i)?.bounds.tap_point(self.width, self.height)
    }

    /// Whether `a` is a proper ancestor of `b`.
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let mut p = self.nodes.get(b).and_then(|n| n.parent);
        while let Some(x) = p {
            if x == a {
                return true;
            }
            p = self.nodes[x].parent;
        }
        false
    }

    /// Whether `other` shows the same screen: the same app, size and nodes (their refs, texts as the
    /// snapshot shows them, bounds and states).
    pub fn same_screen(&self, other: &Snapshot) -> bool {
        self.app_id == other.app_id
            && (self.width, self.height) == (other.width, other.height)
            && self.nodes.len() == other.nodes.len()
            && self
                .nodes
                .iter()
                .zip(&other.nodes)
                .all(|(a, b)| a.r#ref == b.r#ref && a.parent == b.parent && a.view == b.view)
    }

    /// Child indexes from the root down to node `i` (`[]` for the root): the original's `indexPath`.
    pub fn index_path(&self, i: usize) -> Vec<u32> {
        let mut path = Vec::new();
        let mut at = i;
        while let Some(p) = self.nodes.get(at).and_then(|n| n.parent) {
            // Nodes are depth first, so the siblings before `at` are its parent's earlier children.
            let nth = (p + 1..at).filter(|&j| self.nodes[j].parent == Some(p)).count();
            path.push(nth as u32);
            at = p;
        }
        path.reverse();
        path
    }

    /// Whether a node says anything worth a line (layout containers do not).
    fn shown(n: &SnapNode) -> bool {
        if let Some(w) = n.web.as_deref() {
            return web_render::shown(n, w);
        }
        n.text.is_some()
            || n.hint_text.is_some()
            || n.content_description.is_some()
            || n.clickable
            || n.editable
            || n.checked.is_some()
    }

    /// Whether node `i` lies wholly outside the visible screen: a page's node as the page measured
    /// it, any other node when no part of its bounds is on the screen.
    pub fn offscreen(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        match n.web.as_deref() {
            Some(w) => w.offscreen,
            None => n.bounds.tap_point(self.width, self.height).is_none(),
        }
    }

    /// Whether node `i` gets a line under `opts`.
    fn listed(&self, i: usize, opts: &RenderOptions) -> bool {
        let n = &self.nodes[i];
        (opts.all || Self::shown(n)) && !(opts.offscreen == Some(false) && self.offscreen(i))
    }

    /// The compact text the LLM reads: one line per meaningful node, `[ref] Class "text" hint="..."`.
    /// Every value in `redact` (resolved secrets) reads `***`.
    pub fn render(&self, redact: &Redaction) -> String {
        self.render_with(redact, &RenderOptions::default())
    }

    /// [`Snapshot::render`], with what `opts` adds or leaves out (`trailblaze snapshot`'s
    /// `--bounds`, `--offscreen` and `--all`).
    pub fn render_with(&self, redact: &Redaction, opts: &RenderOptions) -> String {
        let mut out = String::new();
        let mut levels: Vec<usize> = vec![0; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            let level = n
                .parent
                .map(|p| levels[p] + usize::from(self.listed(p, opts)))
                .unwrap_or(0);
            levels[i] = level;
            if !self.listed(i, opts) {
                continue;
            }
            let b = n.bounds;
            let tail = if opts.bounds {
                format!(" {{{},{},{},{}}}", b.left, b.top, b.right - b.left, b.bottom - b.top)
            } else {
                String::new()
            };
            if let Some(w) = n.web.as_deref() {
                web_render::line(&mut out, n, w, level, redact, &tail);
                continue;
            }
            let class = n.class_name.rsplit('.').next().unwrap_or(&n.class_name);
            // `XCUIElementTypeButton` reads `Button`, as `android.widget.Button` does.
            let class = class.strip_prefix(crate::device::IOS_TYPE_PREFIX).unwrap_or(class);
            let mut line = format!("{}[{}] {class}", "  ".repeat(level), n.r#ref);
            let q = |s: &str| scrub(s, redact).replace('"', "\\\"");
            if let Some(t) = n.text.as_deref().filter(|t| !t.is_empty()) {
                line.push_str(&format!(" \"{}\"", q(t)));
            }
            if let Some(h) = &n.hint_text {
                line.push_str(&format!(" hint=\"{}\"", q(h)));
            }
            // An iOS element's label is usually its text too: said once.
            if let Some(d) = n
                .content_description
                .as_ref()
                .filter(|d| !n.is_ios() || n.text.as_ref() != Some(*d))
            {
                line.push_str(&format!(" desc=\"{}\"", q(d)));
            }
            let mut flags = Vec::new();
            if n.focused {
                flags.push("focused");
            }
            match n.checked {
                Some(true) => flags.push("checked"),
                Some(false) => flags.push("unchecked"),
                None => {}
            }
            if !n.enabled {
                flags.push("disabled");
            }
            if n.password {
                flags.push("password");
            }
            if opts.offscreen == Some(true) && self.offscreen(i) {
                flags.push("offscreen");
            }
            if !flags.is_empty() {
                line.push_str(&format!(" ({})", flags.join(", ")));
            }
            out.push_str(&line);
            out.push_str(&tail);
            out.push('\n');
        }
        out
    }

    /// The snapshot as a tool result: the app, the compact text, and the tree with a ref on each node.
    /// The snapshot as the `snapshot` tool returns it. Made once per snapshot: every caller passes
    /// its session's redaction, which is fixed for the session (a field a secret was typed into is
    /// tainted by that typing, which is not read-only and so brings a new snapshot).
    pub fn to_json(&self, redact: &Redaction) -> Value {
        self.json
            .get_or_init(|| {
                let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
                for (i, n) in self.nodes.iter().enumerate() {
                    if let Some(p) = n.parent {
                        children[p].push(i);
                    }
                }
                json!({ "appId": self.app_id, "text": self.render(redact), "root": self.node_json(0, &children, redact) })
            })
            .clone()
    }

    fn node_json(&self, i: usize, kids: &[Vec<usize>], redact: &Redaction) -> Value {
        let n = &self.nodes[i];
        let s = |v: &Option<String>| v.as_deref().map(|t| scrub(t, redact));
        let children: Vec<Value> = kids[i].iter().map(|&c| self.node_json(c, kids, redact)).collect();
        json!({
            "ref": n.r#ref, "className": n.class_name, "text": s(&n.text), "hintText": s(&n.hint_text),
            "resourceId": n.resource_id, "contentDescription": s(&n.content_description),
            "bounds": n.bounds, "enabled": n.enabled, "clickable": n.clickable, "editable": n.editable,
            "focused": n.focused, "checked": n.checked, "password": n.password, "children": children,
            "web": n.web.as_deref().map(|w| web_render::json(w, redact)),
        })
    }
}

/// The hash a node's ref comes from, salt aside: what the node is and where it sits, not its bounds
/// (so scrolling keeps refs), and for an editable field not its text (typing into it keeps its ref).
fn ref_hash(n: &ViewNode, lineage: u64) -> u64 {
    let text = if n.editable {
        ""
    } else {
        n.text.as_deref().unwrap_or("")
    };
    [
        n.class_name.as_str(),
        text,
        n.hint_text.as_deref().unwrap_or(""),
        n.resource_id.as_deref().unwrap_or(""),
        n.content_description.as_deref().unwrap_or(""),
    ]
    .iter()
    .fold(fnv_feed(lineage, &[0xff]), |h, p| fnv_part(h, p))
}

/// A ref no other node of the snapshot has: a letter and three digits while those last, then a
/// letter and six, and at worst one made from the node's index. Each kind has its own length, so
/// the last is unique by construction and the search always ends.
fn pick_ref(base: u64, index: usize, taken: &mut HashSet<String>) -> String {
    let mut last_letter = 'a';
    for salt in 0..LONG_TRIES {
        let h = fnv_part(base, &salt.to_string());
        let letter = (b'a' + (h % 26) as u8) as char;
        last_letter = letter;
        let r = if salt < SHORT_TRIES {
            format!("{letter}{:03}", (h / 26) % 1000)
        } else {
            format!("{letter}{:06}", (h / 26) % 1_000_000)
        };
        if taken.insert(r.clone()) {
            return r;
        }
    }
    let r = format!("{last_letter}{index:09}");
    taken.insert(r.clone());
    r
}

fn scrub(text: &str, redact: &Redaction) -> String {
    redact.text(text).into_owned()
}

mod screen;
mod web_render;
pub use screen::{Painter, SECRET_MASK, Screen, SecretFields};
