//! The quick path: a trail in the form nearly every trail is written in, its steps read straight
//! from the text into the model.
//!
//! The walk reads a trail from its whole document: a value tree and a position tree, then the
//! steps from them, each position found by its path. For a long trail that was most of a `run`'s
//! parse. Here the part before `trail:` (the config and the trailhead: a few lines) still goes
//! through the walk, and the steps are read from their lines, each value by the quick YAML reader's
//! own code, each position where it is read. What this path does not know (a key it does not
//! expect, a shape the walk would report, anything the quick YAML reader leaves to saphyr) makes it
//! give up, and the whole file goes through the walk, which alone reports errors: the model and
//! the errors never depend on which path ran. The tests hold the two to the same model.

use serde_json::Value;

use super::{Parser, SPLIT_STEPS, calls_mut, is_classifier_key, move_args};
use crate::trail::model::{ALL_DEVICES, PLATFORMS, Recording, Step, StepKind, ToolCall, TrailConfig};
use crate::yaml::{self, Cursor, Line, content_lines};

/// How deep the walk's reader is when it reads what a step's key holds (the root, `trail`, the
/// step), a recording key (and the recording), a call's arguments (and the calls, the call): its
/// limit on nesting then holds here alike.
const STEP_DEPTH: usize = 3;
const RECORDING_DEPTH: usize = 4;
const ARGS_DEPTH: usize = 6;

/// The config, the trailhead and the steps of `text`, or `None` when the walk must read it.
pub(super) fn read(text: &str, file: &std::path::Path) -> Option<(TrailConfig, Option<Step>, Vec<Step>)> {
    let lines = content_lines(text)?;
    let (key_line, col) = section(text, &lines)?;
    let (config, trailhead, device_keys) = head(&text[..lines[key_line].start()], file)?;
    // The walk's recording keys: every device, the platforms, the declared device keys.
    let known: Vec<&str> = [ALL_DEVICES]
        .into_iter()
        .chain(PLATFORMS)
        .chain(device_keys.iter().map(String::as_str))
        .collect();
    let steps = Steps {
        text,
        lines: &lines,
        col,
        known: &known,
    }
    .read(key_line + 1)?;
    Some((config, trailhead, steps))
}

/// The line of `trail:` (the last top-level key, with its items below) and the column of its items.
fn section(text: &str, lines: &[Line]) -> Option<(usize, usize)> {
    let c = Cursor::new(text, lines, 0);
    let k = lines.iter().rposition(|l| l.indent() == 0 && !c.is_entry(l, 0))?;
    let after = text[lines[k].start()..lines[k].end()].strip_prefix("trail:")?;
    let rest = after.trim_start_matches(' ');
    if !(after.is_empty() || (after.starts_with(' ') && (rest.is_empty() || rest.starts_with('#')))) {
        return None;
    }
    let first = lines.get(k + 1)?;
    c.is_entry(first, first.indent()).then_some((k, first.indent()))
}

/// The config and trailhead, read by the walk from the text before `trail:`, and the config's
/// device keys; `None` when the walk finds anything to report there (it reports it on the whole file).
fn head(before: &str, file: &std::path::Path) -> Option<(TrailConfig, Option<Step>, Vec<String>)> {
    let mut doc = yaml::parse(before, file).ok()?;
    let mut p = Parser::new(&doc);
    let empty = serde_json::Map::new();
    let root = match &doc.value {
        Value::Object(m) if !m.contains_key("trail") => m,
        Value::Null => &empty,
        _ => return None,
    };
    let (config, mut trailhead) = p.head(root);
    if !p.errors.is_empty() {
        return None;
    }
    let (args_at, device_keys) = (p.args_at, p.device_keys);
    move_args(&mut doc.value, args_at, calls_mut(trailhead.iter_mut()));
    Some((config, trailhead, device_keys))
}

/// The steps under `trail:`, which runs to the file's end.
struct Steps<'a> {
    text: &'a str,
    lines: &'a [Line],
    /// The column of the items' `- `.
    col: usize,
    /// The recording keys the config knows (a device classifier is one too).
    known: &'a [&'a str],
}

impl Steps<'_> {
    /// The steps from line `first`; a long trail's second half is read on another core.
    fn read(&self, first: usize) -> Option<Vec<Step>> {
        let c = Cursor::new(self.text, self.lines, 0);
        let starts: Vec<usize> = (first..self.lines.len())
            .filter(|&i| self.lines[i].indent() == self.col && c.is_entry(&self.lines[i], self.col))
            .collect();
        if starts.len() < SPLIT_STEPS || !crate::cores::second() {
            return self.items(first, self.lines.len(), 0, starts.len());
        }
        let half = starts.len() / 2;
        let mid = starts[half];
        let (mut steps, second) = std::thread::scope(|s| {
            let second = s.spawn(|| self.items(mid, self.lines.len(), half, starts.len() - half));
            let first = self.items(first, mid, 0, half);
            (first, second.join())
        });
        // A panic there is this thread's, as it would be reading the whole trail here.
        let second = second.unwrap_or_else(|p| std::panic::resume_unwind(p));
        steps.as_mut()?.extend(second?);
        steps
    }

    /// The items from line `from` to line `to` (every line between belongs to them), the first
    /// being `trail[index]`.
    fn items(&self, from: usize, to: usize, index: usize, count: usize) -> Option<Vec<Step>> {
        let mut c = Cursor::new(self.text, &self.lines[..to], from);
        let mut steps = Vec::with_capacity(count);
        while let Some(line) = c.line() {
            if line.indent() != self.col || !c.is_entry(&line, self.col) {
                return None;
            }
            steps.push(self.step(&mut c, line, index + steps.len())?);
        }
        Some(steps)
    }

    /// `trail[i]`, whose `- ` is on `line`.
    fn step(&self, c: &mut Cursor<'_>, line: Line, i: usize) -> Option<Step> {
        let mut p = c.skip_spaces(line.start() + self.col + 1, line.end());
        if c.ends(&line, p) || c.is_entry(&line, p - line.start()) {
            return None; // the item is on the lines below, or a sequence in a sequence
        }
        let col = p - line.start();
        let pos = c.pos(&line, p);
        let path = format!("trail[{i}]");
        let mut f = StepFields::default();
        loop {
            let line = c.line()?;
            self.step_entry(c, &line, p, col, &path, &mut f)?;
            match c.line() {
                Some(next) if next.indent() == col && !c.is_entry(&next, col) => p = next.start() + col,
                Some(next) if next.indent() > col => return None,
                _ => break,
            }
        }
        // One of `step` and `verify`; no recording beside `recordable: false`.
        if f.seen & 3 == 3 {
            return None;
        }
        if f.recordable == Some(false)
            && let Some(rec) = &f.recording
            && rec
                .entries
                .iter()
                .any(|(_, calls): &(String, Vec<ToolCall>)| !calls.is_empty())
        {
            return None;
        }
        Some(Step {
            number: i + 1,
            kind: f.kind?,
            text: f.text?,
            recordable: f.recordable,
            max_retries: f.max_retries,
            recording: f.recording,
            pos,
            path,
        })
    }

    /// One `key: value` of a step at `p` on `line`, the step's keys at column `col`, into `f`;
    /// `None` for anything the walk should read.
    fn step_entry(
        &self,
        c: &mut Cursor<'_>,
        line: &Line,
        p: usize,
        col: usize,
        path: &str,
        f: &mut StepFields,
    ) -> Option<()> {
        let (key, after) = c.key(line, p)?;
        let bit = match key.as_str() {
            "step" => 1,
            "verify" => 2,
            "recordable" => 4,
            "maxRetries" => 8,
            "recording" => 16,
            _ => return None,
        };
        if f.seen & bit != 0 {
            return None;
        }
        f.seen |= bit;
        let q = c.skip_spaces(after, line.end());
        if bit == 16 {
            // A block mapping below, no more (the flow form and anything else: the walk's).
            if !c.ends(line, q) {
                return None;
            }
            c.advance();
            let next = c.line()?;
            if next.indent() <= col || c.is_entry(&next, next.indent()) {
                return None;
            }
            f.recording = Some(self.recording(c, next.indent(), path)?);
        } else {
            if c.ends(line, q) {
                return None; // a collection below, or an empty value
            }
            let v = c.inline(line, q, col, STEP_DEPTH)?;
            match bit {
                1 | 2 => {
                    f.kind = Some(if bit == 1 { StepKind::Step } else { StepKind::Verify });
                    f.text = Some(text_of(v)?);
                }
                4 => f.recordable = Some(v.as_bool()?),
                _ => f.max_retries = Some(v.as_u64().and_then(|n| u32::try_from(n).ok())?),
            }
        }
        Some(())
    }

    /// A step's `recording:`, its keys at column `col` from the cursor's line.
    fn recording(&self, c: &mut Cursor<'_>, col: usize, step: &str) -> Option<Recording> {
        let mut entries: Vec<(String, Vec<ToolCall>)> = Vec::with_capacity(1);
        let mut p = c.line()?.start() + col;
        loop {
            let line = c.line()?;
            let (key, after) = c.key(&line, p)?;
            let known = plain_name(&key) && (self.known.contains(&key.as_str()) || is_classifier_key(&key, self.known));
            if !known || entries.iter().any(|(k, _)| *k == key) {
                return None;
            }
            let q = c.skip_spaces(after, line.end());
            let calls = if c.ends(&line, q) {
                c.advance();
                let next = c.line()?;
                let at = next.indent();
                // The calls below, or at the key's column (where a sequence may stand).
                if !(at >= col && c.is_entry(&next, at)) {
                    return None;
                }
                self.calls(c, at, &format!("{step}.recording.{key}"))?
            } else {
                // `[]` or `{}`: a deliberate no-op. A call or calls written inline: the walk's.
                match c.inline(&line, q, col, RECORDING_DEPTH)? {
                    Value::Array(a) if a.is_empty() => Vec::new(),
                    Value::Object(m) if m.is_empty() => Vec::new(),
                    _ => return None,
                }
            };
            entries.push((key, calls));
            match c.line() {
                Some(next) if next.indent() == col && !c.is_entry(&next, col) => p = next.start() + col,
                Some(next) if next.indent() > col => return None,
                _ => break,
            }
        }
        Some(Recording { entries })
    }

    /// The calls of a block sequence at column `col` from the cursor's line; `path` is the
    /// recording key's.
    fn calls(&self, c: &mut Cursor<'_>, col: usize, path: &str) -> Option<Vec<ToolCall>> {
        let mut calls = Vec::with_capacity(1);
        while let Some(line) = c.line() {
            if line.indent() < col || (line.indent() == col && !c.is_entry(&line, col)) {
                break;
            }
            if line.indent() > col {
                return None;
            }
            let p = c.skip_spaces(line.start() + col + 1, line.end());
            if c.ends(&line, p) || c.is_entry(&line, p - line.start()) {
                return None;
            }
            // `- launchApp` (no `:`) is a call written wrong: the walk says how to write it.
            let (tool, after) = c.key(&line, p)?;
            if !plain_name(&tool) {
                return None;
            }
            let kcol = p - line.start();
            let pos = c.pos(&line, p);
            let q = c.skip_spaces(after, line.end());
            let args = if c.ends(&line, q) {
                c.advance();
                let next = c.line()?;
                if next.indent() <= kcol || c.is_entry(&next, next.indent()) {
                    return None; // no arguments, or a list of them: the walk reports it
                }
                c.block(next.indent(), ARGS_DEPTH)?
            } else if c.bytes()[q] == b'{' {
                c.inline(&line, q, kcol, ARGS_DEPTH)?
            } else {
                return None;
            };
            if !args.is_object() {
                return None;
            }
            // A call is one key, the tool's name.
            if let Some(next) = c.line()
                && next.indent() >= kcol
            {
                return None;
            }
            let path = format!("{path}[{}].{tool}", calls.len());
            calls.push(ToolCall { tool, args, pos, path });
        }
        Some(calls)
    }
}

/// A name a path holds as it is: none of the path's own `.`, `[`, `]` (the walk finds such a name
/// by its longest match; left to it).
fn plain_name(name: &str) -> bool {
    !name.contains(['.', '[', ']'])
}

/// A step's fields as the quick path reads them, and which keys it has seen (one bit each).
#[derive(Default)]
struct StepFields {
    kind: Option<StepKind>,
    text: Option<String>,
    recordable: Option<bool>,
    max_retries: Option<u32>,
    recording: Option<Recording>,
    seen: u8,
}

/// A step's text: text, or a number or true/false as its text (the walk's reading).
fn text_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "quick_tests.rs"]
mod tests;
