//! Judging in words: `assertWithAi` and `rememberWithAi` recorded in a trail, replayed through the
//! configured provider (the fake OpenAI- and Anthropic-compatible servers), their verdicts
//! structured, a remembered value feeding a later step, their cost per step, trail and run, and
//! no key nor secret in any request, log or report. Each rule beside its control.

use serde_json::json;
use trailblaze::report::{LlmCost, Outcome};
use trailblaze_e2e::fake_llm::{FakeLlm, Wire, call, calls, with_text};
use trailblaze_e2e::{CANARY, Fixture};

use super::agent::{API_KEY, PASSWORD, config, outcomes, project, trail};

/// Fills in the sign-in form (recorded; the email is the CANARY secret, which this fixture's app
/// requires, in a plain text field), judges the filled form (a field holding a secret on the
/// judge's screen), signs in,
/// judges the inbox, remembers the first subject in words and taps the message it names, then
/// checks the message opened.
const JUDGED: &str = "\
config:
  id: demo/judged
  target: demo
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Fill in the form
    recording:
      tools:
        - inputText:
            text: \"{{secret:TOKEN}}\"
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText:
            text: \"{{secret:DEMO_PASSWORD}}\"
            nodeSelector: { androidAccessibility: { hintTextRegex: Password } }
  - verify: The form is filled
    recording:
      tools:
        - assertWithAi: { prompt: \"Both fields of the form are filled\" }
  - step: Sign in
    recording:
      tools:
        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Sign in } } }
  - verify: The inbox is shown
    recording:
      tools:
        - assertWithAi: { prompt: \"The inbox lists three messages\" }
  - step: Remember the first subject
    recording:
      tools:
        - rememberWithAi: { prompt: \"the subject of the first message\", variable: subject }
  - step: Open it
    recording:
      tools:
        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"{{subject}}\" } } }
  - verify: The message is open
    recording:
      tools:
        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: From Ana Lima } } }
";

/// The demo, its app signing in only with the CANARY as the email: a run that signs in proves the
/// secret's value reached the device, so its absence from every output means something.
fn demo() -> Fixture {
    let f = Fixture::demo();
    let app = std::fs::read_to_string(f.map_dir().join("app.yaml")).expect("app.yaml");
    let needs = "require: { email: jane@example.com, password: hunter2 }";
    assert!(app.contains(needs), "the demo's sign-in rule changed");
    f.file(
        "app.yaml",
        &app.replace(needs, &needs.replace("jane@example.com", CANARY)),
    );
    f
}

fn run_judged(f: &Fixture, fake: &FakeLlm, wire: Wire) -> trailblaze::report::RunOutput {
    let file = trail(f, "judged", JUDGED);
    let project = project(f, &[("TOKEN", CANARY)]);
    let mut opts = trailblaze::RunOptions {
        out: f.out(),
        ..trailblaze::RunOptions::default()
    };
    let cfg = config(fake, wire);
    trailblaze::agent::for_run(&project, None, Some(&cfg), &mut opts);
    trailblaze::run_trails(&project, &[file], &opts, &mut ()).expect("runs")
}

#[test]
fn a_statement_that_holds_and_a_value_remembered_in_words_feed_the_trail_on_both_wires() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let f = demo();
        let fake = FakeLlm::start(wire);
        fake.push(call(
            "verdict",
            json!({ "holds": true, "explanation": "both fields hold text" }),
        ))
        .push(call(
            "verdict",
            json!({ "holds": true, "explanation": "three messages are listed" }),
        ))
        // The model first answers in prose: it is asked again for the tool.
        .push(with_text(calls(Vec::new()), "It says Quarterly report."))
        .push(call("answer", json!({ "value": "Quarterly report" })));
        let out = run_judged(&f, &fake, wire);
        let t = &out.report.trails[0];
        // Signing in passed: the app took the CANARY as the email, so it reached the device.
        assert_eq!(outcomes(&out), vec![Outcome::Passed; 8], "{wire:?}: {:?}", t.steps);
        assert_eq!(fake.left(), 0);
        // The verdict is the call's structured result.
        let judged = &t.steps[4].calls[0];
        assert_eq!(judged.tool, "assertWithAi");
        let requests = fake.requests();
        assert_eq!(requests.len(), 4, "{wire:?}");
        // The judge of the filled form saw the email field, as `***`.
        let form = requests[0].texts().join("\n");
        assert!(
            form.contains("Statement: Both fields of the form are filled")
                && form
                    .lines()
                    .any(|l| l.contains("hint=\"Email\"") && l.contains("\"***\"")),
            "{wire:?}: the form's screen: {form}"
        );
        let first = requests[0].json();
        let tools = &first["tools"];
        let names: Vec<&str> = tools
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["name"].as_str().or(t["function"]["name"].as_str()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(names, ["verdict"], "{wire:?}");
        let asked = requests[1].texts().join("\n");
        assert!(
            asked.contains("Statement: The inbox lists three messages") && asked.contains("Quarterly report"),
            "the statement and the screen: {asked}"
        );
        // The key in its header only; no secret value anywhere in a body.
        let header = match wire {
            Wire::OpenAi => requests[0].header("authorization").map(str::to_string),
            Wire::Anthropic => requests[0].header("x-api-key").map(str::to_string),
        };
        assert!(header.is_some_and(|h| h.contains(API_KEY)), "{wire:?}");
        for r in &requests {
            for value in [API_KEY, CANARY, PASSWORD] {
                assert!(!r.body.contains(value), "{wire:?}: a body holds {value}");
            }
        }
        assert!(
            asked.contains("\"Nightly build passed\""),
            "the screen is sent: {asked}"
        );
        // Cost per step (1 request, then 2 for the nudged answer), per trail and per run.
        let one = LlmCost {
            requests: 1,
            input_tokens: 100,
            output_tokens: 20,
        };
        assert_eq!(t.steps[2].llm, Some(one));
        assert_eq!(t.steps[4].llm, Some(one));
        assert_eq!(t.steps[5].llm.map(|c| c.requests), Some(2));
        assert_eq!(t.steps[3].llm, None, "a step that asked nothing costs nothing");
        assert_eq!(t.llm.map(|c| c.requests), Some(4));
        assert_eq!(out.report.llm, t.llm);
        let report = std::fs::read_to_string(&out.files.json).expect("report.json");
        assert!(report.contains("\"llm\""), "the report carries the cost");
        let html = std::fs::read_to_string(&out.files.html).expect("report.html");
        assert!(html.contains("4 LLM requests"), "the run's cost in the html");
        // Nothing the run wrote holds the key or a secret (logs, reports, screens).
        let all = f.all_output();
        for value in [API_KEY, CANARY, PASSWORD] {
            assert!(!all.contains(value), "{wire:?}: the output holds {value}");
        }
        // Control: the outputs were read, and the step log holds the secret as its placeholder.
        assert!(
            report.contains("{{secret:TOKEN}}") && all.contains("Both fields of the form are filled"),
            "{wire:?}: the report and the logs"
        );
    }
}

#[test]
fn a_statement_that_does_not_hold_fails_the_step_with_the_models_reason() {
    let f = demo();
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(call(
        "verdict",
        json!({ "holds": false, "explanation": "the email field is empty" }),
    ));
    let out = run_judged(&f, &fake, Wire::OpenAi);
    let t = &out.report.trails[0];
    assert_eq!(t.steps[2].outcome, Outcome::Failed);
    let e = t.steps[2].error.clone().unwrap_or_default();
    assert!(e.contains("does not hold: the email field is empty"), "{e}");
    assert_eq!(
        t.steps[3].outcome,
        Outcome::Skipped {
            reason: "step 2 failed".into()
        }
    );
    assert_eq!(t.llm.map(|c| c.requests), Some(1));
}

#[test]
fn with_no_provider_the_error_names_the_setting_and_a_wrong_answer_is_not_a_verdict() {
    let f = demo();
    let file = trail(&f, "judged", JUDGED);
    let project = project(&f, &[("TOKEN", CANARY)]);
    let opts = trailblaze::RunOptions {
        out: f.out(),
        ..trailblaze::RunOptions::default()
    };
    let out = trailblaze::run_trails(&project, &[file], &opts, &mut ()).expect("runs");
    let t = &out.report.trails[0];
    assert_eq!(
        t.steps[1].outcome,
        Outcome::Passed,
        "control: the recorded form filling runs"
    );
    let e = t.steps[2].error.clone().unwrap_or_default();
    assert!(
        e.contains("no LLM provider is configured") && e.contains("TRAILBLAZE_LLM_MODEL"),
        "{e}"
    );
    assert!(!e.contains(CANARY));
    // A model that never calls the answer tool gives no verdict (two requests, then an error).
    let f = demo();
    let fake = FakeLlm::start(Wire::Anthropic);
    fake.push(with_text(calls(Vec::new()), "yes"))
        .push(call("tap", json!({ "ref": "x" })));
    let out = run_judged(&f, &fake, Wire::Anthropic);
    let step = &out.report.trails[0].steps[2];
    assert_eq!(step.outcome, Outcome::Failed);
    assert!(
        step.error
            .as_deref()
            .is_some_and(|e| e.contains("no answer through `verdict`")),
        "{:?}",
        step.error
    );
    assert_eq!(step.llm.map(|c| c.requests), Some(2), "{step:?}");
    // A secret in a prompt is refused before any request: the model would read it.
    let f = demo();
    let fake = FakeLlm::start(Wire::OpenAi);
    let file = trail(
        &f,
        "judged",
        &JUDGED.replace("are filled\"", "are filled, not {{secret:TOKEN}}\""),
    );
    let mut opts = trailblaze::RunOptions {
        out: f.out(),
        ..trailblaze::RunOptions::default()
    };
    let cfg = config(&fake, Wire::OpenAi);
    trailblaze::agent::for_run(&project, None, Some(&cfg), &mut opts);
    let out = trailblaze::run_trails(&project, &[file], &opts, &mut ()).expect("runs");
    let e = out.report.trails[0].steps[2].error.clone().unwrap_or_default();
    assert!(e.contains("holds a secret") && !e.contains(CANARY), "{e}");
    assert!(fake.requests().is_empty(), "nothing was sent");
}

#[test]
fn the_type_gate_leaves_a_pattern_holding_a_token_to_the_run() {
    let f = Fixture::demo();
    let file = trail(&f, "judged", JUDGED);
    let project = project(&f, &[]);
    let report = trailblaze::gates::check_native(&project, std::slice::from_ref(&file));
    assert_eq!(report.errors(), 0, "{:?}", report.findings);
    // Control: a pattern that is no regular expression, with no token, is still refused.
    let bad = trail(&f, "bad", &JUDGED.replace("\"{{subject}}\"", "\"{{subject\""));
    let report = trailblaze::gates::check_native(&project, &[bad]);
    assert_eq!(report.errors(), 1, "{:?}", report.findings);
}
