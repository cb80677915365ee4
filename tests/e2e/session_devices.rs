//! Live sessions (`trailblaze session ...`) on the devices that are not the simulator: an Android
//! phone behind the real adb protocol (the fake, tests/fake_adb) and a real headless Chromium. Each
//! test starts a session, acts in it from separate `tool` processes (two calls with the same
//! `--step` text forming one step), looks at it with `snapshot --session`, saves it, checks and
//! replays the saved trail on a fresh device of the same kind, and stops the session, which must
//! leave no process, browser, profile, socket or description behind. Each test has a sessions
//! folder of its own (`TRAILBLAZE_SESSIONS_DIR`), and its guard stops every session in it even when
//! an assertion fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::web_site::{Site, processes_marked, require_chromium, wait_for_none};
use trailblaze_e2e::{copy_dir, repo_root, trailblaze_bin};

/// The longest any one command may take before the test fails (a hung session must not hang the
/// suite): a cold start of a debug build with a browser is a few seconds.
const COMMAND_LIMIT: Duration = Duration::from_secs(180);

/// A workspace and a sessions folder of one test's own. Dropping it stops every session in the
/// folder (`session stop --all`), before the folders themselves go.
struct Sessions {
    /// The workspace: `trailmaps/` and what the commands write (`trailblaze-out/`, the trails).
    ws: tempfile::TempDir,
    /// `TRAILBLAZE_SESSIONS_DIR`.
    sessions: tempfile::TempDir,
    /// `TMPDIR` of every command, so the browser's profile folders are this test's to look at.
    tmp: tempfile::TempDir,
}

impl Sessions {
    /// A workspace holding a copy of the repository's trailmap `id`.
    fn with_trailmap(id: &str) -> Sessions {
        let ws = tempfile::tempdir().expect("temp dir");
        copy_dir(
            &repo_root().join("trailmaps").join(id),
            &ws.path().join("trailmaps").join(id),
        );
        Sessions {
            ws,
            sessions: tempfile::tempdir().expect("temp dir"),
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn ws(&self) -> &Path {
        self.ws.path()
    }

    /// `trailblaze ARGS` in the workspace, with this test's sessions folder and `TMPDIR`, the suite's
    /// cache (main.rs), and none of the variables that would pick a session, a device or a workspace
    /// for it.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(trailblaze_bin());
        c.current_dir(self.ws())
            .args(args)
            .env("TRAILBLAZE_SESSIONS_DIR", self.sessions.path())
            .env("TMPDIR", self.tmp.path())
            .env("NO_COLOR", "1")
            .env_remove("TRAILBLAZE_SESSION")
            .env_remove("TRAILBLAZE_TRAILMAPS")
            .env_remove("TRAILBLAZE_TRAILMAP")
            .env_remove("TRAILBLAZE_OUT")
            .env_remove("TRAILBLAZE_DEVICE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        within(self.cmd(args), args)
    }

    /// `trailblaze ARGS`, which must succeed: its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "trailblaze {args:?}:\n{out}\n{err}");
        out
    }

    /// `session info NAME --json`.
    fn info(&self, name: &str) -> Value {
        serde_json::from_str(&self.ok(&["session", "info", name, "--json"])).expect("session info is JSON")
    }

    /// `snapshot --session NAME`: the session's screen as text.
    fn snapshot(&self, name: &str) -> String {
        self.ok(&["snapshot", "--session", name])
    }

    /// The session's socket and description, which exist exactly while it runs.
    fn files_of(&self, name: &str) -> [PathBuf; 2] {
        let dir = self.sessions.path();
        [dir.join(format!("{name}.sock")), dir.join(format!("{name}.json"))]
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        // Best effort and never a panic (this may run while a failed assertion unwinds).
        if let Ok(mut child) = self.cmd(&["session", "stop", "--all"]).spawn() {
            let until = Instant::now() + Duration::from_secs(30);
            while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `cmd` to its end; one that takes longer than [`COMMAND_LIMIT`] is killed and fails the test.
fn within(mut cmd: Command, args: &[&str]) -> Output {
    let child = cmd.spawn().expect("trailblaze runs");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(COMMAND_LIMIT) {
        Ok(out) => out.expect("trailblaze's output"),
        Err(_) => {
            if let Ok(pid) = i32::try_from(id) {
                // SAFETY: kill(2) of the child this function spawned and has not reaped.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            panic!("trailblaze {args:?} took more than {COMMAND_LIMIT:?}");
        }
    }
}

fn text(o: &Output) -> (String, String) {
    trailblaze_e2e::text(o)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The ref (`c422` of `[c422]`) of the first line of a snapshot that holds `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no node `{needle}` in the snapshot:\n{snapshot}"));
    let open = line.find('[').expect("a ref") + 1;
    let close = line[open..].find(']').expect("a ref's end") + open;
    line[open..close].to_string()
}

/// Whether process `pid` runs (exists and is not a zombie waiting for a parent to reap it).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'))
    })
}

/// Waits up to `limit` for `done`; whether it came.
fn eventually(limit: Duration, done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `check PATH` passes; a copy with one of its tools misspelt (`tool` → `tool` + `X`) does not,
/// so the pass is the trail's, not a check that passes anything.
fn check_passes(live: &Sessions, trail: &Path, tool: &str) {
    let out = live.ok(&["check", s(trail)]);
    assert!(out.contains("0 finding(s)"), "{out}");
    let broken = trail.with_file_name("broken.trail.yaml");
    let yaml = std::fs::read_to_string(trail).expect("the saved trail");
    assert!(yaml.contains(&format!("{tool}:")), "{yaml}");
    let misspelt = format!("{tool}X");
    std::fs::write(&broken, yaml.replacen(&format!("{tool}:"), &format!("{misspelt}:"), 1)).expect("write");
    let o = live.run(&["check", s(&broken)]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "a misspelt tool passed check:\n{out}\n{err}");
    assert!(out.contains(&misspelt) || err.contains(&misspelt), "{out}\n{err}");
    std::fs::remove_file(&broken).expect("remove");
}

/// `session stop NAME` frees everything: the process ends, the socket and description go, and the
/// session is no longer listed or joinable. Controls first: all of it is there before the stop.
fn stop_leaves_nothing(live: &Sessions, name: &str, pid: u32) {
    assert!(
        running(pid),
        "the session's process {pid} is not running before the stop"
    );
    for f in live.files_of(name) {
        assert!(f.exists(), "{} is missing before the stop", f.display());
    }
    let o = live.run(&["session", "stop", name]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("session `{name}` stopped")), "{err}");
    assert!(
        eventually(Duration::from_secs(10), || !running(pid)),
        "the session's process {pid} is still running after `session stop`"
    );
    for f in live.files_of(name) {
        assert!(!f.exists(), "{} was left by `session stop`", f.display());
    }
    let listed: Value = serde_json::from_str(&live.ok(&["session", "list", "--json"])).expect("JSON");
    assert_eq!(listed, serde_json::json!([]), "still listed after the stop");
    let o = live.run(&["snapshot", "--session", name]);
    assert_eq!(o.status.code(), Some(2), "a stopped session was joined: {}", text(&o).0);
    assert!(
        text(&o).1.contains(&format!("no session named `{name}` is running")),
        "{}",
        text(&o).1
    );
}

/// The one step of `yaml` named `text`, up to the next step: its recorded calls.
fn step_block<'a>(yaml: &'a str, text: &str) -> &'a str {
    let start = yaml
        .find(&format!("- step: {text}\n"))
        .unwrap_or_else(|| panic!("no step `{text}` in:\n{yaml}"));
    let rest = &yaml[start + 1..];
    &yaml[start..start + 1 + rest.find("\n  - ").unwrap_or(rest.len())]
}

#[test]
fn a_session_on_an_android_phone_records_three_calls_and_replays_on_a_fresh_phone() {
    const SERIAL: &str = "emulator-5554";
    // The replay's phone: another device of the same fake server, untouched by the session.
    const FRESH: &str = "emulator-5556";
    let fake = FakeAdb::demo_many(&[SERIAL, FRESH]);
    let server = fake.addr().to_string();
    let live = Sessions::with_trailmap("demo");
    // The account's password only, so the email typed shows in the snapshots (a secret's value
    // would be masked).
    let secrets = live.ws().join("live.secrets");
    std::fs::write(&secrets, "DEMO_PASSWORD=hunter2\n").expect("secrets");
    let device = format!("android:{SERIAL}");
    // Control: a session whose phone cannot be reached does not start, says why once, and leaves
    // nothing running or listed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .to_string();
    let o = live.run(&[
        "session",
        "start",
        "--name",
        "nowhere",
        "--trailmap",
        "demo",
        "--device",
        &device,
        "--adb-server",
        &closed,
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("session `nowhere` did not start"), "{err}");
    assert_eq!(err.matches("Connection refused").count(), 1, "said once: {err}");
    for f in live.files_of("nowhere") {
        assert!(!f.exists(), "{} was left by a start that failed", f.display());
    }
    let listed: Value = serde_json::from_str(&live.ok(&["session", "list", "--json"])).expect("JSON");
    assert_eq!(listed, serde_json::json!([]));
    let started = live.ok(&[
        "session",
        "start",
        "--name",
        "droid",
        "--trailmap",
        "demo",
        "--device",
        &device,
        "--adb-server",
        &server,
        "--secrets",
        s(&secrets),
    ]);
    assert_eq!(started.trim(), "droid");
    let info = live.info("droid");
    assert_eq!(
        (info["running"].as_bool(), info["device"].as_str()),
        (Some(true), Some(device.as_str())),
        "{info}"
    );
    let pid = info["pid"].as_u64().and_then(|p| u32::try_from(p).ok()).expect("pid");
    assert_ne!(pid, std::process::id());

    let screen = live.snapshot("droid");
    let email = ref_of(&screen, "hint=\"Email\"");
    let password = ref_of(&screen, "hint=\"Password\"");
    let sign_in = ref_of(&screen, "Button \"Sign in\"");

    // Call 1 (its own process).
    live.ok(&[
        "tool",
        "type",
        &format!("ref={email}"),
        "text=jane@example.com",
        "--session",
        "droid",
        "--step",
        "Fill in the account",
    ]);
    // The session's phone shows what the call typed ...
    let screen = live.snapshot("droid");
    assert!(screen.contains("EditText \"jane@example.com\""), "{screen}");
    assert!(fake.device(SERIAL).phone().typed.contains("jane@example.com"));
    // ... and a command that joins no session acts on a fresh phone, where nothing was typed.
    let o = live.run(&[
        "snapshot",
        "--session",
        "none",
        "--device",
        &format!("android:{FRESH}"),
        "--adb-server",
        &server,
    ]);
    let (fresh, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        fresh.contains("hint=\"Email\"") && !fresh.contains("jane@example.com"),
        "{fresh}"
    );
    assert_eq!(fake.device(FRESH).phone().typed, "");
    // With no `--session`, a command joins the only session running, and says so.
    let o = live.run(&["snapshot"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(text(&o).0.contains("EditText \"jane@example.com\""), "{}", text(&o).0);
    assert!(text(&o).1.contains("in session `droid`"), "{}", text(&o).1);

    // Call 2, the same step's text: the password as its placeholder (its value is never recorded).
    live.ok(&[
        "tool",
        "type",
        &format!("ref={password}"),
        "text={{secret:DEMO_PASSWORD}}",
        "--session",
        "droid",
        "--step",
        "Fill in the account",
    ]);
    // Call 3, a step of its own.
    live.ok(&[
        "tool",
        "tap",
        &format!("ref={sign_in}"),
        "--session",
        "droid",
        "--step",
        "Sign in",
    ]);
    let screen = live.snapshot("droid");
    assert!(screen.contains("TextView \"Inbox\""), "signed in: {screen}");
    assert!(fake.device(SERIAL).phone().typed.contains("hunter2"));
    let info = live.info("droid");
    assert_eq!(info["steps"], 2, "{info}");

    let trail = live.ws().join("trailmaps/demo/trails/live.trail.yaml");
    live.ok(&["session", "save", "droid", s(&trail)]);
    let yaml = std::fs::read_to_string(&trail).expect("the saved trail");
    assert_eq!(yaml.matches("- step: ").count(), 2, "{yaml}");
    let fill = step_block(&yaml, "Fill in the account");
    assert_eq!(fill.matches("- inputText:").count(), 2, "{yaml}");
    assert!(
        fill.contains("jane@example.com") && fill.contains("{{secret:DEMO_PASSWORD}}"),
        "{yaml}"
    );
    assert!(
        step_block(&yaml, "Sign in").contains("tapOnElementBySelector"),
        "{yaml}"
    );
    assert!(!yaml.contains("hunter2"), "{yaml}");
    check_passes(&live, &trail, "inputText");

    // The replay, on the fresh phone, while the session still holds its own.
    let o = live.run(&[
        "run",
        "--json",
        "--device",
        &format!("android:{FRESH}"),
        "--adb-server",
        &server,
        "--secrets",
        s(&secrets),
        s(&trail),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("the run's report");
    assert_eq!(report["trails"][0]["outcome"]["status"], "passed", "{report}");
    let typed = fake.device(FRESH).phone().typed.clone();
    assert!(
        typed.contains("jane@example.com") && typed.contains("hunter2"),
        "{typed}"
    );

    stop_leaves_nothing(&live, "droid", pid);

    // Control: the same trail on the session's phone, left at the inbox, fails: the replay above
    // passed because it acted on a fresh phone's sign-in screen.
    let o = live.run(&[
        "run",
        "--device",
        &device,
        "--adb-server",
        &server,
        "--secrets",
        s(&secrets),
        s(&trail),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}\n{}", text(&o).0, text(&o).1);
}

/// The trace calls' tools but snapshots, in order.
fn traced_tools(trace: &Path) -> Vec<String> {
    let t: Value = serde_json::from_str(&std::fs::read_to_string(trace).expect("trace.json")).expect("JSON");
    t["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .filter(|t| *t != "snapshot")
        .map(str::to_string)
        .collect()
}

/// The processes running whose command line holds `needle`.
fn command_lines_holding(needle: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| running(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

#[test]
fn a_session_on_chromium_records_three_calls_reports_its_trace_and_replays_on_a_fresh_browser() {
    require_chromium();
    let site = Site::start();
    let live = Sessions::with_trailmap("web-demo");
    // A mark in the session's environment, which its browser and the browser's helpers inherit.
    let mark = format!("TRAILBLAZE_TEST_MARK=session-web-{}", std::process::id());
    let (key, value) = mark.split_once('=').expect("a mark");
    let mut start = live.cmd(&[
        "session",
        "start",
        "--name",
        "browser",
        "--trailmap",
        "web-demo",
        "--device",
        "web",
    ]);
    start.env(key, value);
    let o = within(start, &["session", "start"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(text(&o).0.trim(), "browser");
    let info = live.info("browser");
    assert_eq!(info["device"], "web", "{info}");
    let pid = info["pid"].as_u64().and_then(|p| u32::try_from(p).ok()).expect("pid");
    let folder = PathBuf::from(info["folder"].as_str().expect("the session's folder"));
    // The session's browser: its profile folder (named by the session's process) and the
    // processes whose command line names it.
    let profile_prefix = format!("trailblaze-chromium-{pid}-");
    let profiles = || -> Vec<PathBuf> {
        std::fs::read_dir(live.tmp.path())
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&profile_prefix))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let profile = match profiles().as_slice() {
        [one] => one.clone(),
        other => panic!("expected the session's one browser profile in TMPDIR, found {other:?}"),
    };
    assert!(
        !command_lines_holding(s(&profile)).is_empty(),
        "no browser process names the session's profile {}",
        profile.display()
    );

    // Call 1.
    let home = site.url("index.html");
    live.ok(&[
        "tool",
        "openUrl",
        &format!("url={home}"),
        "--session",
        "browser",
        "--step",
        "Open the fixture home",
    ]);
    let screen = live.snapshot("browser");
    assert!(screen.contains("heading \"Fixture home\""), "{screen}");
    let notes = ref_of(&screen, "textbox \"Notes\"");
    let increment = ref_of(&screen, "button \"Increment\"");
    // Call 2.
    live.ok(&[
        "tool",
        "type",
        &format!("ref={notes}"),
        "text=remember the milk",
        "--session",
        "browser",
        "--step",
        "Write a note and count",
    ]);
    let screen = live.snapshot("browser");
    assert!(
        screen.contains("textbox \"Notes\" value=\"remember the milk\""),
        "{screen}"
    );
    // Control: a fresh browser (no session joined) shows none of it.
    let o = live.run(&["snapshot", "--session", "none", "--device", "web"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(
        !text(&o).0.contains("remember the milk") && !text(&o).0.contains("Fixture home"),
        "{}",
        text(&o).0
    );

    // The trace so far, written while the session runs: the calls made until now.
    let trace = folder.join("trace.json");
    assert!(!trace.exists(), "a trace was written before it was asked for");
    let out = live.ok(&["session", "report", "browser", "--no-open"]);
    assert!(out.contains("report"), "{out}");
    assert_eq!(traced_tools(&trace), ["openUrl", "web_type"]);

    // Call 3, the same step's text, after the report: the session goes on.
    live.ok(&[
        "tool",
        "tap",
        &format!("ref={increment}"),
        "--session",
        "browser",
        "--step",
        "Write a note and count",
    ]);
    let screen = live.snapshot("browser");
    let count = screen
        .lines()
        .skip_while(|l| !l.contains("paragraph \"Count:\""))
        .nth(1)
        .unwrap_or_default();
    assert!(count.contains("\"1\""), "{screen}");
    assert!(screen.contains("value=\"remember the milk\""), "{screen}");
    live.ok(&["session", "report", "browser", "--no-open"]);
    assert_eq!(traced_tools(&trace), ["openUrl", "web_type", "web_click"]);
    assert_eq!(live.info("browser")["steps"], 2);

    let trail = live.ws().join("trailmaps/web-demo/trails/live.trail.yaml");
    live.ok(&["session", "save", "browser", s(&trail)]);
    let yaml = std::fs::read_to_string(&trail).expect("the saved trail");
    assert_eq!(yaml.matches("- step: ").count(), 2, "{yaml}");
    assert!(step_block(&yaml, "Open the fixture home").contains(&home), "{yaml}");
    let both = step_block(&yaml, "Write a note and count");
    assert!(
        both.contains("- web_type:") && both.contains("remember the milk") && both.contains("- web_click:"),
        "{yaml}"
    );
    check_passes(&live, &trail, "web_type");

    // The replay, on a browser of its own.
    let o = live.run(&["run", "--json", "--device", "web", s(&trail)]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("the run's report");
    assert_eq!(report["trails"][0]["outcome"]["status"], "passed", "{report}");

    stop_leaves_nothing(&live, "browser", pid);
    assert_eq!(
        wait_for_none(Duration::from_secs(10), || command_lines_holding(s(&profile)).len()),
        0,
        "a browser process naming the session's profile was left"
    );
    assert_eq!(
        wait_for_none(Duration::from_secs(10), || processes_marked(&mark).len()),
        0,
        "a process started by the session was left"
    );
    assert_eq!(
        profiles(),
        Vec::<PathBuf>::new(),
        "the session's browser profile was left"
    );
    // The session's trace, written at its end, holds all three calls.
    assert_eq!(traced_tools(&trace), ["openUrl", "web_type", "web_click"]);

    // Control: with the site gone, the same replay fails: the pass above was the page's.
    drop(site);
    let o = live.run(&["run", "--device", "web", s(&trail)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).0);
}
