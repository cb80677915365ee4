//! Live sessions on the simulated device (`trailblaze session ...`): a session started once and
//! joined by separate processes, whose recording saves as a trail that checks and replays green; two
//! at once that never mix; a folder of another user refused and a socket another uid cannot reach;
//! a killed process that fails the next command clearly; the idle timeout and signals that leave
//! nothing behind; secrets never in the process's arguments or environment; `mcp`, `shell`, `ask` and
//! `verify` joining one. Android and the web: tests/e2e/session_devices.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze_e2e::fake_llm::{FakeLlm, Wire, call};
use trailblaze_e2e::{CANARY, Fixture, text};

/// A demo workspace (its password the canary, a `spin` tool that never returns) and a private
/// sessions folder; every session in it is stopped when dropped.
struct Sessions {
    f: Fixture,
    dir: tempfile::TempDir,
}

impl Sessions {
    fn new() -> Sessions {
        Sessions {
            f: super::mcp::demo(),
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn folder(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    /// `trailblaze ARGS`, with this workspace and sessions folder.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = super::mcp::cli(&self.f);
        c.env("TRAILBLAZE_SESSIONS_DIR", self.folder())
            .env_remove("TRAILBLAZE_SESSION")
            .env_remove("TRAILBLAZE_DEVICE")
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("trailblaze runs")
    }

    /// `trailblaze ARGS`, which must succeed: its stdout and stderr.
    fn ok(&self, args: &[&str]) -> (String, String) {
        let o = self.run(args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "`{}` failed:\n{out}\n{err}", args.join(" "));
        (out, err)
    }

    fn start(&self, more: &[&str]) -> String {
        let mut args = vec!["session", "start"];
        args.extend(more);
        self.ok(&args).0.trim().to_string()
    }

    fn info(&self, name: &str) -> Value {
        serde_json::from_str(&self.ok(&["session", "info", name, "--json"]).0).expect("info is JSON")
    }

    fn pid(&self, name: &str) -> i32 {
        self.info(name)["pid"].as_i64().expect("a pid") as i32
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        let _ = self.run(&["session", "stop", "--all"]);
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 sends nothing.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
}

/// Waits (up to 15 s) for `pid` to be gone.
fn gone(pid: i32) -> bool {
    let end = Instant::now() + Duration::from_secs(15);
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn files_of(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn three_processes_record_one_session_that_saves_checks_and_replays_green() {
    let s = Sessions::new();
    let name = s.start(&[]);
    assert_eq!(name, "sim-1", "the default name is the device's kind and a number");
    let (_, said) = s.ok(&[
        "tool",
        "type",
        "ref=c422",
        "text=jane@example.com",
        "--step",
        "Sign in as Jane",
    ]);
    assert!(
        said.contains("in session `sim-1`"),
        "joining the only session is said: {said}"
    );
    // The snapshot between the calls sees what they did: the same device, not a fresh one.
    let (snap, _) = s.ok(&["snapshot"]);
    assert!(snap.contains("\"jane@example.com\""), "{snap}");
    // Control: a fresh device shows an empty form.
    let (fresh, said) = s.ok(&["snapshot", "--session", "none"]);
    assert!(
        !fresh.contains("jane@example.com") && !said.contains("in session"),
        "{fresh}"
    );
    s.ok(&[
        "tool",
        "type",
        "ref=c602",
        "text={{secret:DEMO_PASSWORD}}",
        "-s",
        "Sign in as Jane",
        "--session",
        "sim-1",
    ]);
    let (out, err) = s.ok(&["tool", "tap", "ref=d803", "--step", "Open the inbox", "--json"]);
    let v: Value = serde_json::from_str(&out).expect("--json is JSON");
    assert_eq!(v["session"], "sim-1", "{err}");
    let (snap, _) = s.ok(&["snapshot", "--session", "sim-1"]);
    assert!(
        snap.contains("\"Inbox\""),
        "the secret reached the device and signed in: {snap}"
    );
    let info = s.info("sim-1");
    assert_eq!(info["steps"], 2, "two step texts: two steps ({info})");
    assert_eq!(info["trailmap"], "demo");

    let path = s.f.map_dir().join("trails/jane.trail.yaml");
    s.ok(&["session", "save", "sim-1", path.to_str().expect("utf-8")]);
    let trail = std::fs::read_to_string(&path).expect("saved");
    assert!(
        trail.contains("- step: Sign in as Jane") && trail.matches("inputText").count() == 2,
        "the two calls given the same text form one step:\n{trail}"
    );
    assert!(trail.contains("- step: Open the inbox") && trail.contains("{{secret:DEMO_PASSWORD}}"));
    assert!(!trail.contains(CANARY), "{trail}");
    let (out, _) = s.ok(&["check", path.to_str().expect("utf-8")]);
    assert!(out.contains("0 finding(s)"), "{out}");
    let (out, _) = s.ok(&["run", path.to_str().expect("utf-8")]);
    assert!(out.contains("1 passed, 0 failed"), "{out}");

    // Stopped: no process, no socket or description left, the trace written in its folder.
    let pid = s.pid("sim-1");
    let folder = PathBuf::from(info["folder"].as_str().expect("a folder"));
    s.ok(&["session", "stop", "sim-1"]);
    assert!(!alive(pid), "the session's process is gone once stop returns");
    assert!(files_of(&s.folder()).is_empty(), "{:?}", files_of(&s.folder()));
    assert!(folder.join("trace.json").is_file(), "{:?}", files_of(&folder));
}

#[test]
fn two_sessions_at_once_never_mix_and_an_unnamed_command_joins_neither() {
    let s = Sessions::new();
    s.start(&["--name", "a"]);
    s.start(&["--name", "b"]);
    s.ok(&["tool", "type", "ref=c422", "text=one@example.com", "--session", "a"]);
    s.ok(&["tool", "type", "ref=c422", "text=two@example.com", "--session", "b"]);
    let (a, _) = s.ok(&["snapshot", "--session", "a"]);
    let (b, _) = s.ok(&["snapshot", "--session", "b"]);
    assert!(a.contains("one@example.com") && !a.contains("two@example.com"), "{a}");
    assert!(b.contains("two@example.com") && !b.contains("one@example.com"), "{b}");
    // TRAILBLAZE_SESSION names one as --session does.
    let o = s
        .cmd(&["snapshot"])
        .env("TRAILBLAZE_SESSION", "b")
        .output()
        .expect("runs");
    assert!(text(&o).0.contains("two@example.com"));
    // Two running: a command naming none uses a fresh device, and says why.
    let (fresh, said) = s.ok(&["snapshot"]);
    assert!(
        !fresh.contains("@example.com") && said.contains("2 sessions are running"),
        "{said}"
    );
    let list: Value = serde_json::from_str(&s.ok(&["session", "list", "--json"]).0).expect("JSON");
    let names: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    // A name taken is refused; an unknown one is a usage error naming the listing.
    let o = s.run(&["session", "start", "--name", "a"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("already running"));
    let o = s.run(&["snapshot", "--session", "c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no session named `c`"), "{}", text(&o).1);
    // --device picks a fresh device even with one session left.
    s.ok(&["session", "stop", "b"]);
    let (fresh, said) = s.ok(&["snapshot", "--device", "sim"]);
    assert!(
        !fresh.contains("@example.com") && !said.contains("in session"),
        "{said}"
    );
    let (joined, _) = s.ok(&["snapshot"]);
    assert!(joined.contains("one@example.com"), "{joined}");
}

#[test]
fn a_step_text_without_a_session_is_refused() {
    let s = Sessions::new();
    let o = s.run(&["tool", "tap", "ref=d803", "--step", "Sign in"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("--step files a call under a step of a session"),
        "{}",
        text(&o).1
    );
    // Control: without --step the same call runs on a fresh device.
    s.ok(&["tool", "tap", "ref=d803"]);
}

/// Whether this test process may change uids and owners (root, as in CI's container).
fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn another_users_folder_is_refused_and_another_uid_cannot_reach_the_socket() {
    if !root() {
        eprintln!("skipped: changing owners and uids needs root");
        return;
    }
    let s = Sessions::new();
    // A sessions folder owned by another user: nothing is started in it, nothing joined from it.
    let theirs = s.dir.path().join("theirs");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
    for args in [
        &["session", "start"][..],
        &["snapshot", "--session", "x"],
        &["session", "list"],
    ] {
        let o = s
            .cmd(args)
            .env("TRAILBLAZE_SESSIONS_DIR", &theirs)
            .output()
            .expect("runs");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o).1.contains("owned by uid 65534, not by you"),
            "{args:?}: {}",
            text(&o).1
        );
    }
    // A command that names no session is not stopped by it: a fresh device, and a warning.
    let o = s
        .cmd(&["snapshot"])
        .env("TRAILBLAZE_SESSIONS_DIR", &theirs)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).1.contains("sessions are not looked for") && text(&o).0.contains("Sign in"));
    // Ours, running: the same connection from uid 65534 is refused, from us answered.
    s.start(&[]);
    let socket = s.folder().join("sim-1.sock");
    let connect = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n\
                   s.sendall(b'{\"op\":\"info\"}\\n')\nprint(s.makefile().readline())";
    let as_uid = |uid: Option<u32>| {
        let mut c = Command::new("python3");
        c.args(["-c", connect]).arg(&socket);
        if let Some(u) = uid {
            std::os::unix::process::CommandExt::uid(&mut c, u);
        }
        c.output().expect("python3 runs")
    };
    let theirs = as_uid(Some(65534));
    assert!(
        !theirs.status.success(),
        "uid 65534 reached the session: {}",
        text(&theirs).0
    );
    assert!(text(&theirs).1.contains("Permission denied"), "{}", text(&theirs).1);
    let ours = as_uid(None);
    assert!(text(&ours).0.contains("\"ok\":true"), "{}", text(&ours).1);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(s.folder()).expect("stat").permissions());
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn a_killed_session_fails_the_next_command_clearly_and_leaves_nothing_running() {
    let s = Sessions::new();
    s.start(&["--name", "k"]);
    let pid = s.pid("k");
    // A call under way when the process is killed ends with an error, not a hang.
    let spinning = s
        .cmd(&["tool", "spin", "--session", "k"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let end = Instant::now() + Duration::from_secs(15);
    while s.info("k")["busy"] != true && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: the session's own process, started by this test.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    let started = Instant::now();
    let o = spinning.wait_with_output().expect("ends");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call hung after the kill"
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("session `k`'s process ended before it answered"),
        "{}",
        text(&o).1
    );
    // The next command once the process is gone (the call above may end while the kernel is still
    // closing the dying process's socket, which would take one more connection).
    assert!(gone(pid));
    let o = s.run(&["tool", "tap", "ref=d803", "--session", "k"]);
    assert_eq!(o.status.code(), Some(2));
    let said = text(&o).1;
    assert!(
        said.contains("session `k` is not running: its process is gone") && said.contains("k.log"),
        "{said}"
    );
    // Listing forgets it (its log kept for reading why); nothing of it is left running.
    let (_, said) = s.ok(&["session", "list"]);
    assert!(said.contains("session `k` had ended"), "{said}");
    assert_eq!(files_of(&s.folder()), ["k.log"]);
}

#[test]
fn the_idle_timeout_and_a_signal_end_a_session_and_leave_nothing() {
    let s = Sessions::new();
    s.start(&["--name", "idle", "--idle", "1s"]);
    s.start(&["--name", "term"]);
    let (idle, term) = (s.pid("idle"), s.pid("term"));
    let folder = PathBuf::from(s.info("idle")["folder"].as_str().expect("a folder"));
    s.ok(&["tool", "tap", "ref=d803", "--session", "idle"]);
    assert!(gone(idle), "the idle session's process is still running");
    assert!(folder.join("trace.json").is_file(), "its trace is written as it ends");
    // Control: the other one, named in calls, is still there until it is signalled.
    assert!(alive(term));
    // SAFETY: the session's own process, started by this test.
    unsafe {
        libc::kill(term, libc::SIGTERM);
    }
    assert!(gone(term));
    assert!(files_of(&s.folder()).is_empty(), "{:?}", files_of(&s.folder()));
    let o = s.run(&["session", "start", "--idle", "0"]);
    assert_eq!(o.status.code(), Some(2), "an idle timeout of 0 is refused");
}

#[test]
fn secrets_and_keys_are_handed_over_never_in_the_processs_arguments_or_environment() {
    let s = Sessions::new();
    const KEY: &str = "sk-KEY-CANARY-5e1f";
    const TOKEN: &str = "TOKEN-CANARY-77ab";
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(call(
        "verdict",
        json!({ "holds": true, "explanation": "the form is shown" }),
    ))
    .push(call(
        "verdict",
        json!({ "holds": false, "explanation": "no inbox here" }),
    ))
    .push(call("answer", json!({ "value": "Sign in" })));
    let o = s
        .cmd(&["session", "start", "--llm-model", "fake-model"])
        .env("TRAILBLAZE_LLM_BASE_URL", fake.base_url())
        .env("TRAILBLAZE_LLM_API_KEY", KEY)
        .env("MY_SERVICE_TOKEN", TOKEN)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", text(&o).1);
    let pid = s.pid("sim-1");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    let (cmdline, environ) = (String::from_utf8_lossy(&cmdline), String::from_utf8_lossy(&environ));
    for v in [CANARY, KEY, TOKEN] {
        assert!(
            !cmdline.contains(v) && !environ.contains(v),
            "{v} is in the process's listing"
        );
    }
    // Control: what was read is this process's, and it holds the safe variables.
    assert!(
        environ.contains("TRAILBLAZE_SESSIONS_DIR=") && cmdline.contains("serve"),
        "{cmdline}"
    );
    // The key reached the session's LLM (verify and ask with it), the secret the device.
    let (out, _) = s.ok(&["verify", "the sign-in form is shown"]);
    assert!(out.contains("✓ holds: the form is shown"), "{out}");
    let o = s.run(&["verify", "the inbox shows"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).0.contains("✗ does not hold: no inbox here"));
    let (out, _) = s.ok(&["ask", "what does the button say?"]);
    assert_eq!(out.trim(), "Sign in");
    let sent = fake.requests();
    assert!(
        sent.iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}")))
    );
    s.ok(&["tool", "type", "ref=c602", "text={{secret:DEMO_PASSWORD}}"]);
    s.ok(&["tool", "type", "ref=c422", "text=jane@example.com"]);
    s.ok(&["tool", "tap", "ref=d803"]);
    assert!(s.ok(&["snapshot"]).0.contains("\"Inbox\""));
    // A verify that holds joins the recording as `assertWithAi`.
    let path = s.dir.path().join("v.trail.yaml");
    s.ok(&["session", "save", "sim-1", path.to_str().expect("utf-8")]);
    assert!(std::fs::read_to_string(&path).expect("saved").contains("assertWithAi"));
}

#[test]
fn a_session_without_an_llm_says_how_to_start_one() {
    let s = Sessions::new();
    s.start(&[]);
    let o = s.run(&["ask", "what is shown?"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("this session has no LLM"), "{}", text(&o).1);
}

#[test]
fn mcp_and_shell_join_a_running_session() {
    let s = Sessions::new();
    s.start(&[]);
    let mut base = s.cmd(&[]);
    base.env("TRAILBLAZE_SESSION", "sim-1");
    let bin = trailblaze_e2e::trailblaze_bin();
    let root = s.f.root();
    let args = [
        "stdio",
        bin.to_str().expect("utf-8"),
        "--trailmaps",
        root.to_str().expect("utf-8"),
        "mcp",
    ];
    let ops = json!([
        { "op": "list" },
        { "op": "call", "tool": "type", "args": { "ref": "c422", "text": "mcp@example.com" } },
        { "op": "call", "tool": "snapshot", "args": {} },
    ]);
    let (results, _) = super::mcp::drive(&args, &ops, &base);
    let listed: Vec<&str> = results[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(listed.contains(&"tap") && listed.contains(&"saveTrail"), "{listed:?}");
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert!(results[2]["text"].as_str().unwrap_or("").contains("mcp@example.com"));
    // The MCP client's call acted in the session: another process sees it.
    assert!(s.ok(&["snapshot"]).0.contains("mcp@example.com"));
    // The shell too: its lines go to the same device and recording.
    let mut shell = s
        .cmd(&["shell", "--session", "sim-1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    {
        use std::io::Write;
        let mut stdin = shell.stdin.take().expect("stdin");
        writeln!(stdin, "snapshot\ntap d803\nsteps\nquit").expect("written");
    }
    let o = shell.wait_with_output().expect("ends");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("mcp@example.com") && out.contains("Type 'mcp@example.com'"),
        "{out}"
    );
    assert!(out.contains("Tap 'Sign in'"), "{out}");
}
