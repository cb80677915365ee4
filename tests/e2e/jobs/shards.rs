//! `run --shard I/N` and `merge`: the shards of a suite, merged, are the unsharded run trail by
//! trail (the device and the skips are the suite's, never a shard's); a shard with no trails still
//! writes a report that merges; `merge --junit` holds every trail; and a shard's folder is
//! untrusted input (`merge` reads nothing outside it, and never writes into one).

use std::path::Path;

use serde_json::Value;
use trailblaze_e2e::{Fixture, copy_dir, in_dir, repo_root, text};

use super::{demo_times, report, run};

/// Each trail's file and outcome in a JUnit XML file, in its order: `passed`, `failed`, `skipped`,
/// `error` (a `not recorded` trail is a failure there too).
fn junit_outcomes(xml: &str) -> Vec<(String, String)> {
    let doc = roxmltree::Document::parse(xml).expect("JUnit XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|c| {
            let child = |tag: &str| c.children().any(|n| n.has_tag_name(tag));
            let outcome = if child("failure") {
                "failed"
            } else if child("skipped") {
                "skipped"
            } else if child("error") {
                "error"
            } else {
                "passed"
            };
            (c.attribute("file").unwrap_or_default().to_string(), outcome.to_string())
        })
        .collect()
}

/// Each trail's file and outcome, in the report's order.
fn outcomes(r: &Value) -> Vec<(String, String)> {
    r["trails"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let file = t["file"].as_str().unwrap_or_default().to_string();
            (file, t["outcome"]["status"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

#[test]
fn four_shards_merged_are_the_unsharded_run() {
    let f = demo_times(3);
    // One trail fails, so outcomes differ between trails and the order matters.
    let broken = f.map_dir().join("trails/sign-in-copy2.trail.yaml");
    let body = std::fs::read_to_string(&broken)
        .expect("trail")
        .replace("Inbox", "Outbox");
    std::fs::write(&broken, body).expect("write");
    let p = |name: &str| f.dir.path().join(name);
    let whole = p("whole");
    let (o, ..) = run(&f, &["--no-check", "--report-dir", whole.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(1));
    for i in 1..=4 {
        let dir = p(&format!("shard-{i}"));
        let shard = format!("{i}/4");
        let (o, out, err) = run(
            &f,
            &[
                "--no-check",
                "--shard",
                &shard,
                "--report-dir",
                dir.to_str().unwrap_or_default(),
            ],
        );
        assert!(o.status.code().is_some_and(|c| c <= 1), "{out}{err}");
    }
    let merged = p("merged");
    let args = |runs: &[&str], to: &Path| {
        let mut v: Vec<String> = vec!["merge".into()];
        v.extend(runs.iter().map(|r| p(r).display().to_string()));
        v.extend(["--report-dir".into(), to.display().to_string()]);
        v
    };
    let mut a = args(&["shard-3", "shard-1", "shard-4", "shard-2"], &merged);
    let junit = p("ci/junit.xml");
    a.extend(["--junit".into(), junit.display().to_string()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = in_dir(&f, f.dir.path(), &a);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "one trail failed: {out}{err}");
    let (u, m) = (report(&whole), report(&merged));
    assert_eq!(outcomes(&u).len(), 9);
    assert_eq!(
        outcomes(&m),
        outcomes(&u),
        "the same trails and outcomes, in the same order"
    );
    assert!(outcomes(&u).iter().any(|(_, o)| o == "failed"));
    // `--junit`: every trail of every shard, each with its outcome, as the unsharded run's.
    let xml = std::fs::read_to_string(&junit).expect("the merged junit.xml");
    assert_eq!(junit_outcomes(&xml), outcomes(&u), "{xml}");
    let whole_xml = std::fs::read_to_string(whole.join("junit.xml")).expect("junit.xml");
    assert_eq!(junit_outcomes(&whole_xml), outcomes(&u));
    assert!(xml.contains("tests=\"9\" failures=\"1\""), "{xml}");
    // Control: the reading tells a shard's junit.xml (a part) from the whole.
    let part = std::fs::read_to_string(p("shard-1").join("junit.xml")).expect("junit.xml");
    assert_ne!(junit_outcomes(&part), outcomes(&u));
    // Screens included: every screen the merged report names is in its folder.
    let screens: Vec<String> = m["trails"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["screen"].as_str().map(str::to_string))
        .collect();
    assert!(!screens.is_empty());
    assert!(screens.iter().all(|s| merged.join(s).is_file()), "{screens:?}");
    assert!(merged.join("report.html").is_file() && merged.join("junit.xml").is_file());
    // A shard missing is said; the same shard twice, and runs of another suite, are refused.
    let a = args(&["shard-1", "shard-2"], &p("part"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = in_dir(&f, f.dir.path(), &a);
    assert!(text(&o).1.contains("shard(s) 3, 4 were not given"), "{}", text(&o).1);
    let a = args(&["shard-1", "shard-1"], &p("twice"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = in_dir(&f, f.dir.path(), &a);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("are both shard 1/4"), "{}", text(&o).1);
    let other = p("smoke-2");
    let (o, ..) = run(
        &f,
        &[
            "--no-check",
            "--tag",
            "smoke",
            "--shard",
            "2/4",
            "--report-dir",
            other.to_str().unwrap_or_default(),
        ],
    );
    assert!(o.status.code().is_some_and(|c| c <= 1));
    let a = args(&["shard-1", "smoke-2"], &p("mixed"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = in_dir(&f, f.dir.path(), &a);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("different suites"), "{}", text(&o).1);
}

/// The number after `key` on the first line of `text` holding it.
fn number_after(text: &str, key: &str) -> Option<usize> {
    let rest = &text[text.find(key)? + key.len()..];
    let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn the_ci_docs_shard_arithmetic_deals_every_trail_once() {
    use trailblaze::trails::{parse_shard, shard};
    let doc = std::fs::read_to_string(trailblaze_e2e::repo_root().join("docs/ci.md")).expect("docs/ci.md");
    // Kubernetes: JOB_COMPLETION_INDEX runs 0..completions; the docs' shard is index+1 of N.
    let completions = number_after(&doc, "completions:").expect("completions: in the Indexed Job");
    let n = number_after(&doc, "--shard $((JOB_COMPLETION_INDEX+1))/").expect("the Indexed Job's --shard");
    assert_eq!(completions, n, "one pod per shard");
    // GitHub Actions: `shard: [1, 2, 3, 4]` and `--shard ${{ matrix.shard }}/4`.
    let matrix = &doc[doc.find("shard: [").expect("the matrix") + 8..];
    let matrix: Vec<usize> = matrix[..matrix.find(']').unwrap_or(0)]
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let gha = number_after(&doc, "--shard ${{ matrix.shard }}/").expect("the matrix's --shard");
    let trails: Vec<usize> = (0..23).collect();
    for (name, shards) in [
        (
            "kubernetes",
            (0..completions).map(|i| format!("{}/{n}", i + 1)).collect::<Vec<_>>(),
        ),
        ("github", matrix.iter().map(|i| format!("{i}/{gha}")).collect()),
    ] {
        let mut dealt: Vec<usize> = Vec::new();
        for s in &shards {
            let (i, n) = parse_shard(s).unwrap_or_else(|e| panic!("{name}: `--shard {s}` is refused: {e}"));
            dealt.extend(shard(trails.clone(), i, n));
        }
        dealt.sort();
        assert_eq!(dealt, trails, "{name}: every trail in exactly one shard");
    }
    // Control: an off-by-one (index without +1) would lose a trail and refuse shard 0.
    assert!(parse_shard(&format!("0/{n}")).is_err());
    let mut dealt: Vec<usize> = (1..n).flat_map(|i| shard(trails.clone(), i, n)).collect();
    dealt.sort();
    assert_ne!(dealt, trails);
    // The merge step's command and flags exist.
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["merge", "--help"]);
    let help = text(&o).0;
    assert!(help.contains("--report-dir") && help.contains("--junit"), "{help}");
    assert!(doc.contains("trailblaze merge shards/*/trailblaze-report --report-dir report --junit junit.xml"));
}

/// The repository's own suite (the demo app's trails and the web demo's, which skip on the
/// simulated device) in a temp dir.
fn repo_suite() -> Fixture {
    let f = Fixture::demo();
    copy_dir(&repo_root().join("trailmaps/web-demo"), &f.root().join("web-demo"));
    f
}

/// `run --shard I/N --report-dir DIR` for each I, in `f`; the shards' folders.
fn shards(f: &Fixture, n: usize, name: &str) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let dir = f.dir.path().join(format!("{name}-{i}"));
            let shard = format!("{i}/{n}");
            let (o, out, err) = run(
                f,
                &["--shard", &shard, "--report-dir", dir.to_str().unwrap_or_default()],
            );
            assert_eq!(o.status.code(), Some(0), "shard {shard}: {out}{err}");
            dir.display().to_string()
        })
        .collect()
}

#[test]
fn the_repos_suite_sharded_and_merged_has_the_unsharded_outcomes_trail_by_trail() {
    let f = repo_suite();
    let whole = f.dir.path().join("whole");
    let (o, out, err) = run(&f, &["--report-dir", whole.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let u = outcomes(&report(&whole));
    assert_eq!(u.len(), 6, "{u:?}");
    let skipped: Vec<&str> = u
        .iter()
        .filter(|(_, o)| o == "skipped")
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(
        skipped.len(),
        3,
        "the web demo's trails skip on the simulated device: {u:?}"
    );
    assert!(skipped.iter().all(|f| f.contains("web-demo")), "{skipped:?}");
    // 4 shards: one holds only a web trail; 6: each trail alone; 8: two shards get no trail.
    for n in [4, 6, 8] {
        let dirs = shards(&f, n, &format!("of{n}"));
        if n == 8 {
            // A shard past the trails writes its folder all the same: an empty report.
            let empty = report(Path::new(&dirs[7]));
            assert_eq!(empty["trails"], serde_json::json!([]), "{empty}");
            assert_eq!(empty["shard"], serde_json::json!({ "index": 8, "total": 8 }));
            assert!(Path::new(&dirs[7]).join("report.html").is_file());
            assert!(Path::new(&dirs[7]).join("junit.xml").is_file());
        }
        let merged = f.dir.path().join(format!("merged-{n}"));
        let mut a = vec!["merge".to_string()];
        a.extend(dirs);
        a.extend(["--report-dir".into(), merged.display().to_string()]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = in_dir(&f, f.dir.path(), &a);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{n} shards: {out}{err}");
        assert!(!err.contains("were not given"), "every shard was given: {err}");
        assert_eq!(
            outcomes(&report(&merged)),
            u,
            "{n} shards merged: not the unsharded outcomes"
        );
    }
    // Control: a web trail run on its own with the device named runs (the comparison above would
    // see a shard that did the same).
    let web = f.root().join("web-demo/trails/counter.trail.yaml");
    let alone = f.dir.path().join("alone");
    let (o, out, err) = run(
        &f,
        &[
            "--no-check",
            web.to_str().unwrap_or_default(),
            "--screenshots",
            "none",
            "--report-dir",
            alone.to_str().unwrap_or_default(),
        ],
    );
    assert_ne!(
        outcomes(&report(&alone))[0].1,
        "skipped",
        "alone, a web trail runs on the web: {out}{err} (exit {:?})",
        o.status.code()
    );
}

/// `merge DIRS --report-dir OUT` in `f`.
fn merge(f: &Fixture, dirs: &[&Path], out: &Path) -> (Option<i32>, String) {
    let mut a: Vec<String> = vec!["merge".into()];
    a.extend(dirs.iter().map(|d| d.display().to_string()));
    a.extend(["--report-dir".into(), out.display().to_string()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = in_dir(f, f.dir.path(), &a);
    let (out, err) = text(&o);
    (o.status.code(), format!("{out}{err}"))
}

#[test]
fn a_shard_naming_a_file_outside_its_folder_is_refused_and_nothing_is_read_or_written() {
    let f = demo_times(1);
    let dirs = shards(&f, 2, "shard");
    let (one, two) = (Path::new(&dirs[0]), Path::new(&dirs[1]));
    let path = two.join("report.json");
    let good = std::fs::read_to_string(&path).expect("report.json");
    let mut r: Value = serde_json::from_str(&good).expect("JSON");
    assert!(r["trails"][0]["log"].is_string(), "{r}");
    // The merging machine's environment, as an absolute path: never copied, never quoted.
    r["trails"][0]["log"] = "/proc/self/environ".into();
    std::fs::write(&path, r.to_string()).expect("write");
    let out = f.dir.path().join("merged");
    let marker = "MERGE_ENV_CANARY_51d0";
    let mut cmd = std::process::Command::new(trailblaze_e2e::trailblaze_bin());
    cmd.current_dir(f.dir.path())
        .args(["merge"])
        .args([one, two])
        .arg("--report-dir")
        .arg(&out)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .env(marker, marker);
    let o = cmd.output().expect("merge runs");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    let want = format!("{}: trails[0].log: a path outside the shard folder", path.display());
    assert!(stderr.contains(&want), "{stderr}");
    assert!(
        !stderr.contains("/proc/self/environ") && !stderr.contains(marker),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused merge writes nothing");
    // A screen through `..`.
    r["trails"][0]["log"] = Value::Null;
    r["trails"][0]["steps"][1]["screen"] = "screens/../../shard-1/report.json".into();
    std::fs::write(&path, r.to_string()).expect("write");
    let (code, said) = merge(&f, &[one, two], &out);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("trails[0].steps[1].screen: a path outside the shard folder"),
        "{said}"
    );
    // The merged report's folder is never a shard's: refused, the shard left as it was.
    std::fs::write(&path, &good).expect("write");
    let before = std::fs::read_to_string(one.join("report.json")).expect("report.json");
    let (code, said) = merge(&f, &[one, two], one);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("--report-dir") && said.contains("is the shard folder"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(one.join("report.json")).expect("report.json"),
        before
    );
    let (code, said) = merge(&f, &[one, two], &two.join("merged"));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("is inside the shard folder"), "{said}");
    // Control: the shards as the runs wrote them merge, with every log and screen in place.
    let (code, said) = merge(&f, &[one, two], &out);
    assert_eq!(code, Some(0), "{said}");
    let m = report(&out);
    let files: Vec<String> = m["trails"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| {
            let steps = t["steps"].as_array().cloned().unwrap_or_default();
            let screens = steps
                .into_iter()
                .filter_map(|s| s["screen"].as_str().map(str::to_string));
            [&t["log"], &t["storyboard"]]
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .chain(screens)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(files.iter().any(|f| f.ends_with("storyboard.gif")), "{files:?}");
    for rel in &files {
        assert!(out.join(rel).is_file(), "{rel} is in the merged folder");
    }
}
