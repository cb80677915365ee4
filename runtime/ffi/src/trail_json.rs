//! The C ABI's report of one replayed trail (`tb_run_trail`): a [`RunSink`] that keeps each step
//! as the replay tells it, in the JSON shape the C ABI has always returned — `{file, id, outcome,
//! steps: [{number, text, outcome, error, calls: [{tool, ok, error}]}]}` — plus `attempts` on a
//! step that was tried again and `reason` on a skipped trail.

use serde_json::{Value, json};
use trailblaze::device::Screenshot;
use trailblaze::report::{Outcome, StepReport, TrailReport};
use trailblaze::{RunSink, Step};

#[derive(Default)]
pub(crate) struct TrailJson {
    steps: Vec<Value>,
    trail: Option<Value>,
}

impl TrailJson {
    /// The trail's JSON once the replay finished.
    pub(crate) fn into_json(self) -> Value {
        self.trail.unwrap_or(Value::Null)
    }
}

/// The C ABI's outcome words (`not_recorded`, not the report's `not recorded`).
fn word(o: &Outcome) -> &'static str {
    match o {
        Outcome::NotRecorded => "not_recorded",
        o => o.word(),
    }
}

impl RunSink for TrailJson {
    fn step_finished(&mut self, _step: &Step, sr: &mut StepReport, _screen: Option<Screenshot>) {
        let mut v = json!({"number": sr.number, "text": sr.text, "outcome": word(&sr.outcome)});
        if !matches!(sr.outcome, Outcome::Skipped { .. } | Outcome::NotRecorded) {
            let calls: Vec<Value> = sr
                .calls
                .iter()
                .map(|c| match &c.error {
                    None => json!({"tool": c.tool, "ok": c.ok}),
                    Some(e) => json!({"tool": c.tool, "ok": c.ok, "error": e}),
                })
                .collect();
            v["error"] = json!(sr.error);
            v["calls"] = Value::Array(calls);
        }
        if sr.attempts > 1 {
            v["attempts"] = json!(sr.attempts);
        }
        self.steps.push(v);
    }

    fn trail_finished(&mut self, t: &TrailReport) {
        let mut v = json!({
            "file": t.file,
            "id": t.id,
            "outcome": word(&t.outcome),
            "steps": std::mem::take(&mut self.steps),
        });
        if let Outcome::Skipped { reason } = &t.outcome {
            v["reason"] = json!(reason);
        }
        if let Some(e) = t.error.as_ref().filter(|_| t.steps.is_empty()) {
            v["error"] = json!(e);
        }
        self.trail = Some(v);
    }
}
