//! The run and its report: screens written once to `screens/`, nested calls, `maxRetries`,
//! `{{args.NAME}}`, the "no node matches" message, and the CI options (`report_dir`, `junit`, `latest`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trailblaze::report::Outcome;
use trailblaze::report::RunOutput;
use trailblaze::{Project, RunOptions, Settings, run_trails};
use trailblaze_e2e::Fixture;

/// The password the simulated app accepts, given to runs as the secret `PW`.
const PASSWORD: &str = "hunter2";

/// A scripted tool whose steps nest under it: launch, type both fields, tap "Sign in".
const SIGN_IN_TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Launches the demo app and signs in. */
export const signInWith = trailblaze.tool<{ email: string }, { done: boolean }>(async (input, ctx) => {
  await ctx.tools.launchApp({ appId: "com.example.demo" });
  await ctx.tools.inputText({ text: input.email, nodeSelector: { androidAccessibility: { hintTextRegex: "Email" } } });
  await ctx.tools.inputText({ text: "{{secret:PW}}", nodeSelector: { androidAccessibility: { hintTextRegex: "Password" } } });
  await ctx.tools.tapOnElementBySelector({ nodeSelector: { androidAccessibility: { textRegex: "Sign in" } } });
  return { done: true };
});
"#;

/// A trailmap `shop` running the demo app, with the `signInWith` tool.
pub fn fixture() -> Fixture {
    let f = Fixture::new("shop");
    f.tool("signInWith", SIGN_IN_TOOL);
    f
}

/// `config` + a trailhead that signs in as `email` (placeholders allowed) + `steps` (YAML, indented
/// as list items of `trail:`).
pub fn trail_text(config_extra: &str, email: &str, steps: &str) -> String {
    format!(
        "config:\n  id: report/t\n  target: shop\n{config_extra}trailhead:\n  step: Sign in as {email}\n  recording:\n    tools:\n      - signInWith: {{ email: \"{email}\" }}\ntrail:\n{steps}"
    )
}

pub fn write(f: &Fixture, name: &str, text: &str) -> PathBuf {
    let p = f.map_dir().join("trails").join(name);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(&p, text).expect("write");
    p
}

pub fn project(f: &Fixture, secrets: &[(&str, &str)]) -> Project {
    let pairs = secrets.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    f.project()
        .with_secrets(trailblaze_host_functions::SecretStore::from_pairs(pairs))
}

pub fn run(f: &Fixture, files: &[PathBuf], opts: RunOptions) -> RunOutput {
    run_trails(&project(f, &[("PW", PASSWORD)]), files, &opts, &mut ()).expect("runs")
}

pub fn opts(f: &Fixture) -> RunOptions {
    RunOptions {
        out: f.out(),
        settings: Settings::default(),
        ..RunOptions::default()
    }
}

fn with_args(f: &Fixture, args: &[(&str, &str)]) -> RunOptions {
    RunOptions {
        args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        ..opts(f)
    }
}

pub fn report_json(out: &RunOutput) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&out.files.json).expect("report.json")).expect("JSON")
}

fn tools(calls: &Value) -> Vec<&str> {
    calls
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["tool"].as_str()).collect())
        .unwrap_or_default()
}

const VERIFY_INBOX: &str = "  - verify: The inbox is shown\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Inbox$\" } } }\n";

#[test]
fn a_scripted_tools_calls_are_reported_under_it() {
    let f = fixture();
    let file = write(
        &f,
        "nested.trail.yaml",
        &trail_text("", "jane@example.com", VERIFY_INBOX),
    );
    let out = run(&f, &[file], opts(&f));
    assert_eq!(
        out.report.trails[0].outcome,
        Outcome::Passed,
        "{:?}",
        out.report.trails[0]
    );
    let v = report_json(&out);
    let head = &v["trails"][0]["steps"][0];
    assert_eq!(tools(&head["calls"]), ["signInWith"]);
    assert_eq!(
        tools(&head["calls"][0]["calls"]),
        ["launchApp", "inputText", "inputText", "tapOnElementBySelector"]
    );
    // Placeholders, never the value, in the nested arguments.
    assert_eq!(head["calls"][0]["calls"][2]["args"]["text"], "{{secret:PW}}");
    // Control: a built-in called from the trail has no nested calls.
    let verify = &v["trails"][0]["steps"][1];
    assert_eq!(tools(&verify["calls"]), ["assertVisibleBySelector"]);
    assert!(verify["calls"][0].get("calls").is_none(), "{verify}");
    // The page shows them nested: a list of calls inside the scripted tool's call.
    let html = std::fs::read_to_string(&out.files.html).expect("report.html");
    assert!(html.contains("<ol class=\"calls\">\n<li class=\"call ok\"><div class=\"head\"><code>launchApp</code>"));
    // Each step knows its line, and the trail its log.
    assert_eq!((head["line"].as_u64(), verify["line"].as_u64()), (Some(4), Some(10)));
    assert_eq!(v["trails"][0]["log"], "nested/log.jsonl");
    assert!(out.logs[0].as_ref().is_some_and(|l| l.is_file()));
}

/// Each step's calls, and the calls nested in each, by tool name.
fn step_tools(v: &Value) -> Vec<(Vec<&str>, Vec<&str>)> {
    v["trails"][0]["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|s| (tools(&s["calls"]), tools(&s["calls"][0]["calls"])))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn steps_started_while_the_last_is_reported_keep_their_own_calls() {
    let f = fixture();
    f.tool(
        "checkInbox",
        r#"import { trailblaze } from "@trailblaze/scripting";
/** Checks the inbox twice. */
export const checkInbox = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  const inbox = { nodeSelector: { androidAccessibility: { textRegex: "^Inbox$" } } };
  await ctx.tools.assertVisibleBySelector(inbox);
  await ctx.tools.assertVisibleBySelector(inbox);
  return {};
});
"#,
    );
    let check = "  - step: Check the inbox\n    recording:\n      tools:\n        - checkInbox: {}\n";
    let tap = |step: &str, text: &str| {
        format!(
            "  - step: {step}\n    recording:\n      tools:\n        - tapOnElementBySelector: {{ nodeSelector: {{ androidAccessibility: {{ textRegex: {text} }} }} }}\n"
        )
    };
    let (open, back) = (tap("Open a message", "Build Bot"), tap("Back", "Back to inbox"));
    let text = trail_text(
        "",
        "jane@example.com",
        &format!("{check}{VERIFY_INBOX}{open}{back}{check}"),
    );
    let file = write(&f, "overlap.trail.yaml", &text);
    let signed_in = (
        vec!["signInWith"],
        vec!["launchApp", "inputText", "inputText", "tapOnElementBySelector"],
    );
    let checked = (
        vec!["checkInbox"],
        vec!["assertVisibleBySelector", "assertVisibleBySelector"],
    );
    let verified = (vec!["assertVisibleBySelector"], vec![]);
    let tapped = (vec!["tapOnElementBySelector"], vec![]);
    let want = vec![signed_in, checked.clone(), verified, tapped.clone(), tapped, checked];
    // Each step's first call (after its screen, when kept) is sent while the step before it is
    // reported; under every policy the report is the same.
    let with = |screenshots| RunOptions {
        screenshots,
        ..opts(&f)
    };
    use trailblaze::report::ScreenshotPolicy::{All, Failures, None};
    let overlapped = run(&f, std::slice::from_ref(&file), with(None));
    let screens = run(&f, std::slice::from_ref(&file), with(All));
    let failures = run(&f, std::slice::from_ref(&file), with(Failures));
    for out in [&overlapped, &screens, &failures] {
        assert_eq!(
            out.report.trails[0].outcome,
            Outcome::Passed,
            "{:?}",
            out.report.trails[0]
        );
        assert_eq!(step_tools(&report_json(out)), want);
    }
    // The log holds the calls in trail order, each once.
    let log = std::fs::read_to_string(overlapped.logs[0].as_ref().expect("log")).expect("log.jsonl");
    let top: Vec<String> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "step_started" && e["depth"] == 0)
        .filter_map(|e| e["tool"].as_str().map(str::to_string))
        .collect();
    let taps = ["tapOnElementBySelector"; 2];
    assert_eq!(
        top,
        [
            &["signInWith", "checkInbox", "assertVisibleBySelector"][..],
            &taps,
            &["checkInbox"]
        ]
        .concat()
    );
    // Every kept screen is the one its own step left, not the next one's: the message, then the
    // inbox again.
    let steps = &screens.report.trails[0].steps;
    let svg = |i: usize| {
        let file = steps[i].screen.as_deref().unwrap_or_default();
        std::fs::read_to_string(screens.dir.join(file)).unwrap_or_default()
    };
    assert!(svg(3).contains("Back to inbox"), "{}", svg(3));
    assert!(
        !svg(4).contains("Back to inbox") && svg(4).contains("Inbox"),
        "{}",
        svg(4)
    );
}

#[test]
fn args_are_substituted_and_a_missing_one_fails_the_trail_at_its_place() {
    let f = fixture();
    let text = trail_text("", "{{args.EMAIL}}", VERIFY_INBOX);
    let file = write(&f, "args.trail.yaml", &text);
    let out = run(
        &f,
        std::slice::from_ref(&file),
        with_args(&f, &[("EMAIL", "jane@example.com")]),
    );
    let t = &out.report.trails[0];
    assert_eq!(t.outcome, Outcome::Passed, "{t:?}");
    assert_eq!(t.steps[0].text, "Sign in as jane@example.com");
    let log = std::fs::read_to_string(out.logs[0].as_ref().expect("a log")).expect("log");
    assert!(
        log.contains("\"email\":\"jane@example.com\""),
        "the call ran with the value: {log}"
    );
    // Without a value: the trail fails before any call, naming the placeholder and where it is.
    let out = run(&f, std::slice::from_ref(&file), opts(&f));
    let t = &out.report.trails[0];
    assert_eq!(t.outcome, Outcome::Failed);
    assert!(t.steps.is_empty() && t.log.is_none(), "nothing ran: {t:?}");
    let err = t.error.as_deref().unwrap_or_default();
    assert!(err.contains("`{{args.EMAIL}}` has no value"), "{err}");
    assert!(
        err.contains(&format!("{}:8:", file.display())),
        "the call's place: {err}"
    );
    assert!(
        err.contains(&format!("{}:5:", file.display())),
        "the step text's place: {err}"
    );
    // A declared default stands in; a given value wins over it.
    let declared = "  args:\n    EMAIL: { type: string, default: nobody@example.com }\n";
    let file = write(
        &f,
        "default.trail.yaml",
        &trail_text(declared, "{{args.EMAIL}}", VERIFY_INBOX),
    );
    let out = run(&f, std::slice::from_ref(&file), opts(&f));
    assert_eq!(out.report.trails[0].steps[0].text, "Sign in as nobody@example.com");
    assert_eq!(
        out.report.trails[0].outcome,
        Outcome::Failed,
        "the app refuses that account"
    );
    let out = run(&f, &[file], with_args(&f, &[("EMAIL", "jane@example.com")]));
    assert_eq!(out.report.trails[0].outcome, Outcome::Passed);
}

/// From the inbox, opens Ana Lima's message; from the message, goes back: then checks for the inbox.
/// The first attempt opens the message and fails; the second goes back and passes.
fn flaky_step(max_retries: u32) -> String {
    format!(
        "  - step: Reach the inbox\n    maxRetries: {max_retries}\n    recording:\n      tools:\n        - tapOnElementBySelector: {{ nodeSelector: {{ androidAccessibility: {{ textRegex: \"^Ana Lima$|^Back to inbox$\" }} }} }}\n        - assertVisibleBySelector: {{ nodeSelector: {{ androidAccessibility: {{ textRegex: \"^Inbox$\" }} }} }}\n"
    )
}

fn top_level_taps(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .expect("log")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "step_started" && e["depth"] == 0 && e["tool"] == "tapOnElementBySelector")
        .count()
}

#[test]
fn max_retries_reruns_a_failed_step_and_the_report_counts_the_attempts() {
    let f = fixture();
    let file = write(
        &f,
        "retry.trail.yaml",
        &trail_text("", "jane@example.com", &flaky_step(2)),
    );
    let out = run(&f, &[file], opts(&f));
    let t = &out.report.trails[0];
    assert_eq!(t.outcome, Outcome::Passed, "{t:?}");
    let step = &t.steps[1];
    assert_eq!(step.attempts, 2, "one failure, then a pass");
    assert_eq!(step.retried.len(), 1);
    assert!(step.retried[0].contains("not visible"), "{:?}", step.retried);
    assert_eq!(
        top_level_taps(out.logs[0].as_ref().expect("log")),
        2,
        "each attempt is logged"
    );
    let html = std::fs::read_to_string(&out.files.html).expect("html");
    assert!(html.contains("2 attempts"));
    // Control: with no retries the same step fails on its first attempt.
    let file = write(
        &f,
        "once.trail.yaml",
        &trail_text("", "jane@example.com", &flaky_step(0)),
    );
    let out = run(&f, &[file], opts(&f));
    let t = &out.report.trails[0];
    assert_eq!(t.outcome, Outcome::Failed);
    assert_eq!((t.steps[1].attempts, t.steps[1].retried.len()), (1, 0));
    assert_eq!(top_level_taps(out.logs[0].as_ref().expect("log")), 1);
}

#[test]
fn no_node_matches_names_the_selector_and_the_nearest_nodes() {
    let f = fixture();
    let steps = "  - step: Open settings\n    recording:\n      tools:\n        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Setings } } }\n";
    let file = write(&f, "typo.trail.yaml", &trail_text("", "jane@example.com", steps));
    let out = run(&f, &[file], opts(&f));
    let err = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(
        err.contains("{\"androidAccessibility\":{\"textRegex\":\"Setings\"}}"),
        "names the selector: {err}"
    );
    let nearest = err.split("nearest on screen: ").nth(1).unwrap_or_default();
    assert!(
        nearest.starts_with('[') && nearest.contains("Button \"Settings\""),
        "{err}"
    );
    assert!(nearest.matches(", [").count() <= 2, "at most three: {nearest}");
    // Control: the right text taps.
    let steps = steps.replace("Setings", "Settings");
    let file = write(&f, "right.trail.yaml", &trail_text("", "jane@example.com", &steps));
    assert_eq!(run(&f, &[file], opts(&f)).report.trails[0].outcome, Outcome::Passed);
    // A placeholder in the selector never shows its value.
    let steps = "  - verify: The password is shown\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"{{secret:PW}}\" } } }\n";
    let file = write(&f, "secret.trail.yaml", &trail_text("", "jane@example.com", steps));
    let out = run(&f, &[file], opts(&f));
    let err = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(err.contains("not visible") && err.contains("textRegex"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

/// Every file under `dir`, with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).expect("read")).into_owned();
                out.push((p, text));
            }
        }
    }
    out
}

#[test]
fn a_secret_typed_into_a_field_never_reaches_a_screen_or_a_report() {
    const SECRET: &str = "CANARY-typed-7f3a9b";
    let f = fixture();
    let typed = |text: &str| {
        format!(
            "  - step: Type into the email field\n    recording:\n      tools:\n        - launchApp: {{ appId: com.example.demo }}\n        - inputText: {{ text: \"{text}\", nodeSelector: {{ androidAccessibility: {{ hintTextRegex: Email }} }} }}\n"
        )
    };
    let text = format!("config:\n  target: shop\ntrail:\n{}", typed("{{secret:PIN}}"));
    let file = write(&f, "typed.trail.yaml", &text);
    let project = project(&f, &[("PIN", SECRET)]);
    let out = run_trails(&project, &[file], &opts(&f), &mut ()).expect("runs");
    assert!(out.report.summary().ok(), "{:?}", out.report.trails[0]);
    let files = files_under(&out.dir);
    let screens: Vec<_> = files.iter().filter(|(p, _)| p.starts_with(&out.screens)).collect();
    assert!(
        !screens.is_empty() && screens.iter().all(|(_, t)| t.contains("<svg")),
        "the screens are there"
    );
    for (p, t) in &files {
        assert!(!t.contains(SECRET), "{} holds the secret", p.display());
    }
    // Control: the same text typed as plain text (no secret) does show on the screen.
    let f = fixture();
    let text = format!("config:\n  target: shop\ntrail:\n{}", typed(SECRET));
    let file = write(&f, "plain.trail.yaml", &text);
    let out = run(&f, &[file], opts(&f));
    let shown = files_under(&out.screens).iter().any(|(_, t)| t.contains(SECRET));
    assert!(shown, "a screen shows what a field holds");
}

#[test]
fn a_long_trail_keeps_its_reports_small_and_writes_each_screen_once() {
    const STEPS: usize = 2_000;
    let f = fixture();
    let mut steps = String::new();
    for i in 0..STEPS {
        let call = if i % 2 == 0 {
            "tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Ana Lima$\" } } }"
        } else {
            "pressKey: { keyCode: BACK }"
        };
        steps.push_str(&format!(
            "  - step: move {i}\n    recording:\n      tools:\n        - {call}\n"
        ));
    }
    let file = write(&f, "long.trail.yaml", &trail_text("", "jane@example.com", &steps));
    let out = run(&f, &[file], opts(&f));
    let t = &out.report.trails[0];
    assert_eq!((t.outcome.clone(), t.steps.len()), (Outcome::Passed, STEPS + 1));
    let json = std::fs::metadata(&out.files.json).expect("json").len() as usize;
    let html = std::fs::metadata(&out.files.html).expect("html").len() as usize;
    eprintln!("{STEPS} steps: report.json {json} bytes, report.html {html} bytes");
    // A step costs its text and calls, about a kilobyte at most; an inlined screen alone was several.
    assert!(json < STEPS * 1024 && html < STEPS * 1024, "json {json}, html {html}");
    let page = std::fs::read_to_string(&out.files.html).expect("html");
    assert!(
        !page.contains("<svg") && !page.contains("data:image"),
        "no screen inlined"
    );
    // Two screens (the inbox, the message), each written once, each step pointing at one.
    let named: std::collections::BTreeSet<&str> = t.steps.iter().filter_map(|s| s.screen.as_deref()).collect();
    let written: Vec<_> = files_under(&out.screens);
    assert_eq!(named.len(), 2, "{named:?}");
    assert_eq!(written.len(), named.len());
    // Control: what the steps point at are the screens, as SVG, on disk.
    for name in &named {
        let text = std::fs::read_to_string(out.dir.join(name)).expect("the screen file");
        assert!(text.contains("<svg"));
    }
    assert!(t.steps.iter().all(|s| s.screen.is_some()), "every step has its screen");
}

#[test]
fn ci_options_put_the_run_where_asked_and_latest_follows_the_newest_run() {
    let f = fixture();
    let file = write(&f, "ci.trail.yaml", &trail_text("", "jane@example.com", VERIFY_INBOX));
    let report_dir = f.dir.path().join("ci/report");
    let junit = f.dir.path().join("ci/junit/results.xml");
    let out = run(
        &f,
        std::slice::from_ref(&file),
        RunOptions {
            report_dir: Some(report_dir.clone()),
            junit: Some(junit.clone()),
            ..opts(&f)
        },
    );
    assert_eq!(out.dir, report_dir);
    for p in [&out.files.html, &out.files.json, &out.files.junit] {
        assert!(p.starts_with(&report_dir) && p.is_file(), "{}", p.display());
    }
    assert_eq!(out.junit.as_deref(), Some(junit.as_path()));
    let xml = std::fs::read_to_string(&junit).expect("the extra junit.xml");
    roxmltree::Document::parse(&xml).expect("well-formed JUnit");
    assert!(out.screens.is_dir() && out.logs[0].as_ref().is_some_and(|l| l.starts_with(&report_dir)));
    let latest = f.out().join("latest");
    assert_eq!(out.latest.as_deref(), Some(latest.as_path()));
    let points_at = |p: &Path| std::fs::canonicalize(p).expect("resolves");
    assert_eq!(points_at(&latest), points_at(&report_dir));
    // A second run (the default folder) takes `latest` over, relative to `out`.
    let second = run(&f, &[file], opts(&f));
    assert_ne!(second.dir, report_dir);
    assert_eq!(points_at(&latest), points_at(&second.dir));
    let link = std::fs::read_link(&latest).expect("a symlink");
    assert!(link.is_relative(), "{}", link.display());
    assert!(points_at(&latest).join("report.html").is_file());
}
