//! The device: its WDA session (made at connect, deleted on drop), the screen's size, and how a
//! failed request becomes a `DeviceError`. The `Device` calls themselves are in `calls`.

mod calls;

use std::time::Duration;

use serde_json::{Value, json};
use trailblaze_core::device::DeviceError;
use trailblaze_core::device::limits::MAX_COORD;
use trailblaze_core::device::spec::IosOptions;

use crate::w3c::{BUTTONS, capabilities, classify};
use crate::wda::{self, Fail, Wda};
use crate::{WdaStatus, read_status};

/// How long dropping the device waits for WDA to delete its session.
const DELETE_WITHIN: Duration = Duration::from_secs(3);

/// An iOS device behind a WebDriverAgent, with one WDA session open.
#[derive(Debug)]
pub struct IosDevice {
    wda: Wda,
    /// `ios:<udid>`, or `ios:<host:port>` when the UDID is not known.
    name: String,
    udid: Option<String>,
    /// `None` once WDA forgot it (restarted): the next `launch_app` opens another.
    session: Option<String>,
    /// The window in points, as the page source's coordinates are.
    width: i32,
    height: i32,
    classifier: &'static str,
    /// The app launched last (WDA's source names the app by its display name only).
    pub(crate) app_id: Option<String>,
    captures: u64,
}

impl IosDevice {
    /// Connects to the WebDriverAgent at `opts.wda` and opens a session with no app (the first
    /// `launch_app` launches one). `bundle_hint` is the app trees report until an app is launched.
    ///
    /// When `opts.udid` is set and `/status` tells the endpoint's UDID, the two must match. Real
    /// WDA tells none: then `opts.udid` is taken on trust, as the device's name.
    pub fn connect(opts: &IosOptions, bundle_hint: Option<&str>) -> Result<IosDevice, DeviceError> {
        Self::connect_with(opts, bundle_hint, wda::CALL_TIMEOUT)
    }

    /// `connect`, each request given at most `call_timeout` outside a call's deadline.
    pub(crate) fn connect_with(
        opts: &IosOptions,
        bundle_hint: Option<&str>,
        call_timeout: Duration,
    ) -> Result<IosDevice, DeviceError> {
        let mut wda = Wda::new(&opts.wda, call_timeout);
        let asked = match &opts.udid {
            Some(u) => format!("ios:{u}"),
            None => format!("ios:{}", wda.endpoint),
        };
        let status = read_status(&mut wda).map_err(|e| DeviceError::Io(format!("{asked}: {e}")))?;
        if !status.ready {
            return Err(DeviceError::Io(format!(
                "{asked}: the WebDriverAgent at {} is not ready",
                wda.endpoint
            )));
        }
        let udid = match (&opts.udid, &status.udid) {
            (Some(want), Some(has)) if want != has => {
                return Err(DeviceError::Io(format!(
                    "{asked}: the WebDriverAgent at {} serves {} ({has}), not {want}: use ios:{has}, \
                     or the endpoint of {want}'s WebDriverAgent",
                    wda.endpoint,
                    served(&status)
                )));
            }
            (Some(want), _) => Some(want.clone()),
            (None, has) => has.clone(),
        };
        let name = match &udid {
            Some(u) => format!("ios:{u}"),
            None => format!("ios:{}", wda.endpoint),
        };
        let created = wda.post("/session", &capabilities(None, false));
        let session = created
            .map_err(|e| format!("cannot open a WebDriverAgent session: {e}"))
            .and_then(|v| session_id(&v))
            .map_err(|e| DeviceError::Io(format!("{name}: {e}")))?;
        let mut device = IosDevice {
            wda,
            name,
            udid,
            session: Some(session),
            width: 0,
            height: 0,
            classifier: "ios-iphone",
            app_id: bundle_hint.map(str::to_string),
            captures: 0,
        };
        // On an error the device drops here, and its session with it. A device that cannot be
        // measured is not usable: Io, whatever WDA said.
        device.measure(&status).map_err(|e| match e {
            DeviceError::Action(m) => DeviceError::Io(m),
            e => e,
        })?;
        Ok(device)
    }

    /// The device's UDID, when it was given or the endpoint told it.
    pub fn udid(&self) -> Option<&str> {
        self.udid.as_deref()
    }

    /// Presses a hardware button: one of [`BUTTONS`] (`home`, `volumeUp`, `volumeDown`).
    pub fn press_button(&mut self, name: &str) -> Result<(), DeviceError> {
        if !BUTTONS.contains(&name) {
            return Err(DeviceError::Action(format!(
                "{}: no button `{name}`: iOS devices press {}",
                self.name,
                BUTTONS.join(", ")
            )));
        }
        self.post("/wda/pressButton", &json!({"name": name}), "pressing a button")
            .map(drop)
    }

    /// Reads the window's size (points) and the screen's scale, for the classifier.
    fn measure(&mut self, status: &WdaStatus) -> Result<(), DeviceError> {
        let size = self.get("/window/size", "reading the window size")?;
        let side = |key: &str| {
            size.get(key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite() && *v > 0.0 && *v <= f64::from(MAX_COORD))
        };
        let (Some(w), Some(h)) = (side("width"), side("height")) else {
            return Err(DeviceError::Io(format!(
                "{}: WebDriverAgent's window size is not a size",
                self.name
            )));
        };
        // Within MAX_COORD, checked above.
        (self.width, self.height) = (w.round() as i32, h.round() as i32);
        let path = self.session_path("/wda/screen")?;
        let scale = match self.wda.get(&path) {
            Ok(screen) => screen
                .get("scale")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite() && (0.5..=10.0).contains(s)),
            // An older WDA without `/wda/screen`: its interface idiom decides.
            Err(Fail::Wda(_)) => None,
            Err(e) => return Err(self.fail("reading the screen's scale", e, true)),
        };
        self.classifier = match scale {
            Some(scale) => classify(w, h, scale),
            None if status.device.as_deref() == Some("iPad") => "ios-ipad",
            None => "ios-iphone",
        };
        Ok(())
    }

    /// `/session/{id}<suffix>`, or an error when WDA forgot the session.
    fn session_path(&self, suffix: &str) -> Result<String, DeviceError> {
        match &self.session {
            Some(id) => Ok(format!("/session/{id}{suffix}")),
            None => Err(self.session_ended()),
        }
    }

    fn session_ended(&self) -> DeviceError {
        DeviceError::Io(format!(
            "{}: the WebDriverAgent session ended (WDA restarted, or another client opened one); \
             launching an app opens a new one",
            self.name
        ))
    }

    fn get(&mut self, suffix: &str, what: &str) -> Result<Value, DeviceError> {
        let path = self.session_path(suffix)?;
        self.wda.get(&path).map_err(|e| self.fail(what, e, true))
    }

    fn post(&mut self, suffix: &str, body: &Value, what: &str) -> Result<Value, DeviceError> {
        let path = self.session_path(suffix)?;
        self.wda.post(&path, body).map_err(|e| self.fail(what, e, true))
    }

    /// The error for a failed request about `what`: `Io` when WDA is gone or its session is,
    /// `Action` when it refused. `quote` false leaves WDA's message out (it may quote typed text).
    fn fail(&mut self, what: &str, fail: Fail, quote: bool) -> DeviceError {
        match fail {
            Fail::Io(why) => DeviceError::Io(format!("{}: {what}: {why}", self.name)),
            Fail::Wda(r) if r.session_gone() => {
                self.session = None;
                self.session_ended()
            }
            Fail::Wda(r) if quote && !r.message.is_empty() => DeviceError::Action(format!(
                "{}: {what}: WebDriverAgent says {}: {}",
                self.name, r.error, r.message
            )),
            Fail::Wda(r) => DeviceError::Action(format!("{}: {what}: WebDriverAgent says {}", self.name, r.error)),
        }
    }

    /// Opens a session that launches `bundle_id` (when WDA forgot the one opened at connect).
    fn open_session_with(&mut self, bundle_id: &str, force_launch: bool) -> Result<(), DeviceError> {
        let created = self
            .wda
            .post("/session", &capabilities(Some(bundle_id), force_launch))
            .map_err(|e| self.fail(&format!("launching {bundle_id}"), e, true))?;
        let id = session_id(&created).map_err(|e| DeviceError::Io(format!("{}: {e}", self.name)))?;
        self.session = Some(id);
        Ok(())
    }
}

impl Drop for IosDevice {
    /// Deletes the session however the trail ended, unless WDA stopped answering (best effort).
    fn drop(&mut self) {
        let Some(id) = self.session.take() else {
            return;
        };
        if let Err(e) = self.wda.delete(&format!("/session/{id}"), DELETE_WITHIN) {
            tracing::debug!(device = %self.name, error = %e, "WebDriverAgent session not deleted");
        }
    }
}

/// The session id `POST /session` answered. It goes into every later path: anything but letters,
/// digits and `-` is refused.
fn session_id(created: &Value) -> Result<String, String> {
    created
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && id.len() <= 100)
        .filter(|id| id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
        .map(str::to_string)
        .ok_or_else(|| "POST /session: WebDriverAgent answered no usable session id".into())
}

/// What an endpoint serves, for an error: `an iPad (iOS 17.4)`.
fn served(status: &WdaStatus) -> String {
    let device = status.device.as_deref().unwrap_or("a device");
    match &status.os_version {
        Some(v) => format!("{device} (iOS {v})"),
        None => device.to_string(),
    }
}
