//! The `Device` calls, each one or two WDA requests.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use trailblaze_core::device::{Device, DeviceError, KeyCode, LaunchMode, Platform, Screenshot, ViewTree};

use super::IosDevice;
use crate::source::parse_source;
use crate::w3c::{LONG_PRESS_MS, TAP_MS, drag, is_bundle_id, press};
use crate::wda::Fail;

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

impl IosDevice {
    fn check_bundle_id(&self, app_id: &str) -> Result<(), DeviceError> {
        if is_bundle_id(app_id) {
            return Ok(());
        }
        let shown: String = app_id.chars().take(80).collect();
        Err(DeviceError::Action(format!(
            "{}: `{shown}` is not an iOS bundle id (like com.example.app: letters, digits, `-` and `.`)",
            self.name
        )))
    }

    /// `/wda/keys` with `keys` typed as one string. Errors name the length, never the text.
    fn keys(&mut self, keys: &str) -> Result<(), DeviceError> {
        let path = self.session_path("/wda/keys")?;
        let what = format!("typing {} characters", keys.chars().count());
        self.wda
            .post(&path, &json!({"value": [keys]}))
            .map(drop)
            .map_err(|e| self.fail(&what, e, false))
    }

    fn bundle_call(&mut self, route: &str, bundle_id: &str, what: &str) -> Result<Value, DeviceError> {
        self.post(route, &json!({"bundleId": bundle_id}), &format!("{what} {bundle_id}"))
    }
}

impl Device for IosDevice {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn platform(&self) -> Platform {
        Platform::Ios
    }

    fn classifier(&self) -> Option<String> {
        Some(self.classifier.to_string())
    }

    fn set_deadline(&mut self, until: Option<std::time::Instant>) {
        self.wda.until = until;
    }

    /// One request: `GET /session/{id}/source`.
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.captures += 1;
        let source = self.get("/source", "reading the page source")?;
        let Some(xml) = source.as_str() else {
            return Err(DeviceError::Io(format!("{}: the page source is not text", self.name)));
        };
        parse_source(xml, self.width, self.height, self.app_id.clone())
            .map_err(|e| DeviceError::Io(format!("{}: {e}", self.name)))
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.post("/actions", &press(x, y, TAP_MS), "tap").map(drop)
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.post("/actions", &press(x, y, LONG_PRESS_MS), "long press")
            .map(drop)
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        self.post("/actions", &drag(from, to, millis), "swipe").map(drop)
    }

    /// Types into the focused field with XCUITest's typeText: any Unicode, sent byte-exact; a `\n`
    /// is the return key.
    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        if text.is_empty() {
            return Ok(());
        }
        self.keys(text)
    }

    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        match key {
            KeyCode::Enter => self.keys("\n"),
            KeyCode::Backspace => self.keys("\u{8}"),
            KeyCode::Tab => self.keys("\t"),
            KeyCode::Home => self.press_button("home"),
            KeyCode::Back | KeyCode::Escape => Err(DeviceError::Action(format!(
                "{}: iOS has no {} key: tap the navigation bar's back button (or the screen's close \
                 button) instead",
                self.name,
                if key == KeyCode::Back { "back" } else { "escape" }
            ))),
        }
    }

    /// `REINSTALL` restarts the app with its data kept on iOS: WebDriverAgent cannot clear an
    /// app's data (uninstall and install it outside trailblaze for a fresh one).
    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        self.check_bundle_id(app_id)?;
        if self.session.is_none() {
            self.open_session_with(app_id, mode != LaunchMode::Resume)?;
        } else if mode == LaunchMode::Resume {
            self.bundle_call("/wda/apps/activate", app_id, "activating")?;
        } else {
            self.bundle_call("/wda/apps/terminate", app_id, "stopping")?;
            self.bundle_call("/wda/apps/launch", app_id, "launching")?;
        }
        self.app_id = Some(app_id.to_string());
        Ok(())
    }

    /// Terminates the app; one that was not running stays so.
    fn stop_app(&mut self, app_id: &str) -> Result<(), DeviceError> {
        self.check_bundle_id(app_id)?;
        self.bundle_call("/wda/apps/terminate", app_id, "stopping").map(drop)
    }

    fn open_url(&mut self, url: &str) -> Result<(), DeviceError> {
        if url.trim().is_empty() {
            return Err(DeviceError::Action(format!("{}: the URL is empty", self.name)));
        }
        self.post("/url", &json!({"url": url}), "opening a URL").map(drop)
    }

    /// `true` when WDA dismissed the keyboard. WDA also answers success when none was shown; it
    /// is `false` only when WDA's error says there was no keyboard.
    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        let path = self.session_path("/wda/keyboard/dismiss")?;
        match self.wda.post(&path, &json!({})) {
            Ok(_) => Ok(true),
            Err(Fail::Wda(r)) if no_keyboard(&r.message) => Ok(false),
            Err(e) => Err(self.fail("hiding the keyboard", e, true)),
        }
    }

    /// Through WDA's pasteboard calls (on a phone with iOS 16 or later, reading it may need WDA in
    /// the foreground).
    fn set_clipboard(&mut self, text: &str) -> Result<(), DeviceError> {
        let path = self.session_path("/wda/setPasteboard")?;
        let body = json!({"content": STANDARD.encode(text), "contentType": "plaintext"});
        let what = format!("setting the pasteboard to {} characters", text.chars().count());
        self.wda
            .post(&path, &body)
            .map(drop)
            .map_err(|e| self.fail(&what, e, false))
    }

    fn clipboard(&mut self) -> Result<Option<String>, DeviceError> {
        let content = self.post(
            "/wda/getPasteboard",
            &json!({"contentType": "plaintext"}),
            "reading the pasteboard",
        )?;
        let bytes = content
            .as_str()
            .and_then(|b64| STANDARD.decode(b64.trim()).ok())
            .ok_or_else(|| DeviceError::Io(format!("{}: the pasteboard is not base64", self.name)))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| DeviceError::Action(format!("{}: the pasteboard holds no text", self.name)))?;
        Ok(Some(text).filter(|t| !t.is_empty()))
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        let shot = self.get("/screenshot", "taking a screenshot")?;
        let bytes = shot
            .as_str()
            .map(|b64| b64.replace(['\r', '\n'], ""))
            .and_then(|b64| STANDARD.decode(b64).ok())
            .ok_or_else(|| DeviceError::Io(format!("{}: the screenshot is not base64", self.name)))?;
        if !bytes.starts_with(PNG_SIGNATURE) {
            return Err(DeviceError::Io(format!("{}: the screenshot is not a PNG", self.name)));
        }
        Ok(Screenshot {
            mime: "image/png",
            bytes,
        })
    }
}

/// Whether WDA's error message says no keyboard was shown.
fn no_keyboard(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("no keyboard") || (m.contains("keyboard") && (m.contains("not visible") || m.contains("not present")))
}
