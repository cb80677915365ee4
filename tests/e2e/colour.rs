//! Colour only on a terminal: a warning, a trace line and a diagnostic carry no escape sequence when
//! the output is a pipe, nor on a terminal with `TERM=dumb` or `NO_COLOR`; on a terminal (a real
//! pseudo-terminal here) they are coloured, which proves the checks could see it.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use trailblaze_e2e::{Fixture, text, trailblaze_bin};

/// A trailmap whose `target.tools` names a tool it does not have (a warning on stderr) and a trail
/// with a wrong argument (a finding, drawn as a diagnostic).
fn fixture() -> Fixture {
    let f = Fixture::new("c");
    f.file("trailmap.yaml", "id: c\ntarget:\n  tools: [nope]\n");
    f.file(
        "trails/bad.trail.yaml",
        "config:\n  target: c\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { txt: a }\n",
    );
    f
}

/// Each case: the command, `TRAILBLAZE_LOG` for it, and what it must print. `check` prints a
/// warning and a diagnostic; a tool call with traces on prints trace lines with fields, whose names
/// the formatter styles unless told not to.
const CASES: [(&[&str], Option<&str>, &[&str]); 2] = [
    (
        &["check"],
        None,
        &["warning", "names `nope`", "bad.trail.yaml:7:", "error"],
    ),
    (
        &["tool", "launchApp", "appId=com.example.demo"],
        Some("trailblaze=debug"),
        &["debug", "tool call", "tool=", "ok="],
    ),
];

fn command(f: &Fixture, args: &[&str], log: Option<&str>, term: &str, no_color: bool) -> Command {
    let mut c = Command::new(trailblaze_bin());
    c.current_dir(f.dir.path())
        .args(args)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_OUT", f.out())
        .env("TERM", term)
        .env_remove("NO_COLOR")
        .env_remove("TRAILBLAZE_LOG")
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env_remove("TRAILBLAZE_TRAILMAP")
        .env_remove("TRAILBLAZE_DEVICE")
        .stdin(Stdio::null());
    if let Some(log) = log {
        c.env("TRAILBLAZE_LOG", log);
    }
    if no_color {
        c.env("NO_COLOR", "1");
    }
    c
}

/// What a command printed with its stdout and stderr on one new pseudo-terminal.
fn on_terminal(mut cmd: Command) -> String {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the ints given; the name, termios and window
    // size may be null.
    let made = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    cmd.stdout(Stdio::from(slave.try_clone().expect("dup")))
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().expect("trailblaze starts");
    // The command holds the parent's copies of the terminal's other end: closed now, so reading
    // ends (EIO) once the child's are closed.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    });
    child.wait().expect("wait");
    reader.join().expect("reader")
}

/// What a command printed to its two pipes.
fn on_pipes(mut cmd: Command) -> String {
    let o = cmd.output().expect("trailblaze runs");
    let (out, err) = text(&o);
    format!("{out}{err}")
}

fn has_escape(s: &str) -> bool {
    s.contains('\u{1b}')
}

#[test]
fn colour_only_on_a_terminal_and_term_dumb_and_no_color_turn_it_off() {
    let f = fixture();
    for (args, log, shown) in CASES {
        let all_shown = |s: &str| shown.iter().all(|w| s.contains(w));
        let piped = on_pipes(command(&f, args, log, "xterm-256color", false));
        assert!(!has_escape(&piped), "{args:?}: escapes on a pipe:\n{piped:?}");
        assert!(all_shown(&piped), "{args:?} printed:\n{piped}");
        let dumb = on_terminal(command(&f, args, log, "dumb", false));
        assert!(all_shown(&dumb) && !has_escape(&dumb), "{args:?}, TERM=dumb:\n{dumb:?}");
        let no_color = on_terminal(command(&f, args, log, "xterm-256color", true));
        assert!(
            all_shown(&no_color) && !has_escape(&no_color),
            "{args:?}, NO_COLOR:\n{no_color:?}"
        );
        // Control: the same command on a terminal is coloured, so the checks above can see colour.
        let coloured = on_terminal(command(&f, args, log, "xterm-256color", false));
        assert!(
            has_escape(&coloured),
            "{args:?}: no colour on a terminal:\n{coloured:?}"
        );
    }
}
