//! What scripts print with `console.*`: one [`ConsoleLine`] per call, scrubbed of secrets and bounded,
//! written to the session log (a `console` event) and handed to the embedder's sink, if it set one.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use crate::secret::Redaction;

/// The most one line keeps, in bytes; the rest is cut and the line says so.
pub const MAX_LINE_BYTES: usize = 8 << 10;

/// Lines one top-level call may print; past it one line says the rest was dropped.
pub const MAX_LINES_PER_CALL: u32 = 1_000;

/// How much of a line is scrubbed before it is cut: the scrubbed part must cover every secret that
/// starts before the cut, so a secret straddling the cut is never left half-shown.
const SCRUB_WINDOW_BYTES: usize = 64 << 10;

/// Which `console` method printed the line (`stderr` for raw output of a Node process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Log,
    Info,
    Warn,
    Error,
    Debug,
}

impl ConsoleLevel {
    /// The level a runtime named; unknown names print as `log`.
    pub fn parse(name: &str) -> ConsoleLevel {
        match name {
            "info" => ConsoleLevel::Info,
            "warn" => ConsoleLevel::Warn,
            "error" => ConsoleLevel::Error,
            "debug" => ConsoleLevel::Debug,
            _ => ConsoleLevel::Log,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Info => "info",
            ConsoleLevel::Warn => "warn",
            ConsoleLevel::Error => "error",
            ConsoleLevel::Debug => "debug",
        }
    }
}

/// One line a scripted tool printed, already scrubbed and bounded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConsoleLine {
    /// The scripted tool that printed it.
    pub tool: String,
    pub level: ConsoleLevel,
    pub text: String,
}

/// Where an embedder wants console lines (the CLI prints them on stderr). Called on the session's
/// thread, so it should be quick.
#[derive(Clone)]
pub struct ConsoleSink(pub Arc<dyn Fn(&ConsoleLine) + Send + Sync>);

impl ConsoleSink {
    pub fn new(f: impl Fn(&ConsoleLine) + Send + Sync + 'static) -> ConsoleSink {
        ConsoleSink(Arc::new(f))
    }
}

impl fmt::Debug for ConsoleSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConsoleSink")
    }
}

/// Counts the lines of the running top-level call.
#[derive(Debug, Default)]
pub struct ConsoleGate {
    printed: Cell<u32>,
}

impl ConsoleGate {
    /// A new top-level call starts with a fresh allowance.
    pub fn reset(&self) {
        self.printed.set(0);
    }

    /// The line to record for `text`, or `None` once the call's allowance is spent (the first line
    /// past it says so instead).
    pub fn admit(&self, tool: &str, level: ConsoleLevel, text: &str, redact: &Redaction) -> Option<ConsoleLine> {
        let n = self.printed.get().saturating_add(1);
        self.printed.set(n);
        if n > MAX_LINES_PER_CALL + 1 {
            return None;
        }
        let text = if n == MAX_LINES_PER_CALL + 1 {
            format!("[console: more than {MAX_LINES_PER_CALL} lines in one call; further output dropped]")
        } else {
            bounded(text, redact)
        };
        Some(ConsoleLine {
            tool: tool.to_string(),
            level,
            text,
        })
    }
}

/// `text` scrubbed of secrets, then cut to [`MAX_LINE_BYTES`] (on a character boundary) with a note.
pub fn bounded(text: &str, redact: &Redaction) -> String {
    let window = &text[..floor_boundary(text, SCRUB_WINDOW_BYTES)];
    let scrubbed = redact.text(window);
    if text.len() <= MAX_LINE_BYTES && scrubbed.len() <= MAX_LINE_BYTES {
        return scrubbed.into_owned();
    }
    let cut = floor_boundary(&scrubbed, MAX_LINE_BYTES);
    format!("{}… [truncated: {} bytes in all]", &scrubbed[..cut], text.len())
}

/// The largest index ≤ `max` that is a character boundary of `s`.
fn floor_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "hunter2-very-secret";

    fn redaction() -> Redaction {
        Redaction::new(&[SECRET.to_string()])
    }

    #[test]
    fn a_secret_straddling_the_cut_is_scrubbed_not_halved() {
        let r = redaction();
        let text = format!("{}{SECRET}{}", "a".repeat(MAX_LINE_BYTES - 5), "b".repeat(100));
        let line = bounded(&text, &r);
        assert!(
            !line.contains("hunter"),
            "no part of the secret: {}",
            &line[line.len() - 80..]
        );
        assert!(
            line.ends_with(&format!("[truncated: {} bytes in all]", text.len())),
            "marked"
        );
        // Control: the same text without redaction shows the secret's start at the cut.
        let plain = bounded(&text, &Redaction::default());
        assert!(plain.contains("hunte"), "the control sees the secret's head");
    }

    #[test]
    fn short_lines_pass_whole_and_scrubbed() {
        assert_eq!(bounded(&format!("pw={SECRET}"), &redaction()), "pw=***");
        assert_eq!(bounded("é".repeat(10).as_str(), &redaction()), "é".repeat(10));
        let long = "é".repeat(MAX_LINE_BYTES);
        let cut = bounded(&long, &redaction());
        assert!(
            cut.len() < MAX_LINE_BYTES + 64 && cut.contains("truncated"),
            "{}",
            cut.len()
        );
    }

    #[test]
    fn a_call_prints_its_allowance_then_one_dropped_line() {
        let gate = ConsoleGate::default();
        let r = Redaction::default();
        let kept = (0..MAX_LINES_PER_CALL + 50)
            .filter_map(|i| gate.admit("t", ConsoleLevel::Log, &i.to_string(), &r))
            .collect::<Vec<_>>();
        assert_eq!(kept.len() as u32, MAX_LINES_PER_CALL + 1);
        assert!(kept[kept.len() - 1].text.contains("further output dropped"));
        assert_eq!(kept[kept.len() - 2].text, (MAX_LINES_PER_CALL - 1).to_string());
        // Control: a new call starts over.
        gate.reset();
        assert_eq!(
            gate.admit("t", ConsoleLevel::Warn, "again", &r).map(|l| l.text),
            Some("again".into())
        );
    }
}
