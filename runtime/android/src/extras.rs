//! The Android extras over adb: a shell command from an argv, broadcasts, permissions, demo mode,
//! app data, installed apps, the clipboard, the keyboard, URLs, the network and files. Every value
//! that reaches the device's shell is quoted (`quote`); errors name the command, never a value.
//! What each sends: docs/android.md.

use std::io::Cursor;

use adb_client::RustADBError;
use adb_client::server_device::ADBServerDevice;

use super::{AdbDevice, DeviceError, dump, packages, quote, with_timeout};
use trailblaze_core::device::extras::is_package_name;
use trailblaze_core::device::{Broadcast, InstalledApp};

/// SystemUI's demo-mode commands (AOSP `SystemUI/docs/demo_mode.md`): a fixed 12:00 clock, full
/// Wi-Fi and LTE signal, a full unplugged battery, no notification icons.
const DEMO_ON: &[&str] = &[
    "command enter",
    "command clock hhmm 1200",
    "command network wifi show level 4",
    "command network mobile show datatype lte level 4",
    "command battery plugged false level 100",
    "command notifications visible false",
];

/// The broadcast the Clipper app (and apps following its convention) turns into the clipboard.
const CLIPPER_SET: &str = "clipper.set";

impl AdbDevice {
    /// Runs `argv` (each element quoted) and returns its output; a non-zero exit is an `Action`.
    pub(super) fn run_argv(&self, argv: &[String], what: &str) -> Result<String, DeviceError> {
        let line: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        let out = self.run(line.join(" "), what)?;
        if out.failed() {
            return Err(DeviceError::Action(format!(
                "adb:{}: `{what}` exited with status {}: {}",
                self.serial,
                out.exit,
                dump::first_line(&out.text())
            )));
        }
        Ok(out.text())
    }

    /// `am …` prints its failures and may still exit 0: both count.
    fn am(&self, cmd: String, what: &str) -> Result<String, DeviceError> {
        let out = self.run(cmd, what)?;
        let text = out.text();
        let failed_line = text.lines().find(|l| l.starts_with("Error") || l.contains("Exception"));
        if out.failed() || failed_line.is_some() {
            return Err(DeviceError::Action(format!(
                "adb:{}: `{what}` failed: {}",
                self.serial,
                dump::first_line(failed_line.unwrap_or(&text))
            )));
        }
        Ok(text)
    }

    pub(super) fn broadcast(&self, b: &Broadcast) -> Result<(), DeviceError> {
        let mut cmd = format!("am broadcast -a {}", quote(&b.action));
        if let Some((package, class)) = &b.component {
            cmd.push_str(&format!(" -n {}", quote(&format!("{package}/{class}"))));
        }
        for (key, value) in &b.extras {
            let (flag, text) = value.am_flag();
            cmd.push_str(&format!(" {flag} {} {}", quote(key), quote(&text)));
        }
        self.am(cmd, "am broadcast").map(drop)
    }

    /// `pm grant`: an undeclared or unchangeable permission is reported, not an error (a superset
    /// of permissions may be granted to every variant of an app); an unknown app is an error.
    pub(super) fn grant(&self, app_id: &str, permission: &str) -> Result<bool, DeviceError> {
        check_package(app_id)?;
        if !is_permission_name(permission) {
            return Err(DeviceError::Action(
                "`permission` is not an Android permission name (like android.permission.CAMERA)".into(),
            ));
        }
        let out = self.run(format!("pm grant {} {}", quote(app_id), quote(permission)), "pm grant")?;
        let text = out.text();
        if text.contains("Unknown package") {
            return Err(not_installed(&self.serial));
        }
        Ok(!out.failed() && text.trim().is_empty())
    }

    /// `appops set <app> <op> allow`; an operation the device does not know is an error.
    pub(super) fn app_op(&self, app_id: &str, op: &str) -> Result<bool, DeviceError> {
        check_package(app_id)?;
        let valid = |c: char| c.is_ascii_alphanumeric() || "_:.".contains(c);
        if op.is_empty() || !op.chars().all(valid) {
            return Err(DeviceError::Action(
                "`permission` is not an AppOps operation name (like MANAGE_EXTERNAL_STORAGE)".into(),
            ));
        }
        let out = self.run(
            format!("appops set {} {} allow", quote(app_id), quote(op)),
            "appops set",
        )?;
        let text = out.text();
        if text.contains("Unknown package") || text.contains("package not found") {
            return Err(not_installed(&self.serial));
        }
        if out.failed() || text.contains("Error") {
            return Err(DeviceError::Action(format!(
                "adb:{}: `appops set` failed: {}",
                self.serial,
                dump::first_line(&text)
            )));
        }
        Ok(true)
    }

    pub(super) fn demo(&self, enable: bool) -> Result<(), DeviceError> {
        if enable {
            self.checked("settings put global sysui_demo_allowed 1", "settings put")?;
        }
        let commands: &[&str] = if enable { DEMO_ON } else { &["command exit"] };
        for c in commands {
            // Each word of the demo command is an `-e` extra pair: `-e command clock -e hhmm 1200`.
            let words: Vec<&str> = c.split(' ').collect();
            let extras: Vec<String> = words
                .chunks(2)
                .map(|kv| format!("-e {} {}", kv[0], kv.get(1).unwrap_or(&"")))
                .collect();
            self.am(
                format!("am broadcast -a com.android.systemui.demo {}", extras.join(" ")),
                "am broadcast (demo mode)",
            )?;
        }
        Ok(())
    }

    pub(super) fn clear_data(&self, app_id: &str) -> Result<(), DeviceError> {
        check_package(app_id)?;
        let out = self.run(format!("pm clear {}", quote(app_id)), "pm clear")?;
        if out.failed() || !out.text().contains("Success") {
            return Err(DeviceError::Action(format!(
                "adb:{}: cannot clear the app's data: {} (is it installed?)",
                self.serial,
                dump::first_line(&out.text())
            )));
        }
        Ok(())
    }

    pub(super) fn apps(&self) -> Result<Vec<InstalledApp>, DeviceError> {
        let out = self.checked("dumpsys package packages", "dumpsys package")?;
        Ok(packages::parse_dumpsys(&String::from_utf8_lossy(&out.stdout)))
    }

    pub(super) fn app_ids(&self) -> Result<Vec<String>, DeviceError> {
        let out = self.checked("pm list packages", "pm list packages")?;
        Ok(packages::parse_list(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Sends the clipboard convention's broadcast; the text is also kept, so a paste types exactly
    /// it whether or not an app on the device took the broadcast.
    pub(super) fn clip(&mut self, text: &str) -> Result<(), DeviceError> {
        self.am(
            format!("am broadcast -a {CLIPPER_SET} --es text {}", quote(text)),
            "am broadcast clipper.set",
        )?;
        self.clipboard = Some(text.to_owned());
        Ok(())
    }

    /// BACK closes the keyboard when it is shown; with none shown BACK would leave the screen, so
    /// nothing is pressed then.
    pub(super) fn keyboard_off(&self) -> Result<bool, DeviceError> {
        let out = self.checked("dumpsys input_method", "dumpsys input_method")?;
        let shown = String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.trim().starts_with("mInputShown=true"));
        if shown {
            self.checked("input keyevent 4", "input keyevent")?;
        }
        Ok(shown)
    }

    pub(super) fn url(&self, url: &str) -> Result<(), DeviceError> {
        if !is_url(url) {
            return Err(DeviceError::Action(
                "`url` is not a URL (scheme:rest, like https://example.com, no spaces)".into(),
            ));
        }
        let cmd = format!("am start -a android.intent.action.VIEW -d {}", quote(url));
        self.am(cmd, "am start (view URL)").map(drop).map_err(|e| match e {
            DeviceError::Action(_) => DeviceError::Action(format!(
                "adb:{}: no app on the device opens this URL (`am start` could not resolve it)",
                self.serial
            )),
            other => other,
        })
    }

    /// Airplane mode through `cmd connectivity` (Android 11 and later).
    pub(super) fn network(&self, connected: bool) -> Result<(), DeviceError> {
        let mode = if connected { "disable" } else { "enable" };
        let out = self.run(format!("cmd connectivity airplane-mode {mode}"), "cmd connectivity")?;
        let text = out.text();
        if out.failed() || !text.trim().is_empty() {
            return Err(DeviceError::Action(format!(
                "adb:{}: `cmd connectivity airplane-mode` failed: {} (it needs Android 11 or later)",
                self.serial,
                dump::first_line(&text)
            )));
        }
        Ok(())
    }

    /// `mkdir -p` of the folder, then the bytes over adb's sync protocol (never through the shell,
    /// so size and content are not limited by a command line).
    pub(super) fn push(&self, path: &str, bytes: &[u8]) -> Result<(), DeviceError> {
        if !path.starts_with('/') || path.ends_with('/') || path.contains('\0') {
            return Err(DeviceError::Action(
                "`devicePath` must be an absolute file path (starting with `/`)".into(),
            ));
        }
        if let Some((dir, _)) = path.rsplit_once('/').filter(|(d, _)| !d.is_empty()) {
            self.checked(&format!("mkdir -p {}", quote(dir)), "mkdir -p")?;
        }
        let _span = tracing::debug_span!("adb", call = "push").entered();
        let (serial, server) = (self.serial.clone(), self.server);
        let (path_owned, data) = (path.to_owned(), bytes.to_vec());
        let pushed = with_timeout(self.opts.call_timeout, move || {
            let mut device = ADBServerDevice::new(serial, Some(server));
            device.push(Cursor::new(data), &path_owned).map_err(|e| match e {
                // What the device itself answered (FAIL after the bytes: a read-only folder, no
                // space), unless it is the server saying the device is gone.
                RustADBError::ADBRequestFailed(m) if !m.contains("not found") && !m.contains("offline") => (true, m),
                other => (false, other.to_string()),
            })
        });
        match pushed {
            Some(Ok(())) => Ok(()),
            Some(Err((true, m))) => Err(DeviceError::Action(format!(
                "adb:{}: the device refused the file: {}",
                self.serial,
                dump::first_line(&m)
            ))),
            Some(Err((false, e))) => Err(DeviceError::Io(format!("adb:{}: `push` failed: {e}", self.serial))),
            None => Err(DeviceError::Io(format!(
                "adb:{}: `push` did not answer within {}s: the device is gone or stuck",
                self.serial,
                self.opts.call_timeout.as_secs_f32()
            ))),
        }
    }
}

fn check_package(app_id: &str) -> Result<(), DeviceError> {
    if is_package_name(app_id) {
        Ok(())
    } else {
        Err(DeviceError::Action(
            "`appId` is not an Android package name (like com.example.app)".into(),
        ))
    }
}

fn not_installed(serial: &str) -> DeviceError {
    DeviceError::Action(format!("adb:{serial}: the app `appId` names is not installed"))
}

/// A permission name: dot-separated identifiers (`android.permission.CAMERA`, `com.example.MINE`).
pub fn is_permission_name(p: &str) -> bool {
    let parts: Vec<&str> = p.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|s| {
            let mut chars = s.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `scheme:rest` with an RFC 3986 scheme and no whitespace or control characters.
pub fn is_url(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once(':') else {
        return false;
    };
    let mut s = scheme.chars();
    s.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}
