//! `trailblaze shell`: the live session of `mcp`, for a person. A line editor (rustyline) with
//! history and completion of commands, tool names and the last snapshot's refs; each line goes
//! through [`Shell::execute`], the line-level core the tests drive directly.

use std::sync::{Arc, Mutex};

use clap::Args;
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use serde_json::{Value, json};

use super::diag::{self, Diagnostic, Severity};
use super::live::{Backend, Live, RESET_SESSION, SAVE_TRAIL, Shared, open_shared};
use super::output::{Stream, line};
use super::{Cli, Failure, MapArg, SessionArgs};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze shell\n  trailblaze shell --device android:emulator-5554\n\n\
Type `help` inside for the commands. The device keeps its state between lines (unlike `tool`)."
)]
pub struct ShellArgs {
    #[command(flatten)]
    pub join: super::session::JoinArg,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub trace: super::live::TraceArg,
}

const HELP: &str = "\
snapshot                  the screen, with refs like [c422]
tap REF                   tap a node by its ref
type TEXT [REF]           type TEXT (into REF, when the last word is a ref of the last snapshot)
TOOL key=value ...        any LLM-visible tool (`trailblaze tools` lists them)
steps                     what the session recorded so far
save NAME [overwrite]     write the recording as trails/NAME.trail.yaml in the trailmap
reset                     a fresh device and an empty recording
help, quit";

/// The shell's own words, completed besides the tool names.
const COMMANDS: &[&str] = &["snapshot", "tap", "type", "steps", "save", "reset", "help", "quit"];

/// What one line did.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Print(String),
    Error(String),
    Nothing,
    Quit,
}

/// The line-level core: a live session and the refs the last snapshot showed.
pub struct Shell {
    live: Box<dyn Backend>,
    refs: Vec<String>,
}

impl Shell {
    pub fn new(shared: Arc<Shared>) -> Shell {
        Shell::over(Box::new(Live::new(shared, Arc::new(Mutex::new(None)))))
    }

    /// A shell whose lines go to `backend`: a session of its own, or a running one joined.
    pub fn over(backend: Box<dyn Backend>) -> Shell {
        Shell {
            live: backend,
            refs: Vec::new(),
        }
    }

    /// The refs (`c422`) of the last snapshot, for completion and for `type TEXT REF`.
    pub fn refs(&self) -> &[String] {
        &self.refs
    }

    /// The names a first word completes to: the shell's commands and the LLM-visible tools.
    pub fn words(&mut self) -> Vec<String> {
        let mut w: Vec<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
        w.extend(self.live.tools().into_iter().map(|(name, _, _)| name));
        w
    }

    pub fn execute(&mut self, input: &str) -> Outcome {
        let input = input.trim();
        let (cmd, rest) = input.split_once(char::is_whitespace).unwrap_or((input, ""));
        let rest = rest.trim();
        match cmd {
            "" => Outcome::Nothing,
            "help" | "?" => Outcome::Print(HELP.into()),
            "quit" | "exit" => Outcome::Quit,
            "snapshot" if rest.is_empty() => {
                let out = self.call("snapshot", json!({}));
                if let Outcome::Print(text) = &out {
                    self.refs = refs_in(text);
                }
                out
            }
            "tap" => match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                [r] => self.call("tap", json!({ "ref": r.trim_matches(|c| c == '[' || c == ']') })),
                _ => Outcome::Error("usage: tap REF (a ref from `snapshot`, e.g. c422)".into()),
            },
            "type" if !rest.is_empty() => {
                let (text, target) = match rest.rsplit_once(' ') {
                    Some((t, r)) if self.refs.iter().any(|k| k == r) => (t, Some(r)),
                    _ => (rest, None),
                };
                let mut args = json!({ "text": text });
                if let Some(r) = target {
                    args["ref"] = json!(r);
                }
                self.call("type", args)
            }
            "steps" => Outcome::Print(self.steps()),
            "save" => match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                [name] => self.call(SAVE_TRAIL, json!({ "name": trail_name(name) })),
                [name, "overwrite"] => self.call(SAVE_TRAIL, json!({ "name": trail_name(name), "overwrite": true })),
                _ => Outcome::Error("usage: save NAME [overwrite]".into()),
            },
            "reset" => {
                self.refs.clear();
                self.call(RESET_SESSION, json!({}))
            }
            tool => {
                let pairs: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
                let reply = self.live.call_pairs(tool, &pairs);
                if reply.is_error {
                    // Not a tool at all: the shell's own commands may have been meant.
                    let hint = if reply.text.contains("unknown tool") || reply.text.contains("not an LLM-visible") {
                        "; `help` lists the shell's commands"
                    } else {
                        ""
                    };
                    Outcome::Error(format!("{}{hint}", reply.text))
                } else {
                    Outcome::Print(reply.text)
                }
            }
        }
    }

    fn call(&mut self, name: &str, args: Value) -> Outcome {
        let reply = self.live.call(name, args);
        if reply.is_error {
            Outcome::Error(reply.text)
        } else {
            Outcome::Print(reply.text)
        }
    }

    fn steps(&mut self) -> String {
        self.live.steps_text()
    }
}

/// `login`, `login.trail.yaml` and `trails/login.trail.yaml` all name the trail `login` (saves go to
/// the trailmap's `trails/`). Any other path is passed on whole, for `saveTrail` to refuse as it
/// refuses it over MCP: `../../x` is not silently saved as `x`.
fn trail_name(given: &str) -> &str {
    let base = given.strip_prefix("trails/").unwrap_or(given);
    base.strip_suffix(".trail.yaml").unwrap_or(base)
}

/// Every `[ref]` at the start of a snapshot line.
fn refs_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let inner = l.strip_prefix('[')?;
            let end = inner.find(']')?;
            Some(inner[..end].to_string())
        })
        .collect()
}

/// Completion for the line editor: first word from commands and tools, later words from refs.
struct ShellHelper {
    words: Vec<String>,
    refs: Vec<String>,
}

impl Completer for ShellHelper {
    type Candidate = String;
    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let head = &line[..pos];
        let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &head[start..];
        let pool = if start == 0 { &self.words } else { &self.refs };
        Ok((start, pool.iter().filter(|w| w.starts_with(word)).cloned().collect()))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}
impl Highlighter for ShellHelper {}
impl Validator for ShellHelper {}
impl Helper for ShellHelper {}

pub fn shell(cli: &Cli, a: &ShellArgs) -> Result<(), Failure> {
    let mut shell = match super::session::join(&a.join, !a.session.device.device.is_empty())? {
        Some(j) => Shell::over(Box::new(super::session::client::Remote::new(j))),
        None => Shell::new(open_shared(cli, &a.map, &a.session, None, &a.trace)?),
    };
    let mut editor: Editor<ShellHelper, rustyline::history::DefaultHistory> =
        Editor::new().map_err(|e| Failure::Usage(anyhow::anyhow!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(ShellHelper {
        words: shell.words(),
        refs: Vec::new(),
    }));
    line(
        Stream::Err,
        "trailblaze shell: `help` lists the commands, `quit` (or Ctrl-D) ends",
    );
    loop {
        let input = match editor.readline("trailblaze> ") {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Failure::Usage(anyhow::anyhow!("reading a line failed: {e}"))),
        };
        if !input.trim().is_empty() {
            let _ = editor.add_history_entry(input.as_str());
        }
        match shell.execute(&input) {
            Outcome::Print(text) => line(Stream::Out, &text),
            Outcome::Error(text) => diag::emit(&Diagnostic::parse(Severity::Error, &text)),
            Outcome::Nothing => {}
            Outcome::Quit => break,
        }
        if let Some(h) = editor.helper_mut() {
            h.refs = shell.refs().to_vec();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_names_and_the_type_rule() {
        assert_eq!(
            refs_in("[c422] EditText hint=\"Email\"\n  [y778] Button \"Go\"\nplain"),
            ["c422", "y778"]
        );
        assert_eq!(trail_name("trails/login.trail.yaml"), "login");
        assert_eq!(trail_name("login"), "login");
        // A path out of `trails/` is passed on whole, for `saveTrail` to refuse (not renamed `x`).
        assert_eq!(trail_name("../../x"), "../../x");
        assert_eq!(trail_name("trails/../../x.trail.yaml"), "../../x");
    }
}
