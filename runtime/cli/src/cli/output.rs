//! Everything the CLI prints goes through here: secret values redacted (in every escaped form),
//! control characters from trails, scripts and devices shown escaped instead of reaching the
//! terminal raw, and a closed pipe (`trailblaze tools | head -1`) ending the program quietly.

use std::io::Write;
use std::sync::OnceLock;

use trailblaze::Redaction;

static SECRETS: OnceLock<Redaction> = OnceLock::new();

/// The secret values to redact from now on (set once, when the project opens).
pub fn set_secrets(values: Vec<String>) {
    let _ = SECRETS.set(Redaction::new(&values));
}

/// `text` as it may reach a terminal or a file: redacted, control characters escaped.
pub fn clean(text: &str) -> String {
    let redacted = match SECRETS.get() {
        Some(r) => r.text(text),
        None => std::borrow::Cow::Borrowed(text),
    };
    let mut out = String::with_capacity(redacted.len());
    for c in redacted.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            // C0/C1 controls (ESC sequences), and bidi overrides that reorder what is shown.
            c if c.is_control() || ('\u{202A}'..='\u{202E}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c) => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

/// Whether a stream gets colour: a terminal, `NO_COLOR` unset, `TERM` not `dumb`.
pub fn colour(stream: Stream) -> bool {
    use std::io::IsTerminal;
    let tty = match stream {
        Stream::Out => std::io::stdout().is_terminal(),
        Stream::Err => std::io::stderr().is_terminal(),
    };
    tty && std::env::var_os("NO_COLOR").is_none() && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
}

/// Writes one cleaned line. A closed pipe ends the program at once, quietly, as a filter expects.
pub fn line(stream: Stream, text: &str) {
    raw(stream, &clean(text));
}

/// Writes one line the caller has cleaned already (styled text: its escapes are the renderer's).
pub fn raw(stream: Stream, text: &str) {
    let text = format!("{text}\n");
    let result = match stream {
        Stream::Out => std::io::stdout().lock().write_all(text.as_bytes()),
        Stream::Err => std::io::stderr().lock().write_all(text.as_bytes()),
    };
    if let Err(e) = result
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// A progress line with its leading mark (`✓`, `✗`, `-`) coloured when `stream` is a terminal.
pub fn progress(stream: Stream, text: &str) {
    let text = clean(text);
    if !colour(stream) {
        return raw(stream, &text);
    }
    let body = text.trim_start();
    let indent = &text[..text.len() - body.len()];
    let colour = match body.chars().next() {
        Some('✓') => "32",
        Some('✗') => "31",
        Some('-') | Some('↻') => "33",
        _ => return raw(stream, &text),
    };
    let mark_len = body.chars().next().map(char::len_utf8).unwrap_or(0);
    raw(
        stream,
        &format!(
            "{indent}\u{1b}[{colour}m{}\u{1b}[0m{}",
            &body[..mark_len],
            &body[mark_len..]
        ),
    );
}

/// Traces and warnings on stderr as `warning: message`, no module paths, colour on a terminal only.
/// Scripts' `console.*` lines, on stderr as `[tool] level: text` (the session log has them too).
pub fn console_sink() -> trailblaze::console::ConsoleSink {
    trailblaze::console::ConsoleSink::new(|l: &trailblaze::console::ConsoleLine| {
        let level = match l.level {
            trailblaze::console::ConsoleLevel::Log => String::new(),
            other => format!("{}: ", other.as_str()),
        };
        line(Stream::Err, &format!("[{}] {level}{}", l.tool, l.text));
    })
}

pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAILBLAZE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .event_format(Plain {
            colour: colour(Stream::Err),
        })
        .try_init();
}

/// `warning: message key=value`: what a user reads, not a log line.
struct Plain {
    colour: bool,
}

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        use tracing::Level;
        let (word, colour) = match *event.metadata().level() {
            Level::ERROR => ("error", "31"),
            Level::WARN => ("warning", "33"),
            Level::INFO => ("info", "36"),
            Level::DEBUG => ("debug", "2"),
            Level::TRACE => ("trace", "2"),
        };
        if self.colour {
            write!(writer, "\u{1b}[1;{colour}m{word}\u{1b}[0m: ")?;
        } else {
            write!(writer, "{word}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// `println!` through [`line`].
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::output::line($crate::cli::output::Stream::Out, &format!($($t)*)) };
}

/// `eprintln!` through [`line`].
macro_rules! err {
    ($($t:tt)*) => { $crate::cli::output::line($crate::cli::output::Stream::Err, &format!($($t)*)) };
}

pub(crate) use {err, out};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped_and_text_kept() {
        assert_eq!(clean("a\u{1b}[31mred\u{202e}x\n\ty"), "a\\u{1b}[31mred\\u{202e}x\n\ty");
        assert_eq!(clean("plain ✓ text"), "plain ✓ text");
    }
}
