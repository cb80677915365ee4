//! The `app.yaml` format of the simulated device: the serde types that read it, the checks run on
//! load and the layout that gives every node its bounds. The parent module runs the result.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Deserializer};

use crate::device::Bounds;

/// The simulated screen, in device pixels (a common phone size).
pub const SCREEN_WIDTH: i32 = 1080;
pub const SCREEN_HEIGHT: i32 = 2400;

// Layout: a status bar, an optional title bar, then nodes stacked top to bottom with a margin.
const STATUS_BAR: i32 = 64;
const TITLE_HEIGHT: i32 = 160;
const MARGIN: i32 = 32;
const ROW: i32 = 128;
const GAP: i32 = 16;
const INSET: i32 = 16;
/// Room at the top of a container that has its own `text`, so the label does not sit under a child.
const LABEL: i32 = 80;
// Limits that keep recursion shallow and layout arithmetic far from overflow: an app is written by
// hand, so far tighter than what the device layer accepts from any device (`device::limits`).
const MAX_DEPTH: usize = 16;
const MAX_NODES_PER_SCREEN: usize = 1000;
const MAX_COORD: i32 = 100_000;
const _: () = assert!(
    MAX_DEPTH < crate::device::limits::MAX_DEPTH
        && MAX_NODES_PER_SCREEN < crate::device::limits::MAX_NODES
        && MAX_COORD < crate::device::limits::MAX_COORD
);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct AppSpec {
    id: String,
    start: String,
    screens: BTreeMap<String, ScreenSpec>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScreenSpec {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    nodes: Vec<NodeSpec>,
    /// Absent: BACK pops the navigation stack; `null`: BACK does nothing; a name: BACK goes there.
    #[serde(default, deserialize_with = "present")]
    back: Option<Option<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NodeSpec {
    #[serde(default)]
    id: Option<String>,
    #[serde(default = "default_class")]
    class: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    hint: Option<String>,
    #[serde(default)]
    content_description: Option<String>,
    #[serde(default)]
    editable: bool,
    #[serde(default)]
    password: bool,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    toggle: bool,
    #[serde(default)]
    checked: Option<bool>,
    #[serde(default)]
    tap: Option<TapSpec>,
    #[serde(default)]
    enter_taps: bool,
    #[serde(default)]
    scrollable: bool,
    #[serde(default)]
    children: Vec<NodeSpec>,
    #[serde(default)]
    bounds: Option<[i32; 4]>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TapSpec {
    #[serde(default)]
    goto: Option<String>,
    #[serde(default)]
    back: bool,
    #[serde(default)]
    require: BTreeMap<String, String>,
    #[serde(default)]
    otherwise: Option<OtherwiseSpec>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OtherwiseSpec {
    show: String,
}

fn default_class() -> String {
    "android.view.View".to_owned()
}

fn yes() -> bool {
    true
}

/// Tells `back: null` (Some(None)) from an absent `back` (None).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// A validated app: screens by index, every target resolved, every node laid out.
#[derive(Debug, Clone)]
pub(super) struct App {
    pub id: String,
    pub start: usize,
    pub screens: Vec<Screen>,
}

#[derive(Debug, Clone)]
pub(super) struct Screen {
    pub name: String,
    pub back: Back,
    /// Every node of the screen in document order (the title bar first); `roots` are the top level.
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    /// The node ENTER activates.
    pub enter: Option<usize>,
    /// Where an `otherwise.show` message appears: below the last top-level node.
    pub banner: Bounds,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Back {
    Pop,
    Stay,
    To(usize),
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub id: Option<String>,
    pub class: String,
    pub text: Option<String>,
    pub hint: Option<String>,
    pub content_description: Option<String>,
    pub editable: bool,
    pub password: bool,
    pub enabled: bool,
    pub toggle: bool,
    pub checked: Option<bool>,
    pub tap: Option<Tap>,
    pub bounds: Bounds,
    pub children: Vec<usize>,
    /// A scroll container: how far its content can move up (0 when it fits).
    pub scroll: Option<i32>,
    /// The scroll container this node's bounds move with.
    pub scroller: Option<usize>,
}

impl Node {
    /// Whether a tap does something here (a tap on a plain child reaches its nearest such ancestor).
    pub fn interactive(&self) -> bool {
        self.editable || self.toggle || self.tap.is_some()
    }
}

#[derive(Debug, Clone)]
pub(super) struct Tap {
    pub action: Action,
    /// (node index, the text it must hold).
    pub require: Vec<(usize, String)>,
    pub otherwise: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Goto(usize),
    Back,
}

/// Something wrong in a valid-YAML app, at a path in the form `crate::yaml` reports
/// (`screens.inbox.nodes[1].tap.goto`), so it can be given a line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Problem {
    pub path: String,
    pub message: String,
}

fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        message: message.into(),
    }
}

/// Checks `spec` and lays it out; on failure, every problem found.
pub(super) fn compile(spec: AppSpec) -> Result<App, Vec<Problem>> {
    let mut problems = Vec::new();
    let names: Vec<String> = spec.screens.keys().cloned().collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let known = || names.join(", ");
    if spec.id.trim().is_empty() || spec.id.contains(char::is_whitespace) {
        problems.push(problem("id", format!("must be a package name, got `{}`", spec.id)));
    }
    let start = index.get(spec.start.as_str()).copied();
    if start.is_none() {
        problems.push(problem(
            "start",
            format!(
                "names screen `{}`, which is not defined (screens: {})",
                spec.start,
                known()
            ),
        ));
    }
    let mut screens = Vec::new();
    for (name, screen) in spec.screens {
        if let Some(screen) = ScreenCx::new(&mut problems).screen(name, screen, &index, &known) {
            screens.push(screen);
        }
    }
    match start {
        Some(start) if problems.is_empty() => Ok(App {
            id: spec.id,
            start,
            screens,
        }),
        _ => Err(problems),
    }
}

/// The title bar of a screen, a text row at `top`.
fn title_node(title: String, top: i32) -> Node {
    Node {
        id: None,
        class: "android.widget.TextView".to_owned(),
        text: Some(title),
        hint: None,
        content_description: None,
        editable: false,
        password: false,
        enabled: true,
        toggle: false,
        checked: None,
        tap: None,
        bounds: Bounds {
            left: 0,
            top,
            right: SCREEN_WIDTH,
            bottom: top + TITLE_HEIGHT,
        },
        children: Vec::new(),
        scroll: None,
        scroller: None,
    }
}

impl NodeSpec {
    /// The node as the device shows it, before layout and tap resolution.
    fn into_node(self, scroller: Option<usize>) -> Node {
        Node {
            id: self.id,
            class: self.class,
            text: self.text,
            hint: self.hint,
            content_description: self.content_description,
            editable: self.editable,
            password: self.password,
            enabled: self.enabled,
            toggle: self.toggle,
            checked: if self.toggle {
                Some(self.checked.unwrap_or(false))
            } else {
                self.checked
            },
            tap: None,
            bounds: Bounds::default(),
            children: Vec::new(),
            scroll: self.scrollable.then_some(0),
            scroller,
        }
    }
}

/// What is gathered while one screen's nodes are flattened.
struct ScreenCx<'a> {
    problems: &'a mut Vec<Problem>,
    nodes: Vec<Node>,
    explicit: Vec<Option<Bounds>>,
    ids: HashMap<String, usize>,
    /// Taps are resolved after every id of the screen is known, since `require` may look ahead.
    taps: Vec<(usize, TapSpec, String)>,
    enter: Option<(usize, String)>,
}

impl<'a> ScreenCx<'a> {
    /// An empty screen that reports into `problems`.
    fn new(problems: &'a mut Vec<Problem>) -> Self {
        ScreenCx {
            problems,
            nodes: Vec::new(),
            explicit: Vec::new(),
            ids: HashMap::new(),
            taps: Vec::new(),
            enter: None,
        }
    }

    fn problem(&mut self, path: String, what: impl Into<String>) {
        self.problems.push(problem(path, what));
    }

    /// Checks and lays out the screen `name`; `None` when it holds too many nodes to lay out.
    fn screen(
        mut self,
        name: String,
        screen: ScreenSpec,
        index: &HashMap<&str, usize>,
        known: &dyn Fn() -> String,
    ) -> Option<Screen> {
        let at = format!("screens.{name}");
        let back = self.back(screen.back.as_ref(), &at, index, known);
        let mut roots = Vec::new();
        let mut top = STATUS_BAR;
        if let Some(title) = screen.title {
            roots.push(self.nodes.len());
            self.nodes.push(title_node(title, top));
            self.explicit.push(None);
            top += TITLE_HEIGHT;
        }
        let first = roots.len();
        for (i, node) in screen.nodes.into_iter().enumerate() {
            roots.push(self.add(node, &format!("{at}.nodes[{i}]"), 1, None));
        }
        if self.nodes.len() > MAX_NODES_PER_SCREEN {
            let msg = format!(
                "{} nodes; a screen holds at most {MAX_NODES_PER_SCREEN}",
                self.nodes.len()
            );
            self.problem(format!("{at}.nodes"), msg);
            // Laying out that many rows could overflow i32; the app is refused anyway.
            return None;
        }
        for (node, tap, at) in std::mem::take(&mut self.taps) {
            let resolved = self.tap(tap, &at, index, known);
            self.nodes[node].tap = resolved;
        }
        let last = layout(
            &mut self.nodes,
            &self.explicit,
            &roots[first..],
            MARGIN,
            SCREEN_WIDTH - MARGIN,
            top + GAP,
        );
        let banner_top = last.max(top) + GAP;
        Some(Screen {
            back,
            roots,
            enter: self.enter.map(|(i, _)| i),
            banner: Bounds {
                left: MARGIN,
                top: banner_top,
                right: SCREEN_WIDTH - MARGIN,
                bottom: banner_top + ROW,
            },
            nodes: self.nodes,
            name,
        })
    }

    /// Resolves the screen's `back` (found under `at`).
    fn back(
        &mut self,
        back: Option<&Option<String>>,
        at: &str,
        index: &HashMap<&str, usize>,
        known: &dyn Fn() -> String,
    ) -> Back {
        match back {
            None => Back::Pop,
            Some(None) => Back::Stay,
            Some(Some(to)) => match index.get(to.as_str()) {
                Some(&i) => Back::To(i),
                None => {
                    let msg = format!("names screen `{to}`, which is not defined (screens: {})", known());
                    self.problem(format!("{at}.back"), msg);
                    Back::Stay
                }
            },
        }
    }

    /// Appends `spec` (found at `at`, inside the scroll container `scroller`) and its children in
    /// document order; returns its index.
    fn add(&mut self, mut spec: NodeSpec, at: &str, depth: usize, scroller: Option<usize>) -> usize {
        let me = self.nodes.len();
        self.check_node(&spec, at, me, scroller);
        let explicit = spec.bounds.and_then(|bounds| self.bounds(bounds, at));
        let tap = spec.tap.take();
        let children = std::mem::take(&mut spec.children);
        let scrollable = spec.scrollable;
        self.nodes.push(spec.into_node(scroller));
        self.explicit.push(explicit);
        if let Some(tap) = tap {
            self.taps.push((me, tap, format!("{at}.tap")));
        }
        if depth >= MAX_DEPTH && !children.is_empty() {
            self.problem(
                format!("{at}.children"),
                format!("nodes nest deeper than {MAX_DEPTH} levels"),
            );
            return me;
        }
        let inner = if scrollable { Some(me) } else { scroller };
        let mut added = Vec::with_capacity(children.len());
        for (i, child) in children.into_iter().enumerate() {
            added.push(self.add(child, &format!("{at}.children[{i}]"), depth + 1, inner));
        }
        self.nodes[me].children = added;
        me
    }

    /// Checks the fields of the node `me` (found at `at`) and records its id and `enterTaps`.
    fn check_node(&mut self, spec: &NodeSpec, at: &str, me: usize, scroller: Option<usize>) {
        if let Some(id) = &spec.id {
            let valid = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
            if id.is_empty() || !id.chars().all(valid) {
                self.problem(format!("{at}.id"), "may hold only letters, digits, `_`, `.` and `-`");
            }
            if self.ids.insert(id.clone(), me).is_some() {
                self.problem(format!("{at}.id"), format!("id `{id}` is used twice on this screen"));
            }
        }
        if spec.class.trim().is_empty() {
            self.problem(format!("{at}.class"), "is empty");
        }
        if spec.password && !spec.editable {
            self.problem(format!("{at}.password"), "`password: true` needs `editable: true`");
        }
        let kinds = [spec.editable, spec.toggle, spec.tap.is_some()];
        if kinds.iter().filter(|k| **k).count() > 1 {
            self.problem(at.to_owned(), "a node is at most one of `editable`, `toggle` and `tap`");
        }
        if spec.scrollable && kinds.iter().any(|k| *k) {
            let msg = "a `scrollable` node is a container: it cannot also be `editable`, a `toggle` or have a `tap`";
            self.problem(format!("{at}.scrollable"), msg);
        }
        if spec.scrollable && scroller.is_some() {
            let msg = "a `scrollable` node inside another scrollable node is not supported";
            self.problem(format!("{at}.scrollable"), msg);
        }
        if spec.enter_taps {
            if spec.tap.is_none() {
                self.problem(format!("{at}.enterTaps"), "`enterTaps: true` needs a `tap`");
            }
            match &self.enter {
                Some((_, other)) => {
                    let msg = format!("only one node per screen may have it; {other} has it too");
                    self.problem(format!("{at}.enterTaps"), msg);
                }
                None => self.enter = Some((me, at.to_owned())),
            }
        }
    }

    /// The explicit `bounds` of the node at `at`, if they are well formed.
    fn bounds(&mut self, [left, top, right, bottom]: [i32; 4], at: &str) -> Option<Bounds> {
        let inside = |v: i32| (0..=MAX_COORD).contains(&v);
        if left < right && top < bottom && [left, top, right, bottom].into_iter().all(inside) {
            Some(Bounds {
                left,
                top,
                right,
                bottom,
            })
        } else {
            self.problem(
                format!("{at}.bounds"),
                format!("must be [left, top, right, bottom] with left < right, top < bottom, all in 0..={MAX_COORD}"),
            );
            None
        }
    }

    /// Resolves the tap at `at` (a `...tap` path).
    fn tap(&mut self, tap: TapSpec, at: &str, index: &HashMap<&str, usize>, known: &dyn Fn() -> String) -> Option<Tap> {
        let action = match (&tap.goto, tap.back) {
            (Some(to), false) => match index.get(to.as_str()) {
                Some(&i) => Some(Action::Goto(i)),
                None => {
                    let msg = format!("names screen `{to}`, which is not defined (screens: {})", known());
                    self.problem(format!("{at}.goto"), msg);
                    None
                }
            },
            (None, true) => Some(Action::Back),
            (Some(_), true) => {
                self.problem(at.to_owned(), "a tap has either `goto` or `back: true`, not both");
                None
            }
            (None, false) => {
                self.problem(at.to_owned(), "a tap needs `goto: <screen>` or `back: true`");
                None
            }
        };
        if tap.otherwise.is_some() && tap.require.is_empty() {
            self.problem(
                format!("{at}.otherwise"),
                "is only shown when a `require` fails; add `require`",
            );
        }
        let mut require = Vec::new();
        for (id, text) in tap.require {
            match self.ids.get(&id) {
                Some(&i) => require.push((i, text)),
                None => {
                    let msg = format!("names id `{id}`, which is not on this screen");
                    self.problem(format!("{at}.require.{id}"), msg);
                }
            }
        }
        Some(Tap {
            action: action?,
            require,
            otherwise: tap.otherwise.map(|o| o.show),
        })
    }
}

/// Stacks `ids` from `top` between `left` and `right`; children go inside their parent. A node with
/// explicit bounds keeps them and leaves the flow. A scroll container ends at the screen's bottom
/// margin (or its bounds) and keeps how far its content reaches past that. Returns the bottom of
/// the last stacked node.
fn layout(nodes: &mut [Node], explicit: &[Option<Bounds>], ids: &[usize], left: i32, right: i32, top: i32) -> i32 {
    let mut cursor = top;
    let mut last = top;
    for &i in ids {
        let children = std::mem::take(&mut nodes[i].children);
        let header = if nodes[i].text.is_some() { LABEL } else { INSET };
        let (inner_left, inner_right) = if right - left > 2 * INSET + 1 {
            (left + INSET, right - INSET)
        } else {
            (left, right)
        };
        if let Some(b) = explicit.get(i).copied().flatten() {
            let (l, r) = if b.right - b.left > 2 * INSET + 1 {
                (b.left + INSET, b.right - INSET)
            } else {
                (b.left, b.right)
            };
            let inner = layout(nodes, explicit, &children, l, r, b.top + header);
            nodes[i].bounds = b;
            if nodes[i].scroll.is_some() && !children.is_empty() {
                nodes[i].scroll = Some((inner + INSET - b.bottom).max(0));
            }
        } else {
            let natural = if children.is_empty() {
                cursor + ROW
            } else {
                let inner = layout(nodes, explicit, &children, inner_left, inner_right, cursor + header);
                (inner + INSET).max(cursor + ROW)
            };
            let bottom = if nodes[i].scroll.is_some() {
                // A scroll view fills what is left of the screen, or less when its content fits.
                let shown = natural.min(SCREEN_HEIGHT - MARGIN).max(cursor + ROW);
                nodes[i].scroll = Some((natural - shown).max(0));
                shown
            } else {
                natural
            };
            nodes[i].bounds = Bounds {
                left,
                top: cursor,
                right,
                bottom,
            };
            last = bottom;
            cursor = bottom + GAP;
        }
        nodes[i].children = children;
    }
    last
}

/// The JSON Schema of `app.yaml`, for editors (`trailblaze dts`).
pub fn app_schema() -> serde_json::Value {
    // Draft 7: what the YAML language server and most validators read.
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<AppSpec>();
    serde_json::to_value(schema).unwrap_or_default()
}
