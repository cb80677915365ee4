//! The one renderer for every diagnostic the CLI prints: YAML load errors, check findings, trail and
//! tool errors. Each becomes a [`Diagnostic`] (a message, where it is, a help line) and is drawn by
//! annotate-snippets: `error: ...`, `--> file:line:col`, the source line with a caret, `= help: ...`;
//! coloured on a terminal only.
//!
//! Texts are cleaned (secrets redacted, control characters escaped) before they are styled, so the
//! only escape sequences that reach the terminal are the renderer's own.

use std::path::{Path, PathBuf};

use annotate_snippets::{Level, Renderer, Snippet};

use super::output::{self, Stream, clean};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A place in a file; the source line is read from the file when not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: PathBuf,
    pub line: usize,
    pub col: usize,
    pub source_line: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub at: Option<At>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            at: None,
            help: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn at(mut self, file: &Path, line: usize, col: usize, source_line: Option<String>) -> Diagnostic {
        self.at = Some(At {
            file: file.to_path_buf(),
            line,
            col,
            source_line,
        });
        self
    }

    /// A message that may start with `file:line:col: ` (what swc, the analyzer and the loaders
    /// write) and may carry the library's own code frame after it: the position is taken out of
    /// the text and the frame dropped, so it is drawn once, by the renderer.
    pub fn parse(severity: Severity, text: &str) -> Diagnostic {
        let mut lines = text.lines();
        let head = lines.next().unwrap_or("");
        // Frame lines: ` |`, `12 | source`, `   | ^`.
        let is_frame = |l: &str| {
            let t = l.trim_start();
            let digits = t.trim_start_matches(|c: char| c.is_ascii_digit());
            digits.trim_start().starts_with('|')
        };
        let rest: Vec<&str> = lines.filter(|l| !is_frame(l)).collect();
        let d = Diagnostic {
            severity,
            ..Diagnostic::error("")
        };
        let (at, message) = match split_position(head) {
            Some((file, line, col, message)) => (Some((file, line, col)), message),
            None => (None, head),
        };
        let mut message = message.to_string();
        for l in rest {
            message.push('\n');
            message.push_str(l);
        }
        let d = Diagnostic { message, ..d };
        match at {
            Some((file, line, col)) => d.at(Path::new(file), line, col, None),
            None => d,
        }
    }
}

/// `path:line:col: message` (or `path:line:col · message`) split up; `None` when the text does
/// not start with a position.
fn split_position(head: &str) -> Option<(&str, usize, usize, &str)> {
    // The path may itself hold colons (rarely): take the last `:N:N` followed by `: ` or ` · `.
    let bytes = head.as_bytes();
    let mut i = 0;
    while let Some(off) = head[i..].find(':') {
        let start = i + off;
        let tail = &head[start + 1..];
        let line_len = tail.bytes().take_while(u8::is_ascii_digit).count();
        if line_len > 0 && tail.as_bytes().get(line_len) == Some(&b':') {
            let after = &tail[line_len + 1..];
            let col_len = after.bytes().take_while(u8::is_ascii_digit).count();
            if col_len > 0 {
                let rest = &after[col_len..];
                let message = rest
                    .strip_prefix(": ")
                    .or_else(|| rest.strip_prefix(" · "))
                    .or_else(|| rest.is_empty().then_some(""));
                if let (Some(message), Ok(line), Ok(col)) =
                    (message, tail[..line_len].parse(), after[..col_len].parse())
                    && start > 0
                {
                    return Some((&head[..start], line, col, message));
                }
            }
        }
        i = start + 1;
        if i >= bytes.len() {
            break;
        }
    }
    None
}

/// The diagnostic as text, styled when `colour`.
pub fn render(d: &Diagnostic, colour: bool) -> String {
    let level = match d.severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
    };
    let message = clean(&d.message);
    let help = d.help.as_deref().map(clean);
    let renderer = if colour { Renderer::styled() } else { Renderer::plain() };
    let origin = d.at.as_ref().map(|at| clean(&at.file.display().to_string()));
    let source =
        d.at.as_ref()
            .and_then(|at| at.source_line.clone().or_else(|| read_line(&at.file, at.line)))
            .map(|l| clean(&l));
    let mut msg = level.title(&message);
    let mut bare_position = None;
    if let (Some(at), Some(origin)) = (&d.at, &origin) {
        match &source {
            Some(source) => {
                let start = byte_of_col(source, at.col);
                let end = source[start..]
                    .chars()
                    .next()
                    .map(|c| start + c.len_utf8())
                    .unwrap_or(start);
                msg = msg.snippet(
                    Snippet::source(source)
                        .line_start(at.line)
                        .origin(origin)
                        .annotation(level.span(start..end)),
                );
            }
            // No source to show (the file is gone or too large): the position alone.
            None => bare_position = Some(format!("  --> {origin}:{}:{}", at.line, at.col)),
        }
    }
    if let (Some(h), None) = (&help, &bare_position) {
        msg = msg.footer(Level::Help.title(h));
    }
    let mut text = renderer.render(msg).to_string();
    if let Some(p) = bare_position {
        text.push('\n');
        text.push_str(&p);
        if let Some(h) = &help {
            text.push_str(&format!("\n   = help: {h}"));
        }
    }
    text
}

/// Line `n` (1-based) of a file, when it is a small regular file.
fn read_line(file: &Path, n: usize) -> Option<String> {
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.len() > 8 << 20 || n == 0 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().nth(n - 1).map(str::to_string)
}

/// The byte offset of 1-based character column `col`, clamped to the line.
fn byte_of_col(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(line.len())
}

/// Prints a diagnostic on stderr.
pub fn emit(d: &Diagnostic) {
    emit_to(Stream::Err, d);
}

/// Prints a diagnostic on `stream` (stdout where the diagnostics are the command's result).
pub fn emit_to(stream: Stream, d: &Diagnostic) {
    output::raw(stream, &render(d, output::colour(stream)));
}

/// A check finding: `step 3 · tap: message` at its file:line:col.
pub fn finding(f: &trailblaze::gates::Finding) -> Diagnostic {
    let mut message = String::new();
    if let Some(step) = &f.step {
        message.push_str(step);
        message.push_str(" · ");
    }
    if let Some(tool) = &f.tool {
        message.push_str(tool);
        message.push_str(": ");
    }
    message.push_str(&f.message);
    let d = if f.warning {
        Diagnostic::warning(message)
    } else {
        Diagnostic::error(message)
    };
    d.at(&f.file, f.line, f.col, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_is_taken_out_of_the_text_and_a_library_frame_dropped() {
        let d = Diagnostic::parse(
            Severity::Error,
            "maps/x/app.yaml:3:5: unknown key `foo`\n  |\n3 |   foo: 1\n  |   ^",
        );
        assert_eq!(d.message, "unknown key `foo`");
        let at = d.at.expect("a position");
        assert_eq!((at.file, at.line, at.col), (PathBuf::from("maps/x/app.yaml"), 3, 5));
        // Control: a message without a position keeps its text whole.
        let plain = Diagnostic::parse(Severity::Error, "unknown tool `nosuch`: see 12:30");
        assert!(plain.at.is_none());
        assert_eq!(plain.message, "unknown tool `nosuch`: see 12:30");
    }

    #[test]
    fn the_frame_is_drawn_once_with_a_caret_and_no_colour_when_asked() {
        let d = Diagnostic::error("unknown key `foo`")
            .at(Path::new("t.trail.yaml"), 4, 7, Some("  - tap: {foo: 1}".into()))
            .with_help("expected one of: ref, longPress");
        let text = render(&d, false);
        assert!(text.starts_with("error: unknown key `foo`"), "{text}");
        assert!(text.contains("--> t.trail.yaml:4:7"), "{text}");
        assert_eq!(text.matches("- tap: {foo: 1}").count(), 1, "{text}");
        assert!(text.contains("help: expected one of"), "{text}");
        assert!(!text.contains('\u{1b}'), "plain text has no escapes: {text:?}");
        // Control: styled rendering does colour.
        assert!(render(&d, true).contains('\u{1b}'));
    }

    #[test]
    fn control_characters_in_a_message_are_escaped_before_styling() {
        let text = render(&Diagnostic::error("bad \u{1b}[2J name"), false);
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(text.contains("\\u{1b}[2J"), "{text}");
    }
}
