//! The simulated app (`SimDevice`, an `app.yaml`) shown as an iOS app: its Android-shaped view tree
//! mapped to XCUITest elements, its 1080×2400 pixels shown as 360×800 points at scale 3.

use trailblaze::device::sim::SimDevice;
use trailblaze::device::{Bounds, Device, KeyCode, LaunchMode, ViewNode};

use super::app::{FakeApp, Screen};
use super::element::{Element, Rect, keyboard};

const SCALE: i32 = 3;

pub struct SimApp {
    sim: SimDevice,
    name: String,
}

impl SimApp {
    /// Shows `sim` under the name `name` (the home screen's and the application element's label).
    pub fn new(sim: SimDevice, name: &str) -> SimApp {
        SimApp {
            sim,
            name: name.to_owned(),
        }
    }

    /// The demo app (`trailmaps/demo/app.yaml`), named `Demo`.
    pub fn demo() -> SimApp {
        let path = crate::repo_root().join("trailmaps/demo/app.yaml");
        SimApp::new(SimDevice::from_app_file(&path).expect("demo app.yaml loads"), "Demo")
    }

    fn px(v: f64) -> i32 {
        (v * f64::from(SCALE)).round() as i32
    }
}

impl FakeApp for SimApp {
    fn bundle_id(&self) -> &str {
        self.sim.app_id()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn screen(&self) -> Screen {
        let (w, h) = (
            trailblaze::device::sim::SCREEN_WIDTH,
            trailblaze::device::sim::SCREEN_HEIGHT,
        );
        Screen {
            width: w / SCALE,
            height: h / SCALE,
            scale: SCALE,
            // The simulated screen has none: its first node is at the top.
            status_bar: 0,
        }
    }

    fn launch(&mut self) {
        let id = self.sim.app_id().to_owned();
        let _ = self.sim.launch_app(&id, LaunchMode::ForceRestart);
    }

    fn resume(&mut self) {
        let id = self.sim.app_id().to_owned();
        let _ = self.sim.launch_app(&id, LaunchMode::Resume);
    }

    fn background(&mut self) {
        let _ = self.sim.press_key(KeyCode::Home);
    }

    fn terminate(&mut self) {
        let id = self.sim.app_id().to_owned();
        let _ = self.sim.stop(&id);
    }

    fn windows(&mut self) -> Vec<Element> {
        let s = self.screen();
        let tree = self
            .sim
            .snapshot()
            .unwrap_or_else(|e| panic!("the simulated app always has a tree: {e}"));
        let window = Element::new("Window", Rect::new(0, 0, s.width, s.height)).child(element(&tree.root));
        let mut out = vec![window];
        if self.sim.keyboard_shown() {
            out.push(keyboard(s.width, s.height, 300));
        }
        out
    }

    fn tap(&mut self, x: f64, y: f64) {
        let _ = self.sim.tap(Self::px(x), Self::px(y));
    }

    fn long_press(&mut self, x: f64, y: f64) {
        let _ = self.sim.long_press(Self::px(x), Self::px(y));
    }

    fn swipe(&mut self, from: (f64, f64), to: (f64, f64), millis: u64) {
        let (a, b) = ((Self::px(from.0), Self::px(from.1)), (Self::px(to.0), Self::px(to.1)));
        let _ = self.sim.swipe(a, b, millis.min(u64::from(u32::MAX)) as u32);
    }

    fn keyboard_shown(&self) -> bool {
        self.sim.keyboard_shown()
    }

    fn type_text(&mut self, text: &str) {
        let _ = self.sim.input_text(text);
    }

    fn delete_backward(&mut self) {
        let _ = self.sim.press_key(KeyCode::Backspace);
    }

    fn press_return(&mut self) {
        let _ = self.sim.press_key(KeyCode::Enter);
    }

    fn dismiss_keyboard(&mut self) -> bool {
        self.sim.hide_keyboard().unwrap_or(false)
    }
}

/// Pixels to points: the smallest whole-point frame holding the node.
fn rect(b: Bounds) -> Rect {
    let (x, y) = (b.left.div_euclid(SCALE), b.top.div_euclid(SCALE));
    let right = b.right.div_euclid(SCALE) + i32::from(b.right.rem_euclid(SCALE) != 0);
    let bottom = b.bottom.div_euclid(SCALE) + i32::from(b.bottom.rem_euclid(SCALE) != 0);
    Rect::new(x, y, right - x, bottom - y)
}

/// An Android node as the XCUITest element an iOS app would have in its place.
fn element(n: &ViewNode) -> Element {
    let class = n.class_name.rsplit('.').next().unwrap_or("");
    let kind = if n.class_name.starts_with("XCUIElementType") {
        n.class_name.as_str()
    } else if n.editable {
        if n.password { "SecureTextField" } else { "TextField" }
    } else if n.checked.is_some() || matches!(class, "Switch" | "ToggleButton" | "CheckBox") {
        "Switch"
    } else if matches!(class, "Button" | "ImageButton") {
        "Button"
    } else if matches!(class, "TextView") {
        "StaticText"
    } else if matches!(class, "ImageView") {
        "Image"
    } else if n.scrollable || class.contains("ScrollView") || class == "RecyclerView" {
        "ScrollView"
    } else if n.clickable {
        "Cell"
    } else {
        "Other"
    };
    let mut e = Element::new(kind, rect(n.bounds)).enabled(n.enabled).focused(n.focused);
    e.selected = n.selected;
    e.identifier = n
        .resource_id
        .as_deref()
        .map(|r| r.rsplit_once(":id/").map_or(r, |(_, id)| id).to_owned());
    let text = n.text.clone().filter(|t| !t.is_empty());
    match e.short_kind() {
        "TextField" | "SecureTextField" | "SearchField" | "TextView" => {
            // The sim already masks a password as `•` per character, as iOS reports it.
            e.value = text;
            e.placeholder = n.hint_text.clone();
            e.label = n.content_description.clone();
        }
        "Switch" => {
            e.value = Some(if n.checked == Some(true) { "1" } else { "0" }.to_owned());
            e.label = n.content_description.clone().or(text);
        }
        _ => e.label = n.content_description.clone().or(text),
    }
    e.children(n.children.iter().map(element))
}
