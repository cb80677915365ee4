use serde_json::json;

use super::*;

const SCREEN: &str = "screens/0123abcd.svg";

fn step(number: usize, kind: &str, text: &str, outcome: Outcome) -> StepReport {
    StepReport {
        number,
        kind: kind.into(),
        text: text.into(),
        line: 3 + number * 4,
        outcome,
        started_ms: 0.0,
        duration_ms: 0.0,
        attempts: 1,
        retried: Vec::new(),
        calls: Vec::new(),
        error: None,
        screen: None,
        screen_size: None,
        agent: None,
        llm: None,
        page: None,
    }
}

fn call(tool: &str, args: Value, ok: bool) -> CallReport {
    let error = (!ok).then(|| "no node matches the selector".to_string());
    CallReport {
        tool: tool.into(),
        args,
        ok,
        error,
        duration_ms: 12.5,
        line: Some(7),
        tap: None,
        calls: Vec::new(),
    }
}

fn trail(file: &str, title: &str, outcome: Outcome, steps: Vec<StepReport>) -> TrailReport {
    TrailReport {
        device: None,
        lost_devices: Vec::new(),
        llm: None,
        file: file.into(),
        id: Some(format!("demo/{title}")),
        title: Some(title.into()),
        outcome,
        duration_ms: 1234.0,
        steps,
        error: None,
        log: Some(format!("{title}/log.jsonl")),
        written: None,
        storyboard: None,
        trace: None,
    }
}

fn sample() -> RunReport {
    let mut head = step(0, "step", "Launch the app", Outcome::Passed);
    head.calls
        .push(call("launchApp", json!({"appId": "com.example.demo"}), true));
    head.screen = Some(SCREEN.into());
    head.screen_size = Some(Point { x: 400, y: 800 });
    head.calls[0].tap = Some(Point { x: 100, y: 200 });
    let mut sign_in = step(1, "step", "Sign in", Outcome::Passed);
    sign_in
        .calls
        .push(call("inputText", json!({"text": "{{secret:DEMO_PASSWORD}}"}), true));
    let mut hostile = step(1, "verify", "<script>alert('x')</script> & \"quotes\"", Outcome::Failed);
    hostile.calls.push(call(
        "assertVisibleBySelector",
        json!({"nodeSelector": {"x": "<b>"}}),
        false,
    ));
    hostile.error = Some("assertVisibleBySelector failed: no node matches\u{1b}[0m".into());
    hostile.calls[0].error = hostile.error.clone();
    hostile.screen = Some(SCREEN.into());
    let after = step(
        2,
        "step",
        "Go back",
        Outcome::Skipped {
            reason: "an earlier step failed".into(),
        },
    );
    let agent = step(1, "step", "Decide with the agent", Outcome::NotRecorded);
    RunReport {
        shard: None,
        suite: None,
        started_unix_ms: 1_700_000_000_000,
        duration_ms: 5000.0,
        device: "sim".into(),
        llm: None,
        trails: vec![
            trail(
                "trails/sign-in.trail.yaml",
                "Sign in",
                Outcome::Passed,
                vec![head, sign_in],
            ),
            trail(
                "trails/hostile.trail.yaml",
                "Hostile <b>",
                Outcome::Failed,
                vec![hostile, after],
            ),
            trail("trails/agent.trail.yaml", "Agent", Outcome::NotRecorded, vec![agent]),
            trail(
                "trails/off.trail.yaml",
                "Off",
                Outcome::Skipped {
                    reason: "blocked on #123".into(),
                },
                vec![],
            ),
        ],
    }
}

/// The page read by a strict XML parser: it must take it whole (`<!DOCTYPE html>` is a DTD to it).
fn parse_xhtml(html: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, opts).unwrap_or_else(|e| panic!("{e}\n{html}"))
}

/// The text of an element and everything inside it.
fn text_of(node: roxmltree::Node) -> String {
    node.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

fn has_class(node: &roxmltree::Node, class: &str) -> bool {
    node.attribute("class")
        .is_some_and(|c| c.split(' ').any(|x| x == class))
}

#[test]
fn the_html_is_well_formed_and_names_every_step_with_its_outcome() {
    let report = sample();
    let html = render_html(&report);
    // The page is XHTML-compatible: a strict XML parser reads it whole.
    let doc = parse_xhtml(&html);
    let steps: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("li") && has_class(n, "step"))
        .collect();
    let all: Vec<&StepReport> = report.trails.iter().flat_map(|t| &t.steps).collect();
    assert_eq!(steps.len(), all.len());
    for (li, s) in steps.iter().zip(&all) {
        let text = text_of(*li);
        assert!(text.contains(&s.text), "{text}");
        assert!(
            has_class(li, &s.outcome.word().replace(' ', "-")),
            "{:?}",
            li.attribute("class")
        );
        assert!(text.contains(s.outcome.word()), "{text}");
    }
    // "Not recorded" is shown as such, never as passed.
    let agent = text_of(steps[4]);
    assert!(
        agent.contains("Step 1") && agent.contains("not recorded") && !agent.contains("passed"),
        "{agent}"
    );
    // The calls and their arguments, the error, and the screen.
    let first = text_of(steps[0]);
    assert!(
        first.contains("Trailhead") && first.contains("launchApp") && first.contains("com.example.demo"),
        "{first}"
    );
    assert!(text_of(steps[1]).contains("{{secret:DEMO_PASSWORD}}"));
    assert_eq!(
        text_of(steps[2]).matches("no node matches").count(),
        1,
        "the error is shown once"
    );
    let img = steps[0]
        .descendants()
        .find(|n| n.has_tag_name("img"))
        .expect("the screen");
    assert_eq!(img.attribute("src"), Some(SCREEN), "by relative path, not inlined");
    assert!(steps[1].descendants().all(|n| !n.has_tag_name("img")));
    // The tap point sits at its place on the screen (100/400, 200/800), and only where a call tapped.
    let tap = steps[0]
        .descendants()
        .find(|n| has_class(n, "tap"))
        .expect("a tap mark");
    assert_eq!(tap.attribute("style"), Some("left:25.00%;top:25.00%"));
    assert!(
        steps[2].descendants().all(|n| !has_class(&n, "tap")),
        "control: no tap, no mark"
    );
    // Each step says where it is in its file, and each trail links its log.
    assert!(
        text_of(steps[1]).contains("trails/sign-in.trail.yaml:7"),
        "{}",
        text_of(steps[1])
    );
    assert!(
        doc.descendants()
            .any(|n| n.attribute("href") == Some("Sign in/log.jsonl"))
    );
    // A summary at the top, and a section per trail.
    let summary = doc.descendants().find(|n| has_class(n, "summary")).unwrap();
    assert_eq!(text_of(summary), "4 trails  1 passed 1 failed 1 not recorded 1 skipped");
    let trails: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("details") && has_class(n, "trail"))
        .collect();
    assert_eq!(trails.len(), 4);
    // Passed and skipped trails are folded; the others open.
    let open: Vec<bool> = trails.iter().map(|n| n.attribute("open").is_some()).collect();
    assert_eq!(open, [false, true, true, false]);
    // The "failures only" switch is there, and the CSS it drives names the passed trails.
    assert!(doc.descendants().any(|n| n.attribute("id") == Some("failures-only")));
    assert!(html.contains("#failures-only:checked~details.trail.passed"));
    assert!(html.contains("blocked on #123"));
    // Self-contained: nothing is fetched.
    assert!(!html.contains("<link") && !html.contains("src=\"http") && !html.contains("url("));
}

#[test]
fn every_text_is_escaped() {
    let html = render_html(&sample());
    assert!(!html.contains("<script>alert"), "a step text became markup");
    assert_eq!(html.matches("<script").count(), 1, "only the page's own script");
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"));
    assert!(html.contains("Hostile &lt;b&gt;"));
    let doc = parse_xhtml(&html);
    assert!(doc.descendants().all(|n| !n.has_tag_name("b")));
    // One script, the page's own, at the end: no text of the run is in it.
    let scripts: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("script")).collect();
    assert_eq!(scripts.len(), 1);
    assert!(!text_of(scripts[0]).contains("alert"));
    // The terminal colour code in the error cannot break the XML.
    assert!(!html.contains('\u{1b}'));
    let junit = render_junit(&sample());
    assert!(!junit.contains("<script>") && !junit.contains('\u{1b}'));
}

#[test]
fn the_junit_is_well_formed_with_the_right_counts() {
    let xml = render_junit(&sample());
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    let attr = |name| suite.attribute(name).unwrap();
    assert_eq!(
        (attr("tests"), attr("failures"), attr("errors"), attr("skipped")),
        ("4", "2", "0", "1")
    );
    assert_eq!(attr("time"), "5.000");
    assert_eq!(attr("timestamp"), "2023-11-14T22:13:20");
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[1].attribute("name"), Some("Hostile <b>"));
    assert_eq!(cases[1].attribute("file"), Some("trails/hostile.trail.yaml"));
    assert_eq!(cases[1].attribute("time"), Some("1.234"));
    fn failure<'a, 'i>(c: &roxmltree::Node<'a, 'i>) -> Option<roxmltree::Node<'a, 'i>> {
        c.children().find(|n| n.has_tag_name("failure"))
    }
    assert!(failure(&cases[0]).is_none() && cases[0].children().all(|n| !n.is_element()));
    let hostile = failure(&cases[1]).unwrap();
    assert_eq!(hostile.attribute("type"), Some("StepFailed"));
    let message = hostile.attribute("message").unwrap();
    assert!(
        message.starts_with("step 1 failed: <script>alert('x')</script>"),
        "{message}"
    );
    assert!(text_of(hostile).contains("[skipped] step 2 (step): Go back"));
    let agent = failure(&cases[2]).unwrap();
    assert_eq!(agent.attribute("type"), Some("NotRecorded"));
    assert!(agent.attribute("message").unwrap().contains("not recorded"));
    let skipped = cases[3].children().find(|n| n.has_tag_name("skipped")).unwrap();
    assert_eq!(skipped.attribute("message"), Some("blocked on #123"));
}

#[test]
fn the_json_has_a_summary_and_reads_back() {
    let report = sample();
    let text = render_json(&report);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["summary"],
        json!({"total": 4, "passed": 1, "failed": 1, "skipped": 1, "not_recorded": 1, "errors": 0})
    );
    assert_eq!(
        v["trails"][3]["outcome"],
        json!({"status": "skipped", "reason": "blocked on #123"})
    );
    assert_eq!(v["trails"][2]["steps"][0]["outcome"], json!({"status": "not_recorded"}));
    let back: RunReport = serde_json::from_value(v).unwrap();
    assert_eq!(back, report);
    assert!(!report.summary().ok());
}

#[test]
fn redact_scrubs_secret_values_everywhere() {
    let mut report = sample();
    let step = &mut report.trails[0].steps[1];
    step.calls[0].args = json!({"text": "hunter2", "nested": ["x hunter2 y"]});
    step.error = Some("typed hunter2".into());
    step.retried = vec!["first try typed hunter2".into()];
    let mut nested = call("inputText", json!({"text": "a<b hunter2"}), false);
    nested.error = Some("nested hunter2".into());
    step.calls[0].calls.push(nested);
    // Control: the values are in the report before it is redacted.
    assert!(render_json(&report).matches("hunter2").count() >= 5);
    report.redact(&["hunter2".to_string(), "a<b".to_string(), String::new()]);
    let text = render_json(&report);
    assert!(!text.contains("hunter2") && !text.contains("a<b"), "{text}");
    assert!(text.contains("x *** y") && text.contains("typed ***") && text.contains("nested ***"));
}

#[test]
fn a_head_redaction_scrubs_the_trails_own_texts_and_leaves_its_steps() {
    let mut report = sample();
    let secret = crate::secret::Redaction::new(&["hunter2".to_string()]);
    let trail = &mut report.trails[0];
    trail.error = Some("typed hunter2".into());
    trail.steps[1].error = Some("step typed hunter2".into());
    let mut head = trail.clone();
    head.redact_head(&secret);
    assert_eq!(head.error.as_deref(), Some("typed ***"));
    // The steps are left: a replay redacted each as it ended.
    assert_eq!(head.steps, trail.steps);
    // Control: the whole redaction scrubs the step too.
    trail.redact(&secret);
    assert_eq!(trail.steps[1].error.as_deref(), Some("step typed ***"));
}

#[test]
fn write_all_writes_the_three_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run-1");
    let files = write_all(&sample(), &out).unwrap();
    assert_eq!(files.json, out.join("report.json"));
    for f in [&files.json, &files.html, &files.junit] {
        assert!(std::fs::metadata(f).unwrap().len() > 100, "{}", f.display());
    }
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "no temporary file is left: {names:?}");
}

/// A long run's files go out a buffer at a time and read as the reports rendered whole; a short
/// run's (one buffer) too.
#[test]
fn a_long_runs_files_are_written_a_buffer_at_a_time_and_read_as_rendered_whole() {
    let long = {
        let mut r = sample();
        let steps = (1..=4_000)
            .map(|n| {
                let mut s = step(n, "step", &format!("Tap <row> & \"{n}\""), Outcome::Passed);
                s.calls = vec![call(
                    "tapOnElementBySelector",
                    json!({ "text": format!("row {n}") }),
                    true,
                )];
                s
            })
            .collect();
        r.trails
            .push(trail("trails/long.trail.yaml", "Long", Outcome::Passed, steps));
        r
    };
    for (report, buffers) in [(&long, 4), (&sample(), 0)] {
        let dir = tempfile::tempdir().unwrap();
        let files = write_all(report, dir.path()).unwrap();
        let (json, html) = (render_json(report), render_html(report));
        // The control: the long run's texts are several buffers long, so the file was written in parts.
        assert!(html.len() > buffers * crate::files::CHUNK && json.len() > buffers * crate::files::CHUNK);
        assert!(
            std::fs::read_to_string(&files.json).unwrap() == json,
            "report.json differs"
        );
        assert!(
            std::fs::read_to_string(&files.html).unwrap() == html,
            "report.html differs"
        );
    }
}

#[test]
fn helpers() {
    assert_eq!(utc(0, ' '), "1970-01-01 00:00:00");
    assert_eq!(utc(951_782_400_000, 'T'), "2000-02-29T00:00:00");
    assert_eq!(xml_escape("a\u{0}b\tc"), "a\u{fffd}b\tc");
    assert_eq!(Outcome::NotRecorded.word(), "not recorded");
}

#[test]
fn a_device_failure_is_a_junit_error_not_a_failure_and_never_ok() {
    let mut lost = step(1, "step", "Sign in", Outcome::Error);
    lost.error = Some("tapOnPoint: the device failed: device I/O: connection reset".into());
    let report = RunReport {
        started_unix_ms: 0,
        duration_ms: 1.0,
        device: "flaky".into(),
        llm: None,
        shard: None,
        suite: None,
        trails: vec![
            trail("trails/lost.trail.yaml", "Lost", Outcome::Error, vec![lost]),
            trail("trails/ok.trail.yaml", "Fine", Outcome::Passed, Vec::new()),
        ],
    };
    let s = report.summary();
    assert_eq!((s.errors, s.failed, s.passed), (1, 0, 1));
    assert!(!s.ok());
    let xml = render_junit(&report);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed");
    let errors: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("error")).collect();
    assert_eq!(errors.len(), 1, "{xml}");
    assert_eq!(errors[0].attribute("type"), Some("DeviceFailed"));
    assert!(doc.descendants().all(|n| !n.has_tag_name("failure")), "{xml}");
    // Control: a failed step is a JUnit failure.
    let mut failed = report.clone();
    failed.trails[0].outcome = Outcome::Failed;
    failed.trails[0].steps[0].outcome = Outcome::Failed;
    assert!(render_junit(&failed).contains("<failure type=\"StepFailed\""));
}

mod viewer;
