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
    clean_for(text, Format::Text, true)
}

/// What a stream carries: text for people, or JSON / YAML for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    /// Serialized JSON or YAML (the emitter already escapes what YAML forbids raw).
    Machine,
}

/// `text` as it may be written to a stream that is (`terminal`) or is not a terminal, in `format`.
/// Secrets are redacted everywhere. Text for people has its invisible characters shown escaped
/// wherever it goes (a piped log still ends up on a screen, and it has no grammar to break). JSON and
/// YAML must stay valid: they get their own `\uXXXX` escapes on a terminal and are left as the
/// serializer wrote them otherwise (a program reads the exact characters, a right-to-left app's
/// text included); `\u{202e}` would make either invalid.
pub fn clean_for(text: &str, format: Format, terminal: bool) -> String {
    let redacted = match SECRETS.get() {
        Some(r) => r.text(text),
        None => std::borrow::Cow::Borrowed(text),
    };
    match (format, terminal) {
        (Format::Machine, false) => return redacted.into_owned(),
        (Format::Machine, true) => return trailblaze::console::json_escape_invisible(&redacted).into_owned(),
        (Format::Text, _) => {}
    }
    let mut out = String::with_capacity(redacted.len());
    for c in redacted.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            // C0/C1 controls (ESC sequences), and bidi marks that reorder what is shown.
            c if trailblaze::console::is_invisible_control(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// Writes serialized JSON or YAML (one document) to `stream`, valid whether or not it is a terminal.
pub fn machine(stream: Stream, text: &str) {
    raw(stream, &clean_for(text, Format::Machine, is_terminal(stream)));
}

/// Pretty JSON on stdout, through [`machine`].
macro_rules! out_json {
    ($v:expr) => {
        $crate::cli::output::machine(
            $crate::cli::output::Stream::Out,
            &serde_json::to_string_pretty($v).unwrap_or_default(),
        )
    };
}

pub(crate) use out_json;

/// Whether `stream` is a terminal, asked once per process (a run's progress line per step asked
/// the kernel each time).
fn is_terminal(stream: Stream) -> bool {
    use std::io::IsTerminal;
    static OUT: OnceLock<bool> = OnceLock::new();
    static ERR: OnceLock<bool> = OnceLock::new();
    match stream {
        Stream::Out => *OUT.get_or_init(|| std::io::stdout().is_terminal()),
        Stream::Err => *ERR.get_or_init(|| std::io::stderr().is_terminal()),
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

/// Whether a stream gets colour: a terminal, `NO_COLOR` unset, `TERM` not `dumb` (read once).
pub fn colour(stream: Stream) -> bool {
    static WANTED: OnceLock<bool> = OnceLock::new();
    is_terminal(stream)
        && *WANTED.get_or_init(|| {
            std::env::var_os("NO_COLOR").is_none() && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
        })
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
    let colour = colour(Stream::Err);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // The level word's colour is the only escape a trace carries, and only on a terminal.
        .with_ansi(colour)
        .event_format(Plain { colour })
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
        // The message and fields carry devices', pages' and files' text (an error, a trail's file
        // name): formatted plain, then cleaned as every other line is.
        let mut fields = String::new();
        ctx.field_format()
            .format_fields(tracing_subscriber::fmt::format::Writer::new(&mut fields), event)?;
        writeln!(writer, "{}", clean(&fields))
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

    /// Bytes written by a subscriber, read back by the test.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What `event` traces through a subscriber: the CLI's (`Some(colour)`) or the stock one.
    fn traced(plain: Option<bool>, event: impl FnOnce()) -> String {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let builder = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(plain.unwrap_or(false));
        match plain {
            Some(colour) => tracing::subscriber::with_default(builder.event_format(Plain { colour }).finish(), event),
            None => tracing::subscriber::with_default(builder.finish(), event),
        }
        let bytes = buffer.0.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("UTF-8")
    }

    /// A device's error or a file's name in a trace reaches stderr escaped: a page or an app cannot
    /// clear the screen or retitle the terminal through a warning. The level's colour stays.
    #[test]
    fn a_traces_fields_are_cleaned_and_its_level_styled() {
        let hostile = "x\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}y";
        for colour in [false, true] {
            let line = traced(
                Some(colour),
                || tracing::warn!(error = %hostile, "step {hostile} failed"),
            );
            // The message's escapes are tracing's own (`\x1b`); a field's are ours.
            assert!(
                line.contains(r"error=x\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}y"),
                "{line:?}"
            );
            assert!(!line.contains(['\u{7}', '\u{202e}']), "{line:?}");
            let escapes = line.matches('\u{1b}').count();
            assert_eq!(escapes, if colour { 2 } else { 0 }, "only the level's colour: {line:?}");
        }
        // Control: the stock formatter writes the same event's escapes raw.
        let stock = traced(None, || tracing::warn!(error = %hostile, "step {hostile} failed"));
        assert!(stock.contains('\u{7}') && stock.contains('\u{202e}'), "{stock:?}");
    }

    /// JSON with a right-to-left app's text (an override, a C1 control) stays valid JSON of the same
    /// value on a terminal and off one; the text form escapes for the terminal either way.
    #[test]
    fn machine_output_stays_valid_and_the_terminal_sees_no_raw_override() {
        let value = "\u{202e}olleh\u{85}\u{2067}";
        let json = serde_json::to_string_pretty(&serde_json::json!({ "text": value })).expect("json");
        for terminal in [true, false] {
            let out = clean_for(&json, Format::Machine, terminal);
            let back: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
            assert_eq!(back["text"], value, "terminal: {terminal}");
            assert_eq!(out.contains('\u{202e}'), !terminal, "raw only off a terminal: {out}");
        }
        // Control: the terminal-safety escape of text makes the same JSON invalid.
        for terminal in [true, false] {
            let text = clean_for(&json, Format::Text, terminal);
            assert!(text.contains("\\u{202e}") && serde_json::from_str::<serde_json::Value>(&text).is_err());
        }
    }
}
