//! The session's device and its cached snapshot: what built-in tools touch. The snapshot is captured
//! on first use and kept until a call that is not read-only runs, so a replayed step costs at most
//! one capture. Fields a secret was typed into read `***` until they are empty again.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::sync::Arc;

use super::Snapshot;
use crate::device::{Device, DeviceError, Screenshot};
use crate::secret::Redaction;

pub struct Screen {
    device: RefCell<Box<dyn Device>>,
    cached: RefCell<Option<Arc<Snapshot>>>,
    /// Refs of editable fields a secret was typed into: their text reads `***` in every snapshot
    /// until the field is empty again, so deleting a character cannot show the rest of the secret.
    tainted: RefCell<BTreeSet<String>>,
    /// A secret went into the focused field, which is not known yet: the next capture taints it.
    /// A capture happens before anything else acts on the device (see `with_device`), so the focus
    /// cannot have moved in between.
    taint_pending: Cell<bool>,
}

impl Screen {
    pub fn new(device: Box<dyn Device>) -> Screen {
        Screen {
            device: RefCell::new(device),
            cached: RefCell::new(None),
            tainted: RefCell::new(BTreeSet::new()),
            taint_pending: Cell::new(false),
        }
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
        let mut device = self.device.borrow_mut();
        f(device.as_mut())
    }

    /// One capture of the device's screen, unmasked; settles a pending taint.
    fn capture(&self) -> Result<Snapshot, DeviceError> {
        let tree = self.device.borrow_mut().snapshot()?;
        let snap = Snapshot::from_tree(tree);
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
        // Straight to the device: a picture changes nothing, so a pending taint can wait.
        let mut shot = self.device.borrow_mut().screenshot()?;
        if shot.mime != "image/svg+xml" {
            return Ok(shot);
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
