//! Writing what the agent did back into a trail: each step's recording for one device key is set
//! by editing the file's text at that step (the lines of its `recording:`, or new lines after the
//! step), so comments and layout elsewhere stay as they were. The edit is proven before it is kept:
//! the new text must parse as a trail whose value is exactly the old one with those recordings set.
//! Where the layout does not allow an edit in place (a step in flow style, an odd layout), the
//! document is written whole from its value instead (its comments are then lost; the caller is told).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use trailblaze_core::yaml::emit::emit_map_entry;
use trailblaze_core::yaml::{self, Document, YamlError};

/// One step's new recording.
#[derive(Debug, Clone, PartialEq)]
pub struct StepEdit {
    /// The step's YAML path: `trailhead` or `trail[i]` (`Step::path`).
    pub path: String,
    /// The recording key: `android`, `tools`, a device key.
    pub key: String,
    /// The calls, in order: `(tool, args)`.
    pub calls: Vec<(String, Value)>,
}

/// The trail's new text.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewritten {
    pub text: String,
    /// False when the file had to be written whole (its comments are lost).
    pub kept_layout: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteBackError {
    #[error("{0}")]
    Parse(#[from] YamlError),
    #[error("{}: cannot write the agent's recording back: {why}", .file.display())]
    Shape { file: PathBuf, why: String },
}

/// `text` (the trail at `file`) with each edit's recording set.
pub fn with_recordings(text: &str, file: &Path, edits: &[StepEdit]) -> Result<Rewritten, WriteBackError> {
    let doc = yaml::parse(text, file)?;
    let mut expected = doc.value.clone();
    for e in edits {
        set_recording(&mut expected, e).map_err(|why| WriteBackError::Shape {
            file: file.to_path_buf(),
            why,
        })?;
    }
    if let Some(edited) = edit_in_place(text, &doc, edits)
        && reads_as(&edited, file, &expected)
    {
        return Ok(Rewritten {
            text: edited,
            kept_layout: true,
        });
    }
    let mut whole = leading_comments(text);
    trailblaze_core::yaml::emit::emit_block(&mut whole, "", &expected);
    if reads_as(&whole, file, &expected) {
        return Ok(Rewritten {
            text: whole,
            kept_layout: false,
        });
    }
    Err(WriteBackError::Shape {
        file: file.to_path_buf(),
        why: "the rewritten trail would not read back the same".into(),
    })
}

/// Where the default write-back goes: `sign-in.trail.yaml` → `sign-in.trail.healed.yaml`. Not a
/// trail file name, so a run over the folder does not take it for a second trail.
pub fn healed_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trail.yaml".into());
    let stem = name.strip_suffix(".yaml").unwrap_or(&name);
    file.with_file_name(format!("{stem}.healed.yaml"))
}

fn reads_as(text: &str, file: &Path, expected: &Value) -> bool {
    matches!(yaml::parse(text, file), Ok(d) if d.value == *expected)
        && trailblaze_core::trail::parse_trail(text, file).is_ok()
}

fn calls_value(calls: &[(String, Value)]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|(t, a)| {
                let mut m = Map::new();
                m.insert(t.clone(), a.clone());
                Value::Object(m)
            })
            .collect(),
    )
}

/// `trail[2]` → the step's object in `root`.
fn step_mut<'v>(root: &'v mut Value, path: &str) -> Option<&'v mut Map<String, Value>> {
    let mut at = root;
    for part in path.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, rest)) => (k, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        at = at.get_mut(key)?;
        if let Some(i) = index {
            at = at.get_mut(i)?;
        }
    }
    at.as_object_mut()
}

fn set_recording(root: &mut Value, e: &StepEdit) -> Result<(), String> {
    let step = step_mut(root, &e.path).ok_or_else(|| format!("`{}` is not a step mapping", e.path))?;
    let rec = step.entry("recording").or_insert_with(|| Value::Object(Map::new()));
    if !rec.is_object() {
        *rec = Value::Object(Map::new());
    }
    if let Some(m) = rec.as_object_mut() {
        m.insert(e.key.clone(), calls_value(&e.calls));
    }
    Ok(())
}

/// `key:` and its calls in block style, `indent` before the key.
fn emit_entry(out: &mut String, indent: &str, key: &str, calls: &[(String, Value)]) {
    if calls.is_empty() {
        out.push_str(&format!(
            "{indent}{}: []\n",
            yaml::emit::scalar(&Value::String(key.into()))
        ));
        return;
    }
    out.push_str(&format!(
        "{indent}{}:\n",
        yaml::emit::scalar(&Value::String(key.into()))
    ));
    for (tool, args) in calls {
        emit_map_entry(out, &format!("{indent}  - "), &format!("{indent}      "), tool, args);
    }
}

/// A replacement of lines `from..to` (0-based, `to` exclusive) by `text`.
struct Splice {
    from: usize,
    to: usize,
    text: String,
}

fn edit_in_place(text: &str, doc: &Document, edits: &[StepEdit]) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut splices = edits.iter().map(|e| plan(doc, &lines, e)).collect::<Option<Vec<_>>>()?;
    splices.sort_by_key(|s| std::cmp::Reverse(s.from));
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    // A file that does not end in a newline gets one before anything is appended after it.
    if let Some(last) = out.last_mut()
        && !last.ends_with('\n')
    {
        last.push('\n');
    }
    let mut floor = usize::MAX;
    for s in splices {
        if s.to > floor {
            return None; // overlapping edits: let the whole rewrite handle it
        }
        floor = s.from;
        let crlf = text.contains("\r\n");
        let new = if crlf { s.text.replace('\n', "\r\n") } else { s.text };
        out.splice(s.from..s.to, std::iter::once(new));
    }
    Some(out.concat())
}

/// What to change for one edit, or `None` when the layout is not one this edits in place.
fn plan(doc: &Document, lines: &[&str], e: &StepEdit) -> Option<Splice> {
    let (start, end) = region(doc, lines.len(), &e.path)?;
    let at = doc.value_position(&e.path);
    if char_at(lines, at)? == '{' {
        return None;
    }
    let indent = " ".repeat(at.col.saturating_sub(1));
    let keys = doc.children(&e.path)?;
    let Some(rec_key) = keys
        .iter()
        .find(|(k, _)| k.as_deref() == Some("recording"))
        .map(|(_, p)| *p)
    else {
        // No recording yet: new lines after the step's last line.
        let after = content_end(lines, start, end);
        let mut text = format!("{indent}recording:\n");
        emit_entry(&mut text, &format!("{indent}  "), &e.key, &e.calls);
        return Some(Splice {
            from: after,
            to: after,
            text,
        });
    };
    let rec_path = format!("{}.recording", e.path);
    let (rec_start, rec_end) = region(doc, lines.len(), &rec_path)?;
    let rec_at = doc.value_position(&rec_path);
    let entries = doc.children(&rec_path).filter(|c| !c.is_empty());
    let block = rec_at.line > rec_key.line && char_at(lines, rec_at).is_some_and(|c| c != '{' && c != '[');
    match entries {
        Some(entries) if block => Some(block_entry(lines, &entries, (rec_start, rec_end), e)),
        // `recording: {}`, `recording:` with nothing, or a flow map: the entry written anew whole.
        _ => {
            let text = whole_recording(doc, &rec_path, &indent, e)?;
            Some(Splice {
                from: rec_start,
                to: content_end(lines, rec_start, rec_end),
                text,
            })
        }
    }
}

/// The edit's key set in a block-style `recording:` whose entries are `entries` (lines
/// `rec_start..rec_end`): its lines replaced when it is there, new lines after the last otherwise.
fn block_entry(
    lines: &[&str],
    entries: &[(Option<String>, yaml::Pos)],
    (rec_start, rec_end): (usize, usize),
    e: &StepEdit,
) -> Splice {
    let rec_indent = " ".repeat(entries[0].1.col.saturating_sub(1));
    let mut text = String::new();
    emit_entry(&mut text, &rec_indent, &e.key, &e.calls);
    match entries.iter().position(|(k, _)| k.as_deref() == Some(e.key.as_str())) {
        Some(i) => {
            let from = entries[i].1.line - 1;
            let to = entries.get(i + 1).map_or(rec_end, |(_, p)| p.line - 1);
            Splice {
                from,
                to: content_end(lines, from, to),
                text,
            }
        }
        None => {
            let after = content_end(lines, rec_start, rec_end);
            Splice {
                from: after,
                to: after,
                text,
            }
        }
    }
}

/// The step's `recording:` (at `rec_path`) written anew in block style, `indent` before it: its
/// other keys as they were, then the edit's. `None` when a key's value is not a list of calls.
fn whole_recording(doc: &Document, rec_path: &str, indent: &str, e: &StepEdit) -> Option<String> {
    let mut text = format!("{indent}recording:\n");
    let existing = doc
        .value
        .pointer(&json_pointer(rec_path))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in &existing {
        if *k == e.key {
            continue;
        }
        let calls: Vec<(String, Value)> = v
            .as_array()?
            .iter()
            .filter_map(|c| c.as_object()?.iter().next().map(|(t, a)| (t.clone(), a.clone())))
            .collect();
        emit_entry(&mut text, &format!("{indent}  "), k, &calls);
    }
    emit_entry(&mut text, &format!("{indent}  "), &e.key, &e.calls);
    Some(text)
}

/// `trail[2].recording` → `/trail/2/recording`.
fn json_pointer(path: &str) -> String {
    let mut out = String::new();
    for part in path.split('.') {
        match part.split_once('[') {
            Some((k, rest)) => {
                out.push('/');
                out.push_str(k);
                out.push('/');
                out.push_str(rest.trim_end_matches(']'));
            }
            None => {
                out.push('/');
                out.push_str(part);
            }
        }
    }
    out
}

fn char_at(lines: &[&str], at: trailblaze_core::yaml::Pos) -> Option<char> {
    lines.get(at.line.checked_sub(1)?)?.chars().nth(at.col.checked_sub(1)?)
}

/// The lines (0-based, end exclusive) the node at `path` spans: from its line to the next sibling's,
/// or to its parent's end.
fn region(doc: &Document, total: usize, path: &str) -> Option<(usize, usize)> {
    if path.is_empty() {
        return Some((0, total));
    }
    let (parent, this) = split_last(path);
    let (_, parent_end) = region(doc, total, parent)?;
    let siblings = doc.children(parent)?;
    let i = match this {
        Seg::Key(k) => siblings.iter().position(|(name, _)| name.as_deref() == Some(k))?,
        Seg::Index(i) => i,
    };
    let start = siblings.get(i)?.1.line.checked_sub(1)?;
    let end = siblings
        .get(i + 1)
        .map_or(parent_end, |(_, p)| p.line.saturating_sub(1));
    Some((start, end.max(start + 1)))
}

enum Seg<'p> {
    Key(&'p str),
    Index(usize),
}

/// `trail[2]` → (`trail`, 2); `trail[2].recording` → (`trail[2]`, `recording`); `trailhead` → (``, `trailhead`).
fn split_last(path: &str) -> (&str, Seg<'_>) {
    if let Some(open) = path.rfind('[')
        && path.ends_with(']')
        && path.rfind('.').is_none_or(|dot| dot < open)
        && let Ok(i) = path[open + 1..path.len() - 1].parse()
    {
        return (&path[..open], Seg::Index(i));
    }
    match path.rfind('.') {
        Some(dot) => (&path[..dot], Seg::Key(&path[dot + 1..])),
        None => ("", Seg::Key(path)),
    }
}

/// The end of `from..to` without its trailing blank and comment-only lines (they introduce what
/// follows); at least one line past `from`.
fn content_end(lines: &[&str], from: usize, to: usize) -> usize {
    let mut end = to.min(lines.len());
    while end > from + 1 {
        let t = lines[end - 1].trim();
        if t.is_empty() || t.starts_with('#') {
            end -= 1;
        } else {
            break;
        }
    }
    end
}

/// The file's opening comment lines, kept by a whole rewrite.
fn leading_comments(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || t.is_empty() {
            if t.starts_with('#') {
                out.push_str(line);
                out.push('\n');
            }
        } else {
            break;
        }
    }
    out
}

#[cfg(test)]
#[path = "write_back_tests.rs"]
mod tests;
