//! The snapshot: the device's view tree flattened, each node with a **ref** (`y778`) derived from its
//! content, stable across captures while the node is unchanged. The LLM picks nodes by ref; recordings
//! hold selectors (see `selector`).

use std::collections::HashSet;

use serde_json::{Value, json};

use std::cell::RefCell;
use std::sync::Arc;

use crate::device::{Device, DeviceError, ViewNode, ViewTree};
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
fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl Snapshot {
    pub fn from_tree(tree: ViewTree) -> Snapshot {
        let mut snap = Snapshot {
            app_id: tree.app_id.clone(),
            width: tree.width,
            height: tree.height,
            nodes: Vec::new(),
            json: std::sync::OnceLock::new(),
        };
        let mut taken = HashSet::new();
        snap.push(tree.root, None, 0, "", &mut taken);
        snap
    }

    fn push(
        &mut self,
        mut n: ViewNode,
        parent: Option<usize>,
        depth: usize,
        lineage: &str,
        taken: &mut HashSet<String>,
    ) {
        // Identity: what the node is and where it sits, not its bounds (so scrolling keeps refs), and
        // for an editable field not its text (typing into it keeps its ref).
        let text = if n.editable {
            ""
        } else {
            n.text.as_deref().unwrap_or("")
        };
        let id = n.resource_id.as_deref().unwrap_or("");
        let mut salt = 0u32;
        let r = loop {
            let h = fnv(&[
                lineage,
                &n.class_name,
                text,
                n.hint_text.as_deref().unwrap_or(""),
                id,
                n.content_description.as_deref().unwrap_or(""),
                &salt.to_string(),
            ]);
            let letter = (b'a' + (h % 26) as u8) as char;
            let r = format!("{letter}{:03}", (h / 26) % 1000);
            if taken.insert(r.clone()) {
                break r;
            }
            salt += 1;
        };
        let index = self.nodes.len();
        let children = std::mem::take(&mut n.children);
        let lineage = format!("{lineage}/{}#{id}", n.class_name);
        self.nodes.push(SnapNode {
            r#ref: r,
            parent,
            depth,
            view: n,
        });
        for child in children {
            self.push(child, Some(index), depth + 1, &lineage, taken);
        }
    }

    /// The node with ref `r` (`y778` or `[y778]`).
    pub fn by_ref(&self, r: &str) -> Option<usize> {
        let r = r.trim().trim_start_matches('[').trim_end_matches(']');
        self.nodes.iter().position(|n| n.r#ref == r)
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
        n.text.is_some()
            || n.hint_text.is_some()
            || n.content_description.is_some()
            || n.clickable
            || n.editable
            || n.checked.is_some()
    }

    /// The compact text the LLM reads: one line per meaningful node, `[ref] Class "text" hint="..."`.
    /// Every value in `redact` (resolved secrets) reads `***`.
    pub fn render(&self, redact: &Redaction) -> String {
        let mut out = String::new();
        let mut levels: Vec<usize> = vec![0; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            let level = n
                .parent
                .map(|p| levels[p] + usize::from(Self::shown(&self.nodes[p])))
                .unwrap_or(0);
            levels[i] = level;
            if !Self::shown(n) {
                continue;
            }
            let class = n.class_name.rsplit('.').next().unwrap_or(&n.class_name);
            let mut line = format!("{}[{}] {class}", "  ".repeat(level), n.r#ref);
            let q = |s: &str| scrub(s, redact).replace('"', "\\\"");
            if let Some(t) = n.text.as_deref().filter(|t| !t.is_empty()) {
                line.push_str(&format!(" \"{}\"", q(t)));
            }
            if let Some(h) = &n.hint_text {
                line.push_str(&format!(" hint=\"{}\"", q(h)));
            }
            if let Some(d) = &n.content_description {
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
            if !flags.is_empty() {
                line.push_str(&format!(" ({})", flags.join(", ")));
            }
            out.push_str(&line);
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
        })
    }
}

fn scrub(text: &str, redact: &Redaction) -> String {
    redact.text(text).into_owned()
}

/// The session's device and its cached snapshot: what built-in tools touch. The snapshot is captured
/// on first use and kept until a call that is not read-only runs.
/// How many distinct screens [`Screen::screenshot`] keeps pictured.
const SCREENS_KEPT: usize = 8;

pub struct Screen {
    device: RefCell<Box<dyn Device>>,
    cached: RefCell<Option<Arc<Snapshot>>>,
    /// The last few screens pictured, by their snapshot, on a device whose screen changes only when
    /// a tool acts: a replay pictures the screen after every step, and trails go back and forth
    /// between a few screens.
    shots: RefCell<Vec<(Arc<Snapshot>, crate::device::Screenshot)>>,
    /// Refs of editable fields a secret was typed into: their text reads `***` in every snapshot
    /// until the field is empty again, so deleting a character cannot show the rest of the secret.
    tainted: RefCell<std::collections::BTreeSet<String>>,
}

impl Screen {
    pub fn new(device: Box<dyn Device>) -> Screen {
        Screen {
            device: RefCell::new(device),
            cached: RefCell::new(None),
            shots: RefCell::new(Vec::new()),
            tainted: RefCell::new(Default::default()),
        }
    }

    /// The device's platform (asked of the device, so an embedder's device says its own).
    pub fn platform(&self) -> crate::device::Platform {
        self.device.borrow().platform()
    }

    /// Runs `f` on the device; a device error stays typed (an unreachable device is no failed step).
    pub fn with_device<R>(&self, f: impl FnOnce(&mut dyn Device) -> Result<R, DeviceError>) -> Result<R, DeviceError> {
        let mut device = self.device.borrow_mut();
        f(device.as_mut())
    }

    /// The current snapshot: the cached one, or a fresh capture.
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, DeviceError> {
        if let Some(s) = self.cached.borrow().as_ref() {
            return Ok(s.clone());
        }
        let tree = self.with_device(|d| d.snapshot())?;
        let mut snap = Snapshot::from_tree(tree);
        self.mask_tainted(&mut snap);
        let snap = Arc::new(snap);
        *self.cached.borrow_mut() = Some(snap.clone());
        Ok(snap)
    }

    /// Marks the focused editable field as holding a secret (called after typing one).
    pub fn taint_focused(&self) -> Result<(), DeviceError> {
        let tree = self.with_device(|d| d.snapshot())?;
        let snap = Snapshot::from_tree(tree);
        if let Some(n) = snap.nodes.iter().find(|n| n.focused && n.editable) {
            self.tainted.borrow_mut().insert(n.r#ref.clone());
        }
        self.invalidate();
        Ok(())
    }

    /// A screenshot for reports, with secrets redacted and the text of every field a secret was typed
    /// into masked as the snapshot masks it (an SVG screen would otherwise show a partly deleted
    /// secret). PNG screens are returned as they are.
    pub fn screenshot(&self, redact: &Redaction) -> Result<crate::device::Screenshot, DeviceError> {
        if self.device.borrow().changes_on_its_own() {
            return self.take_screenshot(redact);
        }
        // The snapshot names the screen (and a fresh capture serves the next step's selectors).
        let snap = self.snapshot()?;
        if let Some((_, shot)) = self.shots.borrow().iter().find(|(s, _)| s.same_screen(&snap)) {
            return Ok(shot.clone());
        }
        let shot = self.take_screenshot(redact)?;
        let mut shots = self.shots.borrow_mut();
        if shots.len() >= SCREENS_KEPT {
            shots.remove(0);
        }
        shots.push((snap, shot.clone()));
        Ok(shot)
    }

    fn take_screenshot(&self, redact: &Redaction) -> Result<crate::device::Screenshot, DeviceError> {
        let mut fields: Vec<String> = Vec::new();
        if !self.tainted.borrow().is_empty() {
            let tree = self.with_device(|d| d.snapshot())?;
            let snap = Snapshot::from_tree(tree);
            let tainted = self.tainted.borrow();
            fields.extend(
                snap.nodes
                    .iter()
                    .filter(|n| tainted.contains(&n.r#ref))
                    .filter_map(|n| n.view.text.clone())
                    .filter(|t| !t.is_empty()),
            );
        }
        let mut shot = self.with_device(|d| d.screenshot())?;
        if shot.mime == "image/svg+xml"
            && let Ok(svg) = std::str::from_utf8(&shot.bytes)
        {
            // The fields' current texts join the session's secrets for this one screen.
            let clean = Redaction::new(&fields).text(&redact.text(svg)).into_owned();
            if clean != svg {
                shot.bytes = clean.into_bytes();
            }
        }
        Ok(shot)
    }

    /// Tainted fields read `***`; one that is empty again is no longer tainted.
    fn mask_tainted(&self, snap: &mut Snapshot) {
        let mut tainted = self.tainted.borrow_mut();
        if tainted.is_empty() {
            return;
        }
        for n in &mut snap.nodes {
            if !tainted.contains(&n.r#ref) {
                continue;
            }
            if n.view.text.as_deref().is_none_or(str::is_empty) {
                tainted.remove(&n.r#ref);
            } else {
                n.view.text = Some("***".to_string());
            }
        }
    }

    pub fn invalidate(&self) {
        self.cached.borrow_mut().take();
    }

    /// How many times the device captured its screen.
    pub fn captures(&self) -> u64 {
        self.device.borrow().captures()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::device::sim::SimDevice;
    use crate::device::{KeyCode, LaunchMode, Screenshot};

    /// The simulated device, counting screenshots; `changing` says its screen changes by itself.
    struct Counting {
        sim: SimDevice,
        shots: Arc<AtomicU32>,
        changing: bool,
    }

    impl Device for Counting {
        fn name(&self) -> String {
            self.sim.name()
        }
        fn changes_on_its_own(&self) -> bool {
            self.changing
        }
        fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
            self.sim.snapshot()
        }
        fn captures(&self) -> u64 {
            self.sim.captures()
        }
        fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
            self.sim.tap(x, y)
        }
        fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
            self.sim.long_press(x, y)
        }
        fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
            self.sim.input_text(text)
        }
        fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
            self.sim.press_key(key)
        }
        fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
            self.sim.launch_app(app_id, mode)
        }
        fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
            self.shots.fetch_add(1, Ordering::Relaxed);
            self.sim.screenshot()
        }
    }

    fn counting_screen(changing: bool) -> (Screen, Arc<AtomicU32>) {
        let app = "id: com.example.x\nstart: a\nscreens:\n  a:\n    nodes:\n      - { id: t, class: android.widget.TextView, text: Hi }\n";
        let sim = SimDevice::from_app_yaml(app, std::path::Path::new("app.yaml")).unwrap();
        let shots = Arc::new(AtomicU32::new(0));
        let device = Counting {
            sim,
            shots: shots.clone(),
            changing,
        };
        (Screen::new(Box::new(device)), shots)
    }

    #[test]
    fn a_screen_is_pictured_once_while_it_is_the_same_screen() {
        let (screen, shots) = counting_screen(false);
        let redact = Redaction::default();
        let first = screen.screenshot(&redact).unwrap();
        let again = screen.screenshot(&redact).unwrap();
        assert_eq!(first.bytes, again.bytes);
        assert_eq!(
            shots.load(Ordering::Relaxed),
            1,
            "a screen that cannot change is pictured once"
        );
        // A tool acted, but the screen is the same one: its picture is reused.
        screen.invalidate();
        screen.screenshot(&redact).unwrap();
        assert_eq!(shots.load(Ordering::Relaxed), 1);
        // A screen that did change (HOME leaves the app) is pictured anew.
        screen
            .with_device(|d| d.launch_app("com.example.x", LaunchMode::Resume))
            .unwrap();
        screen.with_device(|d| d.press_key(KeyCode::Home)).unwrap();
        screen.invalidate();
        let home = screen.screenshot(&redact).unwrap();
        assert_eq!(shots.load(Ordering::Relaxed), 2);
        assert_ne!(home.bytes, first.bytes);
        // Control: a device whose screen changes by itself is pictured every time.
        let (screen, shots) = counting_screen(true);
        screen.screenshot(&redact).unwrap();
        screen.screenshot(&redact).unwrap();
        assert_eq!(shots.load(Ordering::Relaxed), 2);
    }
}
