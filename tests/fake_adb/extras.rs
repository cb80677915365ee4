//! The fake phone's answers to the commands behind the Android built-ins, printed as Android prints
//! them: `am broadcast` / `am start`, `pm grant`, `appops`, `settings`, `dumpsys package|input_method`,
//! `cmd connectivity`, `content call`, `run-as`, `mkdir`, `printf`.

use super::phone::{ADB_KEYBOARD, Phone, Run, Sent};

/// What the fake's app declares in its manifest (a `pm grant` of anything else is refused).
pub const DECLARED: &[&str] = &["android.permission.CAMERA", "android.permission.POST_NOTIFICATIONS"];
/// The AppOps operations the fake knows (a few of Android's `AppOpsManager` names).
const APP_OPS: &[&str] = &[
    "MANAGE_EXTERNAL_STORAGE",
    "SYSTEM_ALERT_WINDOW",
    "REQUEST_INSTALL_PACKAGES",
    "WRITE_SETTINGS",
    "ACCESS_NOTIFICATIONS",
    "PICTURE_IN_PICTURE",
];
/// The system apps the fake lists beside the simulated one.
const SYSTEM_APPS: &[&str] = &["com.android.chrome", "com.android.settings"];

impl Phone {
    pub(super) fn am_broadcast(&mut self, args: &[&str]) -> Run {
        let mut sent = Sent {
            action: String::new(),
            component: None,
            extras: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut next = || it.next().map(|s| s.to_string());
            match *flag {
                "-a" => sent.action = next().unwrap_or_default(),
                "-n" => sent.component = next(),
                "-e" | "--es" | "--ez" | "--ei" | "--el" | "--ef" => {
                    let (Some(key), Some(value)) = (next(), next()) else {
                        return Run::fail(255, "Error: Argument expected after \"".to_owned() + flag + "\"\n");
                    };
                    if let Some(why) = bad_extra(flag, &value) {
                        return Run::fail(255, format!("Exception occurred while executing 'broadcast':\n{why}\n"));
                    }
                    sent.extras.push((flag.to_string(), key, value));
                }
                other => return Run::fail(255, format!("Error: Unknown option: {other}\n")),
            }
        }
        let extra = |k: &str| sent.extras.iter().find(|e| e.1 == k).map(|e| e.2.clone());
        match sent.action.as_str() {
            "clipper.set" => self.clipboard = extra("text"),
            "com.android.systemui.demo" if self.demo_allowed => match extra("command").as_deref() {
                Some("enter") => self.demo = true,
                Some("exit") => self.demo = false,
                _ => {}
            },
            _ => {}
        }
        let cmp = sent
            .component
            .as_deref()
            .map(|c| format!(" cmp={c}"))
            .unwrap_or_default();
        let has = if sent.extras.is_empty() { "" } else { " (has extras)" };
        let out = format!(
            "Broadcasting: Intent {{ act={} flg=0x400000{cmp}{has} }}\nBroadcast completed: result=0\n",
            sent.action
        );
        self.broadcasts.push(sent);
        Run::ok(out)
    }

    /// `am start -a android.intent.action.VIEW -d <url>`: a browser takes http(s); nothing else
    /// resolves, which `am` reports on stderr while still exiting 0 (as it does on many releases).
    pub(super) fn am_view(&mut self, url: &str) -> Run {
        let intent = format!("Intent {{ act=android.intent.action.VIEW dat={url} }}");
        if url.starts_with("https:") || url.starts_with("http:") {
            self.opened.push(url.to_owned());
            // The browser comes to the front.
            let _ = trailblaze::device::Device::press_key(&mut self.sim, trailblaze::device::KeyCode::Home);
            Run::ok(format!("Starting: {intent}\n"))
        } else {
            Run {
                stdout: format!("Starting: {intent}\n").into_bytes(),
                stderr: format!(
                    "Error: Activity not started, unable to resolve Intent {{ act=android.intent.action.VIEW dat={url} flg=0x10000000 }}\n"
                )
                .into_bytes(),
                exit: 0,
                hold: None,
            }
        }
    }

    pub(super) fn pm_grant(&mut self, pkg: &str, permission: &str) -> Run {
        if !self.installed(pkg) {
            return exception(
                "grant",
                &format!("java.lang.IllegalArgumentException: Unknown package: {pkg}"),
            );
        }
        if pkg != self.sim.app_id() || !DECLARED.contains(&permission) {
            return exception(
                "grant",
                &format!("java.lang.SecurityException: Package {pkg} has not requested permission {permission}"),
            );
        }
        self.granted.push((pkg.to_owned(), permission.to_owned()));
        Run::ok("")
    }

    pub(super) fn appops_set(&mut self, pkg: &str, op: &str, mode: &str) -> Run {
        if !self.installed(pkg) {
            return Run::fail(255, format!("Error: Unknown package: {pkg}\n"));
        }
        if !APP_OPS.contains(&op) || mode != "allow" {
            return Run::fail(255, format!("Error: Unknown operation string: {op}\n"));
        }
        self.app_ops.push((pkg.to_owned(), op.to_owned()));
        Run::ok("")
    }

    pub(super) fn settings_put(&mut self, namespace: &str, key: &str, value: &str) -> Run {
        if (namespace, key) == ("global", "sysui_demo_allowed") {
            self.demo_allowed = value == "1";
        }
        Run::ok("")
    }

    /// `dumpsys package packages`, as an Android 15 emulator prints the fields trailblaze reads.
    pub(super) fn dumpsys_packages(&self) -> Run {
        let mut out =
            String::from("Database versions:\n  Internal:\n    sdkVersion=35 databaseVersion=3\n\nPackages:\n");
        for (i, pkg) in self.package_ids().iter().enumerate() {
            let system = SYSTEM_APPS.contains(&pkg.as_str());
            let (path, flags) = if system {
                (format!("/system/app/{pkg}"), "SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA")
            } else {
                (
                    format!("/data/app/~~{i}==/{pkg}-1=="),
                    "HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP",
                )
            };
            out.push_str(&format!(
                "  Package [{pkg}] ({:x}):\n    userId={}\n    codePath={path}\n    versionCode={} minSdk=26 targetSdk=35\n    versionName={}\n    flags=[ {flags} ]\n    User 0: ceDataInode=1 installed=true hidden=false stopped=false enabled=0\n",
                0x1a2b_3c00 + i,
                10_100 + i,
                100 + i,
                if system { "15" } else { "1.0.0" },
            ));
        }
        out.push_str(
            "\nHidden system packages:\n  Package [com.android.chrome] (9e1):\n    codePath=/product/app/Chrome\n",
        );
        Run::ok(out)
    }

    /// `dumpsys input_method`: the lines around `mInputShown` an IME dump has.
    pub(super) fn dumpsys_input_method(&self) -> Run {
        let shown = self.sim.keyboard_shown();
        Run::ok(format!(
            "Current Input Method Manager state:\n  Input Methods: mMethodMapUpdateCount=2\n  mCurMethodId=com.android.inputmethod.latin/.LatinIME\n  mCurSeq=12 mCurClient=ClientState{{uid=10123}}\n  mInputShown={shown}\n  mShowRequested={shown} mShowExplicitlyRequested=false\n"
        ))
    }

    /// `cmd connectivity airplane-mode enable|disable` exists from Android 11 (API 30).
    pub(super) fn airplane(&mut self, mode: &str) -> Run {
        if self.api_level < 30 {
            return Run::fail(255, "Unknown command: airplane-mode\n");
        }
        match mode {
            "enable" => self.airplane_mode = true,
            "disable" => self.airplane_mode = false,
            _ => return Run::fail(255, format!("Unsupported command: {mode}\n")),
        }
        Run::ok("")
    }

    /// MediaProvider's `scan_file`: a file that exists becomes an Images row.
    pub(super) fn scan_file(&mut self, path: &str) -> Run {
        if !self.files.contains_key(path) {
            return Run::ok("Result: Bundle[{}]\n");
        }
        self.scanned.push(path.to_owned());
        Run::ok(format!(
            "Result: Bundle[{{uri=content://media/external_primary/images/media/{}}}]\n",
            1_000_000_017 + self.scanned.len()
        ))
    }

    /// `run-as <pkg> <command...>`: the simulated app is debuggable, nothing else is.
    pub(super) fn run_as(&mut self, pkg: &str, rest: &[String]) -> Run {
        if !self.installed(pkg) {
            return Run::fail(1, format!("run-as: unknown package: {pkg}\n"));
        }
        if pkg != self.sim.app_id() {
            return Run::fail(1, format!("run-as: package not debuggable: {pkg}\n"));
        }
        self.one(rest)
    }

    pub(super) fn mkdir(&mut self, args: &[&str]) -> Run {
        for dir in args.iter().filter(|a| !a.starts_with('-')) {
            if dir.starts_with("/system/") {
                return Run::fail(1, format!("mkdir: '{dir}': Read-only file system\n"));
            }
            self.dirs.insert(dir.to_string());
        }
        Run::ok("")
    }

    /// `printf FORMAT ARGS...` for `%s`, `%%` and the escapes `\n`, `\t`, `\\`, `\0`, reusing the
    /// format while arguments remain (as POSIX printf does).
    pub(super) fn printf(format: &str, args: &[&str]) -> Run {
        let mut out = String::new();
        let mut args = args.iter();
        loop {
            let mut used = false;
            let mut chars = format.chars();
            while let Some(c) = chars.next() {
                match (c, c == '%' || c == '\\') {
                    ('%', true) => match chars.next() {
                        Some('s') => {
                            used = true;
                            out.push_str(args.next().copied().unwrap_or(""));
                        }
                        Some('%') => out.push('%'),
                        other => {
                            return Run::fail(1, format!("printf: %{}: invalid conversion\n", other.unwrap_or(' ')));
                        }
                    },
                    ('\\', true) => match chars.next() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('0') => out.push('\0'),
                        Some(o) => out.push(o),
                        None => out.push('\\'),
                    },
                    _ => out.push(c),
                }
            }
            if !used || args.len() == 0 {
                return Run::ok(out);
            }
        }
    }

    /// The apps installed: the simulated one, the system apps and ADBKeyboard when installed.
    pub fn package_ids(&self) -> Vec<String> {
        let mut all: Vec<String> = SYSTEM_APPS.iter().map(|s| s.to_string()).collect();
        all.push(self.sim.app_id().to_owned());
        if self.ime_installed {
            all.push(ADB_KEYBOARD.to_owned());
        }
        all.sort();
        all
    }

    fn installed(&self, pkg: &str) -> bool {
        self.package_ids().iter().any(|p| p == pkg)
    }
}

fn exception(command: &str, what: &str) -> Run {
    Run::fail(
        255,
        format!("Exception occurred while executing '{command}':\n{what}\n"),
    )
}

/// Why `am` would refuse a typed extra's value (Java's parsers), or `None`.
fn bad_extra(flag: &str, value: &str) -> Option<String> {
    let ok = match flag {
        "--ez" => ["true", "false", "1", "0"].contains(&value.to_ascii_lowercase().as_str()),
        "--ei" => value.parse::<i32>().is_ok(),
        "--el" => value.parse::<i64>().is_ok(),
        "--ef" => value.parse::<f32>().is_ok(),
        _ => true,
    };
    (!ok).then(|| format!("java.lang.NumberFormatException: For input string: \"{value}\""))
}
