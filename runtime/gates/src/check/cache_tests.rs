//! The check cache: a warm check reports exactly what a cold one does, and reuses a result only while
//! the trail and the types of the tools it calls are unchanged.

use std::path::{Path, PathBuf};

use crate::check::{CheckOptions, CheckReport, check_native, check_native_with};
use trailblaze_core::project::{Project, ProjectOptions};

/// A scripted tool `name` taking `{ v: <ty> }`; `body` varies what it does, not its type.
fn tool(name: &str, ty: &str, body: &str) -> String {
    format!(
        "import {{ trailblaze }} from \"@trailblaze/scripting\";\n/** Probe. */\n\
         export const {name} = trailblaze.tool<{{ v: {ty} }}, {{ s: string }}>(async (input, ctx) => {{\n  \
         {body}\n  return {{ s: String(input.v) }};\n}});\n"
    )
}

fn trail(target: &str, calls: &[&str]) -> String {
    let mut text = format!("config:\n  target: {target}\ntrail:\n  - step: Do it\n    recording:\n      tools:\n");
    for c in calls {
        text.push_str(&format!("        - {c}\n"));
    }
    text
}

/// Trailmap `m` with tools `probe` (`v: number`) and `other` (`v: string`), and 20 trails: two call
/// `probe`, one `other`, one a tool `later` that does not exist yet, one has a type error, one a
/// syntax error, one targets an app id, the rest call built-ins only.
struct Fixture {
    dir: tempfile::TempDir,
    trails: Vec<PathBuf>,
}

const PROBE_CALLERS: [&str; 2] = ["probe1", "probe2"];

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let map = dir.path().join("trailmaps/m");
        std::fs::create_dir_all(map.join("tools")).expect("mkdir");
        std::fs::create_dir_all(map.join("trails")).expect("mkdir");
        std::fs::write(map.join("trailmap.yaml"), "id: m\n").expect("write");
        let f = Fixture {
            dir,
            trails: Vec::new(),
        };
        f.write_tool("probe", "number", "");
        f.write_tool("other", "string", "");
        let mut f = f;
        let mut add = |name: &str, text: String| {
            let file = map.join(format!("trails/{name}.trail.yaml"));
            std::fs::write(&file, text).expect("write");
            f.trails.push(file);
        };
        add(
            "probe1",
            trail("m", &["probe: { v: 1 }", "pressKey: { keyCode: BACK }"]),
        );
        add("probe2", trail("m", &["probe: { v: 2 }"]));
        add("other", trail("m", &["other: { v: 'x' }"]));
        add("later", trail("m", &["later: { v: 1 }"]));
        add("wrong", trail("m", &["pressKey: { keyCode: SPACEBAR }"]));
        add(
            "syntax",
            "config:\n  target: m\ntrail:\n  - step: [unclosed\n".to_string(),
        );
        add("app", trail("com.example.app", &["pressKey: { keyCode: BACK }"]));
        for i in 0..13 {
            add(&format!("plain{i:02}"), trail("m", &["pressKey: { keyCode: ENTER }"]));
        }
        f
    }

    fn write_tool(&self, name: &str, ty: &str, body: &str) {
        let file = self.dir.path().join(format!("trailmaps/m/tools/{name}.ts"));
        std::fs::write(file, tool(name, ty, body)).expect("write tool");
    }

    fn trail(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("trailmaps/m/trails/{name}.trail.yaml"))
    }

    /// A fresh project, as a new `trailblaze check` process opens it: tools are read again.
    fn project(&self) -> Project {
        let opts = ProjectOptions {
            cache_dir: Some(self.dir.path().join("cache")),
            ..ProjectOptions::default()
        };
        Project::open(&self.dir.path().join("trailmaps"), opts).expect("project opens")
    }

    fn check(&self) -> CheckReport {
        check_native(&self.project(), &self.trails)
    }

    fn uncached(&self) -> CheckReport {
        check_native_with(&self.project(), &self.trails, &CheckOptions { cache: false })
    }

    fn cache_file(&self) -> PathBuf {
        let dir = self.dir.path().join("cache/check");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("the check cache folder")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "cache"))
            .collect();
        assert_eq!(files.len(), 1, "one cache file per trailmaps folder: {files:?}");
        files.remove(0)
    }
}

/// Everything a check reports (its stats aside).
fn assert_same(a: &CheckReport, b: &CheckReport) {
    assert_eq!(
        (a.trails, a.calls, a.tool_files, &a.findings, &a.notices),
        (b.trails, b.calls, b.tool_files, &b.findings, &b.notices)
    );
}

fn findings_in(r: &CheckReport, file: &Path) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.file == file)
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn a_warm_check_reports_exactly_what_a_cold_one_did() {
    let f = Fixture::new();
    let cold = f.check();
    assert_eq!((cold.stats.checked, cold.stats.cached), (20, 0));
    // The report has something of every kind to get wrong: a type finding, an unknown tool, a
    // syntax error with its position, a notice.
    assert_eq!(findings_in(&cold, &f.trail("wrong")).len(), 1, "{:#?}", cold.findings);
    assert!(findings_in(&cold, &f.trail("later"))[0].contains("unknown tool `later`"));
    let syntax = findings_in(&cold, &f.trail("syntax"));
    assert!(
        syntax.len() == 1
            && syntax[0].starts_with(&format!(
                "{}:4:20: while parsing a flow sequence",
                f.trail("syntax").display()
            )),
        "{syntax:?}"
    );
    assert!(
        cold.notices.iter().any(|n| n.contains("com.example.app")),
        "{:?}",
        cold.notices
    );
    assert_eq!(
        cold.calls, 19,
        "the syntax error's trail has no calls; the app's is not checked"
    );

    let warm = f.check();
    assert_eq!((warm.stats.checked, warm.stats.cached), (0, 20), "every result reused");
    assert_same(&warm, &cold);
    // And both are what a check without the cache reports.
    let uncached = f.uncached();
    assert_eq!((uncached.stats.checked, uncached.stats.cached), (20, 0));
    assert_same(&uncached, &cold);
}

#[test]
fn an_edited_trail_is_checked_again() {
    let f = Fixture::new();
    let cold = f.check();
    assert!(findings_in(&cold, &f.trail("plain03")).is_empty());
    std::fs::write(f.trail("plain03"), trail("m", &["pressKey: { keyCode: SPACEBAR }"])).expect("edit");
    let after = f.check();
    assert_eq!(
        (after.stats.checked, after.stats.cached),
        (1, 19),
        "only the edited trail"
    );
    assert_eq!(
        findings_in(&after, &f.trail("plain03")).len(),
        1,
        "its new error is found"
    );
    assert_same(&after, &f.uncached());
    // Edited back: its first result is not resurrected from a stale line, it is checked again.
    std::fs::write(f.trail("plain03"), trail("m", &["pressKey: { keyCode: ENTER }"])).expect("edit");
    let back = f.check();
    assert_eq!(back.stats.checked, 1);
    assert_same(&back, &cold);
}

#[test]
fn a_changed_tool_type_rechecks_exactly_the_trails_that_call_it() {
    let f = Fixture::new();
    let cold = f.check();
    assert!(PROBE_CALLERS.iter().all(|t| findings_in(&cold, &f.trail(t)).is_empty()));

    // Control: a change to the tool's body, not its type, re-checks nothing.
    f.write_tool("probe", "number", "console.log(\"body only\");");
    let body = f.check();
    assert_eq!((body.stats.checked, body.stats.cached), (0, 20));

    // `v: number` becomes `v: string`: its two callers, and only they, are checked again, and now
    // their `v: 1` is a finding.
    f.write_tool("probe", "string", "");
    let changed = f.check();
    assert_eq!((changed.stats.checked, changed.stats.cached), (2, 18));
    for t in PROBE_CALLERS {
        let found = findings_in(&changed, &f.trail(t));
        assert!(found.len() == 1 && found[0].contains("probe"), "{t}: {found:?}");
    }
    assert!(findings_in(&changed, &f.trail("other")).is_empty());
    assert_same(&changed, &f.uncached());

    // A tool that appears: the trail that called it while it was unknown is checked again (and
    // only it: its "did you mean" named the old tools), and its finding is gone.
    f.write_tool("later", "number", "");
    let appeared = f.check();
    assert_eq!((appeared.stats.checked, appeared.stats.cached), (1, 19));
    assert!(
        findings_in(&appeared, &f.trail("later")).is_empty(),
        "{:#?}",
        appeared.findings
    );
    assert_same(&appeared, &f.uncached());
}

#[test]
fn a_corrupt_or_truncated_cache_file_is_ignored() {
    let f = Fixture::new();
    let cold = f.check();
    let file = f.cache_file();
    let good = std::fs::read_to_string(&file).expect("cache");
    // Control: the intact file serves every result.
    assert_eq!(f.check().stats.cached, 20);

    // Cut in the middle of a line: the lines before it still serve, the rest are checked again.
    // (Cut by lines, not at half the bytes: the lines' order and lengths vary from run to run.)
    let lines: Vec<&str> = good.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 21, "a header and a line per trail");
    let whole: usize = lines[..11].iter().map(|l| l.len()).sum();
    // Bytes, not text: the middle of a line may fall inside a character.
    std::fs::write(&file, &good.as_bytes()[..whole + lines[11].len() / 2]).expect("truncate");
    let cut = f.check();
    assert_eq!((cut.stats.checked, cut.stats.cached), (10, 10));
    assert_same(&cut, &cold);
    assert_eq!(f.check().stats.cached, 20, "the next check rewrote it whole");

    // A result edited in place (still valid JSON): its checksum fails, so it is checked again.
    let text = std::fs::read_to_string(&file).expect("cache");
    let edited = text.replacen("\"calls\":1,", "\"calls\":7,", 1);
    assert_ne!(edited, text, "the edit applies");
    std::fs::write(&file, edited).expect("edit");
    let fixed = f.check();
    assert_eq!((fixed.stats.checked, fixed.stats.cached), (1, 19));
    assert_same(&fixed, &cold);

    // Bytes that are no text at all, and an empty file: ignored, every trail checked.
    for junk in [&[0xff, 0xfe, 0x00, 0x9c][..], &[][..]] {
        std::fs::write(&file, junk).expect("junk");
        let r = f.check();
        assert_eq!((r.stats.checked, r.stats.cached), (20, 0));
        assert_same(&r, &cold);
    }

    // Another build's or workspace's header: ignored too.
    let text = std::fs::read_to_string(&file).expect("cache");
    let (_, body) = text.split_once('\n').expect("a header line");
    std::fs::write(&file, format!("trailblaze-check-cache 1 0000\n{body}")).expect("header");
    assert_eq!(f.check().stats.cached, 0);
}

#[test]
fn concurrent_checks_agree_and_leave_a_cache_that_reads() {
    let f = Fixture::new();
    let reference = f.uncached();
    let project = f.project();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (project, f) = (&project, &f);
                s.spawn(move || {
                    // Half the checks see every trail, half only some: their writes race.
                    let files = if i % 2 == 0 { &f.trails[..] } else { &f.trails[..7] };
                    (i, check_native(project, files))
                })
            })
            .collect();
        for h in handles {
            let (i, r) = h.join().expect("a check");
            if i % 2 == 0 {
                assert_same(&r, &reference);
            } else {
                assert_eq!(r.trails, 7);
            }
        }
    });
    // Whatever order the writes landed in, the file reads and serves what it holds correctly.
    let after = f.check();
    assert_same(&after, &reference);
    assert_eq!(f.check().stats.cached, 20);
    let leftovers: Vec<_> = std::fs::read_dir(f.dir.path().join("cache/check"))
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temp file left behind: {leftovers:?}");
}

#[test]
fn without_a_cache_folder_nothing_is_written() {
    let f = Fixture::new();
    let r = f.uncached();
    assert_eq!(r.stats.checked, 20);
    assert!(!f.dir.path().join("cache/check").exists(), "--no-cache writes nothing");
    // Control: with the cache, the folder appears.
    f.check();
    assert!(f.dir.path().join("cache/check").is_dir());
}

#[test]
fn a_cache_folder_that_cannot_be_written_does_not_fail_the_check() {
    let f = Fixture::new();
    // `cache` is a file, so `cache/check/` can never be made.
    std::fs::write(f.dir.path().join("cache"), "not a folder").expect("write");
    let reference = f.uncached();
    for _ in 0..2 {
        let r = f.check();
        assert_eq!(
            (r.stats.checked, r.stats.cached),
            (20, 0),
            "nothing cached, nothing lost"
        );
        assert_same(&r, &reference);
    }
    // Control: once the folder can be made, the second check is served from it.
    std::fs::remove_file(f.dir.path().join("cache")).expect("rm");
    f.check();
    assert_eq!(f.check().stats.cached, 20);
}
