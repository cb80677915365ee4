//! The agent through the CLI: `run --agent` against the fake provider, then `check` and a replay
//! without it; what the CLI says when the provider is not configured, never showing the key.

use serde_json::json;
use trailblaze_e2e::fake_llm::{FakeLlm, Reply, Wire};
use trailblaze_e2e::{Fixture, in_dir, text};

use super::agent::{API_KEY, PASSWORD, SIGN_IN, healed, script_inbox_check, script_sign_in, trail};

#[test]
fn the_cli_round_trip_runs_checks_and_replays_the_agents_recording() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    // Built first: a fake provider lives two minutes, and a cold build of the binary can take longer.
    let bin = trailblaze_e2e::trailblaze_bin();
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let cwd = f.dir.path();
    // The password only: the demo's file also makes the email a secret, which the model may not type.
    f.file("agent.secrets", &format!("DEMO_PASSWORD={PASSWORD}\n"));
    let mut cmd = std::process::Command::new(&bin);
    let o = cmd
        .current_dir(cwd)
        .args(["run", "--agent", "--secrets", "trailmaps/demo/agent.secrets", "--out"])
        .arg(f.out())
        .arg(&file)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_LLM_BASE_URL", fake.base_url())
        .env("TRAILBLAZE_LLM_MODEL", "fake-model")
        .env("TRAILBLAZE_LLM_API_KEY", API_KEY)
        .env_remove("TRAILBLAZE_LLM_PROVIDER")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("agent: 4 turn(s)") && stdout.contains("written to"),
        "{stdout}"
    );
    assert!(!stdout.contains(API_KEY) && !stderr.contains(API_KEY));
    let copy = healed(&file);
    let copy_arg = copy.display().to_string();
    let o = in_dir(&f, cwd, &["check", &copy_arg]);
    assert!(o.status.success(), "check: {:?}", text(&o));
    let o = in_dir(
        &f,
        cwd,
        &["run", "--secrets", "trailmaps/demo/agent.secrets", &copy_arg],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "replay: {stdout}\n{stderr}");
    assert!(stdout.contains("3 steps") || stdout.contains("1 passed"), "{stdout}");
    // A folder run does not take the copy for a second trail.
    let found = trailblaze::trails::find_trails(&[f.map_dir().join("trails")]).expect("finds");
    assert!(found.contains(&file) && !found.contains(&copy), "{found:?}");
}

#[test]
fn the_cli_says_what_is_missing_and_never_shows_the_key() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let file_arg = file.display().to_string();
    let cwd = f.dir.path();
    let o = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(cwd)
        .args(["run", "--agent", &file_arg])
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env_remove("TRAILBLAZE_LLM_MODEL")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--agent needs a model") && stderr.contains("TRAILBLAZE_LLM_MODEL"),
        "{stderr}"
    );
    let o = in_dir(&f, cwd, &["run", "--write-back", &file_arg]);
    assert_eq!(o.status.code(), Some(2), "--write-back alone is a usage error");
    // A provider that refuses the key, echoing it: the step fails, and the key is shown nowhere.
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(Reply::Raw {
        status: 401,
        headers: Vec::new(),
        body: json!({ "error": { "message": format!("Incorrect API key provided: {API_KEY}") } }).to_string(),
    });
    let o = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(cwd)
        .args(["run", "--agent", "--llm-api-key", API_KEY, "--llm-model", "m"])
        .args(["--llm-base-url", &fake.base_url(), "--out"])
        .arg(f.out())
        .arg(&file_arg)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("HTTP 401") && stdout.contains("Incorrect API key provided: ***"),
        "{stdout}"
    );
    let mut everything = f.all_output();
    everything.push_str(&stdout);
    everything.push_str(&stderr);
    assert!(!everything.contains(API_KEY), "the key is in an output");
    assert!(everything.contains("401"), "control: the outputs hold the failure");
}
