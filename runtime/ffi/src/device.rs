//! The embedder's device: a table of C callbacks behind `trailblaze::device::Device`.
//!
//! Each callback returns 0 on success, 1 when the device refused the action (a failed step:
//! `DeviceError::Action`) and any other value when the device itself failed (`DeviceError::Io`);
//! on an error it may write a message into its sink. Callbacks run on the session's thread.

use std::ffi::c_void;

use trailblaze::device::{Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewTree};

use crate::buf::TbSink;

/// Callback status: the action was done.
pub const TB_DEVICE_OK: i32 = 0;
/// Callback status: the device refused the action (no focused field, unknown app, ...).
pub const TB_DEVICE_REFUSED: i32 = 1;

/// A device implemented by the embedder. Every callback is required except `drop`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TbDevice {
    /// Passed back to every callback as is.
    pub user_data: *mut c_void,
    /// Writes the view tree as JSON (`{"appId", "width", "height", "root": {"className", "bounds":
    /// {"left","top","right","bottom"}, "enabled", "clickable", "editable", "focused", "checked",
    /// "password", "text"?, "hintText"?, "resourceId"?, "contentDescription"?, "children"?}}`).
    pub snapshot: Option<unsafe extern "C" fn(user_data: *mut c_void, out: *mut TbSink) -> i32>,
    pub tap: Option<unsafe extern "C" fn(user_data: *mut c_void, x: i32, y: i32, err: *mut TbSink) -> i32>,
    pub long_press: Option<unsafe extern "C" fn(user_data: *mut c_void, x: i32, y: i32, err: *mut TbSink) -> i32>,
    /// Types UTF-8 `text` (`len` bytes) into the focused field. The text may be a resolved secret:
    /// the embedder must not log it.
    pub input_text:
        Option<unsafe extern "C" fn(user_data: *mut c_void, text: *const u8, len: usize, err: *mut TbSink) -> i32>,
    /// `key` is one of `BACK`, `ENTER`, `HOME`, `BACKSPACE`, `TAB`, `ESCAPE`.
    pub press_key:
        Option<unsafe extern "C" fn(user_data: *mut c_void, key: *const u8, len: usize, err: *mut TbSink) -> i32>,
    /// `mode` is one of `REINSTALL`, `FORCE_RESTART`, `RESUME`.
    pub launch_app: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            app_id: *const u8,
            app_id_len: usize,
            mode: *const u8,
            mode_len: usize,
            err: *mut TbSink,
        ) -> i32,
    >,
    /// Writes PNG bytes into `out` (or SVG text when `*svg` is set to 1).
    pub screenshot: Option<unsafe extern "C" fn(user_data: *mut c_void, out: *mut TbSink, svg: *mut i32) -> i32>,
    /// Called once when the session ends and the device is no longer used.
    pub drop: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
    /// Drags from (x1, y1) to (x2, y2) over `millis` ms. Optional (last, so tables written before
    /// it still compile): without it a swipe is refused.
    pub swipe: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            x1: i32,
            y1: i32,
            x2: i32,
            y2: i32,
            millis: u32,
            err: *mut TbSink,
        ) -> i32,
    >,
}

/// The C table as a `Device`. `Send` because the embedder promises (see the crate's thread rules)
/// that its callbacks may run on the session's thread.
pub(crate) struct CDevice {
    table: TbDevice,
    name: String,
    captures: u64,
}

// SAFETY: the thread rules documented in lib.rs and the header: callbacks are called on the
// session's thread only, one at a time; the embedder makes `user_data` usable there.
unsafe impl Send for CDevice {}

impl CDevice {
    /// Checks that every required callback is there; names the first missing one.
    pub(crate) fn new(table: TbDevice, name: String) -> Result<CDevice, String> {
        let missing = [
            ("snapshot", table.snapshot.is_none()),
            ("tap", table.tap.is_none()),
            ("long_press", table.long_press.is_none()),
            ("input_text", table.input_text.is_none()),
            ("press_key", table.press_key.is_none()),
            ("launch_app", table.launch_app.is_none()),
            ("screenshot", table.screenshot.is_none()),
        ];
        if let Some((name, _)) = missing.iter().find(|(_, m)| *m) {
            return Err(format!("the device table has no `{name}` callback"));
        }
        Ok(CDevice {
            table,
            name,
            captures: 0,
        })
    }

    /// Runs one callback with a fresh sink; maps its status to a `DeviceError`.
    fn act(&self, what: &str, f: impl FnOnce(*mut TbSink) -> i32) -> Result<Vec<u8>, DeviceError> {
        let mut sink = TbSink { bytes: Vec::new() };
        let code = f(&mut sink as *mut TbSink);
        if code == TB_DEVICE_OK {
            return Ok(sink.bytes);
        }
        let message = String::from_utf8_lossy(&sink.bytes).into_owned();
        let message = if message.is_empty() {
            format!("{what} failed (status {code})")
        } else {
            message
        };
        Err(if code == TB_DEVICE_REFUSED {
            DeviceError::Action(message)
        } else {
            DeviceError::Io(message)
        })
    }
}

fn missing(what: &str) -> DeviceError {
    DeviceError::Io(format!("the device table has no `{what}` callback"))
}

impl Device for CDevice {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        let f = self.table.snapshot.ok_or_else(|| missing("snapshot"))?;
        let ud = self.table.user_data;
        // SAFETY: the embedder's callback, called as its contract says.
        let bytes = self.act("snapshot", |s| unsafe { f(ud, s) })?;
        self.captures += 1;
        // serde_json's message gives line and column, not the text (a field may hold anything).
        trailblaze::device::limits::tree_from_json(&bytes)
            .map_err(|e| DeviceError::Io(format!("the snapshot is not a view tree: {e}")))
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        let Some(f) = self.table.swipe else {
            return Err(DeviceError::Action(
                "this device cannot swipe (no `swipe` callback)".into(),
            ));
        };
        let ud = self.table.user_data;
        // SAFETY: the embedder's callback, called as its contract says.
        self.act("swipe", |s| unsafe { f(ud, from.0, from.1, to.0, to.1, millis, s) })
            .map(drop)
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let f = self.table.tap.ok_or_else(|| missing("tap"))?;
        let ud = self.table.user_data;
        self.act("tap", |s| unsafe { f(ud, x, y, s) }).map(drop)
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let f = self.table.long_press.ok_or_else(|| missing("long_press"))?;
        let ud = self.table.user_data;
        self.act("long press", |s| unsafe { f(ud, x, y, s) }).map(drop)
    }

    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        let f = self.table.input_text.ok_or_else(|| missing("input_text"))?;
        let ud = self.table.user_data;
        self.act("input text", |s| unsafe { f(ud, text.as_ptr(), text.len(), s) })
            .map(drop)
    }

    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        let f = self.table.press_key.ok_or_else(|| missing("press_key"))?;
        let ud = self.table.user_data;
        let name = key_name(key);
        self.act("press key", |s| unsafe { f(ud, name.as_ptr(), name.len(), s) })
            .map(drop)
    }

    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        let f = self.table.launch_app.ok_or_else(|| missing("launch_app"))?;
        let ud = self.table.user_data;
        let m = mode_name(mode);
        self.act("launch app", |s| unsafe {
            f(ud, app_id.as_ptr(), app_id.len(), m.as_ptr(), m.len(), s)
        })
        .map(drop)
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        let f = self.table.screenshot.ok_or_else(|| missing("screenshot"))?;
        let ud = self.table.user_data;
        let mut svg = 0i32;
        let bytes = self.act("screenshot", |s| unsafe { f(ud, s, &mut svg) })?;
        let mime = if svg == 1 { "image/svg+xml" } else { "image/png" };
        Ok(Screenshot { mime, bytes })
    }
}

impl Drop for CDevice {
    fn drop(&mut self) {
        if let Some(f) = self.table.drop {
            // SAFETY: called once, when nothing calls the device any more.
            unsafe { f(self.table.user_data) };
        }
    }
}

/// The key's name as `pressKey` spells it (the serde name of `KeyCode`).
pub(crate) fn key_name(key: KeyCode) -> &'static str {
    match key {
        KeyCode::Back => "BACK",
        KeyCode::Enter => "ENTER",
        KeyCode::Home => "HOME",
        KeyCode::Backspace => "BACKSPACE",
        KeyCode::Tab => "TAB",
        KeyCode::Escape => "ESCAPE",
    }
}

pub(crate) fn mode_name(mode: LaunchMode) -> &'static str {
    match mode {
        LaunchMode::Reinstall => "REINSTALL",
        LaunchMode::ForceRestart => "FORCE_RESTART",
        LaunchMode::Resume => "RESUME",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON the test's snapshot callback answers with.
    static TREE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

    unsafe extern "C" fn snapshot(_: *mut c_void, out: *mut TbSink) -> i32 {
        let json = TREE.lock().map(|t| t.clone()).unwrap_or_default();
        // SAFETY: `out` is the live sink `act` passed in.
        unsafe { (*out).bytes.extend_from_slice(json.as_bytes()) };
        TB_DEVICE_OK
    }
    unsafe extern "C" fn point(_: *mut c_void, _: i32, _: i32, _: *mut TbSink) -> i32 {
        TB_DEVICE_OK
    }
    unsafe extern "C" fn bytes(_: *mut c_void, _: *const u8, _: usize, _: *mut TbSink) -> i32 {
        TB_DEVICE_OK
    }
    unsafe extern "C" fn launch(_: *mut c_void, _: *const u8, _: usize, _: *const u8, _: usize, _: *mut TbSink) -> i32 {
        TB_DEVICE_OK
    }
    unsafe extern "C" fn shot(_: *mut c_void, _: *mut TbSink, _: *mut i32) -> i32 {
        TB_DEVICE_OK
    }

    #[test]
    fn an_embedders_tree_nested_past_the_limit_is_refused_before_recursion() {
        let table = TbDevice {
            user_data: std::ptr::null_mut(),
            snapshot: Some(snapshot),
            tap: Some(point),
            long_press: Some(point),
            input_text: Some(bytes),
            press_key: Some(bytes),
            launch_app: Some(launch),
            screenshot: Some(shot),
            drop: None,
            swipe: None,
        };
        let mut d = CDevice::new(table, "c".into()).expect("every callback");
        let node = r#"{"className":"V","bounds":{"left":0,"top":0,"right":1,"bottom":1},"children":["#;
        let deep = 200_000;
        let json = format!(
            r#"{{"width":1,"height":1,"root":{}{{"className":"V","bounds":{{"left":0,"top":0,"right":1,"bottom":1}}}}{}}}"#,
            node.repeat(deep),
            "]}".repeat(deep)
        );
        *TREE.lock().expect("lock") = json;
        let e = d.snapshot().expect_err("too deep").to_string();
        assert!(e.contains("nests deeper than 256 nodes"), "{e}");
        // Control: a shallow tree reads.
        *TREE.lock().expect("lock") = r#"{"appId":"a.b","width":5,"height":5,"root":{"className":"F","bounds":{"left":0,"top":0,"right":5,"bottom":5},"enabled":true,"clickable":false,"editable":false,"focused":false,"checked":null,"password":false,"children":[{"className":"B","bounds":{"left":1,"top":1,"right":2,"bottom":2},"text":"ok"}]}}"#.into();
        let tree = d.snapshot().expect("reads");
        assert_eq!(tree.root.children[0].text.as_deref(), Some("ok"));
    }
}
