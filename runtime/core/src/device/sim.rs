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
//! `scrollable`, `children`, `bounds: [l, t, r, b]`. Unknown keys are refused. Behaviour, chosen to match Android
//! where it has an answer:
//! - A node `id: email` appears as resource id `<app id>:id/email`, as `uiautomator` reports it.
//! - Bounds not given are laid out on a 1080×2400 screen: nodes stacked top to bottom in document
//!   order, full width less a margin, children inside their parent. Given bounds leave the flow.
//! - A `scrollable` container ends at the screen's bottom margin (sooner when its content fits);
//!   a vertical swipe starting in it moves its content by the finger's distance, within its ends.
//!   Children scrolled out of it are not in the tree; one partly in has its bounds cut to it.
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

use super::{Device, DeviceError, InstalledApp, KeyCode, LaunchMode, Screenshot, ViewTree};

mod app_yaml;
mod extras;
#[cfg(test)]
mod scroll_tests;
mod svg;

pub use app_yaml::app_schema;
#[cfg(test)]
mod tests;
mod tree;

use app_yaml::{Action, App, Back};
pub use app_yaml::{SCREEN_HEIGHT, SCREEN_WIDTH};
use svg::render_svg;
use tree::hit;

/// Navigation deeper than this forgets its oldest entries, so a goto loop cannot grow forever.
const MAX_STACK: usize = 64;

/// A device that runs an `app.yaml` app in memory.
#[derive(Debug, Clone)]
pub struct SimDevice {
    app: App,
    state: State,
    captures: u64,
    /// The device's clipboard: the system's, so it outlives the app's data.
    clipboard: Option<String>,
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
    /// Whether the keyboard is up: it comes with focus on a field and goes with `hide_keyboard`.
    keyboard: bool,
    /// How far each scroll container (screen, node) has moved its content up, in pixels.
    offsets: HashMap<(usize, usize), i32>,
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
            keyboard: false,
            offsets: HashMap::new(),
        }
    }
}

impl SimDevice {
    /// Loads `path` (a trailmap's `app.yaml`).
    pub fn from_app_file(path: &Path) -> Result<SimDevice, DeviceError> {
        let text = crate::files::read_text(path)
            .map_err(|e| DeviceError::App(format!("cannot read {}: {e}", path.display())))?;
        SimDevice::from_app_yaml(&text, path)
    }

    /// Parses `text`; `file` names it in errors.
    pub fn from_app_yaml(text: &str, file: &Path) -> Result<SimDevice, DeviceError> {
        let parsed: app_yaml::AppSpec = crate::yaml::from_str(text, file).map_err(|e| {
            let msg = e.to_string();
            let shown = file.display().to_string();
            DeviceError::App(if msg.contains(&shown) {
                msg
            } else {
                format!("{shown}: {msg}")
            })
        })?;
        let app = app_yaml::compile(parsed).map_err(|problems| {
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
            clipboard: None,
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
            self.state.keyboard = true;
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
        self.state.keyboard = false;
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
            self.state.keyboard = true;
        }
    }
}

impl Device for SimDevice {
    fn name(&self) -> String {
        format!("sim:{}", self.app.id)
    }

    fn changes_on_its_own(&self) -> bool {
        false
    }

    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.captures += 1;
        Ok(self.tree())
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    /// A vertical swipe that starts inside a `scrollable` container moves its content by the
    /// distance the finger travelled (up shows what is below), within its ends; anywhere else the
    /// screen does not scroll and nothing changes. One that starts off the screen is refused.
    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), _millis: u32) -> Result<(), DeviceError> {
        let (w, h) = (SCREEN_WIDTH, SCREEN_HEIGHT);
        if from.0 < 0 || from.1 < 0 || from.0 >= w || from.1 >= h {
            return Err(DeviceError::Action(format!(
                "a swipe from ({}, {}) starts off the {w}×{h} screen",
                from.0, from.1
            )));
        }
        self.scroll(from, from.1 - to.1);
        Ok(())
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        if !self.state.foreground {
            return Ok(());
        }
        let Some(screen) = self.app.screens.get(self.state.current) else {
            return Ok(());
        };
        let mut path = Vec::new();
        hit(
            &screen.nodes,
            &screen.roots,
            (x, y),
            &|i| self.shown_bounds(i),
            &mut path,
        );
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
            KeyCode::Escape => {
                self.state.focus = None;
                self.state.keyboard = false;
            }
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

    fn stop_app(&mut self, app_id: &str) -> Result<(), DeviceError> {
        self.stop(app_id)
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        Ok(Screenshot {
            mime: "image/svg+xml",
            bytes: render_svg(&self.tree()).into_bytes(),
        })
    }

    fn set_clipboard(&mut self, text: &str) -> Result<(), DeviceError> {
        self.clipboard = Some(text.to_owned());
        Ok(())
    }

    fn clipboard(&mut self) -> Result<Option<String>, DeviceError> {
        Ok(self.clipboard.clone())
    }

    fn clear_app_data(&mut self, app_id: &str) -> Result<(), DeviceError> {
        self.clear_data(app_id)
    }

    fn installed_apps(&mut self) -> Result<Vec<InstalledApp>, DeviceError> {
        Ok(vec![InstalledApp::new(self.app.id.clone(), false)])
    }

    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        let shown = self.keyboard_shown();
        self.state.keyboard = false;
        Ok(shown)
    }

    fn grant_permission(&mut self, app_id: &str, _permission: &str) -> Result<bool, DeviceError> {
        self.no_permissions(app_id)
    }

    fn grant_app_op(&mut self, app_id: &str, _op: &str) -> Result<bool, DeviceError> {
        self.no_permissions(app_id)
    }

    /// The simulated screen has no status bar: nothing on it changes by itself already.
    fn demo_mode(&mut self, _enable: bool) -> Result<(), DeviceError> {
        Ok(())
    }
}
