//! An Android device driven through the adb server (the `adb_client` crate speaks its smart-socket
//! protocol): `uiautomator dump` for snapshots, `input` for taps, swipes, keys and text, `monkey`,
//! `am` and `pm` for `launchApp`, `screencap -p` for screenshots. Reference: docs/android.md.
//!
//! Every device call runs on a worker thread and is abandoned after `AdbOptions::call_timeout`
//! (adb_client's sockets have no timeouts of their own); an abandoned call fails with
//! `DeviceError::Io` naming the device, as does any connection or protocol error, so a device lost
//! mid-run ends the run as an infrastructure error. A command that runs and fails is `Action`.

mod dump;
mod extras;
mod packages;
#[cfg(test)]
mod tests;
mod text;
mod trace;
mod transport;

use std::net::{SocketAddr, SocketAddrV4};
use std::time::Duration;

use adb_client::server::ADBServer;

use transport::with_timeout;

use text::{Piece, pieces, plain_input_can_type};
use trailblaze_core::device::extras::is_package_name;

/// How the device talks to a phone: the `uiautomator dump` reader, the shell's quoting, base64 for
/// files. Public for the end-to-end tests that hold a fake phone to it; not part of the API.
#[doc(hidden)]
pub mod wire {
    pub use crate::dump::parse_dump;
    pub use crate::text::{base64, quote};
}
use trailblaze_core::device::trace::{DeviceTrace, TraceOptions};
use trailblaze_core::device::{
    Broadcast, Device, DeviceError, InstalledApp, KeyCode, LaunchMode, Screenshot, ViewTree,
};
use wire::{base64, parse_dump, quote};

/// ADBKeyboard (github.com/senzhk/ADBKeyBoard), the IME that types any text sent by broadcast.
pub const ADB_KEYBOARD_PACKAGE: &str = "com.android.adbkeyboard";
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";

/// Where `uiautomator dump` writes before the dump is read back (a file every app-less shell may
/// write; `/dev/tty` needs a terminal that `adb shell <command>` does not allocate).
const DUMP_PATH: &str = "/data/local/tmp/trailblaze-window.xml";

/// How many times a dump that reports "could not get idle state" (the screen kept animating) is tried.
const DUMP_ATTEMPTS: u32 = 3;

/// How long `long_press` holds, in milliseconds (Android's long-press timeout is 400–500 ms).
const LONG_PRESS_MS: u32 = 800;

#[derive(Debug, Clone)]
pub struct AdbOptions {
    /// The longest any one device call may take before the device counts as lost.
    pub call_timeout: Duration,
    /// The most bytes one command may print (a screenshot is a few MB).
    pub max_output: usize,
    /// A trace's video stops after this many seconds (screenrecord's limit, 180, at most).
    pub video_limit_s: u32,
}

impl Default for AdbOptions {
    fn default() -> Self {
        AdbOptions {
            call_timeout: Duration::from_secs(30),
            max_output: 64 << 20,
            video_limit_s: trace::SCREENRECORD_MAX_S,
        }
    }
}

/// A device the adb server knows, as `adb devices -l` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbDeviceInfo {
    pub serial: String,
    /// `device` when usable; `unauthorized`, `offline`, ... otherwise.
    pub state: String,
    /// The model when the server knows it (`Pixel_7`), else `None`.
    pub model: Option<String>,
}

fn v4(server: SocketAddr) -> Result<SocketAddrV4, DeviceError> {
    match server {
        SocketAddr::V4(a) => Ok(a),
        SocketAddr::V6(_) => Err(DeviceError::Io(format!(
            "adb server {server}: the adb client speaks IPv4 only"
        ))),
    }
}

/// A server handle that never spawns `adb start-server` (adb_client does for loopback addresses,
/// and would start a second server on the default port): trailblaze uses the server it is given.
fn server_handle(server: SocketAddrV4) -> ADBServer {
    ADBServer::new_from_path(server, Some(NO_START.to_owned()))
}

/// A program that does nothing, run in place of `adb start-server`.
const NO_START: &str = "true";

/// Every device the server at `server` knows.
pub fn list_devices(server: SocketAddr) -> Result<Vec<AdbDeviceInfo>, DeviceError> {
    list_devices_with(server, &AdbOptions::default())
}

fn list_devices_with(server: SocketAddr, opts: &AdbOptions) -> Result<Vec<AdbDeviceInfo>, DeviceError> {
    let addr = v4(server)?;
    let listed = with_timeout(opts.call_timeout, move || {
        server_handle(addr).devices_long().map_err(|e| e.to_string())
    });
    let devices = match listed {
        Some(Ok(devices)) => devices,
        Some(Err(e)) => {
            return Err(DeviceError::Io(format!(
                "adb server {server}: {e} (is it running? `adb start-server`)"
            )));
        }
        None => return Err(DeviceError::Io(format!("adb server {server} did not answer `devices`"))),
    };
    Ok(devices
        .into_iter()
        .map(|d| AdbDeviceInfo {
            serial: d.identifier,
            state: d.state.to_string(),
            model: Some(d.model).filter(|m| !m.is_empty() && m != "Unk"),
        })
        .collect())
}

/// An Android device behind an adb server.
#[derive(Debug)]
pub struct AdbDevice {
    server: SocketAddrV4,
    serial: String,
    opts: AdbOptions,
    captures: u64,
    /// Whether ADBKeyboard is the input method, once asked.
    ime_ready: Option<bool>,
    /// The last text put on the clipboard: what a paste types (Android lets no shell read it back).
    clipboard: Option<String>,
    /// The running call's wall-clock deadline: no command waits past it.
    until: Option<std::time::Instant>,
    /// A command went unanswered: the rest of the session fails at once instead of waiting again
    /// (a trail's screenshots and teardown would each wait out the timeout).
    silent: std::cell::Cell<bool>,
    /// The trace window kept since `trace_begin`.
    trace: Option<trace::Window>,
}

impl AdbDevice {
    /// Connects to `serial` (or the only device) on the adb server at `server`.
    pub fn connect(server: SocketAddr, serial: Option<&str>, opts: AdbOptions) -> Result<AdbDevice, DeviceError> {
        let addr = v4(server)?;
        let devices = list_devices_with(server, &opts)?;
        let usable: Vec<&AdbDeviceInfo> = devices.iter().filter(|d| d.state == "device").collect();
        let chosen = match serial {
            Some(s) => match devices.iter().find(|d| d.serial == s) {
                Some(d) if d.state == "device" => d,
                Some(d) => {
                    return Err(DeviceError::Io(format!(
                        "adb:{s} is {} (unauthorized: accept the USB debugging prompt on the device)",
                        d.state
                    )));
                }
                None => return Err(DeviceError::Io(not_found(s, server, &devices))),
            },
            None => match usable.as_slice() {
                [one] => *one,
                [] => {
                    return Err(DeviceError::Io(format!(
                        "no Android device on the adb server at {server}"
                    )));
                }
                many => {
                    let names: Vec<&str> = many.iter().map(|d| d.serial.as_str()).collect();
                    return Err(DeviceError::Io(format!(
                        "{} Android devices on the adb server at {server} ({}): choose one with android:<serial>",
                        many.len(),
                        names.join(", ")
                    )));
                }
            },
        };
        Ok(AdbDevice {
            server: addr,
            serial: chosen.serial.clone(),
            opts,
            captures: 0,
            ime_ready: None,
            clipboard: None,
            until: None,
            silent: std::cell::Cell::new(false),
            trace: None,
        })
    }

    pub fn serial(&self) -> &str {
        &self.serial
    }

    /// Swipes from (x1, y1) to (x2, y2) over `millis`.
    fn drag(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        let cmd = format!("input swipe {} {} {} {} {millis}", from.0, from.1, to.0, to.1);
        self.checked(&cmd, "input swipe").map(drop)
    }

    /// Makes ADBKeyboard the input method when it is installed; `false` when it is not.
    fn adb_keyboard(&mut self) -> Result<bool, DeviceError> {
        if let Some(ready) = self.ime_ready {
            return Ok(ready);
        }
        let current = self.run("settings get secure default_input_method".into(), "settings get")?;
        let ready = if current.text().trim() == ADB_KEYBOARD_IME {
            true
        } else {
            let listed = self.run(
                format!("pm list packages {}", quote(ADB_KEYBOARD_PACKAGE)),
                "pm list packages",
            )?;
            let installed = listed
                .text()
                .lines()
                .any(|l| l.trim() == format!("package:{ADB_KEYBOARD_PACKAGE}"));
            if installed {
                self.checked(&format!("ime enable {}", quote(ADB_KEYBOARD_IME)), "ime enable")?;
                self.checked(&format!("ime set {}", quote(ADB_KEYBOARD_IME)), "ime set")?;
            }
            installed
        };
        self.ime_ready = Some(ready);
        Ok(ready)
    }

    fn start_app(&self, app_id: &str) -> Result<(), DeviceError> {
        let out = self.run(
            format!("monkey -p {} -c android.intent.category.LAUNCHER 1", quote(app_id)),
            "monkey (start app)",
        )?;
        let text = out.text();
        if out.failed() || text.contains("No activities found") || text.contains("monkey aborted") {
            return Err(DeviceError::Action(format!(
                "adb:{}: cannot start `{app_id}`: it is not installed or has no launcher activity",
                self.serial
            )));
        }
        Ok(())
    }
}

fn not_found(serial: &str, server: SocketAddr, devices: &[AdbDeviceInfo]) -> String {
    let names: Vec<&str> = devices.iter().map(|d| d.serial.as_str()).collect();
    if names.is_empty() {
        format!("no device `{serial}` on the adb server at {server} (it lists none)")
    } else {
        format!(
            "no device `{serial}` on the adb server at {server} (it lists {})",
            names.join(", ")
        )
    }
}

impl Device for AdbDevice {
    fn name(&self) -> String {
        format!("adb:{}", self.serial)
    }

    fn set_deadline(&mut self, until: Option<std::time::Instant>) {
        self.until = until;
    }

    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        self.captures += 1;
        let mut last = String::new();
        for _ in 0..DUMP_ATTEMPTS {
            let out = self.run(format!("uiautomator dump {}", quote(DUMP_PATH)), "uiautomator dump")?;
            last = out.text();
            if !out.failed() && last.contains("dumped to") {
                let xml = self.checked(&format!("cat {}", quote(DUMP_PATH)), "cat (window dump)")?;
                let xml = String::from_utf8_lossy(&xml.stdout);
                return parse_dump(&xml).map_err(|e| DeviceError::Io(format!("adb:{}: {e}", self.serial)));
            }
        }
        Err(DeviceError::Action(format!(
            "adb:{}: uiautomator dump failed {DUMP_ATTEMPTS} times: {}",
            self.serial,
            dump::first_line(&last)
        )))
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.checked(&format!("input tap {x} {y}"), "input tap").map(drop)
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.drag((x, y), (x, y), LONG_PRESS_MS)
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        self.drag(from, to, millis)
    }

    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        if text.is_empty() {
            return Ok(());
        }
        if !plain_input_can_type(text) {
            // Never type something else: either ADBKeyboard types it exactly, or this fails.
            if !self.adb_keyboard()? {
                return Err(DeviceError::Action(format!(
                    "adb:{}: cannot type this text: it holds characters Android's `input text` cannot type \
                     (non-ASCII or control characters). Install the ADBKeyboard IME ({ADB_KEYBOARD_PACKAGE}, \
                     https://github.com/senzhk/ADBKeyBoard) on the device and trailblaze types through it",
                    self.serial
                )));
            }
            let cmd = format!(
                "am broadcast -a ADB_INPUT_B64 --es msg {}",
                quote(&base64(text.as_bytes()))
            );
            return self.checked(&cmd, "am broadcast ADB_INPUT_B64").map(drop);
        }
        for piece in pieces(text) {
            match piece {
                Piece::Text(t) => self.checked(&format!("input text {}", quote(&t)), "input text")?,
                Piece::Enter => self.checked("input keyevent 66", "input keyevent")?,
            };
        }
        Ok(())
    }

    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        self.checked(&format!("input keyevent {}", key_code(key)), "input keyevent")
            .map(drop)
    }

    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        if !is_package_name(app_id) {
            return Err(DeviceError::Action(format!(
                "`{app_id}` is not an Android package name (like com.example.app)"
            )));
        }
        match mode {
            LaunchMode::Reinstall => {
                let out = self.run(format!("pm clear {}", quote(app_id)), "pm clear")?;
                if out.failed() || !out.text().contains("Success") {
                    return Err(DeviceError::Action(format!(
                        "adb:{}: cannot clear `{app_id}`: {}",
                        self.serial,
                        dump::first_line(&out.text())
                    )));
                }
            }
            LaunchMode::ForceRestart => {
                self.checked(&format!("am force-stop {}", quote(app_id)), "am force-stop")?;
            }
            LaunchMode::Resume => {}
        }
        self.start_app(app_id)
    }

    fn shell(&mut self, argv: &[String]) -> Result<String, DeviceError> {
        match argv.first().map(String::as_str) {
            None => return Err(DeviceError::Action("the command is empty".into())),
            // They would end the device's shell before it reports the exit status, which reads as
            // a lost device.
            Some("exit" | "exec") => {
                return Err(DeviceError::Action(
                    "`exit` and `exec` would end the device's shell; run a program instead".into(),
                ));
            }
            Some(_) => {}
        }
        self.run_argv(argv, "shell command")
    }

    fn send_broadcast(&mut self, broadcast: &Broadcast) -> Result<(), DeviceError> {
        self.broadcast(broadcast)
    }

    fn grant_permission(&mut self, app_id: &str, permission: &str) -> Result<bool, DeviceError> {
        self.grant(app_id, permission)
    }

    fn grant_app_op(&mut self, app_id: &str, op: &str) -> Result<bool, DeviceError> {
        self.app_op(app_id, op)
    }

    fn demo_mode(&mut self, enable: bool) -> Result<(), DeviceError> {
        self.demo(enable)
    }

    fn clear_app_data(&mut self, app_id: &str) -> Result<(), DeviceError> {
        self.clear_data(app_id)
    }

    fn installed_apps(&mut self) -> Result<Vec<InstalledApp>, DeviceError> {
        self.apps()
    }

    fn installed_app_ids(&mut self) -> Result<Vec<String>, DeviceError> {
        self.app_ids()
    }

    fn stop_app(&mut self, app_id: &str) -> Result<(), DeviceError> {
        if !is_package_name(app_id) {
            return Err(DeviceError::Action(format!(
                "`{app_id}` is not an Android package name (like com.example.app)"
            )));
        }
        // `am force-stop` succeeds silently for a package that is not there: that would pass a
        // trail that names the wrong app.
        if !self.app_ids()?.iter().any(|a| a == app_id) {
            return Err(DeviceError::Action(format!(
                "adb:{}: `{app_id}` is not installed",
                self.serial
            )));
        }
        self.checked(&format!("am force-stop {}", quote(app_id)), "am force-stop")?;
        Ok(())
    }

    fn set_clipboard(&mut self, text: &str) -> Result<(), DeviceError> {
        self.clip(text)
    }

    fn clipboard(&mut self) -> Result<Option<String>, DeviceError> {
        Ok(self.clipboard.clone())
    }

    fn hide_keyboard(&mut self) -> Result<bool, DeviceError> {
        self.keyboard_off()
    }

    fn open_url(&mut self, url: &str) -> Result<(), DeviceError> {
        self.url(url)
    }

    fn set_network(&mut self, connected: bool) -> Result<(), DeviceError> {
        self.network(connected)
    }

    fn write_file(&mut self, path: &str, bytes: &[u8]) -> Result<(), DeviceError> {
        self.push(path, bytes)
    }

    fn trace_begin(&mut self, opts: &TraceOptions) {
        self.begin_trace(opts)
    }

    fn trace_end(&mut self) -> DeviceTrace {
        self.end_trace()
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        let out = self.checked("screencap -p", "screencap")?;
        if !out.stdout.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Err(DeviceError::Io(format!(
                "adb:{}: screencap gave no PNG: {}",
                self.serial,
                dump::first_line(&String::from_utf8_lossy(&out.stdout))
            )));
        }
        Ok(Screenshot {
            mime: "image/png",
            bytes: out.stdout,
        })
    }
}

/// Android key codes (android.view.KeyEvent).
fn key_code(key: KeyCode) -> u32 {
    match key {
        KeyCode::Home => 3,
        KeyCode::Back => 4,
        KeyCode::Tab => 61,
        KeyCode::Enter => 66,
        KeyCode::Backspace => 67,
        KeyCode::Escape => 111,
    }
}

/// How long a phone whose trail failed has to run a trivial command to stay in the pool.
const STILL_ANSWERS: Duration = Duration::from_secs(5);

/// The `android` device kind: a device on the adb server.
pub struct Kind;

impl trailblaze_core::parts::DeviceKind for Kind {
    fn connect(&self, spec: &trailblaze_core::device::DeviceSpec) -> Option<Result<Box<dyn Device>, DeviceError>> {
        let trailblaze_core::device::DeviceSpec::Android { serial, server } = spec else {
            return None;
        };
        Some(
            AdbDevice::connect(*server, serial.as_deref(), AdbOptions::default())
                .map(|d| Box::new(d) as Box<dyn Device>),
        )
    }

    /// Lost when it cannot be reached, or takes commands and never answers (as lost as an unplugged one).
    fn lost(&self, spec: &trailblaze_core::device::DeviceSpec) -> bool {
        let trailblaze_core::device::DeviceSpec::Android { serial, server } = spec else {
            return false;
        };
        match AdbDevice::connect(*server, serial.as_deref(), AdbOptions::default()) {
            Ok(mut phone) => !phone.answers(STILL_ANSWERS),
            Err(_) => true,
        }
    }
}

/// What this crate adds to a project: the `android` device kind.
pub fn parts() -> trailblaze_core::parts::Parts {
    trailblaze_core::parts::Parts::default().device(Kind)
}
