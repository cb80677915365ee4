//! One step of a replay: its recorded calls for the session's platform, in one trip each to the
//! session's thread, again after a failure while `maxRetries` allows, and the screen it keeps.
//!
//! A replay was half bookkeeping: once a step's last call has passed, the screen it keeps (if any)
//! and then the first call of the next step are sent before the step is reported, so the session's
//! thread works meanwhile. The session runs jobs in order, so the screen is the one the step left.

use serde_json::Value;

use crate::device::Screenshot;
use crate::dispatch::CallError;
use crate::session::{Pending, PendingCall, Session};
use crate::state::log::LogEntry;
use crate::trail::model::ToolCall;
use crate::trail::report::Point;
use crate::trail::{self, CallReport, Outcome, Step, StepReport};

use super::{ReplayOptions, RunSink, ScreenshotPolicy};

/// A screenshot asked for ahead, still to be read.
pub(super) type PendingScreen = Pending<Result<Screenshot, String>>;

/// The state a replay carries from step to step.
pub struct Replayer<'s> {
    pub session: &'s Session,
    /// The recording key the device answers to, and its device key.
    platform: &'s str,
    device_key: Option<&'s str>,
    /// The last step seq already looked at: the steps after it belong to the next call.
    pub last_seq: u64,
    policy: ScreenshotPolicy,
    /// Whether a passed step's screen and the next step's first call are sent ahead (never with an
    /// agent, which may take any step over, nor a judge).
    overlapping: bool,
    /// The next step's first call, sent ahead.
    ahead: Option<PendingCall>,
    /// A web step's page notes, asked for before the next step's first call was sent ahead: read
    /// after it, they would tell of that call's page (its URL, its console).
    notes: Option<Pending<Option<Value>>>,
}

impl<'s> Replayer<'s> {
    pub(super) fn new(
        session: &'s Session,
        platform: &'s str,
        device_key: Option<&'s str>,
        opts: &'s ReplayOptions<'_>,
    ) -> Self {
        Replayer {
            session,
            platform,
            device_key,
            last_seq: 0,
            policy: opts.screenshots,
            // Nor with a judge: each step's cost is read between its last call and the next step's.
            overlapping: !opts.has_agent() && !session.has_judge(),
            ahead: None,
            notes: None,
        }
    }

    /// The calls `step` recorded for this device; `None`: nothing is.
    pub fn calls_of<'t>(&self, step: &'t Step) -> Option<&'t [ToolCall]> {
        step.calls_for(self.platform, self.device_key)
    }

    pub fn platform(&self) -> &str {
        self.platform
    }

    /// Runs `step` by its recording, retried as its `maxRetries` allows.
    pub fn replay_step(&mut self, step: &Step, sink: &mut dyn RunSink) -> StepReport {
        self.step_with_retries(step, None, sink).0
    }

    /// Runs `step`, and again after a failure while its `maxRetries` allows (each attempt's calls
    /// are logged steps); `next` is the step after it. Returns the screen sent for ahead, if any.
    pub(crate) fn step_with_retries(
        &mut self,
        step: &Step,
        next: Option<&Step>,
        sink: &mut dyn RunSink,
    ) -> (StepReport, Option<PendingScreen>) {
        let retries = step.max_retries.unwrap_or(0);
        let mut retried = Vec::new();
        let (mut sr, mut screen) = self.step_once(step, next);
        while sr.outcome == Outcome::Failed && (retried.len() as u32) < retries {
            let error = sr.error.take().unwrap_or_default();
            sink.step_retrying(step, retried.len() as u32 + 1, &error);
            retried.push(error);
            (sr, screen) = self.step_once(step, next);
        }
        sr.attempts = retried.len() as u32 + 1;
        sr.retried = retried;
        (sr, screen)
    }

    /// Runs one attempt of `step`'s calls, stopping at the first failure; a step with nothing
    /// recorded for this device is reported as not recorded. Each call's nested calls come from the
    /// session's step records.
    fn step_once(&mut self, step: &Step, next: Option<&Step>) -> (StepReport, Option<PendingScreen>) {
        let Some(calls) = self.calls_of(step) else {
            let error = Some("no recording for this device".into());
            return (step_report(step, Outcome::NotRecorded, Vec::new(), error), None);
        };
        let mut screen = None;
        // A step has one or two calls; `Vec::new` grows to room for four (a long trail's first
        // allocation of these was a megabyte of fresh pages).
        let mut reports = Vec::with_capacity(calls.len());
        let mut error = None;
        let mut device_failed = false;
        for (i, call) in calls.iter().enumerate() {
            // The call and the steps it logged, in one trip to the session's thread.
            let pending = match self.ahead.take() {
                Some(p) => p,
                None => self
                    .session
                    .send_call_with_steps(&call.tool, compact(&call.args), self.last_seq),
            };
            // The next step's first call is copied while this one runs: once this one returns,
            // the session's thread waits only for the send.
            let last = i + 1 == calls.len();
            let next_call = (last && self.overlapping)
                .then(|| next.and_then(|n| self.calls_of(n)).and_then(<[ToolCall]>::first))
                .flatten()
                .map(|first| (first.tool.as_str(), compact(&first.args)));
            let (result, records, took) = pending.wait_timed();
            self.last_seq = records.last().map_or(self.last_seq, |r| r.seq);
            if last && result.is_ok() && self.overlapping {
                screen = self.send_ahead(calls, next_call);
            }
            let ok = result.is_ok();
            device_failed |= result.as_ref().is_err_and(CallError::is_device_failure);
            let err = result.as_ref().err().map(|e| e.to_string());
            reports.push(CallReport {
                tool: call.tool.clone(),
                // A secret by its meaning (`web_fillSecret`'s value) is shown as `***`, as the log shows it.
                args: crate::dispatch::secret_arguments_masked(&call.tool, &call.args)
                    .unwrap_or_else(|| compact(&call.args)),
                ok,
                error: err.clone(),
                duration_ms: took.as_secs_f64() * 1000.0,
                line: Some(call.pos.line),
                tap: result.as_ref().ok().and_then(tap_of),
                calls: nested_calls(&call.tool, &records),
            });
            if !ok {
                error = err;
                break;
            }
        }
        let outcome = match (&error, device_failed) {
            (Some(_), true) => Outcome::Error,
            (Some(_), false) => Outcome::Failed,
            (None, _) => Outcome::Passed,
        };
        (step_report(step, outcome, reports, error), screen)
    }

    /// Sends, after a step whose `calls` all passed, its screen (when kept) and then the next
    /// step's first call.
    fn send_ahead(&mut self, calls: &[ToolCall], next_call: Option<(&str, Value)>) -> Option<PendingScreen> {
        let named = calls.iter().any(|c| c.tool == "takeSnapshot");
        let screen = (self.policy.wants(&Outcome::Passed) || named)
            .then(|| {
                self.session
                    .submit(|core| core.screen.screenshot(&core.redact).map_err(|e| e.to_string()))
                    .ok()
            })
            .flatten();
        if self.session.platform() == crate::device::Platform::Web {
            self.notes = self.session.send_step_notes();
        }
        self.ahead = next_call.map(|(tool, args)| self.session.send_call_with_steps(tool, args, self.last_seq));
        screen
    }

    /// What the page tells of the step just run besides its screen: the notes asked for before the
    /// next step's first call was sent, or asked for now when nothing was sent ahead.
    pub(super) fn page_notes(&mut self) -> Option<Value> {
        match self.notes.take() {
            Some(sent) => sent.wait().ok().flatten(),
            None => self.session.step_notes(),
        }
    }

    /// The screen `sr` keeps, as the policy says: the one sent for ahead, or one taken now. A step
    /// that named its screen (`takeSnapshot`) keeps it whatever the policy: the trail asked.
    pub(super) fn screen_for(&self, sr: &StepReport, sent: Option<PendingScreen>) -> Option<Screenshot> {
        if matches!(sr.outcome, Outcome::Skipped { .. }) {
            return None;
        }
        let named = sr.calls.iter().any(|c| c.tool == "takeSnapshot" && c.ok);
        let shot = match sent {
            Some(p) => p.wait().map_err(|e| e.to_string()).and_then(|r| r),
            None if named || self.policy.wants(&sr.outcome) => self.session.screenshot(),
            None => return None,
        };
        shot.ok()
    }
}

pub fn step_report(step: &Step, outcome: Outcome, calls: Vec<CallReport>, error: Option<String>) -> StepReport {
    StepReport {
        number: step.number,
        kind: step.kind.keyword().to_string(),
        text: step.text.clone(),
        line: step.pos.line,
        outcome,
        started_ms: 0.0,
        duration_ms: 0.0,
        attempts: 1,
        retried: Vec::new(),
        calls,
        error,
        screen: None,
        screen_size: None,
        agent: None,
        llm: None,
        page: None,
    }
}

/// A copy of a call's arguments with each mapping made at its size. `Value::clone` gives a mapping
/// room for as many entries as its hash table holds (three for one), and a replay copies every
/// call's arguments twice (for the session, which keeps them, and for the report): a long trail's
/// copies were a third of its run's page faults.
fn compact(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::with_capacity(m.len());
            for (k, v) in m {
                out.insert(k.clone(), compact(v));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(compact).collect()),
        other => other.clone(),
    }
}

/// Where a call tapped, from its result (`{"tapped": {"x": .., "y": ..}}`).
pub fn tap_of(result: &serde_json::Value) -> Option<Point> {
    let p = result.get("tapped")?;
    Some(Point {
        x: p.get("x")?.as_i64()?,
        y: p.get("y")?.as_i64()?,
    })
}

/// What a call ran inside it, nested, from the records it logged. The call's own record is the root
/// at depth 0; a delegating tool logs only what it expanded to.
pub fn nested_calls(tool: &str, records: &[LogEntry]) -> Vec<CallReport> {
    // The call's own record is left out rather than nested and taken apart (its arguments would
    // be copied for nothing on every step): what follows it nests the same, its own calls first.
    let records = match records.split_first() {
        Some((own, rest)) if own.depth == 0 && own.tool == tool => rest,
        _ => records,
    };
    trail::report::nest_calls(records)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(tool: &str, depth: u32) -> LogEntry {
        LogEntry {
            seq: 0,
            depth,
            tool: tool.to_string(),
            args: json!({ "of": tool }),
            ok: Some(true),
            masked: false,
            error: None,
            millis: 0.0,
        }
    }

    /// The call's own record, nested and taken apart: what `nested_calls` gives without copying it.
    fn taken_apart(tool: &str, records: &[LogEntry]) -> Vec<CallReport> {
        let mut nested = trail::report::nest_calls(records);
        if records.first().is_some_and(|r| r.depth == 0 && r.tool == tool) && !nested.is_empty() {
            let mut own = nested.remove(0).calls;
            own.append(&mut nested);
            nested = own;
        }
        nested
    }

    #[test]
    fn a_compact_copy_is_the_same_value() {
        let values = [
            json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Build Bot" } } }),
            json!({ "b": 1, "a": [1, { "z": null, "y": [true, 2.5] }], "c": "x" }),
            json!([]),
            json!({}),
            json!("text"),
        ];
        for v in &values {
            let copy = compact(v);
            assert_eq!(&copy, v);
            // The order of keys is kept too (the report shows them as written).
            assert_eq!(serde_json::to_string(&copy).ok(), serde_json::to_string(v).ok());
        }
        // Control: the comparison sees a change.
        assert_ne!(compact(&values[1]), json!({ "b": 1, "a": [1], "c": "x" }));
    }

    #[test]
    fn a_calls_own_record_is_left_out_and_what_follows_nests_the_same() {
        let shapes: Vec<Vec<LogEntry>> = vec![
            vec![],
            vec![record("tap", 0)],
            vec![record("tap", 0), record("a", 1), record("b", 2), record("c", 1)],
            vec![
                record("tap", 0),
                record("a", 2),
                record("b", 1),
                record("x", 0),
                record("y", 1),
            ],
            // Not the call's own record first (a delegating tool logs only what it expanded to).
            vec![record("a", 0), record("b", 1), record("c", 0)],
            vec![record("tap", 1), record("b", 0)],
        ];
        for records in &shapes {
            let calls = |c: Vec<CallReport>| serde_json::to_value(c).expect("serializes");
            assert_eq!(calls(nested_calls("tap", records)), calls(taken_apart("tap", records)));
        }
        // Positive control: the comparison tells a different nesting apart.
        let calls = |c: Vec<CallReport>| serde_json::to_value(c).expect("serializes");
        assert_ne!(
            calls(nested_calls("tap", &shapes[2])),
            calls(trail::report::nest_calls(&shapes[2]))
        );
    }
}
