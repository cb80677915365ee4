//! An iPhone, an iPad or a simulator driven through WebDriverAgent (WDA, the XCUITest HTTP server
//! Appium uses): W3C WebDriver plus WDA's `/wda/...` calls. The page source (XML) for snapshots,
//! W3C pointer actions for taps and swipes, `/wda/keys` for text, `/wda/apps/*` for `launchApp`.
//!
//! Every request is bounded by the running call's deadline (`Device::set_deadline`), else by a
//! 30 s timeout. One that cannot connect, gets no answer in time, or gets an answer that is not
//! WDA's JSON is `DeviceError::Io` naming the device, and after one unanswered request every later
//! call fails at once: a trail whose WDA died ends quickly. An error WDA answers is `Action`.

mod device;
mod source;
mod w3c;
mod wda;

#[cfg(test)]
mod device_tests;
#[cfg(test)]
mod fake_wda;
#[cfg(test)]
mod source_tests;

use std::time::Duration;

use serde_json::Value;
use trailblaze_core::device::spec::IosOptions;
use trailblaze_core::device::{Device, DeviceError, DeviceSpec};

pub use device::IosDevice;
pub use w3c::BUTTONS;

/// How the device reads WDA's page source and builds its requests. Public for the end-to-end
/// tests that hold a fake WDA to it; not part of the API.
#[doc(hidden)]
pub mod wire {
    pub use crate::source::parse_source;
    pub use crate::w3c::{capabilities, classify, drag, is_bundle_id, press};
}

/// How long `status` and `Kind::lost` wait for `/status`.
const STATUS_WITHIN: Duration = Duration::from_secs(5);

/// What a WebDriverAgent's `GET /status` tells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WdaStatus {
    /// WDA takes commands.
    pub ready: bool,
    /// iOS's version (`17.4`).
    pub os_version: Option<String>,
    /// The kind of device by its interface: `iPhone`, `iPad`, ...
    pub device: Option<String>,
    /// The device's UDID, when the endpoint tells it: real WDA does not, proxies in front of it
    /// (and the project's fake) do.
    pub udid: Option<String>,
    /// The device is a simulator.
    pub simulator: bool,
}

impl WdaStatus {
    /// Reads `/status`'s value; `None` when it is not an object.
    fn of(v: &Value) -> Option<WdaStatus> {
        let text = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map(|s| s.chars().take(100).collect::<String>())
        };
        let os = v.get("os");
        Some(WdaStatus {
            ready: v.as_object()?.get("ready").and_then(Value::as_bool) == Some(true),
            os_version: text(os.and_then(|o| o.get("version"))),
            device: text(v.get("device")),
            udid: text(v.get("udid")).filter(|u| !u.is_empty()),
            simulator: v
                .get("ios")
                .and_then(|i| i.get("simulatorVersion"))
                .is_some_and(Value::is_string),
        })
    }
}

/// Asks the WebDriverAgent at `url` (`http://127.0.0.1:8100`) how it is, within 5 s.
pub fn status(url: &str) -> Result<WdaStatus, DeviceError> {
    let mut wda = wda::Wda::new(url, STATUS_WITHIN);
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(DeviceError::Io(format!(
            "ios:{}: expected an http:// or https:// URL for WebDriverAgent",
            wda.endpoint
        )));
    }
    read_status(&mut wda).map_err(|e| DeviceError::Io(format!("ios:{}: {e}", wda.endpoint)))
}

fn read_status(wda: &mut wda::Wda) -> Result<WdaStatus, String> {
    let value = wda.get("/status").map_err(|e| e.to_string())?;
    WdaStatus::of(&value).ok_or_else(|| "GET /status: the answer is not WebDriverAgent's status".into())
}

/// The `ios` device kind: an iPhone, an iPad or a simulator behind WebDriverAgent.
pub struct Kind;

impl trailblaze_core::parts::DeviceKind for Kind {
    fn connect(&self, spec: &DeviceSpec) -> Option<Result<Box<dyn Device>, DeviceError>> {
        let DeviceSpec::Ios(opts) = spec else {
            return None;
        };
        Some(IosDevice::connect(opts, None).map(|d| Box::new(d) as Box<dyn Device>))
    }

    /// Lost when its WebDriverAgent does not answer `/status` within 5 s, is not ready, or now
    /// serves another device.
    fn lost(&self, spec: &DeviceSpec) -> bool {
        let DeviceSpec::Ios(IosOptions { udid, wda }) = spec else {
            return false;
        };
        match status(wda) {
            Ok(s) => !s.ready || matches!((udid, &s.udid), (Some(want), Some(has)) if want != has),
            Err(_) => true,
        }
    }
}

/// What this crate adds to a project: the `ios` device kind.
pub fn parts() -> trailblaze_core::parts::Parts {
    trailblaze_core::parts::Parts::default().device(Kind)
}
