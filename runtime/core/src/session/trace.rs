//! A session's trace: begun and ended on its thread, where the recorder and the device live.

use super::Session;
use crate::trace::{Recorder, TraceData, TraceSettings};
use crate::trail::TrailReport;

impl Session {
    /// Starts recording a trace (docs/trace.md), the device keeping what it keeps itself; a trace
    /// already under way is replaced.
    pub fn trace_begin(&self, settings: TraceSettings) {
        if !settings.records() {
            return;
        }
        let opts = settings.device_options();
        let _ = self.run(move |core| {
            let _ = core.screen.with_device(|d| {
                d.trace_begin(&opts);
                Ok(())
            });
            *core.trace.borrow_mut() = Some(Recorder::new(settings));
        });
    }

    /// Stops recording and hands the trace over; `None` when none was recorded.
    pub fn trace_end(&self) -> Option<TraceData> {
        self.run(|core| {
            let recorder = core.trace.borrow_mut().take()?;
            let (device, name) = core
                .screen
                .with_device(|d| Ok((d.trace_end(), d.name())))
                .unwrap_or_default();
            let secret_on_screen = core.screen.holds_secret_fields() && !core.screen.pictures_hide_secrets();
            Some(recorder.finish(device, name, secret_on_screen))
        })
        .ok()
        .flatten()
    }

    /// Ends the trail's trace and writes it beside its log when `settings` keep it for the trail's
    /// outcome (`report.trace` then names it); a trace that cannot be written is a warning, never
    /// the trail's failure.
    pub(crate) fn keep_trace(
        &self,
        report: &mut TrailReport,
        settings: TraceSettings,
        started_unix_ms: f64,
        step_calls: &[Option<(u64, u64)>],
    ) {
        let ended = std::time::Instant::now();
        let Some(data) = self.trace_end() else {
            return;
        };
        let ended = ended.elapsed();
        let passed = report.outcome.passed();
        let keep = settings.trace.keeps(passed) || settings.video.keeps(passed);
        let Some(dir) = self.dir().filter(|_| keep) else {
            return;
        };
        let dir = dir.to_path_buf();
        let info = crate::trail::report::trace_files::TrailInfo {
            report,
            session: self.id(),
            device: data.device_name.clone(),
            platform: self.platform().as_str(),
            started_unix_ms,
            step_calls,
        };
        let written = std::time::Instant::now();
        match crate::trail::report::trace_files::write(&dir, &info, data, self.redaction()) {
            Ok(bytes) => {
                tracing::debug!(
                    bytes,
                    end_ms = ended.as_secs_f64() * 1000.0,
                    write_ms = written.elapsed().as_secs_f64() * 1000.0,
                    "trace written"
                );
                report.trace = Some(format!("{}/trace.json", self.id()));
            }
            Err(e) => tracing::warn!(
                "the trace of {} could not be written in {}: {e}",
                report.file,
                dir.display()
            ),
        }
    }
}

impl Session {
    /// Ends a live session's trace (MCP, `shell`) and writes it in the session's folder, each
    /// top-level call a step: `trailblaze report <folder>` opens it. `None` when nothing was traced
    /// or the session writes no files.
    pub fn write_session_trace(&self) -> std::io::Result<Option<std::path::PathBuf>> {
        let data = self.trace_end();
        self.write_live_trace(data)
    }

    /// Writes a live session's trace so far and goes on recording (`trailblaze session report`):
    /// its calls, frames and the scripts' console; what the device keeps itself (network, its log,
    /// video) is written when the trace ends.
    pub fn write_session_trace_so_far(&self) -> std::io::Result<Option<std::path::PathBuf>> {
        let data = self
            .run(|core| {
                let recorder = core.trace.borrow().clone()?;
                let name = core.screen.with_device(|d| Ok(d.name())).unwrap_or_default();
                let secret_on_screen = core.screen.holds_secret_fields() && !core.screen.pictures_hide_secrets();
                Some(recorder.finish(Default::default(), name, secret_on_screen))
            })
            .ok()
            .flatten();
        self.write_live_trace(data)
    }

    fn write_live_trace(&self, data: Option<TraceData>) -> std::io::Result<Option<std::path::PathBuf>> {
        let Some(dir) = self.dir().map(std::path::Path::to_path_buf) else {
            return Ok(None);
        };
        let Some(data) = data else {
            return Ok(None);
        };
        let (report, step_calls) = session_report(self.id(), &data);
        let info = crate::trail::report::trace_files::TrailInfo {
            report: &report,
            session: self.id(),
            device: data.device_name.clone(),
            platform: self.platform().as_str(),
            started_unix_ms: data.started_unix_ms,
            step_calls: &step_calls,
        };
        crate::trail::report::trace_files::write(&dir, &info, data, self.redaction())?;
        Ok(Some(dir.join("trace.json")))
    }
}

/// A live session as a trail's report: each top-level call a step, with its calls' seqs.
fn session_report(id: &str, data: &TraceData) -> (TrailReport, Vec<Option<(u64, u64)>>) {
    use crate::trail::{Outcome, StepReport};
    let f = |c: &serde_json::Value, k: &str| c[k].as_f64().unwrap_or(0.0);
    let tops: Vec<&serde_json::Value> = data.calls.iter().filter(|c| c["depth"] == 0).collect();
    let mut steps = Vec::with_capacity(tops.len());
    let mut ranges = Vec::with_capacity(tops.len());
    for (i, c) in tops.iter().enumerate() {
        let seq = c["seq"].as_u64().unwrap_or(0);
        let last = tops.get(i + 1).and_then(|n| n["seq"].as_u64()).map_or_else(
            || data.calls.last().and_then(|l| l["seq"].as_u64()).unwrap_or(seq),
            |next| next.saturating_sub(1),
        );
        ranges.push(Some((seq, last.max(seq))));
        let ok = c["ok"] == true;
        steps.push(StepReport {
            number: i + 1,
            kind: "call".into(),
            text: c["tool"].as_str().unwrap_or_default().to_string(),
            line: 0,
            outcome: if ok { Outcome::Passed } else { Outcome::Failed },
            started_ms: f(c, "started_unix_ms") - data.started_unix_ms,
            duration_ms: f(c, "duration_ms"),
            attempts: 1,
            retried: Vec::new(),
            calls: Vec::new(),
            error: c["error"].as_str().map(str::to_string),
            screen: None,
            screen_size: None,
            agent: None,
            llm: None,
            page: None,
        });
    }
    let failed = steps.iter().any(|s| s.outcome == Outcome::Failed);
    let duration_ms = steps.last().map_or(0.0, |s| s.started_ms + s.duration_ms);
    let report = TrailReport {
        file: format!("session {id}"),
        id: None,
        title: Some(format!("Live session {id}")),
        outcome: if failed { Outcome::Failed } else { Outcome::Passed },
        duration_ms,
        steps,
        error: None,
        log: Some("log.jsonl".into()),
        written: None,
        device: None,
        lost_devices: Vec::new(),
        storyboard: None,
        trace: Some("trace.json".into()),
        llm: None,
    };
    (report, ranges)
}
