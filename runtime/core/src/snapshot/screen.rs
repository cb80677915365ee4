//! The session's device and its cached snapshot: what built-in tools touch. The snapshot is captured
//! on first use and kept until a call that is not read-only runs, so a replayed step costs at most
//! one capture. Fields a secret was typed into read `***` until they are empty again.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::sync::Arc;

use super::Snapshot;
use crate::device::{Device, DeviceError, Screenshot};
use crate::secret::Redaction;

/// How many distinct screens [`Screen::screenshot`] keeps pictured.
const SCREENS_KEPT: usize = 8;

/// Where the fields a secret was typed into are, in device pixels, on a screen of `screen`
/// (width, height).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecretFields {
    pub bounds: Vec<crate::device::Bounds>,
    pub screen: (i32, i32),
}

/// Paints over the fields a secret was typed into in a device's picture (a PNG: pixels cannot be
/// scrubbed as an SVG's text is). A build without one takes no picture of a screen showing such a
/// field.
pub trait Painter: Send + Sync {
    /// `shot` with every bounds of `fields` (device pixels on a screen of `fields.screen`) covered
    /// in [`SECRET_MASK`].
    fn cover(&self, shot: &Screenshot, fields: &SecretFields) -> Result<Screenshot, String>;
}

/// The colour a field holding a secret is painted in, in every picture: a solid grey.
pub const SECRET_MASK: [u8; 3] = [95, 99, 104];

pub struct Screen {
    device: RefCell<Box<dyn Device>>,
    cached: RefCell<Option<Arc<Snapshot>>>,
    /// The last few screens pictured, by their snapshot, on a device whose screen changes only when
    /// a tool acts (the simulated one): a replay pictures the screen after every step, and trails go
    /// back and forth between a few screens.
    shots: RefCell<Vec<(Arc<Snapshot>, Screenshot)>>,
    /// Refs of editable fields a secret was typed into: their text reads `***` in every snapshot
    /// until the field is empty again, so deleting a character cannot show the rest of the secret.
    tainted: RefCell<BTreeSet<String>>,
    /// A secret went into the focused field, which is not known yet: the next capture taints it.
    /// A capture happens before anything else acts on the device (see `with_device`), so the focus
    /// cannot have moved in between.
    taint_pending: Cell<bool>,
    /// The running call's deadline: reading a huge screen stops when the call's time is up.
    deadline: Option<Arc<crate::budget::Deadline>>,
    /// What paints over secret fields in a PNG; `None`: such a screen is not pictured.
    painter: Option<Arc<dyn Painter>>,
    /// Time spent in the device's calls so far: a trace splits each call's time by it.
    busy: Cell<std::time::Duration>,
}

impl Screen {
    pub fn new(device: Box<dyn Device>) -> Screen {
        Screen {
            device: RefCell::new(device),
            cached: RefCell::new(None),
            shots: RefCell::new(Vec::new()),
            tainted: RefCell::new(BTreeSet::new()),
            taint_pending: Cell::new(false),
            deadline: None,
            painter: None,
            busy: Cell::new(std::time::Duration::ZERO),
        }
    }

    /// Pictures (PNG) of screens showing a field a secret was typed into are painted by `painter`.
    pub fn painted_by(mut self, painter: Option<Arc<dyn Painter>>) -> Screen {
        self.painter = painter;
        self
    }

    /// Bounds every capture by `deadline` (the session's: the running call's wall-clock budget).
    pub fn bounded_by(mut self, deadline: Arc<crate::budget::Deadline>) -> Screen {
        self.deadline = Some(deadline);
        self
    }

    /// The device's platform (asked of the device, so an embedder's device says its own).
    pub fn platform(&self) -> crate::device::Platform {
        self.device.borrow().platform()
    }

    /// Runs `f` on the device; a device error stays typed (an unreachable device is no failed step).
    /// A pending taint is settled first, from a capture, while the focus is still where the secret went.
    pub fn with_device<R>(&self, f: impl FnOnce(&mut dyn Device) -> Result<R, DeviceError>) -> Result<R, DeviceError> {
        if self.taint_pending.get() {
            self.capture()?;
        }
        let started = std::time::Instant::now();
        let out = f(self.device_now().as_mut());
        self.busy.set(self.busy.get() + started.elapsed());
        out
    }

    /// Time spent in the device's calls since the screen was made.
    pub fn busy(&self) -> std::time::Duration {
        self.busy.get()
    }

    /// Whether `snap` is the snapshot cached now (nothing invalidated it since it was taken).
    pub fn is_current(&self, snap: &Arc<Snapshot>) -> bool {
        self.cached.borrow().as_ref().is_some_and(|c| Arc::ptr_eq(c, snap))
    }

    /// Whether a secret was typed into a field shown (or about to be) on this screen's device.
    pub fn holds_secret_fields(&self) -> bool {
        !self.tainted.borrow().is_empty() || self.taint_pending.get()
    }

    /// Whether the device's own pictures hide the fields a secret was typed into.
    pub fn pictures_hide_secrets(&self) -> bool {
        self.device.borrow().pictures_hide_secrets()
    }

    /// The device, told the running call's wall-clock deadline: every use of it goes through here.
    fn device_now(&self) -> std::cell::RefMut<'_, Box<dyn Device>> {
        let mut device = self.device.borrow_mut();
        device.set_deadline(self.deadline.as_ref().and_then(|d| d.wall_deadline()));
        device
    }

    /// One capture of the device's screen, unmasked; settles a pending taint. Whatever device made
    /// the tree, it is held to the device layer's limits before anything walks it.
    fn capture(&self) -> Result<Snapshot, DeviceError> {
        let started = std::time::Instant::now();
        let tree = self.device_now().snapshot();
        self.busy.set(self.busy.get() + started.elapsed());
        let tree = tree?;
        if let Err(e) = crate::device::limits::check_tree(&tree) {
            crate::device::limits::drop_flat(tree.root);
            return Err(DeviceError::Io(format!("{}: {e}", self.device.borrow().name())));
        }
        let stop = || self.deadline.as_ref().is_some_and(|d| d.expired());
        let snap = Snapshot::within(tree, &stop).map_err(|e| DeviceError::Action(e.to_string()))?;
        if self.taint_pending.replace(false)
            && let Some(n) = snap.nodes.iter().find(|n| n.focused && n.editable)
        {
            self.tainted.borrow_mut().insert(n.r#ref.clone());
        }
        Ok(snap)
    }

    /// The current snapshot: the cached one, or a fresh capture.
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, DeviceError> {
        if let Some(s) = self.cached.borrow().as_ref() {
            return Ok(s.clone());
        }
        let mut snap = self.capture()?;
        self.mask_tainted(&mut snap);
        let snap = Arc::new(snap);
        *self.cached.borrow_mut() = Some(snap.clone());
        Ok(snap)
    }

    /// Marks the editable field `r` as holding a secret (its ref ignores its text, so typing keeps it).
    pub fn taint(&self, r: &str) {
        self.tainted.borrow_mut().insert(r.to_owned());
        self.invalidate();
    }

    /// Marks the focused field as holding a secret without a capture of its own: the next capture,
    /// which comes before any other device action, finds it.
    pub fn taint_focused(&self) {
        self.taint_pending.set(true);
        self.invalidate();
    }

    /// The ref of the focused editable field in the cached snapshot; `None` when nothing is cached.
    pub fn cached_focused_field(&self) -> Option<String> {
        let cached = self.cached.borrow();
        let snap = cached.as_ref()?;
        snap.nodes
            .iter()
            .find(|n| n.focused && n.editable)
            .map(|n| n.r#ref.clone())
    }

    /// A screenshot for reports, with secrets redacted and the text of every field a secret was typed
    /// into masked as the snapshot masks it (an SVG screen would otherwise show a partly deleted
    /// secret). PNG screens are returned as they are, so they cost no view-tree capture.
    pub fn screenshot(&self, redact: &Redaction) -> Result<Screenshot, DeviceError> {
        self.picture(redact, false)
    }

    /// [`Screen::screenshot`] for a trace's frame: the device's cheaper picture where it has one.
    pub fn trace_picture(&self, redact: &Redaction) -> Result<Screenshot, DeviceError> {
        self.picture(redact, true)
    }

    fn picture(&self, redact: &Redaction, for_trace: bool) -> Result<Screenshot, DeviceError> {
        if self.device.borrow().changes_on_its_own() {
            return self.take_screenshot(redact, for_trace);
        }
        // The snapshot names the screen (and a fresh capture serves the next step's selectors).
        let snap = self.snapshot()?;
        if let Some((_, shot)) = self.shots.borrow().iter().find(|(s, _)| s.same_screen(&snap)) {
            return Ok(shot.clone());
        }
        let shot = self.take_screenshot(redact, for_trace)?;
        let mut shots = self.shots.borrow_mut();
        if shots.len() >= SCREENS_KEPT {
            shots.remove(0);
        }
        shots.push((snap, shot.clone()));
        Ok(shot)
    }

    /// Where the fields a secret was typed into are on the current screen (device pixels), and the
    /// screen's size: what a picture sent out paints over, since pixels cannot be scrubbed.
    pub fn secret_fields(&self) -> Result<SecretFields, DeviceError> {
        let snap = self.snapshot()?;
        let tainted = self.tainted.borrow();
        let bounds = snap
            .nodes
            .iter()
            .filter(|n| tainted.contains(&n.r#ref))
            .map(|n| n.view.bounds)
            .collect();
        Ok(SecretFields {
            bounds,
            screen: (snap.width, snap.height),
        })
    }

    fn take_screenshot(&self, redact: &Redaction, for_trace: bool) -> Result<Screenshot, DeviceError> {
        // Straight to the device: a picture changes nothing, so a pending taint can wait.
        let started = std::time::Instant::now();
        let shot = if for_trace {
            self.device_now().trace_picture()
        } else {
            self.device_now().screenshot()
        };
        self.busy.set(self.busy.get() + started.elapsed());
        let mut shot = shot?;
        if shot.mime != "image/svg+xml" {
            return self.painted(shot);
        }
        let mut fields: Vec<String> = Vec::new();
        if !self.tainted.borrow().is_empty() || self.taint_pending.get() {
            // The fields' real texts need a raw capture; it also becomes the cached snapshot when
            // none is cached and the screen cannot change by itself, so the next step does not
            // capture the same screen again.
            let mut snap = self.capture()?;
            {
                let tainted = self.tainted.borrow();
                fields.extend(
                    snap.nodes
                        .iter()
                        .filter(|n| tainted.contains(&n.r#ref))
                        .filter_map(|n| n.view.text.clone())
                        .filter(|t| !t.is_empty()),
                );
            }
            let still = !self.device.borrow().changes_on_its_own();
            if still && self.cached.borrow().is_none() {
                self.mask_tainted(&mut snap);
                *self.cached.borrow_mut() = Some(Arc::new(snap));
            }
        }
        if let Ok(svg) = std::str::from_utf8(&shot.bytes) {
            // The fields' current texts join the session's secrets for this one screen.
            let clean = Redaction::new(&fields).text(&redact.text(svg)).into_owned();
            if clean != svg {
                shot.bytes = clean.into_bytes();
            }
        }
        Ok(shot)
    }

    /// A device's picture (a PNG) with the fields a secret was typed into painted over, found in
    /// the screen's snapshot. With no painter, a picture of a screen showing such a field is refused
    /// rather than given out. A device whose pictures hide them itself (a browser) is left alone.
    fn painted(&self, shot: Screenshot) -> Result<Screenshot, DeviceError> {
        if (self.tainted.borrow().is_empty() && !self.taint_pending.get())
            || self.device.borrow().pictures_hide_secrets()
        {
            return Ok(shot);
        }
        // The screen's snapshot: the cached one, else a capture that becomes the cache (the next
        // step reads it instead of capturing again, so a replay takes no more captures).
        let snap = self.snapshot()?;
        let fields = {
            let tainted = self.tainted.borrow();
            SecretFields {
                bounds: snap
                    .nodes
                    .iter()
                    .filter(|n| tainted.contains(&n.r#ref) && n.view.text.as_deref().is_some_and(|t| !t.is_empty()))
                    .map(|n| n.view.bounds)
                    .collect(),
                screen: (snap.width, snap.height),
            }
        };
        if fields.bounds.is_empty() {
            return Ok(shot);
        }
        match &self.painter {
            Some(p) => p
                .cover(&shot, &fields)
                .map_err(|e| DeviceError::Action(format!("cannot paint over a secret field in the screenshot: {e}"))),
            None => Err(DeviceError::Action(
                "a field holding a secret is on the screen and this build cannot paint over it in a picture \
                 (no `raster` part): no screenshot taken"
                    .into(),
            )),
        }
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
    use crate::device::ViewTree;
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

    /// A phone's picture: a PNG (only its signature matters here).
    struct Png(Counting);

    impl Device for Png {
        fn name(&self) -> String {
            "png".into()
        }
        fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
            self.0.snapshot()
        }
        fn captures(&self) -> u64 {
            self.0.captures()
        }
        fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
            self.0.tap(x, y)
        }
        fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
            self.0.long_press(x, y)
        }
        fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
            self.0.input_text(text)
        }
        fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
            self.0.press_key(key)
        }
        fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
            self.0.launch_app(app_id, mode)
        }
        fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
            Ok(Screenshot {
                mime: "image/png",
                bytes: b"\x89PNG\r\n\x1a\n".to_vec(),
            })
        }
    }

    /// Records what it was asked to paint.
    struct Recorder(Arc<std::sync::Mutex<Vec<SecretFields>>>);

    impl Painter for Recorder {
        fn cover(&self, shot: &Screenshot, fields: &SecretFields) -> Result<Screenshot, String> {
            self.0.lock().map_err(|e| e.to_string())?.push(fields.clone());
            Ok(Screenshot {
                mime: shot.mime,
                bytes: b"painted".to_vec(),
            })
        }
    }

    fn png_screen(painter: Option<Arc<dyn Painter>>) -> Screen {
        let app = "id: com.example.x\nstart: a\nscreens:\n  a:\n    nodes:\n      - { id: f, class: android.widget.EditText, editable: true }\n";
        let sim = SimDevice::from_app_yaml(app, std::path::Path::new("app.yaml")).unwrap();
        let device = Png(Counting {
            sim,
            shots: Arc::new(AtomicU32::new(0)),
            changing: true,
        });
        let screen = Screen::new(Box::new(device)).painted_by(painter);
        screen
            .with_device(|d| d.launch_app("com.example.x", LaunchMode::Reinstall))
            .unwrap();
        screen
    }

    /// Types into the field as a secret would be: the field is tainted.
    fn type_secret(screen: &Screen) {
        let snap = screen.snapshot().unwrap();
        let field = snap.nodes.iter().find(|n| n.editable).unwrap();
        let (x, y) = field.bounds.center();
        let r = field.r#ref.clone();
        screen.with_device(|d| d.tap(x, y)).unwrap();
        screen.with_device(|d| d.input_text("hunter2")).unwrap();
        screen.taint(&r);
        screen.invalidate();
    }

    #[test]
    fn a_png_showing_a_secret_field_is_painted_over_or_not_given_out() {
        let redact = Redaction::default();
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let screen = png_screen(Some(Arc::new(Recorder(asked.clone()))));
        // Control: nothing secret typed, nothing painted.
        assert_eq!(screen.screenshot(&redact).unwrap().bytes, b"\x89PNG\r\n\x1a\n");
        assert!(asked.lock().unwrap().is_empty());
        type_secret(&screen);
        let captures = screen.captures();
        assert_eq!(screen.screenshot(&redact).unwrap().bytes, b"painted");
        let fields = asked.lock().unwrap().clone();
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].bounds.len(), 1, "the field's bounds, on the screen's size");
        assert_eq!(fields[0].screen, (1080, 2400));
        // The capture it took is the cache: the next look at the screen takes none.
        screen.snapshot().unwrap();
        assert_eq!(screen.captures(), captures + 1);
        // With no painter the picture is refused, not given out.
        let bare = png_screen(None);
        type_secret(&bare);
        let e = bare.screenshot(&redact).unwrap_err();
        assert!(e.to_string().contains("cannot paint over it"), "{e}");
    }
}
