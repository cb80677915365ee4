//! `trailblaze step|ask|verify "..."` from the command line, and the MCP tools `blaze`, `ask` and
//! `verify` through the official SDK client, against the fake provider: the recorded calls come
//! back to paste, answers and verdicts are structured, exit codes say the verdict, and the key and
//! the secrets never show.

use serde_json::{Value, json};
use trailblaze_e2e::fake_llm::{FakeLlm, Wire, call};
use trailblaze_e2e::{CANARY, Fixture, text};

use super::agent::{API_KEY, PASSWORD, script_sign_in};

/// `trailblaze ARGS` in the demo fixture's folder, the LLM at `fake` (or none).
fn cli(f: &Fixture, fake: Option<&FakeLlm>, args: &[&str]) -> std::process::Output {
    f.file("agent.secrets", &format!("DEMO_PASSWORD={PASSWORD}\n"));
    let mut cmd = std::process::Command::new(trailblaze_e2e::trailblaze_bin());
    cmd.current_dir(f.dir.path())
        .args(args)
        .args(["--secrets", "trailmaps/demo/agent.secrets", "--out"])
        .arg(f.out())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env_remove("TRAILBLAZE_LLM_PROVIDER")
        .env("NO_COLOR", "1");
    match fake {
        Some(fake) => cmd
            .env("TRAILBLAZE_LLM_BASE_URL", fake.base_url())
            .env("TRAILBLAZE_LLM_MODEL", "fake-model")
            .env("TRAILBLAZE_LLM_API_KEY", API_KEY),
        None => cmd
            .env_remove("TRAILBLAZE_LLM_MODEL")
            .env_remove("TRAILBLAZE_LLM_BASE_URL"),
    };
    cmd.output().expect("runs")
}

fn never_shown(o: &std::process::Output) {
    let (stdout, stderr) = text(o);
    for v in [API_KEY, PASSWORD] {
        assert!(
            !stdout.contains(v) && !stderr.contains(v),
            "{v} shown:\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn step_prints_the_calls_it_made_as_a_step_to_paste() {
    let f = Fixture::demo();
    let _bin = trailblaze_e2e::trailblaze_bin();
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    let o = cli(
        &f,
        Some(&fake),
        &["step", "Sign in as jane@example.com with the demo password"],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("- step: Sign in as jane@example.com")
            && stdout.contains("tapOnElementBySelector")
            && stdout.contains("\"{{secret:DEMO_PASSWORD}}\""),
        "{stdout}"
    );
    assert!(
        stderr.contains("4 LLM request(s)") && stderr.contains("completed:"),
        "{stderr}"
    );
    never_shown(&o);
    // The printed step pasted into a trail checks and replays green without the LLM.
    let trail = format!(
        "config:\n  id: demo/pasted\n  target: demo\ntrailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: {{ appId: com.example.demo }}\ntrail:\n{}",
        stdout.lines().map(|l| format!("  {l}\n")).collect::<String>()
    );
    f.file("trails/pasted.trail.yaml", &trail);
    let o = cli(&f, None, &["run", "trailmaps/demo/trails/pasted.trail.yaml"]);
    assert!(o.status.success(), "{:?}\n{trail}", text(&o));
    // Control: a model that gives up fails the command (exit 1).
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(call(
        "objectiveStatus",
        json!({ "status": "FAILED", "explanation": "no such screen" }),
    ));
    let o = cli(&f, Some(&fake), &["step", "open the moon"]);
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    assert!(text(&o).1.contains("no such screen"));
}

#[test]
fn ask_answers_and_verify_exits_by_the_verdict() {
    let f = Fixture::demo();
    let fake = FakeLlm::start(Wire::Anthropic);
    fake.push(call("answer", json!({ "value": "Sign in" })));
    let o = cli(
        &f,
        Some(&fake),
        &["ask", "what does the button say?", "--llm-provider", "anthropic"],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "Sign in");
    assert!(stderr.contains("1 LLM request, 100 tokens in, 20 out"), "{stderr}");
    let asked = fake.requests()[0].texts().join("\n");
    assert!(asked.contains("Read: what does the button say?") && asked.contains("hint=\"Email\""));
    never_shown(&o);

    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(call(
        "verdict",
        json!({ "holds": true, "explanation": "the form is shown" }),
    ))
    .push(call(
        "verdict",
        json!({ "holds": false, "explanation": "no inbox here" }),
    ));
    let o = cli(&f, Some(&fake), &["verify", "the sign-in form is shown"]);
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("✓ holds: the form is shown") && stdout.contains("- assertWithAi:"),
        "{stdout}"
    );
    let o = cli(&f, Some(&fake), &["verify", "the inbox shows 3 messages"]);
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("✗ does not hold: no inbox here"), "{stdout}");
    never_shown(&o);
    // No model anywhere: a usage error naming the setting (exit 2), and no request.
    let o = cli(&f, None, &["verify", "anything"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("verify needs a model") && stderr.contains("TRAILBLAZE_LLM_MODEL"),
        "{stderr}"
    );
}

#[test]
fn mcp_blaze_ask_and_verify_delegate_to_the_agent_and_join_the_recording() {
    let f = super::mcp::demo();
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    fake.push(call("answer", json!({ "value": "Quarterly report" })))
        .push(call(
            "verdict",
            json!({ "holds": true, "explanation": "three messages" }),
        ));
    let mut base = super::mcp::cli(&f);
    base.env("TRAILBLAZE_LLM_BASE_URL", fake.base_url())
        .env("TRAILBLAZE_LLM_MODEL", "fake-model")
        .env("TRAILBLAZE_LLM_API_KEY", API_KEY);
    let ops = json!([
        { "op": "list" },
        super::mcp::call("blaze", json!({ "text": "Sign in as jane@example.com with the demo password" })),
        super::mcp::call("ask", json!({ "text": "the first subject" })),
        super::mcp::call("verify", json!({ "text": "the inbox lists three messages" })),
        super::mcp::call("saveTrail", json!({ "name": "blazed" })),
    ]);
    let (r, stderr) = super::mcp::drive_stdio_env(&f, &ops, &base);
    let listed: Vec<&str> = r[0]["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        ["blaze", "ask", "verify"].iter().all(|t| listed.contains(t)),
        "{listed:?}"
    );
    super::mcp::assert_ok(&r[1], "blaze");
    let blazed = super::mcp::text(&r[1]);
    assert!(
        blazed.contains("- step: Sign in") && blazed.contains("tapOnElementBySelector"),
        "{blazed}"
    );
    assert_eq!(super::mcp::text(&r[2]), "Quarterly report");
    let verdict: Value = serde_json::from_str(super::mcp::text(&r[3])).expect("a JSON verdict");
    assert_eq!(verdict["holds"], true);
    super::mcp::assert_ok(&r[4], "saveTrail");
    let saved = std::fs::read_to_string(f.map_dir().join("trails/blazed.trail.yaml")).expect("saved");
    assert!(
        saved.contains("tapOnElementBySelector") && saved.contains("assertWithAi"),
        "{saved}"
    );
    for v in [API_KEY, CANARY] {
        assert!(!stderr.contains(v) && !saved.contains(v), "{v} shown");
        assert!(r.iter().all(|x| !x.to_string().contains(v)), "{v} in a reply");
        assert!(fake.requests().iter().all(|q| !q.body.contains(v)), "{v} in a request");
    }
    // Control: without a model the server offers none of the three.
    let (r, _) = super::mcp::drive_stdio(&f, &json!([{ "op": "list" }]));
    let listed = r[0]["tools"].to_string();
    assert!(
        !listed.contains("\"blaze\"") && listed.contains("saveTrail"),
        "{listed}"
    );
}
