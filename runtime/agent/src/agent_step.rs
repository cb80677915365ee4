//! `run --agent`: a step with no recording for this device (or `recordable: false`), and with
//! self-heal a recorded step that failed, run by the agent; what it did kept to be written back as
//! the step's recording for this device.

use crate::write_back::{self, StepEdit};
use crate::{Agent, AgentCall, End, Objective, ObjectiveRun, WriteBack};
use trailblaze_core::Session;
use trailblaze_core::replay::{Notice, RunSink, StepAgent, TrailAgent};
use trailblaze_core::replay::{Replayer, nested_calls, step_report, tap_of};
use trailblaze_core::secret::{Placeholders, Redaction};
use trailblaze_core::trail::model::StepKind;
use trailblaze_core::trail::report::{AgentReport, AgentTurn};
use trailblaze_core::trail::{CallReport, Outcome, Step, StepReport, Trail};

/// Where a step runs.
struct At<'a, 's> {
    agent: &'a Agent,
    replay: &'a mut Replayer<'s>,
    trail: &'a Trail,
    /// What the trail's earlier steps did, one line each.
    before: &'a str,
}

impl StepAgent for Agent {
    fn trail<'a>(&'a self, trail: &'a Trail) -> Box<dyn TrailAgent + 'a> {
        Box::new(AtTrail {
            agent: self,
            trail,
            told: String::new(),
            edits: Vec::new(),
        })
    }
}

/// The agent at one trail: what it was told so far and what it recorded.
struct AtTrail<'a> {
    agent: &'a Agent,
    trail: &'a Trail,
    told: String,
    edits: Vec<StepEdit>,
}

impl TrailAgent for AtTrail<'_> {
    fn step(&mut self, replay: &mut Replayer<'_>, step: &Step, original: &Step, sink: &mut dyn RunSink) -> StepReport {
        let mut at = At {
            agent: self.agent,
            replay,
            trail: self.trail,
            before: &self.told,
        };
        run(&mut at, (step, original), &mut self.edits, sink)
    }

    fn stepped(&mut self, report: &StepReport) {
        tell_step(&mut self.told, report);
    }

    fn finish(self: Box<Self>, session: &Session, redact: &Redaction, sink: &mut dyn RunSink) -> Option<String> {
        if self.edits.is_empty() {
            return None;
        }
        let secrets = Secrets {
            redact,
            placeholders: session.placeholders(),
        };
        write_back(self.trail, &self.edits, self.agent.write_back(), &secrets, sink)
    }
}

/// Adds a finished step's line to what the agent is told of the steps before: `2. step Sign in:
/// passed (inputText, tapOnElementBySelector)`, the trail's text and the calls' names only. Kept as
/// the trail goes, not rebuilt per step (that grew with the square of a long trail's length).
fn tell_step(out: &mut String, s: &StepReport) {
    use std::fmt::Write as _;
    let calls: Vec<&str> = match &s.agent {
        Some(a) if !a.recording.is_empty() => a.recording.iter().map(|c| c.tool.as_str()).collect(),
        _ => s.calls.iter().filter(|c| c.ok).map(|c| c.tool.as_str()).collect(),
    };
    let text = s.text.lines().next().unwrap_or_default();
    let _ = write!(out, "{}. {} {text}: {}", s.number, s.kind, s.outcome.word());
    if !calls.is_empty() {
        let _ = write!(out, " ({})", calls.join(", "));
    }
    out.push('\n');
}

/// Runs `step` (`original`: the same step before `{{args.*}}` were filled in, whose calls a heal
/// keeps) by its recording or by the agent; a passed agent step's recording goes to `edits`.
fn run(
    at: &mut At<'_, '_>,
    (step, original): (&Step, &Step),
    edits: &mut Vec<StepEdit>,
    sink: &mut dyn RunSink,
) -> StepReport {
    // `recordable: false` steps hold no recording (the parse gate says so): they land below too.
    if at.replay.calls_of(step).is_some() {
        let sr = at.replay.replay_step(step, sink);
        if sr.outcome != Outcome::Failed || !at.agent.self_heal() {
            return sr;
        }
        sink.notice(&Notice::AgentTakesOver {
            step: step.label(),
            error: sr.error.clone().unwrap_or_else(|| "no error".into()),
        });
        return by_agent(at, (step, original), Some(sr), edits);
    }
    by_agent(at, (step, original), None, edits)
}

/// Runs `step` by the agent (`failed`: its recorded run, when this heals it); its report, its
/// recording to `edits` when it passed.
fn by_agent(
    at: &mut At<'_, '_>,
    (step, original): (&Step, &Step),
    failed: Option<StepReport>,
    edits: &mut Vec<StepEdit>,
) -> StepReport {
    let healing = failed.as_ref().map(|f| f.error.clone().unwrap_or_default());
    let run = run_objective(at, step, healing.as_deref());
    let calls: Vec<CallReport> = run.calls.iter().map(call_report).collect();
    let recording = healed_recording(at, original, failed.as_ref(), &run);
    let outcome = match &run.end {
        End::Completed { .. } => Outcome::Passed,
        End::Device { .. } => Outcome::Error,
        _ => Outcome::Failed,
    };
    // `recordable: false`: the agent runs it every time, and it is never written.
    if outcome == Outcome::Passed && step.recordable != Some(false) && !recording.is_empty() {
        edits.push(StepEdit {
            path: step.path.clone(),
            key: at.replay.platform().to_string(),
            calls: recording.clone(),
        });
    }
    let (input_tokens, output_tokens) = run.tokens();
    let mut sr = step_report(step, outcome, calls, run.end.error());
    sr.llm = Some(trailblaze_core::judge::LlmCost {
        requests: run.turns.len() as u32,
        input_tokens,
        output_tokens,
    });
    let mut recorded = (Vec::new(), None);
    if let Some(f) = failed {
        sr.attempts = f.attempts + 1;
        sr.retried = f.retried;
        sr.retried.extend(f.error.clone());
        recorded = (f.calls, f.error);
    }
    sr.agent = Some(agent_report(at.agent, &run, healing.is_some(), recording, recorded));
    sr
}

/// The agent's run of `step`'s objective, in the trail it is part of (`healing`: the recorded
/// run's error).
fn run_objective(at: &mut At<'_, '_>, step: &Step, healing: Option<&str>) -> ObjectiveRun {
    let config = &at.trail.config;
    let objective = Objective {
        verify: step.kind == StepKind::Verify,
        text: &step.text,
        trail_title: config.title.as_deref(),
        trail_description: config.description.as_deref(),
        context: config.context.as_deref(),
        healing,
        before: Some(at.before),
    };
    let session = at.replay.session;
    at.agent
        .run(session, &session.catalog(), &objective, &mut at.replay.last_seq)
}

/// The step's new recording: what the agent recorded, after the recorded calls a heal keeps.
fn healed_recording(
    at: &At<'_, '_>,
    original: &Step,
    failed: Option<&StepReport>,
    run: &ObjectiveRun,
) -> Vec<(String, serde_json::Value)> {
    // A heal keeps the recorded calls that ran before the failing one: the agent went on from there.
    let kept = failed.map_or(0, |f| f.calls.iter().take_while(|c| c.ok).count());
    let mut recording: Vec<(String, serde_json::Value)> = at
        .replay
        .calls_of(original)
        .unwrap_or_default()
        .iter()
        .take(kept)
        .map(|c| (c.tool.clone(), c.args.clone()))
        .collect();
    recording.extend(run.recording.iter().cloned());
    recording
}

/// What the agent did, for the step's report (`recorded`: the calls and error of the recorded
/// run it healed).
fn agent_report(
    agent: &Agent,
    run: &ObjectiveRun,
    healed: bool,
    recording: Vec<(String, serde_json::Value)>,
    (recorded_calls, recorded_error): (Vec<CallReport>, Option<String>),
) -> AgentReport {
    let (input_tokens, output_tokens) = run.tokens();
    AgentReport {
        provider: agent.provider_name().to_string(),
        model: agent.model().to_string(),
        reason: if healed {
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
                trace: Some(Box::new(t.trace.clone())),
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
    }
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
/// where; a failure is a notice (the run's outcome stands).
fn write_back(
    trail: &Trail,
    edits: &[StepEdit],
    mode: WriteBack,
    at: &Secrets<'_>,
    sink: &mut dyn RunSink,
) -> Option<String> {
    let file = trail.file.as_path();
    let dest = match mode {
        WriteBack::Off => return None,
        WriteBack::Sibling => write_back::healed_path(file),
        WriteBack::InPlace => file.to_path_buf(),
    };
    // The edits go into the text this run read: the file as it is now may hold other steps.
    let read = trail.text.as_str();
    let written = recorded_as_placeholders(edits, at)
        .and_then(|edits| match trailblaze_core::files::still_holds(file, read) {
            Ok(true) => Ok(edits),
            Ok(false) => Err(format!(
                "{} changed since this run read it: the recording was not written (run again to record on the new text)",
                file.display()
            )),
            Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        })
        .and_then(|edits| write_back::with_recordings(read, file, &edits).map_err(|e| e.to_string()))
        .and_then(|r| {
            trailblaze_core::recording::write_trail(&dest, &r.text, true)
                .map(|()| r.kept_layout)
                .map_err(|e| e.to_string())
        });
    match written {
        Ok(kept_layout) => {
            let path = dest.display().to_string();
            sink.notice(&Notice::RecordingWritten {
                steps: edits.len(),
                path: path.clone(),
                kept_layout,
            });
            Some(path)
        }
        Err(error) => {
            sink.notice(&Notice::RecordingNotWritten { error });
            None
        }
    }
}

/// The session's secrets, as what people read and what a recording replays.
struct Secrets<'a> {
    pub redact: &'a Redaction,
    pub placeholders: &'a Placeholders,
}

/// The edits with each secret value written as its placeholder (a replay types the same text); a
/// secret in another form (another case, escaped), which no placeholder stands for, is refused:
/// written as `***` it would replay the wrong text, written as it is it would leak.
fn recorded_as_placeholders(edits: &[StepEdit], at: &Secrets<'_>) -> Result<Vec<StepEdit>, String> {
    let mut out = Vec::with_capacity(edits.len());
    for e in edits {
        let mut calls = Vec::with_capacity(e.calls.len());
        for (tool, args) in &e.calls {
            let args = at.placeholders.recorded(args).unwrap_or_else(|| args.clone());
            let mut shown = args.clone();
            at.redact.value(&mut shown);
            if shown != args {
                return Err(format!(
                    "the recording of `{}` ({tool}) holds a secret in a form its `{{{{secret:NAME}}}}` placeholder \
                     cannot stand for: not written",
                    e.path
                ));
            }
            calls.push((tool.clone(), args));
        }
        out.push(StepEdit { calls, ..e.clone() });
    }
    Ok(out)
}
