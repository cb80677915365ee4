//! Limits that hold for what trails and trailmaps can say: integer widths at the gate, composed tools
//! that fan out or call themselves, broken tools that say why.

use serde_json::json;
use trailblaze::Settings;
use trailblaze::gates::check_native;
use trailblaze_e2e::Fixture;

#[test]
fn an_integer_outside_its_rust_width_is_a_finding_at_the_gate_and_refused_at_the_call() {
    let f = Fixture::new("t");
    f.file(
        "trails/wide.trail.yaml",
        "config:\n  id: t/wide\n  target: t\ntrail:\n  - step: Tap far away\n    recording:\n      tools:\n        - tapOnPoint: { x: 2147483648, y: 1 }\n        - tapOnPoint: { x: 2147483647, y: -2147483648 }\n",
    );
    let project = f.project();
    let files = trailblaze::trails::find_trails(&[f.map_dir().join("trails")]).expect("trails");
    let report = check_native(&project, &files);
    let messages: Vec<String> = report.findings.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        messages.len(),
        1,
        "only the out-of-range value, not the edges: {messages:?}"
    );
    assert!(
        messages[0].contains("wide.trail.yaml:8:")
            && messages[0].contains("must be between -2147483648 and 2147483647"),
        "{messages:?}"
    );
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call("tapOnPoint", json!({ "x": 2147483648u64, "y": 1 }))
        .expect_err("out of range");
    assert!(err.to_string().starts_with("tapOnPoint: `x`"), "{err}");
}

#[test]
fn a_composed_tool_that_calls_itself_is_broken_at_load_and_says_how() {
    let f = Fixture::new("t");
    f.file(
        "tools/selfish.tool.yaml",
        "tools:\n  - pressKey: { keyCode: BACK }\n  - selfish: {}\n",
    );
    f.file("tools/ping.tool.yaml", "tools:\n  - pong: {}\n");
    f.file("tools/pong.tool.yaml", "tools:\n  - ping: {}\n");
    f.file("tools/fine.tool.yaml", "tools:\n  - pressKey: { keyCode: BACK }\n");
    let project = f.project();
    let catalog = project.catalog("t").expect("loads");
    let problems = catalog.problems.join("\n");
    for want in [
        "`selfish` calls itself (selfish → selfish)",
        "`ping` calls itself (ping → pong → ping)",
        "`pong` calls itself",
    ] {
        assert!(problems.contains(want), "{want}:\n{problems}");
    }
    assert!(!problems.contains("`fine`"), "control: {problems}");
    let (_p, s) = f.session(Settings::default());
    let before = s.steps().len();
    let err = s.call("ping", json!({})).expect_err("broken").to_string();
    assert!(err.contains("calls itself"), "{err}");
    assert_eq!(s.steps().len(), before, "nothing ran");
    s.call("fine", json!({}))
        .expect("control: a composed tool without a cycle runs");
}

#[test]
fn a_composed_tool_that_fans_out_stops_at_the_expansion_budget() {
    let f = Fixture::new("t");
    // Each level calls the next four times: 4^8 = 65,536 key presses at the bottom.
    for level in 0..8 {
        let next = if level == 7 {
            "pressKey: { keyCode: TAB }".to_string()
        } else {
            format!("l{}: {{}}", level + 1)
        };
        f.file(
            &format!("tools/l{level}.tool.yaml"),
            &format!("tools:\n  - {next}\n  - {next}\n  - {next}\n  - {next}\n"),
        );
    }
    let (_p, s) = f.session(Settings::default());
    let err = s.call("l0", json!({})).expect_err("over budget").to_string();
    assert!(err.contains("expanded into more than 10000 calls"), "{err}");
    let steps = s.steps().len();
    assert!(steps <= 10_000, "stopped at the budget: {steps} steps");
    // Control: the next call starts with a fresh budget.
    s.call("l7", json!({})).expect("a small fan-out runs");
}

#[test]
fn a_broken_scripted_tool_says_why_when_called_by_name() {
    let f = Fixture::new("t");
    f.tool("oops", "import { trailblaze } from \"@trailblaze/scripting\";\nexport const oops = trailblaze.tool(async () => {\n  return {;\n});\n");
    let project = f.project();
    let catalog = project.catalog("t").expect("loads");
    let err = catalog.llm_tool("oops").expect_err("broken").to_string();
    assert!(
        err.starts_with("t/tools/oops.ts:3:"),
        "file:line:col, not `not LLM-visible`: {err}"
    );
}

#[test]
fn an_invalid_regex_is_refused_by_both_gates_and_at_run_time() {
    let f = Fixture::new("t");
    f.file(
        "trails/typo.trail.yaml",
        "config:\n  id: t/typo\n  target: t\ntrail:\n  - verify: Gone\n    recording:\n      tools:\n        - assertNotVisibleBySelector:\n            nodeSelector: { androidAccessibility: { textRegex: 'Inbox (' } }\n        - assertNotVisibleBySelector:\n            nodeSelector: { androidAccessibility: { textRegex: 'Inbox \\(' } }\n",
    );
    let project = f.project();
    let files = trailblaze::trails::find_trails(&[f.map_dir().join("trails")]).expect("trails");
    let native = check_native(&project, &files);
    let tsc = trailblaze::gates::check_tsc(&project, &files).expect("tsc runs");
    for (gate, report) in [("native", &native), ("tsc", &tsc)] {
        let found: Vec<String> = report.findings.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            found.len(),
            1,
            "{gate}: only the invalid pattern, not the escaped one: {found:?}"
        );
        assert!(
            found[0].contains("typo.trail.yaml:9:") && found[0].contains("not a valid regular expression"),
            "{gate}: {found:?}"
        );
    }
    let (_p, s) = f.session(Settings::default());
    let err = s
        .call(
            "assertNotVisibleBySelector",
            json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Inbox (" } } }),
        )
        .expect_err("an invalid pattern never passes an assertion")
        .to_string();
    assert!(
        err.contains("`nodeSelector.androidAccessibility.textRegex`: not a valid regular expression"),
        "{err}"
    );
    s.call(
        "assertNotVisibleBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Inbox \\(" } } }),
    )
    .expect("control: the escaped pattern is fine");
}
