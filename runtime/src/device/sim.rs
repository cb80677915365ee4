//! The simulated device: runs a trailmap's `app.yaml`, a deterministic app that needs no setup.
//!
//! ```yaml
//! id: com.example.demo          # the app id `launchApp` must name
//! start: signIn                 # the first screen
//! screens:
//!   signIn:
//!     title: Sign in            # optional: a title bar (a TextView) above the nodes
//!     back: null                # BACK: absent = pop the stack, null = stay, a name = go there
//!     nodes:
//!       - { id: email, class: android.widget.EditText, hint: Email, editable: true }
//!       - { id: submit, class: android.widget.Button, text: Sign in, enterTaps: true,
//!           tap: { goto: inbox, require: { email: jane@example.com },
//!                  otherwise: { show: Wrong email or password } } }
//! ```
//!
//! Node keys: `id`, `class` (default `android.view.View`), `text`, `hint`, `contentDescription`,
//! `editable`, `password`, `enabled` (default true), `toggle` + `checked`, `tap`, `enterTaps`,
//! `children`, `bounds: [l, t, r, b]`. Unknown keys are refused. Behaviour, chosen to match Android
//! where it has an answer:
//! - A node `id: email` appears as resource id `<app id>:id/email`, as `uiautomator` reports it.
//! - Bounds not given are laid out on a 1080×2400 screen: nodes stacked top to bottom in document
//!   order, full width less a margin, children inside their parent. Given bounds leave the flow.
//! - A tap hits the deepest node containing the point and acts on the nearest interactive node on
//!   that path (so a tap on a list row's label opens the row); a disabled one ignores it.
//!   Editable: focus. Toggle: flip `checked`. `tap`: if every `require` (id → text; a password
//!   compares its real text) holds, `goto` pushes a screen or `back: true` acts as BACK; otherwise
//!   `otherwise.show` appears as a TextView below the screen's nodes until the screen is left.
//!   `long_press` is a tap.
//! - `input_text` appends to the focused field; none focused is an error. Passwords read `•` per
//!   character in the tree and the screenshot.
//! - Keys: BACK per the screen's `back` (an empty stack leaves the app, as Android does); BACKSPACE
//!   deletes the focused field's last character; TAB focuses the next editable field; ENTER
//!   activates the screen's `enterTaps` node (an IME "done" action); ESCAPE clears focus; HOME shows
//!   an empty launcher (app id none). A key with nothing to act on does nothing, like hardware.
//! - `launch_app`: REINSTALL resets everything; FORCE_RESTART restarts at `start` and forgets what
//!   lived in the process (navigation, focus, typed text, messages) but keeps toggles, which stand
//!   for saved settings; RESUME comes back as it was. The app starts in the foreground at `start`.
//! - Checked on load, every problem reported as `file: screens.x.nodes[1].tap.goto: what`: `start`,
//!   `goto` and `back` name screens, ids are unique per screen, `require` names ids on its screen,
//!   a node is at most one of editable/toggle/tap, at most one `enterTaps` per screen, nesting ≤ 16,
//!   ≤ 1000 nodes per screen.

use std::collections::HashMap;
use std::path::Path;

use super::{Bounds, Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewNode, ViewTree};

#[path = "sim_spec.rs"]
mod spec;

use spec::{Action, App, Back};
pub use spec::{SCREEN_HEIGHT, SCREEN_WIDTH};

/// Navigation deeper than this forgets its oldest entries, so a goto loop cannot grow forever.
const MAX_STACK: usize = 64;

/// A device that runs an `app.yaml` app in memory.
#[derive(Debug, Clone)]
pub struct SimDevice {
    app: App,
    state: State,
    captures: u64,
}

/// What the running app holds. Node state is keyed by (screen index, node index).
#[derive(Debug, Clone)]
struct State {
    foreground: bool,
    current: usize,
    stack: Vec<usize>,
    focus: Option<usize>,
    message: Option<String>,
    texts: HashMap<(usize, usize), String>,
    checked: HashMap<(usize, usize), bool>,
}

impl State {
    fn fresh(app: &App) -> State {
        let mut texts = HashMap::new();
        let mut checked = HashMap::new();
        for (s, screen) in app.screens.iter().enumerate() {
            for (n, node) in screen.nodes.iter().enumerate() {
                if node.editable {
                    texts.insert((s, n), node.text.clone().unwrap_or_default());
                }
                if let Some(c) = node.checked {
                    checked.insert((s, n), c);
                }
            }
        }
        State {
            foreground: true,
            current: app.start,
            stack: Vec::new(),
            focus: None,
            message: None,
            texts,
            checked,
        }
    }
}

impl SimDevice {
    /// Loads `path` (a trailmap's `app.yaml`).
    pub fn from_app_file(path: &Path) -> Result<SimDevice, DeviceError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DeviceError::App(format!("cannot read {}: {e}", path.display())))?;
        SimDevice::from_app_yaml(&text, path)
    }

    /// Parses `text`; `file` names it in errors.
    pub fn from_app_yaml(text: &str, file: &Path) -> Result<SimDevice, DeviceError> {
        let parsed: spec::AppSpec = crate::yaml::from_str(text, file).map_err(|e| {
            let msg = e.to_string();
            let shown = file.display().to_string();
            DeviceError::App(if msg.contains(&shown) {
                msg
            } else {
                format!("{shown}: {msg}")
            })
        })?;
        let app = spec::compile(parsed).map_err(|problems| {
            // One line per problem: `file: path.in.yaml: what is wrong`.
            let lines: Vec<String> = problems
                .iter()
                .map(|p| format!("{}: {}: {}", file.display(), p.path, p.message))
                .collect();
            DeviceError::App(lines.join("\n"))
        })?;
        let state = State::fresh(&app);
        Ok(SimDevice {
            app,
            state,
            captures: 0,
        })
    }

    pub fn app_id(&self) -> &str {
        &self.app.id
    }

    /// The screen shown, or `None` while the launcher is (after HOME).
    pub fn current_screen(&self) -> Option<&str> {
        let screen = self.app.screens.get(self.state.current)?;
        self.state.foreground.then_some(screen.name.as_str())
    }

    fn current_text(&self, node: usize) -> Option<&str> {
        let s = self.state.current;
        let n = self.app.screens.get(s)?.nodes.get(node)?;
        if n.editable {
            self.state.texts.get(&(s, node)).map(String::as_str)
        } else {
            n.text.as_deref()
        }
    }

    /// Runs what tapping node `i` of the current screen does.
    fn activate(&mut self, i: usize) {
        let s = self.state.current;
        let Some(node) = self.app.screens.get(s).and_then(|sc| sc.nodes.get(i)) else {
            return;
        };
        if !node.enabled {
            return;
        }
        if node.editable {
            self.state.focus = Some(i);
        } else if node.toggle {
            let c = self.state.checked.entry((s, i)).or_default();
            *c = !*c;
        } else if let Some(tap) = &node.tap {
            let met = tap
                .require
                .iter()
                .all(|(field, want)| self.current_text(*field) == Some(want.as_str()));
            if !met {
                if let Some(show) = &tap.otherwise {
                    self.state.message = Some(show.clone());
                }
                return;
            }
            match tap.action {
                Action::Goto(to) => self.show(to, true),
                Action::Back => self.back(),
            }
        }
    }

    /// Shows screen `to`, pushing the current one when `push`; screen-local UI state goes.
    fn show(&mut self, to: usize, push: bool) {
        if push {
            if self.state.stack.len() >= MAX_STACK {
                self.state.stack.remove(0);
            }
            self.state.stack.push(self.state.current);
        }
        self.state.current = to;
        self.state.focus = None;
        self.state.message = None;
    }

    fn back(&mut self) {
        let Some(screen) = self.app.screens.get(self.state.current) else {
            return;
        };
        match screen.back {
            Back::Stay => {}
            Back::To(to) => {
                // Like Android's "up" with clear-top: unwind to `to` when it is on the stack.
                if let Some(pos) = self.state.stack.iter().rposition(|&s| s == to) {
                    self.state.stack.truncate(pos);
                }
                self.show(to, false);
            }
            Back::Pop => match self.state.stack.pop() {
                Some(prev) => self.show(prev, false),
                None => {
                    self.state.focus = None;
                    self.state.foreground = false;
                }
            },
        }
    }

    fn focus_next(&mut self) {
        let Some(screen) = self.app.screens.get(self.state.current) else {
            return;
        };
        let fields: Vec<usize> = (0..screen.nodes.len())
            .filter(|&i| screen.nodes[i].editable && screen.nodes[i].enabled)
            .collect();
        let next = match self.state.focus.and_then(|f| fields.iter().position(|&i| i == f)) {
            Some(p) => fields.get((p + 1) % fields.len()),
            None => fields.first(),
        };
        if let Some(&next) = next {
            self.state.focus = Some(next);
        }
    }

    /// The tree as the screen shows it now; `snapshot` counts, this does not.
    fn tree(&self) -> ViewTree {
        let mut root = ViewNode {
            class_name: "android.widget.FrameLayout".to_owned(),
            bounds: Bounds {
                left: 0,
                top: 0,
                right: SCREEN_WIDTH,
                bottom: SCREEN_HEIGHT,
            },
            enabled: true,
            ..ViewNode::default()
        };
        let screen = match self.app.screens.get(self.state.current) {
            Some(screen) if self.state.foreground => screen,
            _ => {
                return ViewTree {
                    app_id: None,
                    width: SCREEN_WIDTH,
                    height: SCREEN_HEIGHT,
                    root,
                };
            }
        };
        root.children = screen.roots.iter().map(|&i| self.view(i)).collect();
        if let Some(message) = &self.state.message {
            root.children.push(ViewNode {
                class_name: "android.widget.TextView".to_owned(),
                text: Some(message.clone()),
                bounds: screen.banner,
                enabled: true,
                ..ViewNode::default()
            });
        }
        ViewTree {
            app_id: Some(self.app.id.clone()),
            width: SCREEN_WIDTH,
            height: SCREEN_HEIGHT,
            root,
        }
    }

    fn view(&self, i: usize) -> ViewNode {
        let s = self.state.current;
        let Some(node) = self.app.screens.get(s).and_then(|sc| sc.nodes.get(i)) else {
            return ViewNode::default();
        };
        let text = match self.current_text(i) {
            Some(t) if node.editable && t.is_empty() => None,
            Some(t) if node.password => Some("•".repeat(t.chars().count())),
            other => other.map(str::to_owned),
        };
        ViewNode {
            class_name: node.class.clone(),
            text,
            hint_text: node.hint.clone(),
            resource_id: node.id.as_ref().map(|id| format!("{}:id/{id}", self.app.id)),
            content_description: node.content_description.clone(),
            bounds: node.bounds,
            enabled: node.enabled,
            clickable: node.interactive(),
            editable: node.editable,
            focused: self.state.focus == Some(i),
            checked: node
                .checked
                .map(|c| self.state.checked.get(&(s, i)).copied().unwrap_or(c)),
            password: node.password,
            children: node.children.iter().map(|&c| self.view(c)).collect(),
        }
    }
}

/// Collects the path of nodes (outermost first) under (x, y); later siblings are on top.
fn hit(nodes: &[spec::Node], ids: &[usize], x: i32, y: i32, path: &mut Vec<usize>) {
    for &i in ids.iter().rev() {
        let Some(node) = nodes.get(i) else { continue };
        if node.bounds.contains(x, y) {
            path.push(i);
            hit(nodes, &node.children, x, y, path);
            return;
        }
    }
}

impl Device for SimDevice {
    fn name(&self) -> String {
        format!("sim:{}", self.app.id)
    }

    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.captures += 1;
        Ok(self.tree())
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        if !self.state.foreground {
            return Ok(());
        }
        let Some(screen) = self.app.screens.get(self.state.current) else {
            return Ok(());
        };
        let mut path = Vec::new();
        hit(&screen.nodes, &screen.roots, x, y, &mut path);
        let target = path
            .into_iter()
            .rev()
            .find(|&i| screen.nodes.get(i).is_some_and(|n| n.interactive()));
        if let Some(i) = target {
            self.activate(i);
        }
        Ok(())
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.tap(x, y)
    }

    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        if !self.state.foreground {
            return Err(DeviceError::Action(format!(
                "no focused field: {} is not in the foreground (launch it first)",
                self.app.id
            )));
        }
        let s = self.state.current;
        let Some(focus) = self.state.focus else {
            let name = self.app.screens.get(s).map_or("", |sc| sc.name.as_str());
            return Err(DeviceError::Action(format!(
                "no focused field on screen `{name}`: tap an editable field first"
            )));
        };
        self.state.texts.entry((s, focus)).or_default().push_str(text);
        Ok(())
    }

    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        if !self.state.foreground {
            return Ok(());
        }
        match key {
            KeyCode::Back => self.back(),
            KeyCode::Backspace => {
                if let Some(f) = self.state.focus
                    && let Some(t) = self.state.texts.get_mut(&(self.state.current, f))
                {
                    t.pop();
                }
            }
            KeyCode::Tab => self.focus_next(),
            KeyCode::Enter => {
                if let Some(i) = self.app.screens.get(self.state.current).and_then(|s| s.enter) {
                    self.activate(i);
                }
            }
            KeyCode::Escape => self.state.focus = None,
            KeyCode::Home => self.state.foreground = false,
        }
        Ok(())
    }

    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        if app_id != self.app.id {
            return Err(DeviceError::Action(format!(
                "unknown app id `{app_id}`: this simulated device runs only `{}`",
                self.app.id
            )));
        }
        match mode {
            LaunchMode::Reinstall => self.state = State::fresh(&self.app),
            LaunchMode::ForceRestart => {
                let checked = std::mem::take(&mut self.state.checked);
                self.state = State::fresh(&self.app);
                self.state.checked = checked;
            }
            LaunchMode::Resume => self.state.foreground = true,
        }
        Ok(())
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        Ok(Screenshot {
            mime: "image/svg+xml",
            bytes: render_svg(&self.tree()).into_bytes(),
        })
    }
}

/// Draws the tree as SVG for reports: a box per node, its text (or hint, or description).
fn render_svg(tree: &ViewTree) -> String {
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
            xml_escape(label)
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

/// Escapes for XML text and attributes; characters XML 1.0 forbids become U+FFFD.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = r#"
id: com.example.test
start: signIn
screens:
  signIn:
    back: null
    nodes:
      - { id: email, class: android.widget.EditText, hint: Email, editable: true }
      - { id: password, class: android.widget.EditText, hint: Password, editable: true, password: true }
      - { id: submit, class: android.widget.Button, text: Sign in, enterTaps: true,
          tap: { goto: home, require: { email: a@b.c, password: pw }, otherwise: { show: Wrong email or password } } }
  home:
    title: Home
    nodes:
      - id: row
        tap: { goto: detail }
        children:
          - { class: android.widget.TextView, text: Row label }
      - { id: settings, class: android.widget.Button, text: Settings, tap: { goto: settings } }
      - { id: off, text: Disabled, enabled: false, tap: { goto: detail } }
  detail:
    back: signIn
    nodes:
      - { class: android.widget.TextView, text: Detail }
  settings:
    nodes:
      - { id: dark, class: android.widget.Switch, text: Dark mode, toggle: true }
      - { id: up, text: Up, tap: { back: true } }
"#;

    fn load(yaml: &str) -> SimDevice {
        SimDevice::from_app_yaml(yaml, Path::new("app.yaml")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn load_err(yaml: &str) -> String {
        match SimDevice::from_app_yaml(yaml, Path::new("trailmaps/x/app.yaml")) {
            Ok(_) => panic!("loaded an invalid app"),
            Err(e) => e.to_string(),
        }
    }

    fn find<'a>(node: &'a ViewNode, pred: &dyn Fn(&ViewNode) -> bool) -> Option<&'a ViewNode> {
        if pred(node) {
            return Some(node);
        }
        node.children.iter().find_map(|c| find(c, pred))
    }

    fn node(dev: &mut SimDevice, id: &str) -> Option<ViewNode> {
        let tree = dev.snapshot().unwrap();
        let suffix = format!(":id/{id}");
        find(&tree.root, &|n| {
            n.resource_id.as_deref().is_some_and(|r| r.ends_with(&suffix))
        })
        .cloned()
    }

    fn has_text(dev: &mut SimDevice, text: &str) -> bool {
        let tree = dev.snapshot().unwrap();
        find(&tree.root, &|n| n.text.as_deref() == Some(text)).is_some()
    }

    fn tap_id(dev: &mut SimDevice, id: &str) {
        let n = node(dev, id).unwrap_or_else(|| panic!("no node `{id}` on {:?}", dev.current_screen()));
        let (x, y) = n.bounds.center();
        dev.tap(x, y).unwrap();
    }

    fn type_into(dev: &mut SimDevice, id: &str, text: &str) {
        tap_id(dev, id);
        dev.input_text(text).unwrap();
    }

    #[test]
    fn typing_holds_text_and_masks_passwords() {
        let mut dev = load(APP);
        assert_eq!(node(&mut dev, "email").unwrap().text, None);
        type_into(&mut dev, "email", "a@b.c");
        let email = node(&mut dev, "email").unwrap();
        assert_eq!(email.text.as_deref(), Some("a@b.c"));
        assert_eq!(email.resource_id.as_deref(), Some("com.example.test:id/email"));
        assert!(email.focused);
        type_into(&mut dev, "password", "pw");
        let tree = dev.snapshot().unwrap();
        let json = serde_json::to_string(&tree).unwrap();
        assert!(json.contains("••"), "{json}");
        assert!(!json.contains("\"pw\""), "the password leaked: {json}");
        // The real text still satisfies `require`.
        tap_id(&mut dev, "submit");
        assert_eq!(dev.current_screen(), Some("home"));
    }

    #[test]
    fn input_text_needs_a_focused_field() {
        let mut dev = load(APP);
        let err = dev.input_text("x").unwrap_err().to_string();
        assert!(err.contains("no focused field") && err.contains("signIn"), "{err}");
        tap_id(&mut dev, "email");
        dev.input_text("x").unwrap();
        dev.press_key(KeyCode::Escape).unwrap();
        assert!(dev.input_text("y").is_err());
        assert_eq!(node(&mut dev, "email").unwrap().text.as_deref(), Some("x"));
    }

    fn signed_in() -> SimDevice {
        let mut dev = load(APP);
        type_into(&mut dev, "email", "a@b.c");
        type_into(&mut dev, "password", "pw");
        tap_id(&mut dev, "submit");
        assert_eq!(dev.current_screen(), Some("home"));
        dev
    }

    #[test]
    fn require_fails_into_otherwise_then_succeeds() {
        let mut dev = load(APP);
        type_into(&mut dev, "email", "a@b.c");
        type_into(&mut dev, "password", "wrong");
        assert!(!has_text(&mut dev, "Wrong email or password"));
        tap_id(&mut dev, "submit");
        assert_eq!(dev.current_screen(), Some("signIn"));
        assert!(has_text(&mut dev, "Wrong email or password"));
        // Fix the password: five backspaces, then the right one.
        tap_id(&mut dev, "password");
        for _ in 0..5 {
            dev.press_key(KeyCode::Backspace).unwrap();
        }
        dev.input_text("pw").unwrap();
        tap_id(&mut dev, "submit");
        assert_eq!(dev.current_screen(), Some("home"));
        assert!(!has_text(&mut dev, "Wrong email or password"));
    }

    #[test]
    fn taps_navigate_through_labels_and_ignore_nothing_and_disabled() {
        let mut dev = signed_in();
        dev.tap(1, SCREEN_HEIGHT - 1).unwrap();
        dev.tap(-5, 10_000).unwrap();
        tap_id(&mut dev, "off");
        assert_eq!(dev.current_screen(), Some("home"));
        // The label is a plain child; the tap reaches the row that holds it.
        let tree = dev.snapshot().unwrap();
        let label = find(&tree.root, &|n| n.text.as_deref() == Some("Row label")).unwrap();
        let (x, y) = label.bounds.center();
        dev.long_press(x, y).unwrap();
        assert_eq!(dev.current_screen(), Some("detail"));
    }

    #[test]
    fn back_follows_target_null_and_stack() {
        let mut dev = signed_in();
        tap_id(&mut dev, "settings");
        assert_eq!(dev.current_screen(), Some("settings"));
        dev.press_key(KeyCode::Back).unwrap(); // absent: pop
        assert_eq!(dev.current_screen(), Some("home"));
        tap_id(&mut dev, "row");
        dev.press_key(KeyCode::Back).unwrap(); // explicit target, unwinding the stack
        assert_eq!(dev.current_screen(), Some("signIn"));
        dev.press_key(KeyCode::Back).unwrap(); // null: stays
        assert_eq!(dev.current_screen(), Some("signIn"));
        tap_id(&mut dev, "submit");
        tap_id(&mut dev, "settings");
        tap_id(&mut dev, "up"); // `tap: {back: true}`
        assert_eq!(dev.current_screen(), Some("home"));
        dev.press_key(KeyCode::Back).unwrap(); // the stack held only signIn (unwound before)
        assert_eq!(dev.current_screen(), Some("signIn"));
    }

    #[test]
    fn back_on_an_empty_stack_leaves_the_app() {
        let mut dev = load("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ id: f, editable: true }]\n");
        tap_id(&mut dev, "f");
        dev.press_key(KeyCode::Back).unwrap();
        assert_eq!(dev.current_screen(), None);
        let tree = dev.snapshot().unwrap();
        assert_eq!(tree.app_id, None);
        assert!(tree.root.children.is_empty());
        dev.launch_app("a.b", LaunchMode::Resume).unwrap();
        assert_eq!(dev.current_screen(), Some("s"));
    }

    #[test]
    fn toggle_flips() {
        let mut dev = signed_in();
        tap_id(&mut dev, "settings");
        assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(false));
        tap_id(&mut dev, "dark");
        assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(true));
        tap_id(&mut dev, "dark");
        assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(false));
        assert_eq!(node(&mut dev, "up").unwrap().checked, None);
    }

    #[test]
    fn only_snapshot_counts_as_a_capture() {
        let mut dev = load(APP);
        assert_eq!(dev.captures(), 0);
        let (x, y) = node(&mut dev, "email").unwrap().bounds.center();
        assert_eq!(dev.captures(), 1);
        dev.tap(x, y).unwrap();
        dev.input_text("a").unwrap();
        dev.press_key(KeyCode::Tab).unwrap();
        dev.screenshot().unwrap();
        dev.launch_app("com.example.test", LaunchMode::Resume).unwrap();
        assert_eq!(dev.captures(), 1);
        dev.snapshot().unwrap();
        assert_eq!(dev.captures(), 2);
    }

    /// Every node's siblings are disjoint and its children lie inside it.
    fn check_layout(node: &ViewNode) -> Result<(), String> {
        let overlap =
            |a: &Bounds, b: &Bounds| a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
        for (i, a) in node.children.iter().enumerate() {
            if a.bounds.left >= a.bounds.right || a.bounds.top >= a.bounds.bottom {
                return Err(format!("empty bounds {:?}", a.bounds));
            }
            let p = node.bounds;
            let b = a.bounds;
            if b.left < p.left || b.right > p.right || b.top < p.top || b.bottom > p.bottom {
                return Err(format!("{b:?} outside its parent {p:?}"));
            }
            if let Some(c) = node.children[i + 1..].iter().find(|c| overlap(&a.bounds, &c.bounds)) {
                return Err(format!("{:?} overlaps {:?}", a.bounds, c.bounds));
            }
            check_layout(a)?;
        }
        Ok(())
    }

    #[test]
    fn bounds_are_laid_out_without_overlap() {
        let mut dev = signed_in();
        let tree = dev.snapshot().unwrap();
        check_layout(&tree.root).unwrap();
        assert_eq!(tree.root.children.len(), 4, "title + three nodes");
        let again = dev.snapshot().unwrap();
        assert_eq!(tree, again, "layout is deterministic");
        // Positive control: given bounds that overlap are kept and the check sees it.
        let mut dev = load(
            "id: a.b\nstart: s\nscreens:\n  s:\n    nodes:\n      - { text: A, bounds: [0, 0, 500, 500] }\n      - { text: B, bounds: [100, 100, 600, 600] }\n",
        );
        let tree = dev.snapshot().unwrap();
        assert_eq!(
            tree.root.children[1].bounds,
            Bounds {
                left: 100,
                top: 100,
                right: 600,
                bottom: 600
            }
        );
        assert!(check_layout(&tree.root).unwrap_err().contains("overlaps"));
    }

    #[test]
    fn keys_tab_enter_home() {
        let mut dev = load(APP);
        dev.press_key(KeyCode::Tab).unwrap();
        dev.input_text("a@b.c").unwrap();
        dev.press_key(KeyCode::Tab).unwrap();
        dev.input_text("pw").unwrap();
        assert!(node(&mut dev, "password").unwrap().focused);
        dev.press_key(KeyCode::Home).unwrap();
        assert_eq!(dev.snapshot().unwrap().app_id, None);
        assert!(dev.input_text("x").is_err());
        dev.press_key(KeyCode::Enter).unwrap(); // at the launcher: nothing
        dev.launch_app("com.example.test", LaunchMode::Resume).unwrap();
        assert_eq!(dev.current_screen(), Some("signIn"));
        dev.press_key(KeyCode::Enter).unwrap();
        assert_eq!(dev.current_screen(), Some("home"));
        dev.press_key(KeyCode::Enter).unwrap(); // no enterTaps node here: nothing
        assert_eq!(dev.current_screen(), Some("home"));
    }

    #[test]
    fn launch_modes_and_unknown_apps() {
        let mut dev = signed_in();
        let err = dev
            .launch_app("com.other", LaunchMode::Reinstall)
            .unwrap_err()
            .to_string();
        assert!(err.contains("com.other") && err.contains("com.example.test"), "{err}");
        tap_id(&mut dev, "settings");
        tap_id(&mut dev, "dark");
        dev.launch_app("com.example.test", LaunchMode::ForceRestart).unwrap();
        assert_eq!(dev.current_screen(), Some("signIn"));
        assert_eq!(
            node(&mut dev, "email").unwrap().text,
            None,
            "typed text dies with the process"
        );
        let mut dev2 = signed_in();
        tap_id(&mut dev2, "settings");
        tap_id(&mut dev2, "dark");
        dev2.launch_app("com.example.test", LaunchMode::ForceRestart).unwrap();
        type_into(&mut dev2, "email", "a@b.c");
        type_into(&mut dev2, "password", "pw");
        tap_id(&mut dev2, "submit");
        tap_id(&mut dev2, "settings");
        assert_eq!(node(&mut dev2, "dark").unwrap().checked, Some(true), "settings survive");
        dev2.launch_app("com.example.test", LaunchMode::Reinstall).unwrap();
        assert_eq!(dev2.current_screen(), Some("signIn"));
        type_into(&mut dev2, "email", "a@b.c");
        type_into(&mut dev2, "password", "pw");
        tap_id(&mut dev2, "submit");
        tap_id(&mut dev2, "settings");
        assert_eq!(
            node(&mut dev2, "dark").unwrap().checked,
            Some(false),
            "reinstall clears"
        );
    }

    #[test]
    fn screenshot_is_escaped_svg_without_secrets() {
        let mut dev = load(
            "id: a.b\nstart: s\nscreens:\n  s:\n    nodes:\n      - { text: \"Tom & <Jerry>\" }\n      - { id: p, editable: true, password: true }\n",
        );
        type_into(&mut dev, "p", "s3cret");
        let shot = dev.screenshot().unwrap();
        assert_eq!(shot.mime, "image/svg+xml");
        let svg = String::from_utf8(shot.bytes).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("Tom &amp; &lt;Jerry&gt;"),
            "{svg}"
        );
        assert!(!svg.contains("<Jerry>") && !svg.contains("s3cret"), "{svg}");
        assert!(svg.contains("••••••"));
        assert_eq!(xml_escape("a\u{1}'\""), "a\u{FFFD}&apos;&quot;");
    }

    #[test]
    fn load_errors_name_the_problem_and_the_file() {
        // Positive control: the valid app loads.
        load(APP);
        let err = load_err(&APP.replace("hint: Email", "hnt: Email"));
        assert!(err.contains("hnt") && err.contains("trailmaps/x/app.yaml"), "{err}");
        let err = load_err(&APP.replace("goto: detail }", "goto: detial }"));
        assert!(
            err.contains("`detial`") && err.contains("trailmaps/x/app.yaml") && err.contains("home"),
            "{err}"
        );
        let err = load_err(&APP.replace("back: signIn", "back: nowhere"));
        assert!(err.contains("`nowhere`"), "{err}");
        let err = load_err(&APP.replace("start: signIn", "start: begin"));
        assert!(err.contains("`begin`"), "{err}");
        let err = load_err(&APP.replace("id: settings,", "id: row,"));
        assert!(err.contains("id `row` is used twice"), "{err}");
        let err = load_err(&APP.replace("require: { email:", "require: { mail:"));
        assert!(err.contains("`mail`"), "{err}");
        let err = load_err(&APP.replace("tap: { back: true }", "tap: { }"));
        assert!(err.contains("needs `goto"), "{err}");
        let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ password: true }]\n");
        assert!(err.contains("editable"), "{err}");
        let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ bounds: [5, 5, 1, 1] }]\n");
        assert!(err.contains("bounds"), "{err}");
        let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ text: 12 }]\n");
        assert!(err.contains("trailmaps/x/app.yaml"), "{err}");
        let many = format!(
            "id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{}]\n",
            ["{}"; 1001].join(", ")
        );
        assert!(load_err(&many).contains("1001 nodes"));
        let deep = format!("{}{{}}{}", "{children: [".repeat(17), "]}".repeat(17));
        let err = load_err(&format!("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{deep}]\n"));
        assert!(err.contains("deeper than 16"), "{err}");
        let missing = Path::new("/nonexistent/app.yaml");
        let err = SimDevice::from_app_file(missing).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/app.yaml"), "{err}");
    }

    #[test]
    fn demo_app_signs_in_reads_mail_and_toggles_dark_mode() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../trailmaps/demo/app.yaml");
        let mut dev = SimDevice::from_app_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dev.name(), "sim:com.example.demo");
        dev.launch_app("com.example.demo", LaunchMode::Reinstall).unwrap();
        type_into(&mut dev, "email", "jane@example.com");
        type_into(&mut dev, "password", "hunter1");
        tap_id(&mut dev, "submit");
        assert!(has_text(&mut dev, "Wrong email or password"));
        tap_id(&mut dev, "password");
        dev.press_key(KeyCode::Backspace).unwrap();
        dev.input_text("2").unwrap();
        dev.press_key(KeyCode::Enter).unwrap();
        assert_eq!(dev.current_screen(), Some("inbox"));
        let tree = dev.snapshot().unwrap();
        check_layout(&tree.root).unwrap();
        let rows = ["message1", "message2", "message3"];
        for row in rows {
            let n = node(&mut dev, row).unwrap();
            assert!(n.clickable && n.bounds.bottom <= SCREEN_HEIGHT, "{row}: {n:?}");
        }
        for row in rows {
            tap_id(&mut dev, &format!("{row}Subject"));
            assert_eq!(dev.current_screen(), Some(row));
            let body = node(&mut dev, "body").unwrap();
            assert!(body.text.is_some_and(|t| !t.is_empty()));
            tap_id(&mut dev, "backToInbox");
            assert_eq!(dev.current_screen(), Some("inbox"));
        }
        tap_id(&mut dev, "message2");
        dev.press_key(KeyCode::Back).unwrap();
        assert_eq!(dev.current_screen(), Some("inbox"));
        dev.press_key(KeyCode::Back).unwrap();
        assert_eq!(dev.current_screen(), Some("inbox"), "BACK does not sign out");
        tap_id(&mut dev, "settings");
        assert_eq!(node(&mut dev, "darkMode").unwrap().checked, Some(false));
        tap_id(&mut dev, "darkMode");
        assert_eq!(node(&mut dev, "darkMode").unwrap().checked, Some(true));
        tap_id(&mut dev, "navigateUp");
        assert_eq!(dev.current_screen(), Some("inbox"));
    }
}
