//! Everything the CLI prints goes through here: secret values redacted (in every escaped form),
//! control characters from trails, scripts and devices shown escaped instead of reaching the
//! terminal raw, and a closed pipe (`trailblaze tools | head -1`) ending the program quietly.

use std::io::Write;
use std::sync::OnceLock;

use trailblaze::internals::Redaction;

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

pub enum Stream {
    Out,
    Err,
}

/// Writes one cleaned line. A closed pipe ends the program at once, quietly, as a filter expects.
pub fn line(stream: Stream, text: &str) {
    let text = format!("{}\n", clean(text));
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
