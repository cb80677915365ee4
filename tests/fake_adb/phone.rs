//! The fake phone: a simulated app (`SimDevice`) behind the shell commands trailblaze and the adb
//! client send, answering as Android does (outputs, exit codes, `input text` turning `%s` into a
//! space and failing on what the virtual keyboard cannot type).

use std::collections::{HashMap, HashSet};

use trailblaze::device::sim::SimDevice;
use trailblaze::device::{Device, KeyCode, LaunchMode};

use super::trace::TraceState;
use super::{png, sh, xml};

/// One `am broadcast` as received: its action, component and extras as (flag, key, value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub action: String,
    pub component: Option<String>,
    pub extras: Vec<(String, String, String)>,
}

pub const ADB_KEYBOARD: &str = "com.android.adbkeyboard";
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";
const LATIN_IME: &str = "com.android.inputmethod.latin/.LatinIME";

/// What a command gave: stdout, stderr, exit code.
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit: u8,
    /// The process the command line waits for before it ends (a recording): the connection
    /// sends the output so far, then the exit status once that process ended.
    pub hold: Option<u32>,
}

impl Run {
    pub fn ok(out: impl Into<Vec<u8>>) -> Run {
        Run {
            stdout: out.into(),
            stderr: Vec::new(),
            exit: 0,
            hold: None,
        }
    }
    pub fn fail(exit: u8, err: impl Into<String>) -> Run {
        Run {
            stdout: Vec::new(),
            stderr: err.into().into_bytes(),
            exit,
            hold: None,
        }
    }
}

pub struct Phone {
    pub sim: SimDevice,
    /// The device's files: dumps, and what `push` and the tools wrote.
    pub files: HashMap<String, Vec<u8>>,
    /// Folders `mkdir -p` made.
    pub dirs: HashSet<String>,
    next_launch: Option<LaunchMode>,
    pub ime_installed: bool,
    ime_active: bool,
    /// Everything the keyboard delivered, in order: `input text`, ENTER as `\n`, IME text.
    pub typed: String,
    /// Every command line received.
    pub commands: Vec<String>,
    /// How many times `uiautomator dump` ran.
    pub dumps: u64,
    /// Serve this XML instead of the app's screen (for dumps written by hand).
    pub dump_override: Option<String>,
    /// Write the `hint` attribute (Android 16 and later).
    pub hint_attr: bool,
    /// Every `am broadcast` received, in order.
    pub broadcasts: Vec<Sent>,
    /// What `clipper.set` put on the clipboard.
    pub clipboard: Option<String>,
    /// `pm grant`s and `appops set`s that took.
    pub granted: Vec<(String, String)>,
    pub app_ops: Vec<(String, String)>,
    /// SystemUI's demo mode: allowed by `settings`, entered by its broadcast.
    pub demo_allowed: bool,
    pub demo: bool,
    pub airplane_mode: bool,
    /// The Android release's API level (`cmd connectivity airplane-mode` needs 30).
    pub api_level: u32,
    /// URLs a browser opened.
    pub opened: Vec<String>,
    /// Files MediaProvider scanned.
    pub scanned: Vec<String>,
    /// The clock, the log and the recordings (`date`, `logcat`, `screenrecord`).
    pub trace: TraceState,
}

impl Phone {
    pub fn new(sim: SimDevice) -> Phone {
        Phone {
            sim,
            files: HashMap::new(),
            next_launch: None,
            ime_installed: false,
            ime_active: false,
            typed: String::new(),
            commands: Vec::new(),
            dumps: 0,
            dump_override: None,
            hint_attr: true,
            dirs: HashSet::new(),
            broadcasts: Vec::new(),
            clipboard: None,
            granted: Vec::new(),
            app_ops: Vec::new(),
            demo_allowed: false,
            demo: false,
            airplane_mode: false,
            api_level: 35,
            opened: Vec::new(),
            scanned: Vec::new(),
            trace: TraceState::default(),
        }
    }

    /// Runs a command line; `commands` records each command without trailblaze's exit-status echo.
    pub fn run(&mut self, line: &str) -> Run {
        let commands = match sh::parse(line) {
            Ok(c) => c,
            Err(e) => {
                self.commands.push(line.to_owned());
                return Run::fail(2, format!("/system/bin/sh: syntax error: {e}\n"));
            }
        };
        let mut all = Run::ok("");
        let shown = line.strip_suffix("; echo __trailblaze_exit=$?").unwrap_or(line);
        self.commands.push(shown.to_owned());
        let shell = self.trace.next_pid();
        for words in commands {
            let (last, pid) = (all.exit.to_string(), shell.to_string());
            let words: Vec<String> = words
                .iter()
                .map(|w| w.replace(sh::LAST_STATUS, &last).replace(sh::SHELL_PID, &pid))
                .collect();
            // `exec` runs the program as the shell's own process, and nothing after it runs.
            let exec = words.first().is_some_and(|w| w == "exec");
            let words = &words[usize::from(exec)..];
            let run = match words.first().map(String::as_str) {
                Some("screenrecord") => {
                    let pid = if exec { shell } else { self.trace.next_pid() };
                    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
                    self.screenrecord(&args, pid)
                }
                _ => self.one(words),
            };
            all.stdout.extend(run.stdout);
            all.stderr.extend(run.stderr);
            all.exit = run.exit;
            all.hold = all.hold.or(run.hold);
            if exec {
                break;
            }
        }
        all
    }

    pub(super) fn one(&mut self, words: &[String]) -> Run {
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["uiautomator", "dump", rest @ ..] => self.dump(rest.iter().copied().find(|a| !a.starts_with('-'))),
            ["cat", path] => match self.files.get(*path) {
                Some(bytes) => Run::ok(bytes.clone()),
                None => Run::fail(1, format!("cat: {path}: No such file or directory\n")),
            },
            ["input", "tap", x, y] => self.with_point(x, y, |sim, x, y| sim.tap(x, y)),
            ["input", "swipe", x1, y1, x2, y2, rest @ ..] => {
                let held: u32 = rest.first().and_then(|d| d.parse().ok()).unwrap_or(300);
                if x1 == x2 && y1 == y2 && held >= 500 {
                    self.with_point(x1, y1, |sim, x, y| sim.long_press(x, y))
                } else {
                    let to = (y2.parse::<f32>().ok(), x2.parse::<f32>().ok());
                    self.with_point(x1, y1, |sim, x, y| match to {
                        (Some(ty), Some(tx)) => sim.swipe((x, y), (tx as i32, ty as i32), held),
                        _ => Ok(()),
                    })
                }
            }
            ["input", "keyevent", codes @ ..] if !codes.is_empty() => self.keys(codes),
            ["input", "text", text] => self.input_text(text),
            ["am", "force-stop", pkg] => {
                if *pkg == self.sim.app_id() {
                    // The process goes: the launcher shows until the app is started again.
                    let _ = self.sim.stop(pkg);
                    if self.next_launch.is_none() {
                        self.next_launch = Some(LaunchMode::ForceRestart);
                    }
                }
                Run::ok("")
            }
            ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", b64] => self.ime_broadcast(b64),
            ["am", "broadcast", args @ ..] => self.am_broadcast(args),
            ["am", "start", "-a", "android.intent.action.VIEW", "-d", url] => self.am_view(url),
            ["pm", "grant", pkg, permission] => self.pm_grant(pkg, permission),
            ["appops", "set", pkg, op, mode] => self.appops_set(pkg, op, mode),
            ["settings", "put", namespace, key, value] => self.settings_put(namespace, key, value),
            ["dumpsys", "package", "packages"] => self.dumpsys_packages(),
            ["dumpsys", "input_method"] => self.dumpsys_input_method(),
            ["cmd", "connectivity", "airplane-mode", mode] => self.airplane(mode),
            [
                "content",
                "call",
                "--uri",
                "content://media",
                "--method",
                "scan_file",
                "--arg",
                path,
            ] => self.scan_file(path),
            ["run-as", pkg, rest @ ..] if !rest.is_empty() => {
                let rest = words[2..].to_vec();
                self.run_as(pkg, &rest)
            }
            ["mkdir", args @ ..] => self.mkdir(args),
            ["printf", format, args @ ..] => Phone::printf(format, args),
            // mksh's builtins (and toybox's): `true` is what trailblaze asks a phone that may be lost.
            ["true"] => Run::ok(""),
            ["false"] => Run::fail(1, ""),
            ["monkey", "-p", pkg, "-c", "android.intent.category.LAUNCHER", "1"] => self.monkey(pkg),
            ["pm", "clear", pkg] => {
                if *pkg == self.sim.app_id() {
                    self.next_launch = Some(LaunchMode::Reinstall);
                    Run::ok("Success\n")
                } else {
                    Run::fail(1, "Failed\n")
                }
            }
            ["pm", "list", "packages", filter @ ..] => self.packages(filter.first().copied()),
            ["settings", "get", "secure", "default_input_method"] => Run::ok(format!(
                "{}\n",
                if self.ime_active { ADB_KEYBOARD_IME } else { LATIN_IME }
            )),
            ["ime", verb @ ("enable" | "set"), id] => self.ime(verb, id),
            ["screencap", "-p"] => {
                let tree = self.tree();
                Run::ok(png::render(&tree))
            }
            ["getprop", "ro.product.model"] => Run::ok("Pixel 7\n"),
            ["date", args @ ..] => self.date(args),
            ["logcat", args @ ..] => self.logcat(args),
            ["kill", args @ ..] => self.kill(args),
            ["rm", args @ ..] => self.rm(args),
            // `adb logcat` sends `export ANDROID_LOG_TAGS=""; exec logcat ...`.
            ["export", ..] => Run::ok(""),
            ["echo", args @ ..] => Run::ok(format!("{}\n", args.join(" "))),
            [first, ..] => Run::fail(127, format!("/system/bin/sh: {first}: inaccessible or not found\n")),
            [] => Run::ok(""),
        }
    }

    fn tree(&mut self) -> trailblaze::device::ViewTree {
        self.sim
            .snapshot()
            .unwrap_or_else(|e| panic!("the simulated app always has a tree: {e}"))
    }

    fn dump(&mut self, path: Option<&str>) -> Run {
        self.dumps += 1;
        let path = path.unwrap_or("/sdcard/window_dump.xml");
        let xml = match &self.dump_override {
            Some(x) => x.clone(),
            None => {
                let tree = self.tree();
                xml::render(&tree, self.hint_attr)
            }
        };
        let done = format!("UI hierchary dumped to: {path}\n");
        if path == "/dev/tty" {
            Run::ok(format!("{xml}{done}"))
        } else {
            self.files.insert(path.to_owned(), xml.into_bytes());
            Run::ok(done)
        }
    }

    fn with_point(
        &mut self,
        x: &str,
        y: &str,
        f: impl FnOnce(&mut SimDevice, i32, i32) -> Result<(), trailblaze::device::DeviceError>,
    ) -> Run {
        match (x.parse::<f32>(), y.parse::<f32>()) {
            (Ok(x), Ok(y)) => {
                let _ = f(&mut self.sim, x as i32, y as i32);
                Run::ok("")
            }
            _ => Run::fail(255, format!("Error: Invalid arguments for command: {x} {y}\n")),
        }
    }

    fn keys(&mut self, codes: &[&str]) -> Run {
        for code in codes {
            let key = match code.trim_start_matches("KEYCODE_") {
                "3" | "HOME" => KeyCode::Home,
                "4" | "BACK" => KeyCode::Back,
                "61" | "TAB" => KeyCode::Tab,
                "66" | "ENTER" => KeyCode::Enter,
                "67" | "DEL" => KeyCode::Backspace,
                "111" | "ESCAPE" => KeyCode::Escape,
                other if other.parse::<u32>().is_ok() => continue, // a key the app ignores
                other => return Run::fail(255, format!("Error: Unknown keycode: {other}\n")),
            };
            if key == KeyCode::Enter {
                self.typed.push('\n');
            }
            if key == KeyCode::Back && self.sim.keyboard_shown() {
                // BACK closes the keyboard first, as on a phone; the screen stays.
                let _ = self.sim.hide_keyboard();
                continue;
            }
            let _ = self.sim.press_key(key);
        }
        Run::ok("")
    }

    /// Android's `input text`: `%s` becomes a space; a character the virtual keyboard's key map
    /// lacks (non-ASCII) makes `getEvents` return null, and nothing is typed.
    fn input_text(&mut self, text: &str) -> Run {
        if !text.chars().all(|c| c == '\n' || (' '..='~').contains(&c)) {
            return Run::fail(
                255,
                "Exception occurred while executing 'text':\njava.lang.NullPointerException: Attempt to get length of null array\n",
            );
        }
        let text = text.replace("%s", " ");
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.typed.push('\n');
                let _ = self.sim.press_key(KeyCode::Enter);
            }
            self.type_str(line);
        }
        Run::ok("")
    }

    fn type_str(&mut self, text: &str) {
        if !text.is_empty() {
            self.typed.push_str(text);
            // No focused field: a real keyboard's keys go nowhere, silently.
            let _ = self.sim.input_text(text);
        }
    }

    fn ime_broadcast(&mut self, b64: &str) -> Run {
        let out =
            "Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n";
        if self.ime_active {
            let Some(bytes) = decode_base64(b64) else {
                return Run::ok(out); // ADBKeyboard logs the bad message and types nothing
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            self.type_str(&text);
        }
        Run::ok(out)
    }

    fn monkey(&mut self, pkg: &str) -> Run {
        if pkg != self.sim.app_id() {
            return Run::fail(252, "** No activities found to run, monkey aborted.\n");
        }
        let mode = self.next_launch.take().unwrap_or(LaunchMode::Resume);
        let _ = self.sim.launch_app(pkg, mode);
        // As Android's ActivityManager logs a launch: what a trace's device log shows.
        self.log(
            'I',
            "ActivityManager",
            &format!("START u0 {{cmp={pkg}/.MainActivity}} from monkey"),
        );
        Run::ok(
            "  bash arg: -p\n  bash arg: 1\nargs: [-p, ...]\nEvents injected: 1\n## Network stats: elapsed time=12ms\n",
        )
    }

    fn packages(&self, filter: Option<&str>) -> Run {
        let lines: String = self
            .package_ids()
            .iter()
            .filter(|p| filter.is_none_or(|f| p.contains(f)))
            .map(|p| format!("package:{p}\n"))
            .collect();
        Run::ok(lines)
    }

    fn ime(&mut self, verb: &str, id: &str) -> Run {
        if id != ADB_KEYBOARD_IME || !self.ime_installed {
            return Run::fail(
                255,
                format!("Unknown input method {id} cannot be {verb}d for user #0\n"),
            );
        }
        if verb == "set" {
            self.ime_active = true;
            Run::ok(format!("Input method {id} selected for user #0\n"))
        } else {
            Run::ok(format!("Input method {id}: now enabled for user #0\n"))
        }
    }
}

pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
