//! The original's built-ins that need no Android shell, on the simulated demo app: each with a call
//! that succeeds and one that fails, memory tokens across calls, the platform tools refused by
//! name, and the type gate knowing them all.

use serde_json::{Value, json};
use trailblaze::gates::check_native;
use trailblaze::report::ScreenshotPolicy;
use trailblaze::{CallError, RunOptions, Session, Settings, run_trails};
use trailblaze_e2e::{CANARY, Fixture, device_tree, field_text, session_with};
use trailblaze_host_functions::{HostRegistry, SecretStore};

fn signed_in(s: &Session) {
    for (tool, args) in [
        (
            "inputText",
            json!({"text": "jane@example.com", "nodeSelector": {"androidAccessibility": {"hintTextRegex": "Email"}}}),
        ),
        (
            "inputText",
            json!({"text": "hunter2", "nodeSelector": {"androidAccessibility": {"hintTextRegex": "Password"}}}),
        ),
        (
            "tapOnElementBySelector",
            json!({"nodeSelector": {"androidAccessibility": {"textRegex": "Sign in"}}}),
        ),
    ] {
        s.call(tool, args).expect(tool);
    }
}

fn failure(r: Result<Value, CallError>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected a failure, got {v}"),
    }
}

fn text_selector(text: &str) -> Value {
    json!({ "androidAccessibility": { "textRegex": text } })
}

#[test]
fn assert_not_visible_with_text_is_lenient_and_answers_from_one_capture_on_the_sim() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    // Not on the sign-in screen: passes.
    assert_eq!(
        s.call("assertNotVisibleWithText", json!({"text": "Inbox"})).unwrap()["visible"],
        false
    );
    // Case-insensitive by default, so a wrong guess of the casing cannot pass vacuously.
    let before = s.captures();
    assert!(failure(s.call("assertNotVisibleWithText", json!({"text": "sign IN"}))).contains("visible"));
    // The sim's screen never changes by itself: one capture, no polling.
    assert!(s.captures() - before <= 1, "{} captures", s.captures() - before);
    // `(?-i)` makes it case-sensitive: the screen shows "Sign in", not "sign IN".
    assert!(
        s.call("assertNotVisibleWithText", json!({"text": "(?-i)sign IN"}))
            .is_ok()
    );
    // A text with regex metacharacters is matched as written too.
    signed_in(&s);
    assert!(failure(s.call("assertNotVisibleWithText", json!({"text": "Lunch on Thursday?"}))).contains("visible"));
    // `id` narrows: the text is shown, but not by a node with that id.
    assert!(
        s.call(
            "assertNotVisibleWithText",
            json!({"text": "Ana Lima", "id": ".*message2Sender"})
        )
        .is_ok()
    );
    assert!(failure(s.call("assertNotVisibleWithText", json!({"text": "x", "id": "("}))).contains("`id`"));
}

#[test]
fn wait_waits_and_stops_at_the_calls_budget() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    assert_eq!(
        s.call("wait", json!({"timeToWaitInSeconds": 0})).unwrap()["waitedMs"],
        0
    );
    assert!(failure(s.call("wait", json!({"timeToWaitInSeconds": "5"}))).contains("timeToWaitInSeconds"));
    let mut settings = Settings::default();
    settings.limits.wall_timeout = std::time::Duration::from_millis(200);
    let (_p, s) = f.session(settings);
    assert!(failure(s.call("wait", json!({"timeToWaitInSeconds": 60}))).contains("stopped while waiting"));
    // The session stays usable.
    assert!(s.call("wait", json!({"timeToWaitInSeconds": 0})).is_ok());
}

#[test]
fn wait_until_not_visible_and_find_matches_answer_without_failing() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    assert_eq!(
        s.call("waitUntilNotVisible", json!({"nodeSelector": text_selector("Inbox")}))
            .unwrap(),
        true
    );
    assert_eq!(
        s.call(
            "waitUntilNotVisible",
            json!({"nodeSelector": text_selector("Sign in"), "timeoutMs": 10})
        )
        .unwrap(),
        false
    );
    let fields = s
        .call(
            "findMatches",
            json!({"selector": {"androidAccessibility": {"classNameRegex": ".*EditText"}}}),
        )
        .unwrap();
    let fields = fields.as_array().unwrap();
    assert_eq!(fields.len(), 2);
    assert_eq!(fields[0]["resourceId"], "com.example.demo:id/email");
    assert!(fields[0]["indexPath"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(fields[0]["ref"].is_string() && fields[0]["bounds"]["right"].is_i64());
    // The index path leads to the node: the second field is the root's next child.
    assert_ne!(fields[0]["indexPath"], fields[1]["indexPath"]);
    assert_eq!(
        s.call("findMatches", json!({"selector": text_selector("Nowhere")}))
            .unwrap(),
        json!([])
    );
    // A selector that says nothing is refused, not answered with everything.
    assert!(failure(s.call("findMatches", json!({"selector": {}}))).contains("no predicate"));
    // Author queries: never offered to the LLM, never recorded.
    let names: Vec<String> = _p.catalog("t").unwrap().llm_tools().map(|t| t.name.clone()).collect();
    assert!(!names.iter().any(|n| n == "findMatches" || n == "waitUntilNotVisible"));
}

#[test]
fn remember_text_and_number_feed_later_calls_through_tokens() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    s.call(
        "inputText",
        json!({"text": "jane@example.com", "nodeSelector": {"androidAccessibility": {"hintTextRegex": "Email"}}}),
    )
    .unwrap();
    // The prompt names the field by its id.
    let got = s
        .call("rememberText", json!({"prompt": "email", "variable": "who"}))
        .unwrap();
    assert_eq!(got["value"], "jane@example.com");
    assert!(
        s.call(
            "assertEquals",
            json!({"actual": "{{who}}", "expected": "jane@example.com"})
        )
        .is_ok()
    );
    assert!(
        s.call(
            "assertEquals",
            json!({"actual": "${memory.who}", "expected": "jane@example.com"})
        )
        .is_ok()
    );
    let e = failure(s.call(
        "assertEquals",
        json!({"actual": "{{who}}", "expected": "sam@example.com"}),
    ));
    assert!(e.contains("expected `sam@example.com`, got `jane@example.com`"), "{e}");
    assert!(
        s.call(
            "assertNotEquals",
            json!({"actual": "{{who}}", "expected": "sam@example.com"})
        )
        .is_ok()
    );
    assert!(
        failure(s.call(
            "assertNotEquals",
            json!({"actual": "{{who}}", "expected": "jane@example.com"})
        ))
        .contains("other than")
    );
    // A token in a device call resolves at the device; the step keeps the token.
    s.call(
        "inputText",
        json!({"text": "{{who}}", "nodeSelector": {"androidAccessibility": {"hintTextRegex": "Password"}}}),
    )
    .unwrap();
    // The password field shows a dot per character: the 16 of the value, not the 7 of the token.
    assert_eq!(
        field_text(&device_tree(&s), "password").map(|t| t.chars().count()),
        Some(16)
    );
    let last = s.steps().into_iter().rfind(|r| r.tool == "inputText").unwrap();
    assert_eq!(last.args["text"], "{{who}}");
    // An unknown token stays as written (a typo shows, it does not blank).
    assert!(
        s.call(
            "assertEquals",
            json!({"actual": "{{nobody}}", "expected": "{{nobody}}"})
        )
        .is_ok()
    );
    // A prompt that names nothing needs an LLM, which the session has not.
    let e = failure(s.call("rememberText", json!({"prompt": "the order total", "variable": "t"})));
    assert!(
        e.contains("no node on the screen is named by `prompt`") && e.contains("LLM provider"),
        "{e}"
    );
    assert!(
        failure(s.call("rememberText", json!({"prompt": "email", "variable": "two words"}))).contains("`variable`")
    );

    // Memory is the session's: a new session starts empty.
    let (_p, s) = f.session(Settings::default());
    signed_in(&s);
    s.call(
        "tapOnElementBySelector",
        json!({"nodeSelector": text_selector("Build Bot")}),
    )
    .unwrap();
    assert_eq!(
        s.call("rememberNumber", json!({"prompt": "body", "variable": "tests"}))
            .unwrap()["value"],
        "1204"
    );
    assert!(
        s.call("assertMath", json!({"expression": "{{tests}} + 1", "expected": "1205"}))
            .is_ok()
    );
    assert!(
        s.call(
            "assertMath",
            json!({"expression": "[[body]] * 2", "expected": "2408.00001"})
        )
        .is_ok()
    );
    let e = failure(s.call("assertMath", json!({"expression": "{{tests}} / 2", "expected": "1"})));
    assert!(e.contains("is 602, expected 1"), "{e}");
    assert!(
        failure(s.call("assertMath", json!({"expression": "1", "expected": "one"})))
            .contains("`expected` is not a number")
    );
    assert!(failure(s.call("assertMath", json!({"expression": "(1", "expected": "1"}))).contains("`expression`"));
    assert!(failure(s.call("rememberNumber", json!({"prompt": "subject", "variable": "n"}))).contains("no number"));
    let dump = s.call("dumpMemory", json!({})).unwrap();
    assert_eq!(dump["memory"], json!({"tests": "1204"}));
}

#[test]
fn memory_never_holds_a_secret_typed_on_the_screen() {
    let f = Fixture::new("t");
    let secrets = SecretStore::from_pairs([("DEMO_EMAIL".to_string(), CANARY.to_string())]);
    let (_secrets, s) = session_with(&f, secrets, HostRegistry::builtin());
    s.call(
        "inputText",
        json!({"text": "{{secret:DEMO_EMAIL}}", "nodeSelector": {"androidAccessibility": {"hintTextRegex": "Email"}}}),
    )
    .unwrap();
    let got = s
        .call("rememberText", json!({"prompt": "email", "variable": "e"}))
        .unwrap();
    assert_eq!(got["value"], "***");
    let dump = s.call("dumpMemory", json!({})).unwrap();
    assert!(!dump.to_string().contains(CANARY), "{dump}");
    // Control: the field does hold the secret on the device.
    assert_eq!(field_text(&device_tree(&s), "email").as_deref(), Some(CANARY));
}

#[test]
fn signals_and_snapshots_pass_and_fail_as_the_original() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let ok = s
        .call(
            "objectiveStatus",
            json!({"explanation": "signed in", "status": "COMPLETED"}),
        )
        .unwrap();
    assert_eq!(ok["status"], "COMPLETED");
    let e = failure(s.call(
        "objectiveStatus",
        json!({"explanation": "no inbox", "status": "FAILED"}),
    ));
    assert!(e.contains("the objective failed: no inbox"), "{e}");
    assert!(failure(s.call("objectiveStatus", json!({"explanation": "x", "status": "DONE"}))).contains("status"));
    let active = s
        .call("setActiveToolSets", json!({"toolSetIds": ["navigation"]}))
        .unwrap()["active"]
        .clone();
    assert!(
        active.as_array().is_some_and(|a| a.iter().any(|t| t == "navigation")),
        "{active}"
    );
    assert!(failure(s.call("setActiveToolSets", json!({}))).contains("toolSetIds"));
    assert_eq!(
        s.call("takeSnapshot", json!({"screenName": "sign_in"})).unwrap()["screenName"],
        "sign_in"
    );
    assert!(failure(s.call("takeSnapshot", json!({"screenName": " "}))).contains("empty"));
    for tool in ["assertWithAi", "rememberWithAi"] {
        let args = json!({"prompt": "the inbox is shown", "variable": "v"});
        let args = if tool == "assertWithAi" {
            json!({"prompt": "the inbox is shown"})
        } else {
            args
        };
        assert!(failure(s.call(tool, args)).contains("no LLM provider"), "{tool}");
    }
    // Control: the arguments are still checked first.
    assert!(failure(s.call("assertWithAi", json!({}))).contains("prompt"));
}

#[test]
fn exec_runs_argv_without_a_shell_and_holds_its_exit_code_and_time() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let out = s
        .call("exec", json!({"argv": ["sh", "-c", "echo out; echo err >&2"]}))
        .unwrap();
    assert_eq!(out, "out\nerr\n");
    // No shell: metacharacters arrive as one literal argument.
    let out = s
        .call("exec", json!({"argv": ["printf", "%s", "a; rm -rf x && $(id)"]}))
        .unwrap();
    assert_eq!(out, "a; rm -rf x && $(id)");
    assert!(
        failure(s.call("exec", json!({"argv": ["sh", "-c", "exit 3"]}))).contains("exited with code 3 (expected 0)")
    );
    assert!(
        s.call("exec", json!({"argv": ["sh", "-c", "exit 3"], "expectedExitCode": 3}))
            .is_ok()
    );
    let kept = s
        .call(
            "exec",
            json!({"argv": ["printf", "a1\\nb2\\na3"], "outputFilterRegex": "^a"}),
        )
        .unwrap();
    assert_eq!(kept, "a1\na3");
    assert!(failure(s.call("exec", json!({"argv": ["sleep", "5"], "timeoutSeconds": 0}))).contains("was killed"));
    assert!(failure(s.call("exec", json!({"argv": []}))).contains("`argv` is empty"));
    assert!(failure(s.call("exec", json!({"argv": ["/no/such/program"]}))).contains("could not be started"));
    // For authors only: hidden from the LLM (so from MCP and `trailblaze tool`).
    assert!(_p.catalog("t").unwrap().llm_tool("exec").is_err());
}

#[test]
fn platform_tools_are_known_and_refused_naming_the_platform() {
    let f = Fixture::new("t");
    let (_p, s) = f.session(Settings::default());
    let e = failure(s.call("web_click", json!({"ref": "e5"})));
    assert!(
        e.contains("web_click is a tool for web; this session's device is android"),
        "{e}"
    );
    let e = failure(s.call("compose_click", json!({"testTag": "ok"})));
    assert!(e.contains("for desktop"), "{e}");
    // Control: a name nobody knows is still an unknown tool.
    assert!(failure(s.call("web_clickk", json!({}))).contains("unknown tool"));
    // A scripted tool for another platform is refused the same way.
    f.tool(
        "iosOnly",
        "export const iosOnly = trailblaze.tool<{}>({ supportedPlatforms: [\"ios\"] }, async () => \"ok\");\n",
    );
    let (p, s) = f.session(Settings::default());
    let e = failure(s.call("iosOnly", json!({})));
    assert!(e.contains("iosOnly is a tool for ios"), "{e}");
    // Nor is it offered to an LLM driving an Android device (MCP), though it is to one in general.
    let catalog = p.catalog("t").unwrap();
    let on_android: Vec<String> = catalog
        .tool_definitions_on(trailblaze::device::Platform::Android)
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert!(!on_android.iter().any(|n| n == "iosOnly"));
    assert!(on_android.iter().any(|n| n == "tap"), "control: the rest is offered");
    assert!(catalog.tool_definitions().iter().any(|d| d.name == "iosOnly"));
}

#[test]
fn the_type_gate_knows_every_new_tool_and_a_run_keeps_named_screens() {
    let f = Fixture::new("t");
    f.file(
        "trails/original-tools.trail.yaml",
        r#"config:
  id: t/original-tools
  target: t
trail:
  - step: Look around
    recording:
      tools:
        - takeSnapshot: { screenName: sign_in, description: before anything }
        - assertNotVisibleWithText: { text: Inbox }
        - wait: { timeToWaitInSeconds: 0 }
        - rememberText: { prompt: submit, variable: label }
        - assertEquals: { actual: "{{label}}", expected: Sign in }
        - assertMath: { expression: "2 * 21", expected: "42" }
        - objectiveStatus: { explanation: looked, status: COMPLETED }
        - launchApp: { appId: com.example.demo, reasoning: start over }
        - tapOnPoint: { x: 1, y: 1, reasoning: nothing there }
  - step: A web call type-checks
    recording:
      web:
        - web_click: { ref: e5, reasoning: go, nodeSelector: { web: { ariaRole: button } } }
"#,
    );
    let project = f.project();
    let trail = f.map_dir().join("trails/original-tools.trail.yaml");
    let report = check_native(&project, std::slice::from_ref(&trail));
    let errors: Vec<String> = report.findings.iter().map(|x| x.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // Control: a wrong type in a platform tool's argument is a finding.
    let bad = f.map_dir().join("trails/bad.trail.yaml");
    std::fs::write(
        &bad,
        "config:\n  target: t\ntrail:\n  - step: x\n    recording:\n      web:\n        - web_resize: { width: wide, height: 2 }\n",
    )
    .unwrap();
    let report = check_native(&project, std::slice::from_ref(&bad));
    assert!(
        report.findings.iter().any(|x| x.to_string().contains("width")),
        "{:?}",
        report.findings
    );
    std::fs::remove_file(&bad).unwrap();

    // The run passes on the sim (the web step has nothing for this device) and keeps the named
    // screen although only failures' screens were asked for.
    let out = run_trails(
        &project,
        std::slice::from_ref(&trail),
        &RunOptions {
            out: f.out(),
            screenshots: ScreenshotPolicy::Failures,
            ..RunOptions::default()
        },
        &mut (),
    )
    .expect("run");
    let t = &out.report.trails[0];
    assert_eq!(t.steps[0].error, None);
    assert!(t.steps[0].screen.is_some(), "the takeSnapshot step keeps its screen");
}
