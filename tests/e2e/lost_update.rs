//! Issue 24 items 4 and 8 for `run --agent` write-back: a trail edited while the run worked is not
//! overwritten nor written with the recording under the wrong step; and writing back never turns a
//! literal the trail holds into `***` (a value equal to a secret is written as its placeholder).

use serde_json::json;
use trailblaze::agent::WriteBack;
use trailblaze::report::Outcome;
use trailblaze_e2e::Fixture;
use trailblaze_e2e::fake_llm::{FakeLlm, Wire, dynamic, status};

use super::agent::{SIGN_IN, config, outcomes, project, run, script_inbox_check, script_sign_in, trail};

/// The model signs in as `script_sign_in` does, and while it does a person edits the trail (a step
/// added at the top, which shifts every step's index).
fn script_sign_in_while_edited(fake: &FakeLlm, file: std::path::PathBuf, edited: String) {
    fake.push(dynamic(move |r| {
        std::fs::write(&file, &edited).expect("the person's edit");
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

#[test]
fn a_trail_edited_during_the_run_is_not_written_back_and_the_edit_stays() {
    let f = Fixture::demo();
    let file = trail(&f, "edited", SIGN_IN);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::OpenAi);
    let edited = SIGN_IN.replace("trail:\n", "trail:\n  - step: A step a person added during the run\n");
    script_sign_in_while_edited(&fake, file.clone(), edited.clone());
    script_inbox_check(&fake);
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.write_back = WriteBack::InPlace;
    let out = run(&f, &project, &file, Some(cfg));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    assert_eq!(out.report.trails[0].written, None, "nothing written over the edit");
    assert_eq!(
        std::fs::read_to_string(&file).expect("trail"),
        edited,
        "the edit stays whole"
    );
}

/// Control: the same run on a trail nobody touched writes the recording in place.
#[test]
fn control_an_untouched_trail_is_written_back_in_place() {
    let f = Fixture::demo();
    let file = trail(&f, "untouched", SIGN_IN);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let mut cfg = config(&fake, Wire::OpenAi);
    cfg.write_back = WriteBack::InPlace;
    let out = run(&f, &project, &file, Some(cfg));
    assert_eq!(
        out.report.trails[0].written.as_deref(),
        Some(file.display().to_string().as_str())
    );
    let written = std::fs::read_to_string(&file).expect("trail");
    assert!(
        written.contains("inputText") && written.contains("assertVisibleBySelector"),
        "{written}"
    );
}

/// A recorded step types the email literally; the email is also a secret. The agent records the
/// rest; the written copy keeps the literal's meaning (its placeholder), never `***`.
const LITERAL_THEN_AGENT: &str = "\
config:
  id: demo/literal
  target: demo
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Type the email
    recording:
      tools:
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText: { text: \"jane@example.com\" }
  - step: Type the demo password and sign in
";

#[test]
fn writing_back_keeps_a_literal_equal_to_a_secret_replayable() {
    let f = Fixture::demo();
    let file = trail(&f, "literal", LITERAL_THEN_AGENT);
    let project = project(&f, &[("DEMO_EMAIL", "jane@example.com")]);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(dynamic(|r| {
        (
            "type".into(),
            json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": r.ref_of("hint=\"Password\"") }),
        )
    }))
    .push(dynamic(|r| {
        ("tap".into(), json!({ "ref": r.ref_of("Button \"Sign in\"") }))
    }))
    .push(status("COMPLETED", "Signed in"));
    let out = run(&f, &project, &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let copy = super::agent::healed(&file);
    let written = std::fs::read_to_string(&copy).expect("written beside the trail");
    assert!(!written.contains("***"), "{written}");
    // Replayed without the agent, with an inbox check added: the email typed is the email.
    let checked = format!(
        "{written}  - verify: The inbox is shown\n    recording:\n      tools:\n        - assertVisibleBySelector:\n            nodeSelector: {{ androidAccessibility: {{ textRegex: Inbox }} }}\n"
    );
    std::fs::write(&copy, checked).expect("check added");
    let again = run(&f, &project, &copy, None);
    assert_eq!(
        outcomes(&again),
        [Outcome::Passed, Outcome::Passed, Outcome::Passed, Outcome::Passed]
    );
}
