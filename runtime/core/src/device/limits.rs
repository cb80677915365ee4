//! What the host accepts from a device's view tree, in one place: how deep it nests, how many nodes
//! it has, how far its coordinates reach. A dump is hostile input (a broken or malicious app, a
//! device that answers nonsense), so every reader — `uiautomator dump` XML, an embedder's JSON,
//! `app.yaml`, a browser's accessibility tree — builds its tree through [`TreeBuilder`] (events,
//! no recursion; XML is measured by [`xml_nesting`] first) or [`tree_from_json`] (depth checked
//! before each descent), and a tree a `Device` made some other way is checked by [`check_tree`]
//! before anything recursive walks it.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{Bounds, ViewNode, ViewTree};

/// Nodes nest at most this deep (the root is depth 0). Real screens are far shallower (tens).
pub const MAX_DEPTH: usize = 256;
/// A tree has at most this many nodes. Real screens have hundreds; a long web page thousands.
pub const MAX_NODES: usize = 50_000;
/// Every coordinate lies within ±this many pixels: far beyond any screen (scrolled content
/// included), and far enough from `i32::MAX` that no sum or centre of two can overflow.
pub const MAX_COORD: i32 = 1_000_000;

/// The limits a tree is held to; [`TreeLimits::DEFAULT`] is what every device gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    pub max_depth: usize,
    pub max_nodes: usize,
    pub max_coord: i32,
}

impl TreeLimits {
    pub const DEFAULT: TreeLimits = TreeLimits {
        max_depth: MAX_DEPTH,
        max_nodes: MAX_NODES,
        max_coord: MAX_COORD,
    };
}

impl Default for TreeLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a tree was refused. Never quotes a node's text (it may be anything, a secret included).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("the view tree nests deeper than {0} nodes")]
    TooDeep(usize),
    #[error("the view tree has more than {0} nodes")]
    TooManyNodes(usize),
    #[error("a node's bounds reach beyond ±{0} pixels")]
    OutOfRange(i32),
    #[error("the view tree has no root node")]
    Empty,
    #[error("the view tree closes a node it never opened")]
    Unbalanced,
}

/// Builds a [`ViewTree`]'s root from open/close events, refusing a node past a limit before it is
/// added: memory and time stay proportional to the input, and nothing recurses.
///
/// ```
/// use trailblaze_core::device::{ViewNode, limits::TreeBuilder};
/// let mut b = TreeBuilder::new();
/// b.open(ViewNode { class_name: "Frame".into(), ..ViewNode::default() }).unwrap();
/// b.leaf(ViewNode { class_name: "Button".into(), ..ViewNode::default() }).unwrap();
/// b.close().unwrap();
/// assert_eq!(b.finish().unwrap().children.len(), 1);
/// ```
#[derive(Debug)]
pub struct TreeBuilder {
    limits: TreeLimits,
    /// The open nodes, outermost first; each collects its children until it closes.
    open: Vec<ViewNode>,
    done: Option<ViewNode>,
    nodes: usize,
}

impl Default for TreeBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TreeBuilder {
    pub fn new() -> TreeBuilder {
        Self::with_limits(TreeLimits::DEFAULT)
    }

    pub fn with_limits(limits: TreeLimits) -> TreeBuilder {
        TreeBuilder {
            limits,
            open: Vec::new(),
            done: None,
            nodes: 0,
        }
    }

    /// Opens `node` (its own `children` are dropped: children come as events) inside the node open
    /// now, or as the root.
    pub fn open(&mut self, mut node: ViewNode) -> Result<(), TreeError> {
        if self.open.len() > self.limits.max_depth {
            return Err(TreeError::TooDeep(self.limits.max_depth));
        }
        if self.done.is_some() && self.open.is_empty() {
            // A second root: the caller frames several windows itself (see `adb`'s dump).
            return Err(TreeError::Unbalanced);
        }
        self.count()?;
        check_bounds(&node.bounds, &self.limits)?;
        node.children = Vec::new();
        self.open.push(node);
        Ok(())
    }

    /// Closes the innermost open node.
    pub fn close(&mut self) -> Result<(), TreeError> {
        let node = self.open.pop().ok_or(TreeError::Unbalanced)?;
        match self.open.last_mut() {
            Some(parent) => parent.children.push(node),
            None => self.done = Some(node),
        }
        Ok(())
    }

    /// A node with no children: [`TreeBuilder::open`] then [`TreeBuilder::close`].
    pub fn leaf(&mut self, node: ViewNode) -> Result<(), TreeError> {
        self.open(node)?;
        self.close()
    }

    /// How many nodes are open now (the depth the next one would have).
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// The root, once every opened node was closed.
    pub fn finish(self) -> Result<ViewNode, TreeError> {
        if !self.open.is_empty() {
            return Err(TreeError::Unbalanced);
        }
        self.done.ok_or(TreeError::Empty)
    }

    fn count(&mut self) -> Result<(), TreeError> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(TreeError::TooManyNodes(self.limits.max_nodes));
        }
        Ok(())
    }
}

fn check_bounds(b: &Bounds, limits: &TreeLimits) -> Result<(), TreeError> {
    let m = limits.max_coord;
    if [b.left, b.top, b.right, b.bottom].iter().any(|c| !(-m..=m).contains(c)) {
        return Err(TreeError::OutOfRange(m));
    }
    Ok(())
}

/// Checks a tree a device made itself (no parser of ours saw it) without recursion: depth, node
/// count and every coordinate, the screen's size included.
pub fn check_tree(tree: &ViewTree) -> Result<(), TreeError> {
    let limits = TreeLimits::DEFAULT;
    let m = limits.max_coord;
    if !(0..=m).contains(&tree.width) || !(0..=m).contains(&tree.height) {
        return Err(TreeError::OutOfRange(m));
    }
    let mut stack: Vec<(&ViewNode, usize)> = vec![(&tree.root, 0)];
    let mut nodes = 0usize;
    while let Some((n, depth)) = stack.pop() {
        if depth > limits.max_depth {
            return Err(TreeError::TooDeep(limits.max_depth));
        }
        nodes += 1;
        if nodes > limits.max_nodes {
            return Err(TreeError::TooManyNodes(limits.max_nodes));
        }
        check_bounds(&n.bounds, &limits)?;
        stack.extend(n.children.iter().map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// Drops a tree of any depth without recursion (a derived drop of a deep tree overflows the stack):
/// for a tree [`check_tree`] refused.
pub fn drop_flat(root: ViewNode) {
    let mut stack = vec![root];
    while let Some(mut n) = stack.pop() {
        stack.append(&mut n.children);
    }
}

/// Reads a view tree from JSON (`{"appId", "width", "height", "root": {...ViewNode, "children"?}}`,
/// the shape `ViewTree` serializes to), refusing a node past a limit before descending into it.
/// Errors give serde_json's line and column, never the text.
pub fn tree_from_json(bytes: &[u8]) -> Result<ViewTree, String> {
    let budget = Budget {
        limits: TreeLimits::DEFAULT,
        nodes: Cell::new(0),
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // Our own depth check runs before every descent (serde_json's would stop at 64 node levels: an
    // object and a `children` array each count).
    de.disable_recursion_limit();
    let tree = TreeSeed(&budget).deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(tree)
}

struct Budget {
    limits: TreeLimits,
    nodes: Cell<usize>,
}

struct TreeSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for TreeSeed<'_> {
    type Value = ViewTree;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ViewTree, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = ViewTree;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a view tree object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ViewTree, A::Error> {
        let (mut app_id, mut width, mut height, mut root) = (None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "appId" => app_id = Some(map.next_value::<Option<String>>()?),
                "width" => width = Some(map.next_value::<i32>()?),
                "height" => height = Some(map.next_value::<i32>()?),
                "root" => {
                    root = Some(map.next_value_seed(NodeSeed {
                        budget: self.0,
                        depth: 0,
                    })?)
                }
                other => return Err(de::Error::unknown_field(other, &["appId", "width", "height", "root"])),
            }
        }
        let m = self.0.limits.max_coord;
        let width = width.ok_or_else(|| de::Error::missing_field("width"))?;
        let height = height.ok_or_else(|| de::Error::missing_field("height"))?;
        if !(0..=m).contains(&width) || !(0..=m).contains(&height) {
            return Err(de::Error::custom(TreeError::OutOfRange(m)));
        }
        Ok(ViewTree {
            app_id: app_id.flatten(),
            width,
            height,
            root: root.ok_or_else(|| de::Error::missing_field("root"))?,
        })
    }
}

struct NodeSeed<'a> {
    budget: &'a Budget,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = ViewNode;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ViewNode, D::Error> {
        let limits = &self.budget.limits;
        // Before descending: the depth and the count, so the recursion below stays bounded.
        if self.depth > limits.max_depth {
            return Err(de::Error::custom(TreeError::TooDeep(limits.max_depth)));
        }
        let n = self.budget.nodes.get() + 1;
        self.budget.nodes.set(n);
        if n > limits.max_nodes {
            return Err(de::Error::custom(TreeError::TooManyNodes(limits.max_nodes)));
        }
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = ViewNode;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a view node object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ViewNode, A::Error> {
        let mut n = ViewNode::default();
        let mut class = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "className" => {
                    n.class_name = map.next_value()?;
                    class = true;
                }
                "text" => n.text = map.next_value()?,
                "hintText" => n.hint_text = map.next_value()?,
                "resourceId" => n.resource_id = map.next_value()?,
                "contentDescription" => n.content_description = map.next_value()?,
                "bounds" => n.bounds = map.next_value()?,
                "enabled" => n.enabled = map.next_value()?,
                "clickable" => n.clickable = map.next_value()?,
                "editable" => n.editable = map.next_value()?,
                "focused" => n.focused = map.next_value()?,
                "checked" => n.checked = map.next_value()?,
                "password" => n.password = map.next_value()?,
                "selected" => n.selected = map.next_value()?,
                "scrollable" => n.scrollable = map.next_value()?,
                "children" => {
                    n.children = map.next_value_seed(ChildrenSeed {
                        budget: self.budget,
                        depth: self.depth + 1,
                    })?
                }
                _ => {
                    // Unknown keys are skipped (an embedder's newer fields), their nesting bounded too.
                    map.next_value_seed(Skip(0))?;
                }
            }
        }
        if !class {
            return Err(de::Error::missing_field("className"));
        }
        check_bounds(&n.bounds, &self.budget.limits).map_err(de::Error::custom)?;
        Ok(n)
    }
}

struct ChildrenSeed<'a> {
    budget: &'a Budget,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_> {
    type Value = Vec<ViewNode>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<ViewNode>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ChildrenSeed<'_> {
    type Value = Vec<ViewNode>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of view nodes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<ViewNode>, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = seq.next_element_seed(NodeSeed {
            budget: self.budget,
            depth: self.depth,
        })? {
            out.push(n);
        }
        Ok(out)
    }
}

/// Skips a value of an unknown key, refusing nesting past [`MAX_DEPTH`] (serde_json's own guard is
/// off here, see [`tree_from_json`]).
struct Skip(usize);

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.0 > MAX_DEPTH {
            return Err(de::Error::custom(TreeError::TooDeep(MAX_DEPTH)));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip(self.0 + 1))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Skip(self.0 + 1))?;
        }
        Ok(())
    }
}

/// The deepest element nesting in `xml` (stopping once past `stop_past`), by one linear pass with
/// no recursion: what a device's XML (a `uiautomator dump`, WDA's page source) is checked by before
/// a reader that recurses per open element (roxmltree) sees it. It never reads less than a parser
/// opens: markup inside comments, CDATA, processing instructions and quoted attribute values is
/// skipped as a parser skips it, and where the two could differ (a quote outside an attribute value,
/// `<` inside one) the parser fails first.
pub fn xml_nesting(xml: &str, stop_past: usize) -> usize {
    let b = xml.as_bytes();
    // The index just past the first `end` at or after `from`, or the end of the text.
    let past = |from: usize, end: &[u8]| -> usize {
        b.get(from..)
            .and_then(|rest| rest.windows(end.len()).position(|w| w == end))
            .map_or(b.len(), |p| from + p + end.len())
    };
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while let Some(p) = b.get(i..).and_then(|rest| rest.iter().position(|&c| c == b'<')) {
        i += p;
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = past(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = past(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = past(i + 2, b"?>");
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = past(i + 2, b">");
        } else {
            // A start tag (or a declaration) runs to its `>`, over quoted values, which may hold `>`.
            let mut j = i + 1;
            let mut quote = None;
            while let Some(&c) = b.get(j) {
                match (quote, c) {
                    (None, b'"' | b'\'') => quote = Some(c),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            let empty = b.get(j.wrapping_sub(1)) == Some(&b'/');
            if !rest.starts_with(b"<!") && !empty {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > stop_past {
                    return deepest;
                }
            }
            i = j + 1;
        }
    }
    deepest
}

#[cfg(test)]
mod xml_tests {
    use super::xml_nesting as nesting;

    #[test]
    fn nesting_counts_open_elements_and_skips_what_parsers_skip() {
        assert_eq!(nesting("<a><b/><c><d></d></c></a>", 100), 3);
        assert_eq!(
            nesting(r#"<a x="<b><c>"><!-- <d><e> --><![CDATA[<f>]]><?pi <g>?></a>"#, 100),
            1
        );
        // `/>` inside a value does not close the element.
        assert_eq!(nesting(r#"<a v="/>"><a v="/>"></a></a>"#, 100), 2);
        assert_eq!(nesting(&"<a>".repeat(1000), 10), 11);
    }
}
