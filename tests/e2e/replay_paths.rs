//! One replay, three ways in: the same trails (a skipped one, a step that passes on its second
//! attempt, `{{args.*}}`, a failing step that skips the rest) replayed through the CLI
//! (`trailblaze run --json`), the library (`run_trails` and `Session::replay`) and the C ABI
//! (`tb_session_run_trail`, `tb_run_trails`) give the same outcomes, step by step.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use trailblaze::report::{Outcome, TrailReport};
use trailblaze::{ReplayOptions, RunOptions, SessionOptions, Trail, run_trails};
use trailblaze_e2e::{Fixture, in_dir, text};
use trailblaze_ffi::{TbBuf, TbProject, TbSession, TbStatus};

const SIGN_IN: &str = "  - step: Sign in as {{args.EMAIL}}
    recording:
      tools:
        - inputText: { text: \"{{args.EMAIL}}\", nodeSelector: { androidAccessibility: { hintTextRegex: Email } } }
        - inputText: { text: \"{{secret:DEMO_PASSWORD}}\", nodeSelector: { androidAccessibility: { hintTextRegex: Password } } }
        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in } } }
";

fn trail(id: &str, config: &str, steps: &str) -> String {
    format!(
        "config:\n  id: paths/{id}\n  target: demo\n{config}trailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: {{ appId: com.example.demo }}\ntrail:\n{SIGN_IN}{steps}"
    )
}

/// From the inbox, opens Ana Lima's message, then checks for the inbox: fails; the second attempt
/// taps "Back to inbox" and passes.
const FLAKY: &str = "  - step: Reach the inbox
    maxRetries: 1
    recording:
      tools:
        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Ana Lima$|^Back to inbox$\" } } }
        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Inbox$\" } } }
";

const FAILS: &str = "  - verify: A screen the app does not have
    recording:
      tools:
        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Nowhere$\" } } }
  - step: Never reached
    recording:
      tools:
        - pressKey: { keyCode: BACK }
";

fn fixture() -> (Fixture, Vec<PathBuf>) {
    let f = Fixture::demo();
    let files = [
        ("skipped", trail("skipped", "  skip: \"not today\"\n", FAILS)),
        ("retried", trail("retried", "", FLAKY)),
        ("args", trail("args", "", "")),
        ("failing", trail("failing", "", FAILS)),
    ]
    .into_iter()
    .map(|(name, text)| {
        f.file(&format!("trails/paths/{name}.trail.yaml"), &text);
        f.map_dir().join(format!("trails/paths/{name}.trail.yaml"))
    })
    .collect();
    (f, files)
}

/// What must agree: per trail (by file name; the CLI runs a folder's trails sorted) its outcome,
/// per step its outcome and attempts.
type Outcomes = BTreeMap<String, (String, Vec<(u64, String, u64)>)>;

fn args() -> BTreeMap<String, String> {
    BTreeMap::from([("EMAIL".to_string(), "jane@example.com".to_string())])
}

fn secrets(f: &Fixture) -> trailblaze::Project {
    let store = trailblaze_host_functions::SecretStore::from_pairs([("DEMO_PASSWORD".into(), "hunter2".into())]);
    f.project().with_secrets(store)
}

/// The report JSON's words (`not_recorded`, the C ABI's, is the report's `not recorded`).
fn of_json(trails: &[Value]) -> Outcomes {
    let word = |v: &Value| {
        let w = v.as_str().unwrap_or_default();
        if w == "not_recorded" {
            "not recorded".to_string()
        } else {
            w.to_string()
        }
    };
    trails
        .iter()
        .map(|t| {
            let status = t["outcome"].get("status").unwrap_or(&t["outcome"]);
            let steps = t["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    let st = s["outcome"].get("status").unwrap_or(&s["outcome"]);
                    (
                        s["number"].as_u64().unwrap_or(99),
                        word(st),
                        s["attempts"].as_u64().unwrap_or(1),
                    )
                })
                .collect();
            let file = t["file"].as_str().unwrap_or_default();
            let name = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".trail.yaml");
            (name.to_string(), (word(status), steps))
        })
        .collect()
}

fn of_reports(trails: &[TrailReport]) -> Outcomes {
    let json: Vec<Value> = trails
        .iter()
        .map(|t| serde_json::to_value(t).expect("serializes"))
        .collect();
    of_json(&json)
}

fn expected() -> Outcomes {
    let s = |n: u64, w: &str, a: u64| (n, w.to_string(), a);
    let trail = |name: &str, outcome: &str, steps| (name.to_string(), (outcome.to_string(), steps));
    BTreeMap::from([
        trail("skipped", "skipped", vec![]),
        trail(
            "retried",
            "passed",
            vec![s(0, "passed", 1), s(1, "passed", 1), s(2, "passed", 2)],
        ),
        trail("args", "passed", vec![s(0, "passed", 1), s(1, "passed", 1)]),
        trail(
            "failing",
            "failed",
            vec![
                s(0, "passed", 1),
                s(1, "passed", 1),
                s(2, "failed", 1),
                s(3, "skipped", 1),
            ],
        ),
    ])
}

#[test]
fn the_cli_the_library_and_the_c_abi_replay_to_the_same_outcomes() {
    let (f, files) = fixture();
    assert_eq!(files.len(), expected().len(), "control: one expectation per trail");

    // The library's run.
    let project = secrets(&f);
    let opts = RunOptions {
        out: f.out().join("lib"),
        args: args(),
        ..RunOptions::default()
    };
    let lib_run = run_trails(&project, &files, &opts, &mut ()).expect("runs");
    assert_eq!(of_reports(&lib_run.report.trails), expected(), "run_trails");

    // The same run on two jobs at once (one run path: one device is a pool of one): what it
    // reports and logs is the same.
    let leaving = RunOptions {
        out: f.out().join("jobs"),
        jobs: 2,
        ..opts.clone()
    };
    let leaving = run_trails(&project, &files, &leaving, &mut ()).expect("runs");
    assert_eq!(of_reports(&leaving.report.trails), expected(), "run_trails --jobs 2");
    let lines = |logs: &[Option<PathBuf>]| -> Vec<usize> {
        let read = |p: &PathBuf| std::fs::read_to_string(p).expect("log").lines().count();
        logs.iter().map(|l| l.as_ref().map_or(0, read)).collect()
    };
    let logged = lines(&lib_run.logs);
    assert!(
        logged.iter().filter(|&&n| n > 0).count() >= 2,
        "control: trails logged steps: {logged:?}"
    );
    assert_eq!(lines(&leaving.logs), logged, "every step is logged");

    // The library's replay on sessions the caller opened.
    let replayed: Vec<TrailReport> = files
        .iter()
        .map(|file| {
            let trail = Trail::load(file).expect("parses");
            let session = project
                .open_session("demo", SessionOptions::default())
                .expect("session");
            let opts = ReplayOptions {
                args: args(),
                ..ReplayOptions::default()
            };
            session.replay(&trail, &opts, &mut ())
        })
        .collect();
    assert_eq!(of_reports(&replayed), expected(), "Session::replay");

    // The CLI.
    let secrets_file = f.dir.path().join("paths.secrets");
    std::fs::write(&secrets_file, "DEMO_PASSWORD=hunter2\n").expect("secrets");
    let mut argv = vec![
        "run",
        "--json",
        "--no-check",
        "--arg",
        "EMAIL=jane@example.com",
        "--secrets",
    ];
    let secrets_path = secrets_file.display().to_string();
    argv.push(&secrets_path);
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    argv.extend(paths.iter().map(String::as_str));
    let out = in_dir(&f, f.dir.path(), &argv);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "one trail fails: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("--json prints the report");
    let cli = of_json(report["trails"].as_array().expect("trails"));
    assert_eq!(cli, expected(), "the CLI");

    // The C ABI: a session per trail, and a whole run.
    let c_replayed: Vec<Value> = files.iter().map(|file| c_run_trail(&f, file)).collect();
    assert_eq!(of_json(&c_replayed), expected(), "tb_session_run_trail");
    assert_eq!(c_replayed[0]["reason"], "not today", "a skipped trail says why");
    assert_eq!(c_replayed[1]["steps"][2]["attempts"], 2, "the retry is in the C report");
    assert_eq!(c_run_trails(&f, &files), expected(), "tb_run_trails");
}

#[test]
fn a_changed_expectation_is_told_apart() {
    // The comparison can fail: the same runs against an expectation off by one attempt.
    let (f, files) = fixture();
    let project = secrets(&f);
    let opts = RunOptions {
        out: f.out(),
        args: args(),
        ..RunOptions::default()
    };
    let lib = of_reports(
        &run_trails(&project, &files[1..2], &opts, &mut ())
            .expect("runs")
            .report
            .trails,
    );
    let mut wrong: Outcomes = expected().into_iter().filter(|(k, _)| k == "retried").collect();
    assert_eq!(lib, wrong, "control: the expectation as it is");
    if let Some((_, steps)) = wrong.get_mut("retried") {
        steps[2].2 = 1;
    }
    assert_ne!(lib, wrong);
    // And without `maxRetries` the flaky step fails: the retry is what passes it.
    let once = std::fs::read_to_string(&files[1])
        .expect("read")
        .replace("maxRetries: 1", "maxRetries: 0");
    std::fs::write(&files[1], once).expect("write");
    let t = &run_trails(&project, &files[1..2], &opts, &mut ())
        .expect("runs")
        .report
        .trails[0];
    assert_eq!(t.outcome, Outcome::Failed);
}

fn empty() -> TbBuf {
    TbBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
    }
}

fn buf_text(buf: &TbBuf) -> String {
    if buf.ptr.is_null() {
        return String::new();
    }
    // SAFETY: a buffer the library filled: `len` bytes at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) };
    String::from_utf8_lossy(bytes).into_owned()
}

fn c_project(f: &Fixture) -> TbProject {
    let root = f.root().display().to_string();
    let options = json!({"cacheDir": f.cache(), "secrets": {"DEMO_PASSWORD": "hunter2"}}).to_string();
    let mut project = TbProject { id: 0 };
    let mut err = empty();
    // SAFETY: valid pointers and lengths for the call's duration; out-params owned here.
    let st = unsafe {
        trailblaze_ffi::tb_project_open(
            root.as_ptr(),
            root.len(),
            options.as_ptr(),
            options.len(),
            &mut project,
            &mut err,
        )
    };
    assert_eq!(st, TbStatus::Ok, "{}", buf_text(&err));
    project
}

fn c_run_trail(f: &Fixture, file: &std::path::Path) -> Value {
    let project = c_project(f);
    let id = "demo";
    let opts = "{}";
    let mut session = TbSession { id: 0 };
    let mut out = empty();
    // SAFETY: as in `c_project`; every handle and buffer is freed below.
    unsafe {
        let st = trailblaze_ffi::tb_session_open(
            project,
            id.as_ptr(),
            id.len(),
            opts.as_ptr(),
            opts.len(),
            std::ptr::null(),
            &mut session,
            &mut out,
        );
        assert_eq!(st, TbStatus::Ok, "{}", buf_text(&out));
        trailblaze_ffi::tb_buf_free(&mut out);
        let path = file.display().to_string();
        let options = json!({"args": args()}).to_string();
        let st = trailblaze_ffi::tb_session_run_trail(
            session,
            path.as_ptr(),
            path.len(),
            options.as_ptr(),
            options.len(),
            &mut out,
        );
        assert_eq!(st, TbStatus::Ok, "{}", buf_text(&out));
        let v: Value = serde_json::from_str(&buf_text(&out)).expect("json");
        trailblaze_ffi::tb_buf_free(&mut out);
        trailblaze_ffi::tb_session_free(session);
        trailblaze_ffi::tb_project_free(project);
        v
    }
}

fn c_run_trails(f: &Fixture, files: &[PathBuf]) -> Outcomes {
    let project = c_project(f);
    let options = json!({"trails": files, "out": f.out().join("c"), "args": args()}).to_string();
    let mut run = trailblaze_ffi::TbRun { id: 0 };
    let mut out = empty();
    // SAFETY: as in `c_project`; every handle and buffer is freed below.
    unsafe {
        let st = trailblaze_ffi::tb_run_trails(project, options.as_ptr(), options.len(), &mut run, &mut out);
        assert_eq!(st, TbStatus::Ok, "{}", buf_text(&out));
        trailblaze_ffi::tb_buf_free(&mut out);
        let st = trailblaze_ffi::tb_run_report(run, &mut out);
        assert_eq!(st, TbStatus::Ok, "{}", buf_text(&out));
        let v: Value = serde_json::from_str(&buf_text(&out)).expect("json");
        trailblaze_ffi::tb_buf_free(&mut out);
        trailblaze_ffi::tb_run_free(run);
        trailblaze_ffi::tb_project_free(project);
        of_json(v["trails"].as_array().expect("trails"))
    }
}
