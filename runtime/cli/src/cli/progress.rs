//! `trailblaze run`'s progress: a [`RunSink`] that prints a line per trail and per step as the
//! replay tells them, and the summary line after the run.

use trailblaze::device::Screenshot;
use trailblaze::report::Notice;
use trailblaze::report::{Outcome, RunReport, StepReport, TrailReport};
use trailblaze::{RunSink, Session, Step, Trail};

use super::output::{Stream, progress};

/// Prints the run's progress on `stream`.
pub struct ProgressLines {
    stream: Stream,
    /// The current trail printed its `trail ...` line: a failure before it prints its error.
    started: bool,
    status: Option<Status>,
}

/// The one-line live status under the trails' lines, on a terminal only: trails done of all,
/// running, failed, elapsed.
struct Status {
    bar: indicatif::ProgressBar,
    total: usize,
    jobs: usize,
    done: usize,
    failed: usize,
}

impl Status {
    fn start(stream: Stream, total: usize, jobs: usize) -> Option<Status> {
        let target = match stream {
            Stream::Out => indicatif::ProgressDrawTarget::stdout(),
            Stream::Err => indicatif::ProgressDrawTarget::stderr(),
        };
        // Not a terminal (a CI log, a pipe): no status line, the trails' lines alone.
        if target.is_hidden() || total < 2 {
            return None;
        }
        let bar = indicatif::ProgressBar::with_draw_target(Some(total as u64), target);
        let style = indicatif::ProgressStyle::with_template("{spinner} {msg} · {elapsed_precise}").ok()?;
        bar.set_style(style);
        let status = Status {
            bar,
            total,
            jobs,
            done: 0,
            failed: 0,
        };
        status.show();
        status.bar.enable_steady_tick(std::time::Duration::from_millis(100));
        Some(status)
    }

    fn show(&self) {
        let running = self.jobs.min(self.total - self.done);
        let mut msg = format!("{}/{} trails done, {running} running", self.done, self.total);
        if self.failed > 0 {
            msg.push_str(&format!(", {} failed", self.failed));
        }
        self.bar.set_message(msg);
    }
}

impl ProgressLines {
    pub fn new(stream: Stream) -> Self {
        ProgressLines {
            stream,
            started: false,
            status: None,
        }
    }

    /// With a live status line of `total` trails, `jobs` at a time, when `stream` is a terminal.
    pub fn with_status(stream: Stream, total: usize, jobs: usize) -> Self {
        ProgressLines {
            status: Status::start(stream, total, jobs.max(1)),
            ..Self::new(stream)
        }
    }

    /// Clears the status line (before the summary).
    pub fn finish(&mut self) {
        if let Some(s) = self.status.take() {
            s.bar.finish_and_clear();
        }
    }

    /// Prints above the status line, if any.
    fn above(&self, print: impl FnOnce()) {
        match &self.status {
            Some(s) => s.bar.suspend(print),
            None => print(),
        }
    }

    fn say(&self, line: &str) {
        self.above(|| progress(self.stream, line));
    }
}

impl RunSink for ProgressLines {
    fn trail_started(&mut self, trail: &Trail, _session: &Session) {
        self.started = true;
        self.say(&format!(
            "trail {} ({})",
            trail.config.id.as_deref().unwrap_or("-"),
            trail.file.display()
        ));
    }

    fn step_retrying(&mut self, step: &Step, attempt: u32, error: &str) {
        self.say(&format!(
            "  ↻ {} attempt {attempt} failed, retrying: {error}",
            step.label()
        ));
    }

    fn step_finished(&mut self, step: &Step, sr: &mut StepReport, _screen: Option<Screenshot>) {
        if matches!(sr.outcome, Outcome::Skipped { .. }) {
            return;
        }
        self.say(&step_line(step, sr));
    }

    fn notice(&mut self, notice: &Notice) {
        let line = match notice {
            Notice::AgentTakesOver { step, error } => {
                format!("  ↻ {step} failed, the agent takes over (self-heal): {error}")
            }
            Notice::RecordingWritten {
                steps,
                path,
                kept_layout,
            } => {
                let note = if *kept_layout {
                    ""
                } else {
                    " (written whole: its layout did not allow an edit in place, so its comments are gone)"
                };
                format!("  ↳ the agent's recording of {steps} step(s) written to {path}{note}")
            }
            Notice::RecordingNotWritten { error } => format!("  ! the agent's recordings were not written: {error}"),
            Notice::DeviceLost { device, trail, again } if device.starts_with("web") => {
                let then = if *again {
                    "it runs again in a new browser"
                } else {
                    "it was lost before, so it is reported as stopped by the device"
                };
                self.above(|| super::output::err!("warning: the browser ({device}) was lost during {trail}; {then}"));
                return;
            }
            Notice::DeviceLost { device, trail, again } => {
                let then = if *again {
                    "it runs again on another device of the pool, if one is left"
                } else {
                    "it was lost on a device before, so it is reported as stopped by the device"
                };
                self.above(|| {
                    super::output::err!("warning: device {device} was lost during {trail} and left the pool; {then}")
                });
                return;
            }
            // A notice this CLI does not know yet is still shown.
            #[allow(unreachable_patterns)]
            other => format!("  · {other:?}"),
        };
        self.say(&line);
    }

    fn trail_finished(&mut self, report: &TrailReport) {
        let started = std::mem::take(&mut self.started);
        if let Some(s) = &mut self.status {
            s.done += 1;
            s.failed += usize::from(matches!(report.outcome, Outcome::Failed | Outcome::Error));
            s.show();
        }
        match (&report.outcome, &report.error) {
            (Outcome::Skipped { reason }, _) => self.say(&format!("- {} skipped: {reason}", report.file)),
            // It ended before its first step: it did not parse, its session did not start, an
            // `{{args.*}}` had no value.
            (_, Some(error)) if !started => self.say(&format!("✗ {}: {error}", report.file)),
            _ => {}
        }
        if let Some(c) = &report.llm {
            self.say(&format!("  {}: {}", report.file, c.describe()));
        }
    }
}

/// `  ✓ step 2 Sign in (3.1 ms)`, with the attempts, the agent's turns and the error when any.
fn step_line(step: &Step, sr: &StepReport) -> String {
    let mark = match sr.outcome {
        Outcome::Passed => "✓",
        Outcome::Failed => "✗",
        Outcome::NotRecorded => "∅",
        Outcome::Skipped { .. } => "-",
        Outcome::Error => "!",
    };
    // `+ 0.0`: an empty sum is -0.0, which would print as "-0.0 ms".
    let ms: f64 = sr.calls.iter().map(|c| c.duration_ms).sum::<f64>() + 0.0;
    let tail = sr.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
    let mut tries = if sr.attempts > 1 {
        format!(", attempt {}", sr.attempts)
    } else {
        String::new()
    };
    if let Some(a) = &sr.agent {
        tries.push_str(&format!(
            ", agent: {} turn(s), {} tokens ({} in, {} out)",
            a.turns.len(),
            a.input_tokens + a.output_tokens,
            a.input_tokens,
            a.output_tokens
        ));
    } else if let Some(c) = &sr.llm {
        tries.push_str(&format!(", {}", c.describe()));
    }
    format!("  {mark} {} {} ({ms:.1} ms{tries}){tail}", step.label(), sr.text)
}

/// The summary line printed after a run.
pub fn summary_line(report: &RunReport) -> String {
    let s = report.summary();
    let mut line = format!("{} passed, {} failed", s.passed, s.failed);
    if s.skipped > 0 {
        line.push_str(&format!(", {} skipped", s.skipped));
    }
    if s.not_recorded > 0 {
        line.push_str(&format!(", {} not recorded", s.not_recorded));
    }
    if s.errors > 0 {
        line.push_str(&format!(", {} stopped by a device error", s.errors));
    }
    if let Some(c) = &report.llm {
        line.push_str(&format!("; {}", c.describe()));
    }
    line
}
