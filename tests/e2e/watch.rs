//! `run --watch` and `check --watch`, driven as a person would: the CLI keeps running; the test edits
//! files and reads which trails run (or are checked) again; Ctrl-C (SIGINT to the process) ends it
//! cleanly with exit 0.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use trailblaze_e2e::{Fixture, trailblaze_bin};

/// How long a condition may take to come true: generous, for a loaded machine; a passing run
/// waits only as long as the condition takes.
const DEADLINE: Duration = Duration::from_secs(120);

/// One pipe's lines, read on a thread of its own, and whether the pipe has closed. Each stream is
/// read apart, so no test depends on the order two threads happen to see two pipes in.
#[derive(Clone, Default)]
struct Lines(Arc<(Mutex<Seen>, Condvar)>);

/// What a pipe's reader has read so far.
#[derive(Default)]
struct Seen {
    lines: Vec<String>,
    closed: bool,
}

impl Lines {
    fn read(pipe: impl std::io::Read + Send + 'static) -> Lines {
        let lines = Lines::default();
        let shared = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                shared.update(|r| r.lines.push(line));
            }
            shared.update(|r| r.closed = true);
        });
        lines
    }

    fn update(&self, f: impl FnOnce(&mut Seen)) {
        let (m, c) = &*self.0;
        f(&mut m.lock().expect("lines"));
        c.notify_all();
    }

    /// Waits until `done` holds of the lines (or the pipe closes, if `closed`), within the deadline;
    /// returns the lines then.
    fn wait(&self, what: &str, closed: bool, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        let until = Instant::now() + DEADLINE;
        let (m, c) = &*self.0;
        let mut state = m.lock().expect("lines");
        loop {
            if (closed && state.closed) || (!closed && done(&state.lines)) {
                return state.lines.clone();
            }
            let left = until.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero() && (closed || !state.closed),
                "no {what} within {} s (pipe closed: {}):\n{}",
                DEADLINE.as_secs(),
                state.closed,
                state.lines.join("\n")
            );
            state = c.wait_timeout(state, left).expect("lines").0;
        }
    }

    /// Waits until `n` lines contain `text`; the lines then.
    fn wait_for(&self, text: &str, n: usize) -> Vec<String> {
        self.wait(&format!("{n}× `{text}`"), false, |l| {
            l.iter().filter(|s| s.contains(text)).count() >= n
        })
    }

    /// Every line, once the pipe has closed.
    fn all(&self) -> Vec<String> {
        self.wait("end of the pipe", true, |_| false)
    }

    fn now(&self) -> Vec<String> {
        self.0.0.lock().expect("lines").lines.clone()
    }
}

/// A `trailblaze` process whose stdout and stderr are read apart, line by line.
struct Running {
    child: Child,
    out: Lines,
    err: Lines,
}

impl Running {
    fn start(f: &Fixture, args: &[&str]) -> Running {
        let mut child = Command::new(trailblaze_bin())
            .args(args)
            .arg("--trailmaps")
            .arg(f.root())
            .env("TRAILBLAZE_CACHE_DIR", f.cache())
            .env("TRAILBLAZE_OUT", f.out())
            .env("NO_COLOR", "1")
            .env_remove("TRAILBLAZE_TRAILMAP")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("trailblaze starts");
        let out = Lines::read(child.stdout.take().expect("stdout"));
        let err = Lines::read(child.stderr.take().expect("stderr"));
        Running { child, out, err }
    }

    /// Both streams so far, for a failure message.
    fn both(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            self.out.now().join("\n"),
            self.err.now().join("\n")
        )
    }

    /// Waits for round `n` to be over: `n` times `watch: waiting` on stderr and, when `done_out` is
    /// given, `n` lines holding it on stdout (what the round prints last there).
    fn round_over(&self, n: usize, done_out: Option<&str>) {
        self.err.wait_for("watch: waiting for changes", n);
        if let Some(text) = done_out {
            self.out.wait_for(text, n);
        }
    }

    /// SIGINT, as Ctrl-C sends it; the exit code and each stream whole, once the process ended.
    fn interrupt(mut self) -> (Option<i32>, Vec<String>, Vec<String>) {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child; no memory is involved.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let until = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < until, "did not end on SIGINT:\n{}", self.both());
            std::thread::sleep(Duration::from_millis(20));
        };
        // The process is gone: each pipe closes once its last line is read.
        (status.code(), self.out.all(), self.err.all())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines from `from` on, as one text.
fn since(lines: &[String], from: usize) -> String {
    lines.get(from..).unwrap_or_default().join("\n")
}

const MARK: &str = r#"
import { trailblaze } from "@trailblaze/scripting";

/** Says it ran. */
export const mark = trailblaze.tool<{}, { ok: boolean }>(async () => ({ ok: true }));
"#;

fn trail(id: &str, target: &str, calls: &str) -> String {
    format!(
        "config:\n  id: {id}\n  target: {target}\ntrail:\n  - step: Go\n    recording:\n      tools:\n        - launchApp: {{ appId: com.example.demo }}\n{calls}"
    )
}

/// Two trailmaps: `w` (a tool `mark`, trails `a` calling it and `b` not) and `other` (trail `c`).
fn fixture() -> Fixture {
    let f = Fixture::new("w");
    f.tool("mark", MARK);
    f.file("trails/a.trail.yaml", &trail("w/a", "w", "        - mark: {}\n"));
    f.file("trails/b.trail.yaml", &trail("w/b", "w", ""));
    let other = f.root().join("other");
    std::fs::create_dir_all(other.join("trails")).expect("mkdir");
    std::fs::write(other.join("trailmap.yaml"), "id: other\n").expect("write");
    std::fs::copy(f.map_dir().join("app.yaml"), other.join("app.yaml")).expect("copy");
    std::fs::write(other.join("trails/c.trail.yaml"), trail("other/c", "other", "")).expect("write");
    f
}

/// Saves `text` as many editors do: into a scratch file beside it (which the watch ignores), then
/// renamed over it, so no round can see the file half written however slow the machine.
fn write(path: &Path, text: &str) {
    let name = path.file_name().expect("a file").to_string_lossy();
    let scratch = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&scratch, text).expect("write");
    std::fs::rename(&scratch, path).expect("rename");
}

/// What a round of `run` prints last on stdout: the report's paths end with junit.xml's.
const RUN_DONE: &str = "junit.xml";

#[test]
fn run_watch_reruns_what_a_save_touches_and_ends_on_sigint() {
    let f = fixture();
    let p = Running::start(&f, &["run", "--watch", "--jobs", "1", "--screenshots", "none"]);
    p.round_over(1, Some(RUN_DONE));
    let out = p.out.now();
    assert!(
        out.iter().any(|l| l == "3 passed, 0 failed"),
        "the first round runs every trail:\n{}",
        p.both()
    );

    // A trail edited: that trail alone runs again, with its new content.
    let (out_from, err_from) = (p.out.now().len(), p.err.now().len());
    write(
        &f.map_dir().join("trails/b.trail.yaml"),
        &trail(
            "w/b",
            "w",
            "        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Nowhere } } }\n",
        ),
    );
    p.round_over(2, Some(RUN_DONE));
    let (round, said) = (since(&p.out.now(), out_from), since(&p.err.now(), err_from));
    assert!(
        said.contains("watch: round 2: w/trails/b.trail.yaml changed; 1 trail(s) to run again"),
        "{said}"
    );
    assert!(round.contains("0 passed, 1 failed"), "the edit is what ran:\n{round}");
    assert!(
        round.contains("b.trail.yaml") && !round.contains("a.trail.yaml") && !round.contains("c.trail.yaml"),
        "{round}"
    );

    // A tool edited: every trail of its trailmap runs again (the tool now fails), not the other's.
    let (out_from, err_from) = (p.out.now().len(), p.err.now().len());
    write(
        &f.map_dir().join("tools/mark.ts"),
        &MARK.replace(
            "async () => ({ ok: true })",
            "async () => { throw new Error(\"mark broke\"); }",
        ),
    );
    p.round_over(3, Some(RUN_DONE));
    let (round, said) = (since(&p.out.now(), out_from), since(&p.err.now(), err_from));
    assert!(
        said.contains("watch: round 3: w/tools/mark.ts changed; 2 trail(s) to run again"),
        "{said}"
    );
    assert!(round.contains("mark broke"), "the project reloaded the tool:\n{round}");
    assert!(round.contains("0 passed, 2 failed"), "{round}");
    assert!(
        !round.contains("c.trail.yaml"),
        "another trailmap's trail ran:\n{round}"
    );

    // Generated files (what `check` writes) wake nothing; the next real save does.
    let (out_from, err_from) = (p.out.now().len(), p.err.now().len());
    write(&f.map_dir().join("tools/trailblaze-client.d.ts"), "// generated\n");
    write(
        &f.root().join("other/app.yaml"),
        &std::fs::read_to_string(f.map_dir().join("app.yaml")).expect("read"),
    );
    p.round_over(4, Some(RUN_DONE));
    let (round, said) = (since(&p.out.now(), out_from), since(&p.err.now(), err_from));
    assert!(
        said.contains("watch: round 4: other/app.yaml changed; 1 trail(s) to run again"),
        "{said}"
    );
    assert!(!said.contains("trailblaze-client.d.ts"), "{said}");
    assert!(
        round.contains("c.trail.yaml") && round.contains("1 passed, 0 failed"),
        "{round}"
    );

    let (code, out, err) = p.interrupt();
    let shown = format!("--- stdout ---\n{}\n--- stderr ---\n{}", out.join("\n"), err.join("\n"));
    assert_eq!(code, Some(0), "Ctrl-C ends the watch cleanly:\n{shown}");
    assert_eq!(err.last().map(String::as_str), Some("watch: stopped"), "{shown}");
    assert_eq!(
        err.iter().filter(|l| l.starts_with("watch: round")).count(),
        3,
        "{shown}"
    );
}

#[test]
fn check_watch_reports_a_new_finding_then_its_fix() {
    let f = fixture();
    let p = Running::start(&f, &["check", "--watch"]);
    // What a round of `check` prints last on stdout: its summary.
    let done = "finding(s)";
    p.round_over(1, Some(done));
    assert!(since(&p.out.now(), 0).contains("checked 3 trail(s)"), "{}", p.both());

    let a = f.map_dir().join("trails/a.trail.yaml");
    let out_from = p.out.now().len();
    write(&a, &trail("w/a", "w", "        - mark: { loud: true }\n"));
    p.round_over(2, Some(done));
    let round = since(&p.out.now(), out_from);
    assert!(
        round.contains("a.trail.yaml:9:"),
        "the finding names the file and line:\n{round}"
    );
    assert!(
        round.contains("loud") && round.contains("checked 1 trail(s)"),
        "{round}"
    );

    let out_from = p.out.now().len();
    write(&a, &trail("w/a", "w", "        - mark: {}\n"));
    p.round_over(3, Some(done));
    let round = since(&p.out.now(), out_from);
    assert!(
        round.contains("checked 1 trail(s), 2 recorded call(s)") && round.contains(": 0 finding(s)"),
        "{round}"
    );

    let (code, out, err) = p.interrupt();
    assert_eq!(code, Some(0), "{out:?}{err:?}");
    assert_eq!(err.last().map(String::as_str), Some("watch: stopped"), "{err:?}");
}
