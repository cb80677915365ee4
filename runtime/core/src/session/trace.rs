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

    /// The device's name for a trace (`sim:com.example.demo`).
    fn device_name(&self) -> String {
        self.run(|core| core.screen.with_device(|d| Ok(d.name())).unwrap_or_default())
            .unwrap_or_default()
    }

    /// Whether a trace is being recorded.
    pub fn tracing(&self) -> bool {
        self.run(|core| core.trace.borrow().is_some()).unwrap_or(false)
    }

    /// Stops recording and hands the trace over; `None` when none was recorded.
    pub fn trace_end(&self) -> Option<TraceData> {
        self.run(|core| {
            let recorder = core.trace.borrow_mut().take()?;
            let device = core.screen.with_device(|d| Ok(d.trace_end())).unwrap_or_default();
            let secret_on_screen = core.screen.holds_secret_fields() && !core.screen.pictures_hide_secrets();
            Some(recorder.finish(device, secret_on_screen))
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
        let Some(data) = self.trace_end() else {
            return;
        };
        let keep = settings.trace.keeps(&report.outcome) || settings.video.keeps(&report.outcome);
        let Some(dir) = self.dir().filter(|_| keep) else {
            return;
        };
        let dir = dir.to_path_buf();
        let info = crate::trace::write::TrailInfo {
            report,
            session: self.id(),
            device: self.device_name(),
            platform: self.platform().as_str(),
            started_unix_ms,
            step_calls,
        };
        match crate::trace::write::write(&dir, &info, data, self.redaction()) {
            Ok(bytes) => {
                tracing::debug!(bytes, "trace written");
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
