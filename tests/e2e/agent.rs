//! `run --agent`: steps with no recording run by an LLM through the one dispatcher, against a fake
//! provider on 127.0.0.1 speaking each real wire format; what the agent did written back and replayed
//! without it. Every rule has its positive control beside it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze::agent::{AgentConfig, ApiKey, HttpSettings, ProviderConfig, ProviderKind, WriteBack};
use trailblaze::report::Outcome;
use trailblaze::report::RunOutput;
use trailblaze::{Project, RunOptions, Settings, run_trails};
use trailblaze_e2e::fake_llm::{self, FakeLlm, Reply, Wire, call, dynamic, status};
use trailblaze_e2e::{CANARY, Fixture};

/// The API key the tests use: it must reach the provider's header and nothing else.
pub(crate) const API_KEY: &str = "sk-test-KEY-5f0c2a91";
pub(crate) const PASSWORD: &str = "hunter2";

/// Two steps with no recording after a recorded trailhead, comments around them.
pub const SIGN_IN: &str = "\
# The agent records this trail's steps.
config:
  id: demo/agent-sign-in
  target: demo
  title: Sign in
  description: Sign in with the test account
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  # Typed by the agent; the password as its placeholder.
  - step: Sign in as jane@example.com with the demo password
  # Checked by the agent with an assertion.
  - verify: The inbox is shown
";

pub(crate) fn project(f: &Fixture, extra: &[(&str, &str)]) -> Project {
    let mut pairs = vec![("DEMO_PASSWORD".to_string(), PASSWORD.to_string())];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    f.project()
        .with_secrets(trailblaze_host_functions::SecretStore::from_pairs(pairs))
}

pub(crate) fn config(fake: &FakeLlm, wire: Wire) -> AgentConfig {
    let kind = match wire {
        Wire::OpenAi => ProviderKind::OpenAi,
        Wire::Anthropic => ProviderKind::Anthropic,
    };
    let mut provider = ProviderConfig::new(kind, "fake-model");
    provider.base_url = fake.base_url();
    provider.api_key = Some(ApiKey::new(API_KEY));
    provider.http = HttpSettings {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_secs(5),
        max_tries: 3,
        backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
    };
    provider.max_output_tokens = 512;
    AgentConfig::new(provider)
}

pub(crate) fn trail(f: &Fixture, name: &str, text: &str) -> PathBuf {
    f.file(&format!("trails/{name}.trail.yaml"), text);
    f.map_dir().join(format!("trails/{name}.trail.yaml"))
}

pub(crate) fn run(f: &Fixture, project: &Project, file: &Path, agent: Option<AgentConfig>) -> RunOutput {
    run_with(f, project, file, agent, Default::default())
}

/// [`run`], its trace kept as `trace` says.
pub(crate) fn run_with(
    f: &Fixture,
    project: &Project,
    file: &Path,
    agent: Option<AgentConfig>,
    trace: trailblaze::trace::TraceSettings,
) -> RunOutput {
    let mut opts = RunOptions {
        out: f.out(),
        settings: Settings::default(),
        trace,
        ..RunOptions::default()
    };
    trailblaze::agent::for_run(project, agent.as_ref(), None, &mut opts);
    run_trails(project, &[file.to_path_buf()], &opts, &mut ()).expect("runs")
}

/// The model signs in: three calls, then `objectiveStatus`.
pub(crate) fn script_sign_in(fake: &FakeLlm) {
    fake.push(dynamic(|r| {
        (
            "type".into(),
            json!({ "text": "jane@example.com", "ref": r.ref_of("hint=\"Email\"") }),
        )
    }))
    .push(dynamic(|r| {
        (
            "type".into(),
            json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": r.ref_of("hint=\"Password\"") }),
        )
    }))
    .push(dynamic(|r| {
        ("tap".into(), json!({ "ref": r.ref_of("Button \"Sign in\"") }))
    }))
    .push(status("COMPLETED", "Signed in: the inbox is shown"));
}

/// The model checks the inbox: an assertion, then `objectiveStatus`.
pub(crate) fn script_inbox_check(fake: &FakeLlm) {
    fake.push(dynamic(|r| {
        ("assertVisible".into(), json!({ "ref": r.ref_of("\"Inbox\"") }))
    }))
    .push(status("COMPLETED", "The inbox title is visible"));
}

pub(crate) fn outcomes(out: &RunOutput) -> Vec<Outcome> {
    out.report.trails[0].steps.iter().map(|s| s.outcome.clone()).collect()
}

pub(crate) fn healed(file: &Path) -> PathBuf {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    file.with_file_name(name.replace(".trail.yaml", ".trail.healed.yaml"))
}

fn recorded_tools(file: &Path, step: usize) -> Vec<String> {
    let t = trailblaze::Trail::load(file).expect("the written trail parses");
    t.steps[step]
        .calls_for("android", None)
        .expect("recorded for android")
        .iter()
        .map(|c| c.tool.clone())
        .collect()
}

#[test]
fn a_step_completed_in_three_calls_is_written_back_and_replays_without_the_agent() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(&f, &project, &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    assert_eq!(fake.left(), 0, "every scripted reply was asked for");
    let requests = fake.requests();
    assert_eq!(requests.len(), 6, "four turns for the step, two for the check");
    // The first request: system prompt, minimized tools, the step and the screen.
    let first = requests[0].json();
    assert_eq!(first["model"], "fake-model");
    assert_eq!(first["stream"], false);
    assert_eq!(first["messages"][0]["role"], "system");
    // The text, alone or as the first part beside the screen's picture (tests/e2e/vision.rs).
    let content = &first["messages"][1]["content"];
    let user = content.as_str().or(content[0]["text"].as_str()).unwrap_or_default();
    assert!(
        user.contains("Objective: Sign in as jane@example.com") && user.contains("hint=\"Email\""),
        "{user}"
    );
    assert!(
        user.contains("Trail: Sign in (Sign in with the test account)"),
        "{user}"
    );
    let tools = first["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["function"]["name"] == "tap"));
    assert!(
        !tools.iter().any(|t| t["function"]["name"] == "inputText"),
        "hidden tools are not offered"
    );
    assert!(!requests[0].body.contains("$defs"), "the schemas are minimized");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    // Results go back as `role: tool`, and the changed screen with them.
    let second = requests[1].json();
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert!(requests[1].body.contains("The screen now:"));
    // The report shows the agent's work.
    let step = &out.report.trails[0].steps[1];
    let agent = step.agent.as_ref().expect("an agent step");
    assert_eq!(
        (agent.model.as_str(), agent.provider.as_str()),
        ("fake-model", "openai")
    );
    assert_eq!(
        (agent.turns.len(), agent.input_tokens, agent.output_tokens),
        (4, 400, 80)
    );
    assert_eq!(agent.conclusion.as_deref(), Some("Signed in: the inbox is shown"));
    let tools: Vec<&str> = step.calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["type", "type", "tap", "objectiveStatus"]);
    assert!(
        step.calls[0].calls.iter().any(|c| c.tool == "inputText"),
        "the expansion is nested"
    );
    let html = std::fs::read_to_string(&out.files.html).expect("html");
    assert!(
        html.contains("class=\"agent\"") && html.contains("fake-model"),
        "the HTML shows it"
    );
    // Written beside the trail, which is left as it was.
    assert_eq!(std::fs::read_to_string(&file).expect("trail"), SIGN_IN);
    let copy = healed(&file);
    assert_eq!(
        out.report.trails[0].written.as_deref(),
        Some(copy.display().to_string().as_str())
    );
    assert_eq!(
        recorded_tools(&copy, 0),
        ["inputText", "inputText", "tapOnElementBySelector"]
    );
    assert_eq!(recorded_tools(&copy, 1), ["assertVisibleBySelector"]);
    let written = std::fs::read_to_string(&copy).expect("copy");
    assert!(written.contains("\"{{secret:DEMO_PASSWORD}}\"") && !written.contains(PASSWORD));
    assert!(
        written.contains("  # Checked by the agent with an assertion.\n  - verify:"),
        "{written}"
    );
    // Replayed without the agent: green, and the model is not asked again.
    let again = run(&f, &project, &copy, None);
    assert_eq!(outcomes(&again), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    assert_eq!(fake.requests().len(), 6);
    // Control: without the agent the original stops at its first unrecorded step.
    let plain = run(&f, &project, &file, None);
    assert_eq!(outcomes(&plain)[1], Outcome::NotRecorded);
}

#[test]
fn the_anthropic_wire_format_runs_the_same_step() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::Anthropic);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::Anthropic)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some(API_KEY));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].header("authorization"), None);
    let first = requests[0].json();
    assert!(first["system"].as_str().is_some_and(|s| s.contains("objectiveStatus")));
    assert_eq!(first["max_tokens"], 512);
    assert!(first["tools"][0]["input_schema"].is_object());
    let second = requests[1].json();
    let answer = &second["messages"][2]["content"];
    assert_eq!(answer[0]["type"], "tool_result", "{answer}");
    assert_eq!(answer[0]["tool_use_id"], "toolu_0_0");
    assert_eq!(second["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(
        out.report.trails[0].steps[1]
            .agent
            .as_ref()
            .map(|a| a.provider.as_str()),
        Some("anthropic")
    );
}

const CHECKS: &str = "\
config:
  id: demo/agent-checks
  target: demo
trailhead:
  step: Sign in
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
      - inputText: { text: jane@example.com, nodeSelector: { androidAccessibility: { hintTextRegex: Email } } }
      - inputText:
          text: \"{{secret:DEMO_PASSWORD}}\"
          nodeSelector: { androidAccessibility: { hintTextRegex: Password } }
      - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in } } }
trail:
  - verify: The inbox is shown
";

#[test]
fn a_verify_step_concludes_pass_with_an_assertion_and_read_only_tools() {
    let f = Fixture::demo();
    let file = trail(&f, "checks", CHECKS);
    let fake = FakeLlm::start(Wire::OpenAi);
    // A tap is refused in a check, and so is concluding before an assertion; then it does it right.
    fake.push(dynamic(|r| ("tap".into(), json!({ "ref": r.ref_of("Settings") }))))
        .push(status("COMPLETED", "I can see it"));
    script_inbox_check(&fake);
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    assert!(
        requests[1]
            .body
            .contains("acts on the device, and this step is a check"),
        "read-only rule"
    );
    assert!(
        requests[2].body.contains("concluded after an assertion"),
        "assertion rule"
    );
    // Control: the refused tap never reached the device (no tapOnPoint/selector tap logged).
    let step = &out.report.trails[0].steps[1];
    assert!(!step.calls[0].ok && step.calls[0].calls.is_empty());
    assert!(step.calls.iter().any(|c| c.tool == "assertVisible" && c.ok));
    let copy = healed(&file);
    assert_eq!(recorded_tools(&copy, 0), ["assertVisibleBySelector"]);
}

#[test]
fn a_verify_step_concluding_fail_fails_the_trail_with_the_explanation() {
    let f = Fixture::demo();
    let file = trail(&f, "checks", &CHECKS.replace("The inbox is shown", "Dark mode is on"));
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(status("FAILED", "The inbox is shown, not a dark-mode toggle"));
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Failed]);
    assert_eq!(out.report.trails[0].outcome, Outcome::Failed);
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(
        error.contains("objective failed") && error.contains("not a dark-mode toggle"),
        "{error}"
    );
    assert!(
        out.report.trails[0].written.is_none(),
        "nothing is written for a failed step"
    );
    assert!(!healed(&file).exists());
}

#[test]
fn an_unknown_tool_and_bad_arguments_go_back_to_the_model_which_retries() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(dynamic(|r| {
        ("tapp".into(), json!({ "ref": r.ref_of("Button \"Sign in\"") }))
    }))
    .push(dynamic(|r| {
        ("tap".into(), json!({ "reff": r.ref_of("Button \"Sign in\"") }))
    }))
    .push(call("tap", Value::String("{not json".into())));
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    let told = |i: usize| {
        requests[i].json()["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
    };
    let unknown = told(1).map(|m| m["content"].to_string()).unwrap_or_default();
    assert!(
        unknown.contains("unknown tool `tapp`") && unknown.contains("tap"),
        "{unknown}"
    );
    let bad = told(2).map(|m| m["content"].to_string()).unwrap_or_default();
    assert!(bad.contains("reff"), "the unknown argument is named: {bad}");
    let not_json = told(3).map(|m| m["content"].to_string()).unwrap_or_default();
    assert!(not_json.contains("not valid JSON"), "{not_json}");
    // Only what worked is recorded.
    assert_eq!(
        recorded_tools(&healed(&file), 0),
        ["inputText", "inputText", "tapOnElementBySelector"]
    );
}

#[test]
fn a_spent_turn_budget_and_a_spent_token_budget_fail_clearly() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    for _ in 0..3 {
        fake.push(call("snapshot", json!({})));
    }
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.max_turns = 3;
    let out = run(&f, &project(&f, &[]), &file, Some(cfg));
    assert_eq!(outcomes(&out)[1], Outcome::Failed);
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(error.contains("did not conclude within 3 turns"), "{error}");
    assert_eq!(fake.requests().len(), 3);
    // Tokens: two replies of 300 reach a budget of 500; the third request is never sent.
    let fake = FakeLlm::start(Wire::OpenAi);
    for _ in 0..3 {
        fake.push(fake_llm::with_usage(call("snapshot", json!({})), 250, 50));
    }
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.max_run_tokens = 500;
    let out = run(&f, &project(&f, &[]), &file, Some(cfg));
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(error.contains("token budget is spent: 600 of 500"), "{error}");
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn a_429_then_a_503_are_tried_again_and_a_single_try_is_not() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let busy = |status: u16, headers: Vec<(String, String)>| Reply::Raw {
        status,
        headers,
        body: json!({ "error": { "message": "slow down" } }).to_string(),
    };
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(busy(429, vec![("retry-after".into(), "0".into())]))
        .push(busy(503, Vec::new()));
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let started = Instant::now();
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    assert_eq!(fake.requests().len(), 8, "two refused tries, then six turns");
    assert!(started.elapsed() < Duration::from_secs(30));
    // Control: one try in all, so the 429 is the answer.
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(busy(429, vec![("retry-after".into(), "0".into())]));
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.provider.http.max_tries = 1;
    let out = run(&f, &project(&f, &[]), &file, Some(cfg));
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(error.contains("HTTP 429") && error.contains("slow down"), "{error}");
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn a_server_that_hangs_times_out_and_is_not_asked_again() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(Reply::Hang);
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.provider.http.read_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let out = run(&f, &project(&f, &[]), &file, Some(cfg));
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(outcomes(&out)[1], Outcome::Failed);
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(
        error.contains("no reply from 127.0.0.1") && error.contains("within 1 s"),
        "{error}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "a timed-out request may have been served: not sent twice"
    );
}

#[test]
fn the_model_never_sees_a_secret_and_the_key_never_leaves_its_header() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let project = project(&f, &[("CANARY_TOKEN", CANARY)]);
    let fake = FakeLlm::start(Wire::OpenAi);
    // The model echoes a secret's value in its text and in a call's arguments (as if it had learnt
    // it); the call is refused and nothing it said carries the value onward.
    fake.push(fake_llm::with_text(
        dynamic(|r| {
            (
                "type".into(),
                json!({ "text": CANARY, "ref": r.ref_of("hint=\"Email\"") }),
            )
        }),
        &format!("I will type {CANARY} and {API_KEY}"),
    ));
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let traced = trailblaze::trace::TraceSettings {
        trace: trailblaze::trace::TracePolicy::On,
        video: trailblaze::trace::TracePolicy::Off,
    };
    let out = run_with(&f, &project, &file, Some(config(&fake, Wire::OpenAi)), traced);
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    // The trace holds the agent's turns: what it was sent, what it answered, its calls, its tokens.
    let trace_file = out.dir.join(out.report.trails[0].trace.as_deref().expect("a trace"));
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_file).expect("trace")).expect("JSON");
    let agent = trace["agent"].as_array().expect("agent steps");
    assert_eq!(agent.len(), 2, "both unrecorded steps");
    let turns = agent[0]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 5, "the refused echo, three calls, the conclusion");
    assert!(
        turns[0]["request"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Sign in as jane@example.com"))
    );
    assert_eq!(turns[1]["answer"]["tool_calls"][0]["tool"], "type");
    assert!(
        turns
            .iter()
            .all(|t| t["input_tokens"].is_u64() && t["unix_ms"].is_f64())
    );
    let dir = trace_file.parent().expect("folder");
    for value in [CANARY, PASSWORD, API_KEY] {
        assert_eq!(super::trace::files_holding(dir, value), Vec::<PathBuf>::new());
    }
    let requests = fake.requests();
    for (i, r) in requests.iter().enumerate() {
        for value in [CANARY, PASSWORD, API_KEY] {
            assert!(
                !r.body.contains(value),
                "request {i} holds a secret or the key:\n{}",
                r.body
            );
        }
    }
    let second = &requests[1].body;
    assert!(
        second.contains("arguments hold a secret's value"),
        "the echo was refused: {second}"
    );
    // The model was told the placeholders by name, and saw the password field as `***`.
    assert!(
        requests[0].body.contains("{{secret:DEMO_PASSWORD}}") && requests[0].body.contains("{{secret:CANARY_TOKEN}}")
    );
    assert!(requests[3].body.contains("***"), "a field holding a secret shows ***");
    // Positive control: the key was sent, in its header.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    // Nothing written anywhere holds them either.
    let mut everything = f.all_output();
    everything.push_str(&std::fs::read_to_string(healed(&file)).expect("copy"));
    for value in [CANARY, PASSWORD, API_KEY] {
        assert!(!everything.contains(value), "an output holds a secret or the key");
    }
    assert!(everything.contains("fake-model"), "control: the outputs were read");
}

const HEAL: &str = "\
# The button's label changed: the recording no longer finds it.
config:
  id: demo/agent-heal
  target: demo
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Sign in
    recording:
      tools:
        - inputText:
            text: jane@example.com
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText:
            text: \"{{secret:DEMO_PASSWORD}}\"
            nodeSelector: { androidAccessibility: { hintTextRegex: Password } }
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Log in } }
";

#[test]
fn self_heal_reruns_a_failed_recorded_step_and_keeps_what_ran_before_the_failure() {
    let f = Fixture::demo();
    let file = trail(&f, "heal", HEAL);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(dynamic(|r| {
        ("tap".into(), json!({ "ref": r.ref_of("Button \"Sign in\"") }))
    }))
    .push(status("COMPLETED", "Signed in"));
    // Control first: the agent alone does not touch a recorded step.
    let out = run(&f, &project, &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out)[1], Outcome::Failed);
    assert_eq!(fake.requests().len(), 0);
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.self_heal = true;
    cfg.write_back = WriteBack::InPlace;
    let out = run(&f, &project, &file, Some(cfg));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed]);
    let step = &out.report.trails[0].steps[1];
    let agent = step.agent.as_ref().expect("agent");
    assert_eq!(agent.reason, "self-heal");
    assert!(agent.recorded_error.as_deref().is_some_and(|e| e.contains("Log in")));
    assert!(fake.requests()[0].body.contains("recorded calls failed"));
    // In place: the old `tools` entry stays for other devices; `android` wins on this one.
    let written = std::fs::read_to_string(&file).expect("trail");
    assert!(
        written.starts_with("# The button's label changed"),
        "comments kept:\n{written}"
    );
    assert_eq!(
        recorded_tools(&file, 0),
        ["inputText", "inputText", "tapOnElementBySelector"]
    );
    let t = trailblaze::Trail::load(&file).expect("parses");
    let keys: Vec<&str> = t.steps[0].recording.as_ref().expect("rec").keys().collect();
    assert_eq!(keys, ["tools", "android"]);
    let again = run(&f, &project, &file, None);
    assert_eq!(outcomes(&again), [Outcome::Passed, Outcome::Passed]);
}

/// `run --agent` from the command line: the environment configures it; the written copy passes
/// `check` and replays green without the agent.
const ALWAYS_AGENT: &str = "\
config:
  id: demo/agent-always
  target: demo
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Sign in
    recordable: false
";

#[test]
fn a_step_marked_not_recordable_is_the_agents_every_time_and_never_written() {
    let f = Fixture::demo();
    let file = trail(&f, "always", ALWAYS_AGENT);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::OpenAi);
    // Several calls in one turn, the conclusion among them: each runs in order.
    fake.push(Reply::Dynamic(Box::new(|r| Reply::Turn {
        text: Some("Filling the form.".into()),
        calls: vec![
            (
                "type".into(),
                json!({ "text": "jane@example.com", "ref": r.ref_of("hint=\"Email\"") }),
            ),
            (
                "type".into(),
                json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": r.ref_of("hint=\"Password\"") }),
            ),
            ("tap".into(), json!({ "ref": r.ref_of("Button \"Sign in\"") })),
            (
                "objectiveStatus".into(),
                json!({ "status": "COMPLETED", "explanation": "Signed in" }),
            ),
        ],
        usage: (100, 20),
    })));
    let out = run(&f, &project, &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed]);
    assert_eq!(fake.requests().len(), 1, "one turn");
    let agent = out.report.trails[0].steps[1].agent.as_ref().expect("the agent ran it");
    assert_eq!(agent.turns[0].calls, 4);
    assert_eq!(agent.turns[0].reasoning.as_deref(), Some("Filling the form."));
    assert!(
        out.report.trails[0].written.is_none() && !healed(&file).exists(),
        "never written back"
    );
    // Control: without the agent it is not recorded (the parse gate refuses it a recording).
    let plain = run(&f, &project, &file, None);
    assert_eq!(outcomes(&plain), [Outcome::Passed, Outcome::NotRecorded]);
}
