//! Trails: the quote-style rule, the two type gates agreeing, replay and its reports.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use trailblaze::Settings;
use trailblaze::gates::{Finding, check_native, check_tsc};
use trailblaze::report::Outcome;
use trailblaze::{RunOptions, run_trails};
use trailblaze_e2e::{Fixture, trailblaze_bin};

const HEAD: &str = "config:\n  id: t\n  target: demo\ntrail:\n";

/// A trail with one step recording `calls` (YAML flow maps, one per line).
fn trail(calls: &[&str]) -> String {
    let mut s = format!("{HEAD}  - step: the step\n    recording:\n      tools:\n");
    for c in calls {
        s.push_str(&format!("        - {c}\n"));
    }
    s
}

fn write(f: &Fixture, name: &str, text: &str) -> PathBuf {
    let p = f.map_dir().join("trails").join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn identities(findings: &[Finding]) -> std::collections::BTreeSet<(PathBuf, Option<String>, Option<String>)> {
    findings.iter().map(Finding::identity).collect()
}

const FOCUS: &str =
    "tapOnElementBySelector: { nodeSelector: { androidAccessibility: { resourceIdRegex: '.*:id/email' } } }";

#[test]
fn a_quoted_number_stays_a_string_through_both_gates_and_replay() {
    let f = Fixture::demo();
    let quoted = write(
        &f,
        "quoted.trail.yaml",
        &trail(&[
            "launchApp: { appId: com.example.demo }",
            FOCUS,
            "inputText: { text: '12345678' }",
        ]),
    );
    let number = write(&f, "number.trail.yaml", &trail(&["inputText: { text: 12345678 }"]));
    let boolean = write(
        &f,
        "bool.trail.yaml",
        &trail(&["inputText: { text: 'true' }", "inputText: { text: true }"]),
    );
    let project = f.project();
    let native = check_native(&project, &[quoted.clone(), number.clone(), boolean.clone()]);
    let tsc = check_tsc(&project, &[quoted.clone(), number.clone(), boolean.clone()]).expect("tsc runs");
    for report in [&native, &tsc] {
        let files: Vec<&Path> = report.findings.iter().map(|x| x.file.as_path()).collect();
        assert!(
            !files.contains(&quoted.as_path()),
            "'12345678' is a string: {:?}",
            report.findings
        );
        assert_eq!(
            files.iter().filter(|p| **p == number.as_path()).count(),
            1,
            "12345678 is a number: {:?}",
            report.findings
        );
        let bool_findings: Vec<&Finding> = report.findings.iter().filter(|x| x.file == boolean).collect();
        assert_eq!(
            bool_findings.len(),
            1,
            "'true' passes, true does not: {bool_findings:?}"
        );
        assert_eq!(bool_findings[0].line, 9, "the finding is on the unquoted call's line");
    }
    // Replay types all eight characters.
    let out = run_trails(
        &project,
        &[quoted],
        &RunOptions {
            out: f.out(),
            settings: Settings::default(),
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("runs");
    assert_eq!(
        out.report.trails[0].outcome,
        Outcome::Passed,
        "{:?}",
        out.report.trails[0]
    );
    let log = std::fs::read_to_string(out.dir.join("quoted/log.jsonl")).expect("log");
    assert!(log.contains("\"typed\":8"), "all 8 characters typed: {log}");
}

/// Mutations of a clean recording, each breaking it in one way the type gate must catch.
fn mutations() -> Vec<(&'static str, String)> {
    let sel = |inner: &str| format!("tapOnElementBySelector: {{ nodeSelector: {inner} }}");
    let mut m: Vec<(&'static str, String)> = vec![
        ("missing required", "inputText: {}".into()),
        ("missing required", "launchApp: {}".into()),
        ("missing required", "tapOnPoint: { x: 1 }".into()),
        ("missing required", "pressKey: {}".into()),
        ("missing required", "tapOnElementBySelector: {}".into()),
        ("missing required", "assertVisibleBySelector: { reason: why }".into()),
        ("extra", "inputText: { text: a, txet: b }".into()),
        ("extra", "launchApp: { appId: a, mode: RESUME }".into()),
        ("extra", "pressKey: { keyCode: BACK, times: 2 }".into()),
        ("extra", "tapOnPoint: { x: 1, y: 2, z: 3 }".into()),
        ("extra", "eraseText: { characters: 3 }".into()),
        ("extra", "signIn: { account: demo, password: x }".into()),
        ("wrong type", "inputText: { text: 5 }".into()),
        ("wrong type", "inputText: { text: [a] }".into()),
        ("wrong type", "tapOnPoint: { x: '1', y: 2 }".into()),
        ("wrong type", "tapOnPoint: { x: 1, y: 2, longPress: 'yes' }".into()),
        ("wrong type", "launchApp: { appId: 7 }".into()),
        ("wrong type", "eraseText: { charactersToErase: many }".into()),
        ("wrong type", "signIn: { account: 3 }".into()),
        ("wrong type", "openMessage: { index: '1' }".into()),
        ("wrong type", "setDarkMode: { enabled: 'true' }".into()),
        ("wrong type", "inputText: { text: a, nodeSelector: 5 }".into()),
        ("unknown tool", "inputTxt: { text: a }".into()),
        ("unknown tool", "tapp: { ref: y1 }".into()),
        ("unknown tool", "flingTwice: { direction: UP }".into()),
        ("unknown tool", "lookupCredential: { account: demo }".into()),
        ("unknown tool", "launch: { appId: a }".into()),
        ("bad enum", "pressKey: { keyCode: SPACE }".into()),
        ("bad enum", "pressKey: { keyCode: back }".into()),
        ("bad enum", "launchApp: { appId: a, launchMode: RESTART }".into()),
        ("bad enum", "launchApp: { appId: a, launchMode: 1 }".into()),
    ];
    for inner in [
        "{ androidAccessibility: { textRegx: Inbox } }",
        "{ androidAccessibility: { textRegex: 5 } }",
        "{ androidAccessibility: { isEnabled: 'yes' } }",
        "{ andriodAccessibility: { textRegex: Inbox } }",
        "{ below: { androidAccessibility: { txt: a } } }",
        "{ childOf: { childOf: { androidAccessibility: { textRegex: [a] } } } }",
        "{ index: '1' }",
        "{ containsDescendants: { androidAccessibility: { textRegex: a } } }",
        "{ containsDescendants: [ { web: { cssSelectr: a } } ] }",
        "{ androidMaestro: { idRegex: a } }",
        "{ web: { ariaRole: 3 } }",
        "{ leftOf: 5 }",
    ] {
        m.push(("bad nested selector", sel(inner)));
    }
    for inner in [
        "{ androidAccessibility: { hintTextRegx: Email } }",
        "{ above: { index: x } }",
    ] {
        m.push((
            "bad nested selector",
            format!("inputText: {{ text: a, nodeSelector: {inner} }}"),
        ));
        m.push((
            "bad nested selector",
            format!("assertNotVisibleBySelector: {{ nodeSelector: {inner} }}"),
        ));
    }
    // TypeScript has no integer type, so `x: 1.5` or `index: -1` is caught by the native gate only (see
    // `the_native_gate_is_stricter_on_integers`): not part of the agreement corpus.
    m.push(("wrong type", "tapOnPoint: { x: 1, y: true }".into()));
    m.push(("wrong type", "launchApp: { appId: [com.example.demo] }".into()));
    m.push(("not recordable", "tap: { ref: y1 }".into()));
    m.push(("not recordable", "type: { text: a }".into()));
    m.push(("not recordable", "snapshot: {}".into()));
    m
}

#[test]
fn the_native_gate_and_tsc_agree_on_a_mutation_corpus() {
    let f = Fixture::demo();
    let corpus = mutations();
    assert!(corpus.len() >= 50, "at least 50 broken recordings: {}", corpus.len());
    let mut files = Vec::new();
    for (i, (_, call)) in corpus.iter().enumerate() {
        // A clean call before and after: findings must land on the mutated call only.
        let text = trail(&["launchApp: { appId: com.example.demo }", call, FOCUS]);
        files.push(write(&f, &format!("m{i:03}.trail.yaml"), &text));
    }
    let project = f.project();
    let native = check_native(&project, &files);
    let tsc = check_tsc(&project, &files).expect("tsc runs");
    for (i, (kind, call)) in corpus.iter().enumerate() {
        let mine = |r: &[Finding]| r.iter().filter(|x| x.file == files[i]).cloned().collect::<Vec<_>>();
        let (n, t) = (mine(&native.findings), mine(&tsc.findings));
        assert!(!n.is_empty(), "native misses {kind}: {call}");
        assert!(
            n.iter().all(|x| x.line == 9 && x.step.as_deref() == Some("step 1")),
            "native on the call: {n:?}"
        );
        // `tap`/`type`/`snapshot` exist in the full surface but not in the recordable one tsc gets.
        assert_eq!(
            identities(&n),
            identities(&t),
            "the gates disagree on {kind}: {call}\nnative: {n:?}\ntsc: {t:?}"
        );
    }
    assert_eq!(identities(&native.findings), identities(&tsc.findings));
}

#[test]
fn both_gates_find_nothing_in_the_demo_trails() {
    let f = Fixture::demo();
    let project = f.project();
    let files = trailblaze::trails::find_trails(&[f.map_dir().join("trails")]).expect("trails");
    assert!(files.len() >= 3);
    let native = check_native(&project, &files);
    let tsc = check_tsc(&project, &files).expect("tsc runs");
    assert_eq!(native.findings, Vec::new());
    assert_eq!(tsc.findings, Vec::new());
    assert!(native.calls >= 10 && native.calls == tsc.calls);
}

#[test]
fn a_target_no_trailmap_provides_is_skipped_with_a_notice_unless_it_is_a_near_miss() {
    let f = Fixture::demo();
    // An app's package id, say: the original skips such a trail, and so does the type gate here.
    let file = write(
        &f,
        "x.trail.yaml",
        "config:\n  target: com.example.nowhere\ntrail:\n  - step: a\n    recording:\n      tools:\n        - inputTxt: {}\n",
    );
    let r = check_native(&f.project(), &[file]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(
        r.notices
            .iter()
            .any(|n| n.contains("its target `com.example.nowhere` is no loaded trailmap")),
        "{:?}",
        r.notices
    );
    // Control: a near miss of a loaded trailmap's id is a typo, so one finding.
    let file = write(
        &f,
        "y.trail.yaml",
        "config:\n  target: dmeo\ntrail:\n  - step: a\n    recording:\n      tools:\n        - inputTxt: {}\n",
    );
    let r = check_native(&f.project(), &[file]);
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert!(
        r.findings[0]
            .message
            .contains("target `dmeo`: no loaded trailmap provides it; did you mean `demo`?"),
        "{}",
        r.findings[0]
    );
}

#[test]
fn an_exempt_trailmap_reports_warnings() {
    let f = Fixture::demo();
    let file = write(&f, "bad.trail.yaml", &trail(&["inputText: { text: 5 }"]));
    let yaml = std::fs::read_to_string(f.map_dir().join("trailmap.yaml")).unwrap();
    std::fs::write(
        f.map_dir().join("trailmap.yaml"),
        format!("{yaml}trail_validation:\n  exempt: migrating old trails\n"),
    )
    .unwrap();
    let r = check_native(&f.project(), &[file]);
    assert_eq!(r.findings.len(), 1);
    assert!(r.findings[0].warning);
    assert_eq!(r.errors(), 0);
}

#[test]
fn run_passes_the_demo_trails_and_reports_every_step() {
    let f = Fixture::demo();
    let project = f.project();
    let files = trailblaze::trails::find_trails(&[f.map_dir().join("trails")]).expect("trails");
    let secrets = trailblaze_host_functions::SecretStore::from_pairs([
        ("DEMO_USERNAME".to_string(), "jane@example.com".to_string()),
        ("DEMO_PASSWORD".to_string(), "hunter2".to_string()),
    ]);
    let project = project.with_secrets(secrets);
    let out = run_trails(
        &project,
        &files,
        &RunOptions {
            out: f.out(),
            settings: Settings::default(),
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("runs");
    for t in &out.report.trails {
        assert_eq!(t.outcome, Outcome::Passed, "{t:?}");
    }
    let html = std::fs::read_to_string(out.dir.join("report.html")).expect("report.html");
    let doc = html_text(&html);
    for t in &out.report.trails {
        for s in &t.steps {
            assert!(doc.contains(&s.text), "the report names step `{}`", s.text);
        }
    }
    assert!(!html.contains("hunter2"), "no secret in the report");
    for name in ["report.json", "junit.xml"] {
        assert!(out.dir.join(name).is_file(), "{name}");
    }
}

/// The report's HTML is parsed with a real parser by the report module's own tests; here it has to be
/// an HTML document holding the texts.
fn html_text(html: &str) -> String {
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "an HTML document"
    );
    html.to_string()
}

#[test]
fn a_failing_assertion_exits_1_naming_the_step() {
    let f = Fixture::demo();
    write(
        &f,
        "fails.trail.yaml",
        "config:\n  id: demo/fails\n  target: demo\ntrail:\n  - step: Launch\n    recording:\n      tools:\n        - launchApp: { appId: com.example.demo }\n  - verify: The inbox is shown\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Inbox } } }\n",
    );
    let o = Command::new(trailblaze_bin())
        .arg("--trailmaps")
        .arg(f.root())
        .env("TRAILBLAZE_OUT", f.out())
        .args(["run"])
        .arg(f.map_dir().join("trails/fails.trail.yaml"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(1));
    // Progress and the summary are the run's results: stdout.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("✗ step 2 The inbox is shown"), "{out}");
    assert!(out.contains("0 passed, 1 failed"), "{out}");
}

#[test]
fn a_step_without_a_recording_is_not_passed() {
    let f = Fixture::demo();
    let file = write(
        &f,
        "unrecorded.trail.yaml",
        "config:\n  target: demo\ntrail:\n  - step: Do something clever\n",
    );
    let out = run_trails(
        &f.project(),
        &[file],
        &RunOptions {
            out: f.out(),
            settings: Settings::default(),
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("runs");
    assert_eq!(out.report.trails[0].outcome, Outcome::NotRecorded);
    assert!(!out.report.summary().ok());
}

/// The (only) run folder under `out`, once the run has made it.
fn first_run_dir(out: &std::path::Path) -> Option<PathBuf> {
    std::fs::read_dir(out).ok()?.next()?.ok().map(|run| run.path())
}

/// The demo with a 300-step trail `name`: ten quick steps, then one that spins until the run is
/// killed (the runs below allow scripts 600 s), so the kill always lands mid-trail however slow the
/// machine is: the tests wait for events (steps logged, the trail started), never for a guessed time.
fn demo_with_a_slow_trail(name: &str) -> (Fixture, std::path::PathBuf) {
    let f = Fixture::demo();
    f.tool(
        "slow",
        "import { trailblaze } from \"@trailblaze/scripting\";\nexport const slow = trailblaze.tool<{ spin: boolean }, {}>(async (input) => { const t = Date.now(); while (input.spin || Date.now() - t < 5) {} return {}; });\n",
    );
    let mut steps = String::from("config:\n  target: demo\ntrail:\n");
    for i in 0..300 {
        steps.push_str(&format!(
            "  - step: slow {i}\n    recording:\n      tools:\n        - slow: {{ spin: {} }}\n",
            i >= 10
        ));
    }
    let file = write(&f, name, &steps);
    (f, file)
}

#[test]
fn kill_9_leaves_every_finished_step_readable() {
    let (f, file) = demo_with_a_slow_trail("long.trail.yaml");
    let mut child = Command::new(trailblaze_bin())
        .arg("--trailmaps")
        .arg(f.root())
        .env("TRAILBLAZE_OUT", f.out())
        .args(["run", "--script-timeout", "600"])
        .arg(&file)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    // Wait until some steps are logged (bounded), then kill -9.
    let log = || first_run_dir(&f.out()).map(|run| run.join("long/log.jsonl"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let finished = log()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| t.matches("step_finished").count())
            .unwrap_or(0);
        if finished >= 5 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let text = std::fs::read_to_string(log().expect("a run folder")).expect("log.jsonl");
    let complete: Vec<&str> = text.split_inclusive('\n').filter(|l| l.ends_with('\n')).collect();
    let mut finished = 0;
    for line in &complete {
        let v: Value = serde_json::from_str(line).expect("every complete line parses");
        if v["event"] == "step_finished" {
            finished += 1;
        }
    }
    assert!(finished >= 5, "finished steps were logged before the kill: {finished}");
    assert!(finished <= 10, "the kill landed in the spinning step: {finished}");
}

#[test]
fn the_native_gate_is_stricter_on_integers() {
    let f = Fixture::demo();
    let file = write(&f, "frac.trail.yaml", &trail(&["tapOnPoint: { x: 1.5, y: 2 }"]));
    let r = check_native(&f.project(), &[file]);
    assert_eq!(
        r.findings.len(),
        1,
        "replay would refuse 1.5 for an i32: {:?}",
        r.findings
    );
    assert!(r.findings[0].message.contains("fractional"), "{}", r.findings[0]);
}

#[test]
fn a_run_killed_mid_way_leaves_the_finished_trails_reported() {
    let (f, _) = demo_with_a_slow_trail("zzz-long.trail.yaml");
    let secrets = f.root().join("demo/demo.secrets");
    let mut child = Command::new(trailblaze_bin())
        .arg("--trailmaps")
        .arg(f.root())
        .env("TRAILBLAZE_OUT", f.out())
        .env("TRAILBLAZE_SECRETS_FILE", &secrets)
        .args(["run", "--script-timeout", "600"])
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    let run_dir = || first_run_dir(&f.out());
    // The long trail has started once its log exists: the three demo trails before it are done.
    // Their reports are written by a paced thread a few writes' time later (run/interim.rs): wait
    // for report.json to hold them, with the long trail still going, then kill.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let reported = |d: &std::path::Path| {
        std::fs::read_to_string(d.join("report.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|r| r["trails"].as_array().map(Vec::len))
            .unwrap_or(0)
    };
    while run_dir().is_none_or(|d| !d.join("zzz-long/log.jsonl").exists() || reported(&d) < 3)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        child.try_wait().expect("the run's status").is_none(),
        "still running at the kill"
    );
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let dir = run_dir().expect("a run folder");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json"))
        .expect("a whole JSON report");
    let outcomes: Vec<&Value> = report["trails"]
        .as_array()
        .expect("trails")
        .iter()
        .map(|t| &t["outcome"])
        .collect();
    assert_eq!(
        outcomes.len(),
        3,
        "the finished trails, not the one killed: {outcomes:?}"
    );
    assert!(outcomes.iter().all(|o| o["status"] == "passed"), "{outcomes:?}");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml");
    roxmltree::Document::parse(&junit).expect("well-formed JUnit");
    assert!(dir.join("report.html").exists());
}

#[test]
fn a_partly_deleted_secret_never_shows_in_the_report_screens() {
    const SECRET: &str = "CANARY-partial-0123456789";
    let f = Fixture::demo();
    let file = write(
        &f,
        "partial.trail.yaml",
        "config:\n  target: demo\ntrail:\n  - step: Type a secret into the email field, then delete a character\n    recording:\n      tools:\n        - inputText: { text: \"{{secret:PIN}}\", nodeSelector: { androidAccessibility: { hintTextRegex: Email } } }\n        - pressKey: { keyCode: BACKSPACE }\n",
    );
    let project = f
        .project()
        .with_secrets(trailblaze_host_functions::SecretStore::from_pairs([(
            "PIN".to_string(),
            SECRET.to_string(),
        )]));
    let out = run_trails(
        &project,
        &[file],
        &RunOptions {
            out: f.out(),
            settings: Settings::default(),
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("runs");
    assert!(out.report.summary().ok(), "{:?}", out.report.trails[0]);
    let screen = out.report.trails[0].steps[0]
        .screen
        .as_ref()
        .and_then(|p| std::fs::read_to_string(out.dir.join(p)).ok())
        .unwrap_or_default();
    assert!(screen.contains("<svg"), "control: the step has a screen");
    let prefix = &SECRET[..SECRET.len() - 1];
    let everything = f.all_output();
    assert!(
        !everything.contains(&prefix[..12]),
        "a report or log shows part of the secret"
    );
    assert!(!screen.contains(&prefix[..12]), "{screen}");
}
