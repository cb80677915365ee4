//! `merge` reads only what is inside each shard folder: every path-valued field of a shard's
//! report (a trail's log and storyboard, a step's screen), in every form that leaves the folder
//! (absolute, `..`, a symlink out), is refused with the shard and the field named, nothing written;
//! each beside a control that merges.

use std::path::{Path, PathBuf};

use super::*;
use crate::trail::report::{Outcome, StepReport, TrailReport};

/// What a file outside every shard holds: it must never reach a merged report nor a message.
const OUTSIDE_TEXT: &str = "CI_TOKEN=outside-the-shard-7f3a";

fn step(screen: Option<&str>) -> StepReport {
    StepReport {
        number: 0,
        kind: "step".into(),
        text: "Launch".into(),
        line: 1,
        outcome: Outcome::Passed,
        started_ms: 0.0,
        duration_ms: 1.0,
        attempts: 1,
        retried: Vec::new(),
        calls: Vec::new(),
        error: None,
        screen: screen.map(str::to_string),
        screen_size: None,
        agent: None,
        llm: None,
        page: None,
    }
}

fn trail(name: &str) -> TrailReport {
    TrailReport {
        file: format!("trails/{name}.trail.yaml"),
        id: Some(format!("demo/{name}")),
        title: None,
        outcome: Outcome::Passed,
        duration_ms: 1.0,
        steps: vec![step(Some("screens/aa.svg"))],
        error: None,
        log: Some(format!("{name}/log.jsonl")),
        written: None,
        device: Some("sim".into()),
        lost_devices: Vec::new(),
        storyboard: Some(format!("{name}/storyboard.gif")),
        trace: None,
        llm: None,
    }
}

/// A shard folder `dir` (shard `index` of 2) whose trail `name` has its files on disk.
fn shard(dir: &Path, index: usize, trails: Vec<TrailReport>) {
    for t in &trails {
        for rel in [t.log.as_deref(), t.storyboard.as_deref()].into_iter().flatten() {
            let path = dir.join(rel);
            if !rel.starts_with('/') && !rel.contains("..") {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, format!("{} of shard {index}", rel)).unwrap();
            }
        }
    }
    std::fs::create_dir_all(dir.join("screens")).unwrap();
    std::fs::write(dir.join("screens/aa.svg"), "<svg/>").unwrap();
    let report = RunReport {
        started_unix_ms: 1,
        duration_ms: 1.0,
        device: "sim".into(),
        shard: Some(Shard { index, total: 2 }),
        suite: Some("suite".into()),
        trails,
        llm: None,
    };
    std::fs::write(dir.join("report.json"), serde_json::to_string(&report).unwrap()).unwrap();
}

struct Setup {
    tmp: tempfile::TempDir,
}

impl Setup {
    /// Two shards, each with trail `sign-in` (the same session folder's name), and a file outside.
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("outside.txt"), OUTSIDE_TEXT).unwrap();
        shard(&tmp.path().join("shard-1"), 1, vec![trail("sign-in")]);
        shard(&tmp.path().join("shard-2"), 2, vec![trail("sign-in")]);
        Setup { tmp }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn dirs(&self) -> Vec<PathBuf> {
        vec![self.p("shard-1"), self.p("shard-2")]
    }
    /// Shard 2's report with `edit` applied to its trail.
    fn edit(&self, edit: impl FnOnce(&mut TrailReport)) {
        let path = self.p("shard-2/report.json");
        let mut r: RunReport = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut r.trails[0]);
        std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
    }
    /// Every file under the merged folder, concatenated.
    fn merged_text(&self, out: &Path) -> String {
        fn walk(dir: &Path, text: &mut String) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, text);
                } else {
                    text.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
                }
            }
        }
        let mut text = String::new();
        walk(out, &mut text);
        text
    }
}

#[test]
fn good_shards_merge_with_their_logs_storyboards_and_screens_each_in_its_place() {
    let s = Setup::new();
    let out = s.p("merged");
    let m = merge(&s.dirs(), &out).expect("merges");
    let t: Vec<&TrailReport> = m.report.trails.iter().collect();
    assert_eq!(t.len(), 2);
    // Shard 1's trail keeps its folder; shard 2's (the same name) moves under `shard-2/`, its log
    // and storyboard together.
    assert_eq!(t[0].log.as_deref(), Some("sign-in/log.jsonl"));
    assert_eq!(t[0].storyboard.as_deref(), Some("sign-in/storyboard.gif"));
    assert_eq!(t[1].log.as_deref(), Some("shard-2/sign-in/log.jsonl"));
    assert_eq!(t[1].storyboard.as_deref(), Some("shard-2/sign-in/storyboard.gif"));
    for (rel, text) in [
        ("sign-in/log.jsonl", "sign-in/log.jsonl of shard 1"),
        ("shard-2/sign-in/log.jsonl", "sign-in/log.jsonl of shard 2"),
        ("shard-2/sign-in/storyboard.gif", "sign-in/storyboard.gif of shard 2"),
        ("screens/aa.svg", "<svg/>"),
    ] {
        assert_eq!(std::fs::read_to_string(out.join(rel)).unwrap(), text, "{rel}");
    }
    // A file a shard names but does not have is not linked (nothing of that name is read).
    s.edit(|t| t.storyboard = Some("sign-in/none.gif".into()));
    let m = merge(&s.dirs(), &s.p("merged-2")).expect("merges");
    assert_eq!(m.report.trails[1].storyboard, None);
    // A symlink that stays inside the shard is followed.
    std::os::unix::fs::symlink("log.jsonl", s.p("shard-2/sign-in/alias.jsonl")).unwrap();
    s.edit(|t| t.log = Some("sign-in/alias.jsonl".into()));
    let m = merge(&s.dirs(), &s.p("merged-3")).expect("a link inside the shard");
    assert_eq!(m.report.trails[1].log.as_deref(), Some("shard-2/sign-in/alias.jsonl"));
}

/// Each path-valued field of a trail, set by `set`.
type Setter = fn(&mut TrailReport, String);

const FIELDS: [(&str, Setter); 3] = [
    ("trails[0].log", |t, p| t.log = Some(p)),
    ("trails[0].storyboard", |t, p| t.storyboard = Some(p)),
    ("trails[0].steps[0].screen", |t, p| t.steps[0].screen = Some(p)),
];

#[test]
fn every_path_field_leaving_the_shard_is_refused_naming_the_shard_and_the_field() {
    for (field, set) in FIELDS {
        for form in ["absolute", "dot-dot", "symlink", "symlinked folder"] {
            let s = Setup::new();
            let path = match form {
                "absolute" => s.p("outside.txt").display().to_string(),
                "dot-dot" => "sign-in/../../outside.txt".to_string(),
                "symlink" => {
                    std::os::unix::fs::symlink(s.p("outside.txt"), s.p("shard-2/sign-in/out.jsonl")).unwrap();
                    "sign-in/out.jsonl".to_string()
                }
                _ => {
                    std::os::unix::fs::symlink(s.tmp.path(), s.p("shard-2/up")).unwrap();
                    "up/outside.txt".to_string()
                }
            };
            s.edit(|t| set(t, path.clone()));
            let out = s.p("merged");
            let e = merge(&s.dirs(), &out).expect_err(&format!("{field} {form}"));
            let message = e.to_string();
            let want = format!(
                "{}: {field}: a path outside the shard folder",
                s.p("shard-2/report.json").display()
            );
            assert_eq!(message, want, "{form}");
            assert!(!message.contains(OUTSIDE_TEXT) && !message.contains(&path), "{message}");
            assert!(!out.exists(), "{field} {form}: a refused merge writes nothing");
            // Control: the same shards with the field as the run wrote it merge.
            s.edit(|t| *t = trail("sign-in"));
            let m = merge(&s.dirs(), &out).expect("the control merges");
            assert!(!s.merged_text(&out).contains(OUTSIDE_TEXT));
            assert_eq!(m.report.trails.len(), 2);
        }
    }
}

#[test]
fn names_no_run_writes_are_refused_before_anything_is_read() {
    // A scheme, a host by backslashes, a query: links that leave the merged report's folder.
    for bad in [
        "javascript:alert(1)",
        "http://example.com/x.svg",
        "\\\\example.com\\x.svg",
        "screens/a.svg?x",
        "a//b",
        "./a",
        "",
        "a/",
    ] {
        for (field, set) in FIELDS {
            let s = Setup::new();
            s.edit(|t| set(t, bad.to_string()));
            let e = merge(&s.dirs(), &s.p("merged")).expect_err(bad).to_string();
            assert!(e.contains(&format!("report.json: {field}: ")), "{bad}: {e}");
            assert!(
                e.contains("not a name a run writes") || e.contains("outside the shard folder"),
                "{bad}: {e}"
            );
        }
    }
}

#[test]
fn a_fifo_or_a_folder_named_as_a_log_is_no_file_to_copy() {
    let s = Setup::new();
    let fifo = s.p("shard-2/sign-in/fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|st| st.success()) {
        s.edit(|t| t.log = Some("sign-in/fifo.jsonl".into()));
        // On a thread: copying a FIFO would wait for a writer forever, and the test must fail, not hang.
        let (tx, rx) = std::sync::mpsc::channel();
        let (dirs, out) = (s.dirs(), s.p("merged"));
        std::thread::spawn(move || tx.send(merge(&dirs, &out).map(|_| ()).map_err(|e| e.to_string())));
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("merge returns")
            .expect_err("a FIFO");
        assert!(e.ends_with("trails[0].log: not a regular file"), "{e}");
    }
    s.edit(|t| t.log = Some("sign-in".into()));
    let e = merge(&s.dirs(), &s.p("merged")).expect_err("a folder").to_string();
    assert!(e.ends_with("trails[0].log: not a regular file"), "{e}");
}

#[test]
fn a_report_json_linked_from_outside_is_refused() {
    let s = Setup::new();
    let report = s.p("shard-2/report.json");
    std::fs::rename(&report, s.p("elsewhere.json")).unwrap();
    std::os::unix::fs::symlink(s.p("elsewhere.json"), &report).unwrap();
    let e = merge(&s.dirs(), &s.p("merged")).expect_err("linked out").to_string();
    assert_eq!(
        e,
        format!(
            "{}/report.json: a path outside the shard folder",
            s.p("shard-2").display()
        )
    );
    // Control: the same file in its place merges.
    std::fs::remove_file(&report).unwrap();
    std::fs::rename(s.p("elsewhere.json"), &report).unwrap();
    merge(&s.dirs(), &s.p("merged")).expect("merges");
}

#[test]
fn the_merged_folder_is_never_a_shard_folder_inside_one_or_around_one() {
    let s = Setup::new();
    for (out, how) in [
        (s.p("shard-2"), "is"),
        (s.p("shard-2/merged"), "is inside"),
        (s.p("shard-1/./x/../"), "is"),
        (s.tmp.path().to_path_buf(), "holds"),
    ] {
        let e = merge(&s.dirs(), &out).expect_err(&out.display().to_string());
        assert!(
            matches!(e, MergeError::Overlaps { how: h, .. } if h == how),
            "{out:?}: {e}"
        );
        assert!(e.to_string().contains("the shard folder"), "{e}");
    }
    // Through a symlink to a shard, too.
    std::os::unix::fs::symlink(s.p("shard-1"), s.p("alias")).unwrap();
    assert!(matches!(
        merge(&s.dirs(), &s.p("alias/merged")),
        Err(MergeError::Overlaps { how: "is inside", .. })
    ));
    // The shard is left as it was; a folder beside the shards is fine (control).
    assert_eq!(
        std::fs::read_to_string(s.p("shard-2/sign-in/log.jsonl")).unwrap(),
        "sign-in/log.jsonl of shard 2"
    );
    merge(&s.dirs(), &s.p("merged")).expect("beside the shards");
}
