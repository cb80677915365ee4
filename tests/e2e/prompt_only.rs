//! Prompt-only trails: no step has a recording; under `--agent` each runs in turn, each seeing
//! what the steps before did, told the trailmap's `target.system_prompt_file`; the trail is written
//! back and replays green without the LLM. And the workspace's `llm:` settings of the original
//! (`trails/config/trailblaze.yaml`) choose the provider when no flag or variable does.

use serde_json::json;
use trailblaze::report::Outcome;
use trailblaze_e2e::fake_llm::{FakeLlm, Wire, call, dynamic, status};
use trailblaze_e2e::{Fixture, copy_dir, repo_root, text};

use super::agent::{API_KEY, PASSWORD, config, healed, outcomes, project, run, script_sign_in, trail};

const PROMPT_ONLY: &str = "\
config:
  id: demo/prompt-only
  target: demo
  title: Read the first message
trailhead:
  step: Launch the demo app
trail:
  - step: Sign in as jane@example.com with the demo password
  - step: Open the first message
  - verify: The message from Ana Lima is shown
";

const ABOUT: &str = "Demo Mail: the inbox lists messages newest first. PROMPT-FILE-MARKER";

#[test]
fn a_trail_with_no_recording_runs_step_by_step_is_written_back_and_replays_without_the_agent() {
    let f = Fixture::demo();
    let map = std::fs::read_to_string(f.map_dir().join("trailmap.yaml")).expect("trailmap.yaml");
    f.file("about.md", ABOUT).file(
        "trailmap.yaml",
        &map.replace(
            "  display_name: Demo Mail\n",
            "  display_name: Demo Mail\n  system_prompt_file: about.md\n",
        ),
    );
    let file = trail(&f, "prompt-only", PROMPT_ONLY);
    let project = project(&f, &[]);
    let fake = FakeLlm::start(Wire::Anthropic);
    fake.push(call("launchApp", json!({ "appId": "com.example.demo" })))
        .push(status("COMPLETED", "launched"));
    script_sign_in(&fake);
    fake.push(dynamic(|r| {
        ("tap".into(), json!({ "ref": r.ref_of("\"Quarterly report\"") }))
    }))
    .push(status("COMPLETED", "opened"))
    .push(dynamic(|r| {
        ("assertVisible".into(), json!({ "ref": r.ref_of("\"From Ana Lima\"") }))
    }))
    .push(status("COMPLETED", "shown"));
    let out = run(&f, &project, &file, Some(config(&fake, Wire::Anthropic)));
    assert_eq!(
        outcomes(&out),
        vec![Outcome::Passed; 4],
        "{:?}",
        out.report.trails[0].steps
    );
    assert_eq!(fake.left(), 0);
    let requests = fake.requests();
    // The trailmap's prompt file is in every request's system prompt.
    assert!(requests.iter().all(|r| {
        r.json()["system"]
            .as_str()
            .is_some_and(|s| s.contains("PROMPT-FILE-MARKER"))
    }));
    // Each step's first request tells what the steps before did; the first step's tells nothing.
    let first_of_step = |n: usize| requests[n].texts().join("\n");
    assert!(!first_of_step(0).contains("Steps done before"), "{}", first_of_step(0));
    let open = first_of_step(6);
    assert!(
        open.contains("Objective: Open the first message")
            && open.contains("Steps done before this one:")
            && open.contains("1. step Sign in as jane@example.com with the demo password: passed (inputText, inputText, tapOnElementBySelector)"),
        "{open}"
    );
    // Cost per agent step, per trail, per run.
    let t = &out.report.trails[0];
    assert_eq!(t.steps[1].llm.map(|c| c.requests), Some(4));
    assert_eq!(t.llm.map(|c| c.requests), Some(10));
    assert_eq!(
        out.report.llm.map(|c| (c.requests, c.input_tokens, c.output_tokens)),
        Some((10, 1000, 200))
    );
    for r in &requests {
        assert!(!r.body.contains(API_KEY) && !r.body.contains(PASSWORD));
    }
    // Written back whole, and replayed green with no LLM.
    let copy = healed(&file);
    let written = std::fs::read_to_string(&copy).expect("healed copy");
    assert!(
        !written.contains(PASSWORD) && written.contains("{{secret:DEMO_PASSWORD}}"),
        "{written}"
    );
    let again = run(&f, &project, &copy, None);
    assert_eq!(outcomes(&again), vec![Outcome::Passed; 4], "{written}");
    assert_eq!(again.report.llm, None, "a replay asks no LLM");
    // Control: the original without the agent stops at its first step, not recorded.
    let plain = run(&f, &project, &file, None);
    assert_eq!(plain.report.trails[0].steps[0].outcome, Outcome::NotRecorded);
}

#[test]
fn the_workspaces_llm_settings_choose_the_provider_and_its_key() {
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(call("verdict", json!({ "holds": true, "explanation": "the form" })));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    copy_dir(
        &repo_root().join("trailmaps/demo"),
        &root.join("trails/config/trailmaps/demo"),
    );
    let settings = format!(
        "llm:\n  providers:\n    corp:\n      type: openai_compatible\n      base_url: {}\n      auth:\n        env_var: CORP_LLM_KEY\n      models:\n        - id: corp-model\n          max_output_tokens: 321\n  defaults:\n    model: corp/corp-model\n",
        fake.base_url()
    );
    std::fs::write(root.join("trails/config/trailblaze.yaml"), settings).expect("anchor");
    let bin = trailblaze_e2e::trailblaze_bin();
    let command = || {
        let mut cmd = std::process::Command::new(&bin);
        cmd.current_dir(root)
            .args(["verify", "the sign-in form is shown", "--trailmap", "demo"])
            .env("TRAILBLAZE_CACHE_DIR", root.join("cache"))
            .env("CORP_LLM_KEY", API_KEY)
            .env("NO_COLOR", "1");
        for v in [
            "TRAILBLAZE_LLM_MODEL",
            "TRAILBLAZE_LLM_BASE_URL",
            "TRAILBLAZE_LLM_API_KEY",
            "TRAILBLAZE_LLM_PROVIDER",
        ] {
            cmd.env_remove(v);
        }
        cmd
    };
    let o = command().output().expect("runs");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let r = &fake.requests()[0];
    assert_eq!(r.json()["model"], "corp-model");
    assert_eq!(r.json()["max_tokens"], 321);
    assert_eq!(r.header("authorization"), Some(format!("Bearer {API_KEY}").as_str()));
    // A flag wins over the file: the model, the server and the key given on the command line are
    // used, the file's are not (its server hears nothing more).
    let flagged = FakeLlm::start(Wire::OpenAi);
    flagged.push(call("verdict", json!({ "holds": true, "explanation": "the form" })));
    let flag_key = "flag-key-0c1d";
    let o = command()
        .args(["--llm-model", "flag-model", "--llm-base-url", &flagged.base_url()])
        .args(["--llm-api-key", flag_key])
        .output()
        .expect("runs");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(fake.requests().len(), 1, "the file's server is not asked");
    let r = &flagged.requests()[0];
    assert_eq!(r.json()["model"], "flag-model");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {flag_key}").as_str()));
    // A typo in the block is an error naming the key.
    std::fs::write(
        root.join("trails/config/trailblaze.yaml"),
        "llm:\n  defaults:\n    modle: x\n",
    )
    .expect("anchor");
    let o = command().output().expect("runs");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("modle"), "{stderr}");
}
