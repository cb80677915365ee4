//! The phone behind the fake WDA: the app's process (not running, in the background, in front),
//! the home screen, the keyboard, the WebDriver session and the elements it found.

use std::collections::HashMap;

use trailblaze::device::{Bounds, ViewNode, ViewTree};

use super::app::FakeApp;
use super::element::{self, AppInfo, Element, Rect};

const SPRINGBOARD: &str = "com.apple.springboard";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    NotRunning,
    Background,
    Foreground,
}

/// A W3C error as WDA answers it: HTTP status, error code, message.
#[derive(Debug, Clone)]
pub struct WdaError {
    pub status: u16,
    pub error: &'static str,
    pub message: String,
}

impl WdaError {
    pub fn new(status: u16, error: &'static str, message: impl Into<String>) -> WdaError {
        WdaError {
            status,
            error,
            message: message.into(),
        }
    }
    pub fn invalid_argument(m: impl Into<String>) -> WdaError {
        WdaError::new(400, "invalid argument", m)
    }
    pub fn unknown(m: impl Into<String>) -> WdaError {
        WdaError::new(500, "unknown error", m)
    }
}

/// What `/wda/keys` and typing into an element answer without a keyboard (FBKeyboard.m).
const NO_KEYBOARD: &str = "The on-screen keyboard must be present to send keys";

/// An element a session found: where it was, to find it again.
struct Found {
    path: Vec<usize>,
    kind: String,
    name: Option<String>,
}

pub struct Session {
    pub id: String,
    pub bundle_id: Option<String>,
    /// WDA's `shouldTerminateApp` capability (default true): the session's end ends its app.
    pub terminate_app: bool,
    found: HashMap<String, Found>,
}

pub struct Phone {
    pub app: Box<dyn FakeApp>,
    pub process: Process,
    pub session: Option<Session>,
    /// Everything the keyboard got, exactly.
    pub typed: String,
    pub urls: Vec<String>,
    pid: u32,
    next_id: u64,
}

impl Phone {
    pub fn new(app: Box<dyn FakeApp>) -> Phone {
        Phone {
            app,
            process: Process::NotRunning,
            session: None,
            typed: String::new(),
            urls: Vec::new(),
            pid: 4000,
            next_id: 0,
        }
    }

    /// A fresh id shaped like WDA's (a UUID).
    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("{:08X}-0000-4000-8000-{:012X}", std::process::id(), self.next_id)
    }

    pub fn screen_rect(&self) -> Rect {
        let s = self.app.screen();
        Rect::new(0, 0, s.width, s.height)
    }

    /// The application in front: the app, or the home screen with the app's icon.
    pub fn tree(&mut self) -> Element {
        let full = self.screen_rect();
        if self.process == Process::Foreground {
            return Element::new("Application", full)
                .label(self.app.name())
                .children(self.app.windows());
        }
        let name = self.app.name().to_owned();
        let icon = Element::new("Icon", Rect::new(30, 120, 64, 74)).label(&name).id(&name);
        let icons = Element::new("Other", full).id("Home screen icons").child(icon);
        Element::new("Application", full)
            .id("SpringBoard")
            .child(Element::new("Window", full).child(icons))
    }

    pub fn source(&mut self, scope: Option<&str>, excluded: &[&str]) -> String {
        let tree = self.tree();
        let front = self.process == Process::Foreground;
        let bundle_id = if front {
            self.app.bundle_id().to_owned()
        } else {
            SPRINGBOARD.to_owned()
        };
        let pid = if front { self.pid } else { 1 };
        let info = AppInfo {
            bundle_id: &bundle_id,
            pid,
        };
        element::source(&tree, &info, self.screen_rect(), scope, excluded)
    }

    /// A PNG of the screen in pixels: each element's outline (the adb fake's writer).
    pub fn screenshot(&mut self) -> Vec<u8> {
        let s = self.app.screen();
        let root = pixels(&self.tree(), s.scale);
        crate::fake_adb::render_png(&ViewTree {
            app_id: None,
            width: s.width * s.scale,
            height: s.height * s.scale,
            root,
        })
    }

    fn check_bundle(&self, bundle_id: &str) -> Result<(), WdaError> {
        if bundle_id == self.app.bundle_id() {
            return Ok(());
        }
        Err(WdaError::new(
            500,
            "session not created",
            format!(
                "Cannot launch {bundle_id} application. Make sure the correct bundle identifier has been \
                 provided in capabilities and check the device log for possible crash report occurrences"
            ),
        ))
    }

    /// XCUIApplication.launch: a running app is restarted.
    pub fn launch(&mut self, bundle_id: &str) -> Result<(), WdaError> {
        self.check_bundle(bundle_id)?;
        self.app.launch();
        self.pid += 1;
        self.process = Process::Foreground;
        Ok(())
    }

    /// XCUIApplication.activate: to the front as it was, launched when not running.
    pub fn activate(&mut self, bundle_id: &str) -> Result<(), WdaError> {
        self.check_bundle(bundle_id).map_err(|e| WdaError::unknown(e.message))?;
        match self.process {
            Process::NotRunning => self.launch(bundle_id)?,
            Process::Background => {
                self.app.resume();
                self.process = Process::Foreground;
            }
            Process::Foreground => {}
        }
        Ok(())
    }

    /// `true` when the app was running.
    pub fn terminate(&mut self, bundle_id: &str) -> bool {
        if bundle_id != self.app.bundle_id() || self.process == Process::NotRunning {
            return false;
        }
        self.app.terminate();
        self.process = Process::NotRunning;
        true
    }

    /// XCUIApplicationState: 1 not running, 3 in the background, 4 in front.
    pub fn state(&self, bundle_id: &str) -> u8 {
        match self.process {
            _ if bundle_id != self.app.bundle_id() => 1,
            Process::NotRunning => 1,
            Process::Background => 3,
            Process::Foreground => 4,
        }
    }

    pub fn home(&mut self) {
        if self.process == Process::Foreground {
            self.app.background();
            self.process = Process::Background;
        }
    }

    fn keyboard_up(&self) -> bool {
        self.process == Process::Foreground && self.app.keyboard_shown()
    }

    /// A tap: on the home screen's icon it opens the app; on the keyboard it presses a key (or
    /// nothing between keys); anywhere else the app has it.
    pub fn tap(&mut self, x: f64, y: f64) {
        if self.process != Process::Foreground {
            if self.tree().hit(x, y, "Icon").is_some() {
                let id = self.app.bundle_id().to_owned();
                let _ = self.activate(&id);
            }
            return;
        }
        if self.keyboard_up() {
            let tree = self.tree();
            if let Some(key) = tree.hit(x, y, "Key") {
                let text = match key.label.as_deref().unwrap_or("") {
                    "space" => " ".to_owned(),
                    "return" => "\n".to_owned(),
                    "delete" => "\u{8}".to_owned(),
                    letter => letter.to_owned(),
                };
                let _ = self.type_keys(&text);
                return;
            }
            if tree.hit(x, y, "Keyboard").is_some() {
                return;
            }
        }
        self.app.tap(x, y);
    }

    pub fn long_press(&mut self, x: f64, y: f64) {
        if self.process == Process::Foreground && !self.keyboard_up() {
            self.app.long_press(x, y);
        } else {
            self.tap(x, y);
        }
    }

    pub fn swipe(&mut self, from: (f64, f64), to: (f64, f64), millis: u64) {
        if self.process == Process::Foreground {
            self.app.swipe(from, to, millis);
        }
    }

    /// Types `text` into the focused field: `\n` (or `\r`) is return, backspace and DEL delete
    /// one character. Recorded exactly as received.
    pub fn type_keys(&mut self, text: &str) -> Result<(), WdaError> {
        if !self.keyboard_up() {
            return Err(WdaError::new(400, "invalid element state", NO_KEYBOARD));
        }
        self.typed.push_str(text);
        let mut run = String::new();
        for c in text.chars() {
            if !matches!(c, '\n' | '\r' | '\u{8}' | '\u{7f}') {
                run.push(c);
                continue;
            }
            if !run.is_empty() {
                self.app.type_text(&std::mem::take(&mut run));
            }
            if matches!(c, '\n' | '\r') {
                self.app.press_return();
            } else {
                self.app.delete_backward();
            }
        }
        if !run.is_empty() {
            self.app.type_text(&run);
        }
        Ok(())
    }

    /// The elements matching a locator, in document order, each given an id in the session.
    pub fn find(&mut self, using: &str, value: &str) -> Result<Vec<String>, WdaError> {
        let by_name = matches!(using, "accessibility id" | "id" | "name");
        if !by_name && using != "class name" {
            return Err(WdaError::new(
                400,
                "invalid selector",
                format!("the fake WDA finds elements by 'accessibility id' or 'class name', not '{using}'"),
            ));
        }
        let tree = self.tree();
        let found: Vec<Found> = tree
            .descendants()
            .into_iter()
            .filter(|(_, e)| {
                if by_name {
                    e.wd_name().as_deref() == Some(value)
                } else {
                    e.kind == value
                }
            })
            .map(|(path, e)| Found {
                path,
                kind: e.kind.clone(),
                name: e.wd_name(),
            })
            .collect();
        let mut ids = Vec::new();
        for f in found {
            let id = self.new_id();
            if let Some(s) = &mut self.session {
                s.found.insert(id.clone(), f);
            }
            ids.push(id);
        }
        Ok(ids)
    }

    /// The element a session's id names, as the screen shows it now.
    pub fn element(&mut self, id: &str) -> Result<Element, WdaError> {
        let tree = self.tree();
        self.element_in(&tree, id)
    }

    /// The element a session's id names in `tree`: where it was found if it is still there, else
    /// the first of its type and name (a screen that changed around it).
    pub fn element_in(&self, tree: &Element, id: &str) -> Result<Element, WdaError> {
        let Some(f) = self.session.as_ref().and_then(|s| s.found.get(id)) else {
            return Err(WdaError::new(
                404,
                "no such element",
                format!(
                    "The element identified by \"{id}\" is either not present or it has expired from the internal cache. Try to find it again"
                ),
            ));
        };
        let same = |e: &&Element| e.kind == f.kind && e.wd_name() == f.name;
        let at = tree.at(&f.path).filter(same);
        let e = at.or_else(|| {
            let named = f.name.is_some();
            tree.descendants()
                .into_iter()
                .map(|(_, e)| e)
                .find(|e| named && same(e))
        });
        e.cloned().ok_or_else(|| {
            WdaError::new(
                404,
                "stale element reference",
                format!(
                    "The previously found element \"{}\" is not present in the current view anymore",
                    f.kind
                ),
            )
        })
    }

    /// Where a tap on `e` lands: the centre of its part on the screen.
    pub fn tap_point(&self, e: &Element) -> (f64, f64) {
        e.rect.clip(&self.screen_rect()).unwrap_or(e.rect).center()
    }
}

impl Session {
    pub fn new(id: String, bundle_id: Option<String>) -> Session {
        Session {
            id,
            bundle_id,
            terminate_app: true,
            found: HashMap::new(),
        }
    }
}

/// The tree in pixels, for the PNG writer.
fn pixels(e: &Element, scale: i32) -> ViewNode {
    let r = e.rect;
    ViewNode {
        class_name: e.kind.clone(),
        bounds: Bounds {
            left: r.x * scale,
            top: r.y * scale,
            right: (r.x + r.width) * scale,
            bottom: (r.y + r.height) * scale,
        },
        enabled: e.enabled,
        children: e.children.iter().map(|c| pixels(c, scale)).collect(),
        ..ViewNode::default()
    }
}
