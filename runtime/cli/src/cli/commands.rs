//! One-line commands for a person or an outer agent: `trailblaze step "open settings"` (one
//! objective run by the agent on a live device; prints the calls it made as a recording to paste
//! into a trail), `ask "what is the first subject?"` (an answer read off the screen, no action) and
//! `verify "the inbox shows 3 messages"` (exit 0 when it holds, 1 when it does not). Each opens a
//! session and goes through the library: the agent's loop, or the one dispatcher's
//! `rememberWithAi` / `assertWithAi`.

use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use serde_json::{Value, json};
use trailblaze::agent::{Agent, End, Objective};
use trailblaze::{Catalog, Project, Session};

use super::llm::{LlmArgs, workspace_llm};
use super::output::{err, out};
use super::{Cli, Failure, MapArg, SessionArgs, open_project, out_dir};

#[derive(Args)]
pub struct OneLineArgs {
    /// The objective, question or statement, in words.
    pub text: String,
    /// Print the outcome as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// In a session, its LLM is the one `session start` was given.
    #[command(flatten)]
    pub join: super::session::JoinArg,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// A session on the device whose `assertWithAi` / `rememberWithAi` ask the agent's provider.
struct Opened {
    _project: Project,
    catalog: Arc<Catalog>,
    session: Session,
    agent: Arc<Agent>,
}

/// The session `a` joins, when it joins one (after the text is checked).
fn joined(a: &OneLineArgs, what: &str) -> Result<Option<super::session::Joined>, Failure> {
    if a.text.trim().is_empty() {
        return Err(super::usage_help(
            format!("{what}: the text is empty"),
            "give it in quotes",
        ));
    }
    super::session::join(&a.join, !a.session.device.device.is_empty())
}

fn open(cli: &Cli, a: &OneLineArgs, what: &str) -> Result<Opened, Failure> {
    let spec = a.session.device.spec()?;
    let (project, located) = open_project(cli, Some(&a.session.secrets))?;
    let config = a.llm.required(workspace_llm(&located)?.as_ref(), what)?;
    let id = project.trailmap_for(a.map.trailmap.as_deref(), &spec)?;
    let catalog = project.catalog(&id)?;
    let agent = Arc::new(Agent::new(
        &config,
        &project.secrets.values_to_redact(),
        project.secrets.names(),
    ));
    let mut settings = a.session.limits.settings();
    settings.judge = Some(trailblaze::agent::judge_handle(agent.clone()));
    let device = project.device(&id, &spec)?;
    let session = project.open_session(
        &id,
        trailblaze::SessionOptions {
            device: Some(device),
            out_dir: Some(out_dir(&located, &a.session.out)),
            settings,
            ..Default::default()
        },
    )?;
    Ok(Opened {
        _project: project,
        catalog,
        session,
        agent,
    })
}

/// `trailblaze step "..."`.
pub fn step(cli: &Cli, a: &OneLineArgs) -> Result<(), Failure> {
    if let Some(j) = joined(a, "step")? {
        return super::session::client::words(&j, "step", &a.text, a.json);
    }
    let o = open(cli, a, "step")?;
    let objective = Objective {
        text: &a.text,
        ..Objective::default()
    };
    let mut seen = 0;
    let run = o.agent.run(&o.session, &o.catalog, &objective, &mut seen);
    let (input, output) = run.tokens();
    let yaml = trailblaze::recording::step_yaml(false, &a.text, &run.recording);
    if a.json {
        super::output::out_json!(&json!({
            "completed": run.end.passed(),
            "error": run.end.error(),
            "calls": run.calls.iter().map(|c| json!({ "tool": c.tool, "args": c.args, "ok": c.ok, "error": c.error })).collect::<Vec<Value>>(),
            "recording": yaml,
            "llm": { "requests": run.turns.len(), "input_tokens": input, "output_tokens": output },
        }));
    } else if run.end.passed() {
        match &yaml {
            Some(y) => out!("{}", y.trim_end()),
            None => err!("(the recording holds a secret in a form its placeholder cannot stand for: not printed)"),
        }
    }
    err!(
        "step: {} turn(s), {} LLM request(s), {input} tokens in, {output} out",
        run.turns.len(),
        run.turns.len()
    );
    match run.end {
        End::Completed { explanation } => {
            err!("completed: {explanation}");
            Ok(())
        }
        End::Device { message } => Err(Failure::Usage(anyhow!(message))),
        other => Err(Failure::Failed(anyhow!(other.error().unwrap_or_default()))),
    }
}

/// `trailblaze ask "..."`: the answer on stdout.
pub fn ask(cli: &Cli, a: &OneLineArgs) -> Result<(), Failure> {
    if let Some(j) = joined(a, "ask")? {
        return super::session::client::words(&j, "ask", &a.text, a.json);
    }
    let o = open(cli, a, "ask")?;
    let result = o
        .session
        .call("rememberWithAi", json!({ "prompt": a.text, "variable": "answer" }));
    let cost = o.session.llm_cost();
    err!("ask: {}", cost.describe());
    match result {
        Ok(v) => {
            let value = v.get("value").and_then(Value::as_str).unwrap_or_default();
            if a.json {
                super::output::out_json!(&json!({ "answer": value, "llm": cost }));
            } else {
                out!("{value}");
            }
            Ok(())
        }
        Err(e) if e.is_device_failure() => Err(Failure::Usage(anyhow!(e.to_string()))),
        Err(e) => Err(Failure::Failed(anyhow!(e.to_string()))),
    }
}

/// `trailblaze verify "..."`: exit 0 when the statement holds, 1 when it does not, 2 when no
/// verdict could be had (the provider, the device).
pub fn verify(cli: &Cli, a: &OneLineArgs) -> Result<(), Failure> {
    if let Some(j) = joined(a, "verify")? {
        return super::session::client::words(&j, "verify", &a.text, a.json);
    }
    let o = open(cli, a, "verify")?;
    let result = o.session.call("assertWithAi", json!({ "prompt": a.text }));
    let cost = o.session.llm_cost();
    err!("verify: {}", cost.describe());
    let (holds, explanation) = match &result {
        Ok(v) => (
            true,
            v.get("explanation")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        Err(e) => match e.to_string().split_once(trailblaze::judge::DOES_NOT_HOLD) {
            Some((_, why)) if !e.is_device_failure() => (false, why.trim_start_matches(':').trim().to_string()),
            _ if e.is_device_failure() => return Err(Failure::Usage(anyhow!(e.to_string()))),
            _ => return Err(Failure::Usage(anyhow!("no verdict: {e}"))),
        },
    };
    if a.json {
        super::output::out_json!(&json!({ "holds": holds, "explanation": explanation, "llm": cost }));
    } else if holds {
        out!("✓ holds: {explanation}");
        // Pasted into a trail, the same check runs again on every replay.
        let call = [("assertWithAi".to_string(), json!({ "prompt": a.text }))];
        if let Some(y) = trailblaze::recording::step_yaml(true, &a.text, &call) {
            out!("{}", y.trim_end());
        }
    } else {
        out!("✗ does not hold: {explanation}");
    }
    if holds { Ok(()) } else { Err(Failure::Reported(1)) }
}
