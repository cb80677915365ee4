//! `run --watch` and `check --watch`, driven as a person would: the CLI keeps running; the test edits
//! files and reads which trails run (or are checked) again; Ctrl-C (SIGINT to the process) ends it
//! cleanly with exit 0.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use trailblaze_e2e::{Fixture, trailblaze_bin};

/// A `trailblaze` process whose stdout and stderr are read, line by line, into one transcript.
struct Running {
    child: Child,
    lines: Arc<(Mutex<Vec<String>>, Condvar)>,
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
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("trailblaze starts");
        let lines: Arc<(Mutex<Vec<String>>, Condvar)> = Arc::default();
        let pipes: [Box<dyn std::io::Read + Send>; 2] = [
            Box::new(child.stdout.take().expect("stdout")),
            Box::new(child.stderr.take().expect("stderr")),
        ];
        for pipe in pipes {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let (l, c) = &*lines;
                    l.lock().expect("lines").push(line);
                    c.notify_all();
                }
            });
        }
        Running { child, lines }
    }

    fn transcript(&self) -> String {
        self.lines.0.lock().expect("lines").join("\n")
    }

    /// Waits until `n` lines contain `text` (60 s at most); returns the transcript.
    fn wait_for(&self, text: &str, n: usize) -> String {
        let until = Instant::now() + Duration::from_secs(60);
        let (l, c) = &*self.lines;
        let mut lines = l.lock().expect("lines");
        while lines.iter().filter(|s| s.contains(text)).count() < n {
            let left = until.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no {n}× `{text}` within 60 s:\n{}", lines.join("\n"));
            lines = c.wait_timeout(lines, left).expect("lines").0;
        }
        lines.join("\n")
    }

    /// The transcript after the last line containing `marker`.
    fn since_last(&self, marker: &str) -> String {
        let t = self.transcript();
        t.rsplit_once(marker)
            .map(|(_, after)| after.to_string())
            .unwrap_or_default()
    }

    /// SIGINT, as Ctrl-C sends it; the exit code, within 20 s.
    fn interrupt(mut self) -> (Option<i32>, String) {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child; no memory is involved.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                // The reader threads drain the pipes once the process is gone.
                std::thread::sleep(Duration::from_millis(200));
                return (status.code(), self.transcript());
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("did not end on SIGINT:\n{}", self.transcript());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

#[test]
fn run_watch_reruns_what_a_save_touches_and_ends_on_sigint() {
    let f = fixture();
    let p = Running::start(&f, &["run", "--watch", "--jobs", "1", "--screenshots", "none"]);
    p.wait_for("watch: waiting for changes", 1);
    // The summary goes to stdout, read by another thread than stderr's lines: waited for on its own.
    let t = p.wait_for("3 passed, 0 failed", 1);
    assert!(
        t.contains("3 passed, 0 failed"),
        "the first round runs every trail:\n{t}"
    );

    // A trail edited: that trail alone runs again, with its new content.
    write(
        &f.map_dir().join("trails/b.trail.yaml"),
        &trail(
            "w/b",
            "w",
            "        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Nowhere } } }\n",
        ),
    );
    p.wait_for("watch: waiting for changes", 2);
    p.wait_for("0 passed, 1 failed", 1);
    let round = p.since_last("watch: round 2:");
    assert!(
        p.transcript()
            .contains("watch: round 2: w/trails/b.trail.yaml changed; 1 trail(s) to run again"),
        "{}",
        p.transcript()
    );
    assert!(round.contains("0 passed, 1 failed"), "the edit is what ran:\n{round}");
    assert!(
        !round.contains("a.trail.yaml") && !round.contains("c.trail.yaml"),
        "{round}"
    );

    // A tool edited: every trail of its trailmap runs again (the tool now fails), not the other's.
    write(
        &f.map_dir().join("tools/mark.ts"),
        &MARK.replace(
            "async () => ({ ok: true })",
            "async () => { throw new Error(\"mark broke\"); }",
        ),
    );
    p.wait_for("watch: waiting for changes", 3);
    p.wait_for("0 passed, 2 failed", 1);
    let round = p.since_last("watch: round 3:");
    assert!(
        p.transcript()
            .contains("watch: round 3: w/tools/mark.ts changed; 2 trail(s) to run again"),
        "{}",
        p.transcript()
    );
    assert!(round.contains("mark broke"), "the project reloaded the tool:\n{round}");
    assert!(round.contains("0 passed, 2 failed"), "{round}");
    assert!(
        !round.contains("c.trail.yaml"),
        "another trailmap's trail ran:\n{round}"
    );

    // Generated files (what `check` writes) wake nothing; the next real save does.
    write(&f.map_dir().join("tools/trailblaze-client.d.ts"), "// generated\n");
    write(
        &f.root().join("other/app.yaml"),
        &std::fs::read_to_string(f.map_dir().join("app.yaml")).expect("read"),
    );
    p.wait_for("watch: waiting for changes", 4);
    let t = p.transcript();
    assert!(
        t.contains("watch: round 4: other/app.yaml changed; 1 trail(s) to run again"),
        "{t}"
    );
    assert!(!t.contains("trailblaze-client.d.ts changed"), "{t}");

    let (code, t) = p.interrupt();
    assert_eq!(code, Some(0), "Ctrl-C ends the watch cleanly:\n{t}");
    assert!(t.trim_end().ends_with("watch: stopped"), "{t}");
}

#[test]
fn check_watch_reports_a_new_finding_then_its_fix() {
    let f = fixture();
    let p = Running::start(&f, &["check", "--watch"]);
    p.wait_for("watch: waiting for changes", 1);
    assert!(p.transcript().contains("checked 3 trail(s)"), "{}", p.transcript());

    let a = f.map_dir().join("trails/a.trail.yaml");
    write(&a, &trail("w/a", "w", "        - mark: { loud: true }\n"));
    p.wait_for("watch: waiting for changes", 2);
    // Findings go to stdout, read by another thread than stderr's lines: waited for on their own.
    let t = p.wait_for("a.trail.yaml:9:", 1);
    assert!(
        t.contains("a.trail.yaml:9:"),
        "the finding names the file and line:\n{t}"
    );
    assert!(t.contains("loud"), "{t}");
    assert!(p.since_last("watch: round 2:").contains("checked 1 trail(s)"), "{t}");

    write(&a, &trail("w/a", "w", "        - mark: {}\n"));
    p.wait_for("watch: waiting for changes", 3);
    let round = p.since_last("watch: round 3:");
    assert!(
        round.contains("checked 1 trail(s), 2 recorded call(s)") && round.contains(": 0 finding(s)"),
        "{round}"
    );

    let (code, t) = p.interrupt();
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("watch: stopped"), "{t}");
}
