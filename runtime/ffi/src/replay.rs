//! Replays one trail on an open session, for an embedder whose device is its own: the library's
//! `run_trails` opens its sessions on the simulated device only. Same rules as a run: the
//! `android` recording, steps in order, the first failed step stops the trail.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use trailblaze::Session;

use crate::{FfiError, TbStatus};

/// The platform an embedder's device answers to (the NDK's user is an Android APK).
const PLATFORM: &str = "android";

pub(crate) fn replay(session: &Session, file: &Path, args: &BTreeMap<String, String>) -> Result<Value, FfiError> {
    let trail = trailblaze::internals::load_trail(file).map_err(parse_error)?;
    let steps = trail.with_args(args).map_err(parse_error)?;
    let mut outcome = "passed";
    let mut reports = Vec::new();
    for step in &steps {
        if outcome != "passed" {
            reports.push(json!({"number": step.number, "text": step.text, "outcome": "skipped"}));
            continue;
        }
        let Some(calls) = step.calls_for(PLATFORM, None) else {
            outcome = "not_recorded";
            reports.push(json!({"number": step.number, "text": step.text, "outcome": "not_recorded"}));
            continue;
        };
        let mut done = Vec::new();
        let mut error: Option<FfiError> = None;
        for call in calls {
            match session.call(&call.tool, call.args.clone()) {
                Ok(_) => done.push(json!({"tool": call.tool, "ok": true})),
                Err(e) => {
                    let e = FfiError::from(e);
                    done.push(json!({"tool": call.tool, "ok": false, "error": e.message}));
                    error = Some(e);
                    break;
                }
            }
        }
        let step_outcome = match &error {
            None => "passed",
            Some(e) if e.status == TbStatus::Device => "error",
            Some(_) => "failed",
        };
        if step_outcome != "passed" {
            outcome = step_outcome;
        }
        reports.push(json!({
            "number": step.number,
            "text": step.text,
            "outcome": step_outcome,
            "error": error.map(|e| e.message),
            "calls": done,
        }));
    }
    Ok(json!({
        "file": file.display().to_string(),
        "id": trail.config.id,
        "outcome": outcome,
        "steps": reports,
    }))
}

/// Every parse error of a trail, one per line (each names file:line:col).
fn parse_error<E: std::fmt::Display>(errors: Vec<E>) -> FfiError {
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    FfiError::new(TbStatus::BadInput, text.join("\n"))
}
