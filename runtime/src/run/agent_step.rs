//! `run --agent`: a step with no recording for this device (or `recordable: false`), and with
//! self-heal a recorded step that failed, run by the agent; what it did kept to be written back as
//! the step's recording for this device.

use std::path::Path;
use std::sync::Arc;

use super::{nested_calls, run_with_retries, step_report, tap_of};
use crate::agent::{Agent, AgentCall, AgentConfig, End, Objective, WriteBack};
use crate::catalog::Catalog;
use crate::secret::Redaction;
use crate::session::Session;
use crate::trail::model::StepKind;
use crate::trail::write_back::{self, StepRecording};
use crate::trail::{AgentReport, AgentTurn, CallReport, Outcome, Step, StepReport, Trail};

/// Where a step runs.
pub(super) struct At<'a> {
    pub agent: &'a mut Agent,
    pub catalog: &'a Arc<Catalog>,
    pub session: &'a Session,
    pub trail: &'a Trail,
    pub last_seq: &'a mut u64,
}

/// Runs `step` (`original`: the same step before `{{args.*}}` were filled in, whose calls a heal
/// keeps) by its recording or by the agent; a passed agent step's recording goes to `edits`.
pub(super) fn run(
    at: &mut At<'_>,
    cfg: &AgentConfig,
    (step, original): (&Step, &Step),
    edits: &mut Vec<StepRecording>,
    progress: &mut dyn FnMut(&str),
) -> StepReport {
    // `recordable: false` steps hold no recording (the parse gate says so): they land below too.
    if step.calls_for(at.session.platform().as_str(), None).is_some() {
        let (sr, _) = run_with_retries(at.session, (step, None, None), at.last_seq, progress);
        if sr.outcome != Outcome::Failed || !cfg.self_heal {
            return sr;
        }
        progress(&format!(
            "  ↻ {} failed, the agent takes over (self-heal): {}",
            step.label(),
            sr.error.as_deref().unwrap_or("no error")
        ));
        return by_agent(at, (step, original), Some(sr), edits);
    }
    by_agent(at, (step, original), None, edits)
}

fn by_agent(
    at: &mut At<'_>,
    (step, original): (&Step, &Step),
    failed: Option<StepReport>,
    edits: &mut Vec<StepRecording>,
) -> StepReport {
    let healing = failed.as_ref().map(|f| f.error.clone().unwrap_or_default());
    let config = &at.trail.config;
    let objective = Objective {
        verify: step.kind == StepKind::Verify,
        text: &step.text,
        trail_title: config.title.as_deref(),
        trail_description: config.description.as_deref(),
        context: config.context.as_deref(),
        healing: healing.as_deref(),
    };
    let run = at.agent.run(at.session, at.catalog, &objective, at.last_seq);
    let calls: Vec<CallReport> = run.calls.iter().map(call_report).collect();
    // A heal keeps the recorded calls that ran before the failing one: the agent went on from there.
    let kept = failed
        .as_ref()
        .map_or(0, |f| f.calls.iter().take_while(|c| c.ok).count());
    let mut recording: Vec<(String, serde_json::Value)> = original
        .calls_for(at.session.platform().as_str(), None)
        .unwrap_or_default()
        .iter()
        .take(kept)
        .map(|c| (c.tool.clone(), c.args.clone()))
        .collect();
    recording.extend(run.recording.iter().cloned());
    let outcome = match &run.end {
        End::Completed { .. } => Outcome::Passed,
        End::Device { .. } => Outcome::Error,
        _ => Outcome::Failed,
    };
    // `recordable: false`: the agent runs it every time, and it is never written.
    if outcome == Outcome::Passed && step.recordable != Some(false) && !recording.is_empty() {
        edits.push(StepRecording {
            path: step.path.clone(),
            key: at.session.platform().as_str().to_string(),
            calls: recording.clone(),
        });
    }
    let (input_tokens, output_tokens) = run.tokens();
    let mut sr = step_report(step, outcome, calls, run.end.error());
    let (mut recorded_calls, mut recorded_error) = (Vec::new(), None);
    if let Some(f) = failed {
        sr.attempts = f.attempts + 1;
        sr.retried = f.retried;
        sr.retried.extend(f.error.clone());
        recorded_calls = f.calls;
        recorded_error = f.error;
    }
    sr.agent = Some(AgentReport {
        provider: at.agent.provider_name().to_string(),
        model: at.agent.model().to_string(),
        reason: if healing.is_some() {
            "self-heal".into()
        } else {
            "not recorded".into()
        },
        recorded_calls,
        recorded_error,
        input_tokens,
        output_tokens,
        turns: run
            .turns
            .iter()
            .map(|t| AgentTurn {
                reasoning: t.text.clone(),
                calls: t.calls,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
            })
            .collect(),
        conclusion: match &run.end {
            End::Completed { explanation } | End::Failed { explanation } => Some(explanation.clone()),
            _ => None,
        },
        recording: recording
            .into_iter()
            .map(|(tool, args)| CallReport {
                tool,
                args,
                ok: true,
                error: None,
                duration_ms: 0.0,
                line: None,
                tap: None,
                calls: Vec::new(),
            })
            .collect(),
    });
    sr
}

fn call_report(c: &AgentCall) -> CallReport {
    CallReport {
        tool: c.tool.clone(),
        args: c.args.clone(),
        ok: c.ok,
        error: c.error.clone(),
        duration_ms: c.duration_ms,
        line: None,
        tap: c.result.as_ref().and_then(tap_of),
        calls: nested_calls(&c.tool, &c.records),
    }
}

/// Writes the trail with the agent's recordings: to its `.healed.yaml` copy or in place. Returns
/// where; a failure is told on the progress line (the run's outcome stands).
pub(super) fn write_back(
    file: &Path,
    edits: &[StepRecording],
    mode: WriteBack,
    secrets: &Redaction,
    progress: &mut dyn FnMut(&str),
) -> Option<String> {
    let dest = match mode {
        WriteBack::Off => return None,
        WriteBack::Sibling => write_back::healed_path(file),
        WriteBack::InPlace => file.to_path_buf(),
    };
    let written = crate::files::read_text(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
        .and_then(|text| write_back::with_recordings(&text, file, edits).map_err(|e| e.to_string()))
        .and_then(|r| {
            // Placeholders only by construction; a value typed literally is still never written.
            crate::recording::write_trail(&dest, &secrets.text(&r.text), true)
                .map(|()| r.kept_layout)
                .map_err(|e| e.to_string())
        });
    match written {
        Ok(kept_layout) => {
            let note = if kept_layout {
                ""
            } else {
                " (written whole: its layout did not allow an edit in place, so its comments are gone)"
            };
            progress(&format!(
                "  ↳ the agent's recording of {} step(s) written to {}{note}",
                edits.len(),
                dest.display()
            ));
            Some(dest.display().to_string())
        }
        Err(e) => {
            progress(&format!("  ! the agent's recordings were not written: {e}"));
            None
        }
    }
}
