//! The parse gate: a trail file becomes a [`Trail`] only if every key is known and every value has
//! the right shape. The walk goes over the whole positioned tree and collects every error, so an
//! author fixes a file in one pass. Tool arguments are not checked here: the type gate checks them
//! against the target's tool schemas.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use trailblaze_host_functions::decode::{did_you_mean, nearest};

use super::model::*;
use crate::yaml::{self, Document, YamlError};

mod args;
mod config;

use args::move_args;

const TOP_KEYS: [&str; 3] = ["config", "trailhead", "trail"];
const CONFIG_KEYS: [&str; 12] = [
    "id",
    "target",
    "title",
    "description",
    "priority",
    "devices",
    "skip",
    "tags",
    "context",
    "memory",
    "metadata",
    "args",
];
/// Steps a trail needs before its second half is read on another core: fewer take less time than
/// starting a thread.
const SPLIT_STEPS: usize = 256;
const STEP_KEYS: [&str; 5] = ["step", "verify", "recordable", "maxRetries", "recording"];
const TRAILHEAD_KEYS: [&str; 2] = ["step", "recording"];

/// Every call `steps` recorded, under every recording key.
fn calls_mut<'s>(steps: impl Iterator<Item = &'s mut Step>) -> impl Iterator<Item = &'s mut ToolCall> {
    steps.flat_map(|s| {
        s.recording
            .iter_mut()
            .flat_map(|r| r.entries.iter_mut().flat_map(|(_, c)| c.iter_mut()))
    })
}

impl Trail {
    /// Reads and parses a trail file through the parse gate: every error of the file at once, each
    /// at `file:line:col`.
    pub fn load(file: &Path) -> Result<Trail, Vec<YamlError>> {
        load_trail(file)
    }

    /// Parses a trail's text; `file` names it in errors and anchors relative paths.
    pub fn parse(text: &str, file: &Path) -> Result<Trail, Vec<YamlError>> {
        parse_trail(text, file)
    }
}

/// Parses a trail file's text. On failure, every error of the file, in file order.
pub fn parse_trail(text: &str, file: &Path) -> Result<Trail, Vec<YamlError>> {
    parse_trail_owned(text.to_string(), file)
}

/// [`parse_trail`] of text the trail may keep (no copy of it).
pub fn parse_trail_owned(text: String, file: &Path) -> Result<Trail, Vec<YamlError>> {
    parse_walked(text, file)
}

/// [`parse_trail_owned`] by the walk over the whole document, which reports every error.
fn parse_walked(text: String, file: &Path) -> Result<Trail, Vec<YamlError>> {
    let mut doc = yaml::parse_owned(text, file).map_err(|e| vec![e])?;
    let mut p = Parser::new(&doc);
    let parts = p.root();
    let args_at = std::mem::take(&mut p.args_at);
    let mut errors = p.errors;
    if !errors.is_empty() {
        // Positions first; the walk's own order breaks ties (a key before what is inside it).
        errors.sort_by_key(|e| e.pos);
        errors.dedup();
        return Err(errors);
    }
    let (config, mut trailhead, mut steps) = parts;
    let calls = calls_mut(trailhead.iter_mut().chain(steps.iter_mut()));
    move_args(&mut doc.value, args_at, calls);
    Ok(Trail {
        file: file.to_path_buf(),
        config,
        trailhead,
        steps,
        text: doc.text.clone(),
        doc: OnceLock::from(doc),
    })
}

/// Reads and parses a trail file.
pub fn load_trail(file: &Path) -> Result<Trail, Vec<YamlError>> {
    parse_trail_owned(read_trail(file).map_err(|e| vec![e])?, file)
}

/// A trail file's text, or the error the parse gate reports for a file it cannot read.
pub fn read_trail(file: &Path) -> Result<String, YamlError> {
    crate::files::read_text(file).map_err(|e| YamlError {
        file: file.to_path_buf(),
        pos: crate::yaml::Pos { line: 1, col: 1 },
        message: format!("cannot read: {e}"),
        source_line: String::new(),
    })
}

struct Parser<'d> {
    doc: &'d Document,
    errors: Vec<YamlError>,
    /// `config.devices` keys, which may key recordings.
    device_keys: Vec<String>,
    /// Where the part being read sits in the document: `[2].` inside the older list form's third
    /// item, empty in the current form. Paths are written as the current form has them and
    /// prefixed only to find their position.
    prefix: String,
    /// Where each call's arguments are in `doc.value` (compared, never dereferenced): the call holds
    /// its index here until [`move_args`] moves the arguments into it.
    args_at: Vec<usize>,
}

/// `base[i]`, with room for the key a call's path adds to it ([`extended`]).
fn indexed(base: &str, i: usize) -> String {
    use std::fmt::Write as _;
    let mut at = String::with_capacity(base.len() + 32);
    let _ = write!(at, "{base}[{i}]");
    at
}

/// [`child`] of a path the caller owns: the key appended in place.
fn extended(mut base: String, key: &str) -> String {
    if base.is_empty() {
        return key.to_string();
    }
    base.push('.');
    base.push_str(key);
    base
}

fn child(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// The kind of a value, for messages: never the value itself, which may be a secret.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

fn list(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

impl<'d> Parser<'d> {
    fn new(doc: &'d Document) -> Self {
        Parser {
            doc,
            errors: Vec::new(),
            device_keys: Vec::new(),
            prefix: String::new(),
            args_at: Vec::new(),
        }
    }

    /// The top-level keys checked, then the config and the trailhead of the mapping `root` (the
    /// config first, whatever the file order: recordings may be keyed by its device keys).
    fn head(&mut self, root: &Map<String, Value>) -> (TrailConfig, Option<Step>) {
        self.known_keys("", root, &TOP_KEYS, top_hint);
        let config = match root.get("config") {
            Some(v) => self.config(v),
            None => TrailConfig::default(),
        };
        let trailhead = root.get("trailhead").and_then(|v| self.step(v, "trailhead", 0));
        (config, trailhead)
    }

    /// An error at the key of `path` (or at the value, for a list item).
    fn at_key(&mut self, path: &str, msg: String) {
        let path = self.full(path);
        self.errors.push(self.doc.error_at(&path, msg));
    }

    /// `path` within the whole document.
    fn full(&self, path: &str) -> String {
        match (self.prefix.as_str(), path) {
            ("", p) => p.to_string(),
            (pre, "") => pre.trim_end_matches('.').to_string(),
            (pre, p) => format!("{pre}{p}"),
        }
    }

    /// [`Parser::full`] of a path the caller owns: itself when there is no prefix (the current
    /// form, every call of a check), not a copy.
    fn full_owned(&self, path: String) -> String {
        if self.prefix.is_empty() { path } else { self.full(&path) }
    }

    /// An error at the value of `path`.
    fn at_value(&mut self, path: &str, msg: String) {
        let pos = self.doc.value_position(&self.full(path));
        self.errors
            .push(YamlError::new(&self.doc.file, &self.doc.text, pos, msg));
    }

    fn wrong_type(&mut self, path: &str, expected: &str, v: &Value) {
        self.at_value(path, format!("`{path}`: expected {expected}, found {}", kind(v)));
    }

    /// Reports every key of `map` not in `allowed`, with the nearest valid key or a hint saying where
    /// the key belongs.
    fn known_keys(&mut self, base: &str, map: &Map<String, Value>, allowed: &[&str], hint: fn(&str) -> Option<String>) {
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            let mut msg = format!("unknown key `{}`", child(base, key));
            match (nearest(key, allowed), hint(key)) {
                (Some(near), _) => msg.push_str(&did_you_mean(&[near])),
                (None, Some(h)) => msg.push_str(&format!("; {h}")),
                (None, None) => {}
            }
            msg.push_str(&format!(" (expected one of: {})", allowed.join(", ")));
            self.at_key(&child(base, key), msg);
        }
    }

    fn root(&mut self) -> (TrailConfig, Option<Step>, Vec<Step>) {
        let empty = (TrailConfig::default(), None, Vec::new());
        let root = match &self.doc.value {
            Value::Object(m) => m,
            Value::Array(items) if !items.is_empty() => return self.list_form(items),
            Value::Null => {
                self.at_value("", format!("an empty trail file: expected {}", list(&TOP_KEYS)));
                return empty;
            }
            other => {
                let msg = format!("a trail file is a map with {}, found {}", list(&TOP_KEYS), kind(other));
                self.at_value("", msg);
                return empty;
            }
        };
        let (config, trailhead) = self.head(root);
        let mut steps = Vec::new();
        match root.get("trail") {
            Some(Value::Array(items)) => steps = self.steps(items),
            Some(other) => self.wrong_type("trail", "a list of steps (`- step: ...`)", other),
            None => self.at_value("", "missing key `trail`: the list of steps".to_string()),
        }
        (config, trailhead, steps)
    }

    /// The steps of `trail`. A long trail's second half is read on another core by a parser of its
    /// own, whose errors and call arguments then join this one's: the steps are independent.
    fn steps(&mut self, items: &[Value]) -> Vec<Step> {
        let read = |p: &mut Parser<'_>, from: usize, items: &[Value]| -> Vec<Step> {
            let mut steps = Vec::with_capacity(items.len());
            for (k, item) in items.iter().enumerate() {
                let i = from + k;
                steps.extend(p.step(item, &format!("trail[{i}]"), i + 1));
            }
            steps
        };
        if items.len() < SPLIT_STEPS || !crate::cores::second() {
            return read(self, 0, items);
        }
        let mid = items.len() / 2;
        let mut other = Parser {
            doc: self.doc,
            errors: Vec::new(),
            device_keys: self.device_keys.clone(),
            prefix: self.prefix.clone(),
            args_at: Vec::new(),
        };
        let (mut steps, second) = std::thread::scope(|s| {
            let second = s.spawn(|| read(&mut other, mid, &items[mid..]));
            let first = read(self, 0, &items[..mid]);
            (first, second.join())
        });
        // A panic there is this thread's, as it would be reading the whole trail here.
        let mut second = second.unwrap_or_else(|p| std::panic::resume_unwind(p));
        // The other parser numbered its calls' arguments from 0: they follow this one's.
        let offset = self.args_at.len() as u64;
        for call in calls_mut(second.iter_mut()) {
            if let Some(i) = call.args.as_u64() {
                call.args = Value::from(i + offset);
            }
        }
        self.args_at.append(&mut other.args_at);
        self.errors.append(&mut other.errors);
        steps.append(&mut second);
        steps
    }

    /// Text, or a number or true/false kept as its text (Trailblaze reads these fields as strings).
    fn text(&mut self, path: &str, v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                self.wrong_type(path, "text", other);
                None
            }
        }
    }

    /// Valid recording keys: `tools` (when `with_all`), the platforms, then the declared device keys.
    fn recording_keys(&self, with_all: bool) -> Vec<String> {
        let all = with_all.then_some(ALL_DEVICES);
        all.into_iter()
            .chain(PLATFORMS)
            .map(str::to_string)
            .chain(
                self.device_keys
                    .iter()
                    .filter(|k| !PLATFORMS.contains(&k.as_str()))
                    .cloned(),
            )
            .collect()
    }

    /// The trailhead (`number` 0) or a `trail` step.
    fn step(&mut self, v: &Value, path: &str, number: usize) -> Option<Step> {
        let head = number == 0;
        let map = match v {
            Value::Object(m) => m,
            Value::String(_) if !head => {
                let msg =
                    format!("`{path}`: a step is a map; write `- step: <what to do>` or `- verify: <what to check>`");
                self.at_value(path, msg);
                return None;
            }
            other => {
                self.wrong_type(path, "a map with `step` and `recording`", other);
                return None;
            }
        };
        if head {
            self.known_keys(path, map, &TRAILHEAD_KEYS, trailhead_hint);
        } else {
            self.known_keys(path, map, &STEP_KEYS, step_hint);
        }
        let (kind, key, text) = self.step_kind(map, path, head)?;
        let tpath = child(path, key);
        let text = match text {
            Value::Null => {
                self.at_value(&tpath, format!("`{tpath}` is empty: say in words what the step does"));
                None
            }
            t => self.text(&tpath, t),
        };
        let (recordable, max_retries) = self.step_options(map, path);
        let recording = map
            .get("recording")
            .and_then(|r| self.recording(r, &child(path, "recording")));
        if recordable == Some(false)
            && let Some(rec) = &recording
            && rec.entries.iter().any(|(_, calls)| !calls.is_empty())
        {
            let msg =
                format!("`{path}` says `recordable: false` (always run by the agent) yet has a recording; drop one");
            self.at_key(&child(path, "recordable"), msg);
        }
        let path = self.full(path);
        let pos = self.doc.position(&path);
        Some(Step {
            number,
            kind,
            text: text?,
            recordable,
            max_retries,
            recording,
            pos,
            path,
        })
    }

    /// Whether a step is a `step` or a `verify` (a trailhead only a `step`), with its key and text.
    fn step_kind<'v>(
        &mut self,
        map: &'v Map<String, Value>,
        path: &str,
        head: bool,
    ) -> Option<(StepKind, &'static str, &'v Value)> {
        let text_of = |key: &'static str| map.get(key).map(|t| (key, t));
        match (text_of("step"), text_of("verify")) {
            (Some((k, t)), None) => Some((StepKind::Step, k, t)),
            (None, Some((k, t))) if !head => Some((StepKind::Verify, k, t)),
            (Some(_), Some(_)) if !head => {
                let msg = format!("`{path}` has both `step` and `verify`; a step is one or the other");
                self.at_key(&child(path, "verify"), msg);
                None
            }
            _ if head => {
                // `verify` in a trailhead was already reported as an unknown key.
                if !map.contains_key("verify") {
                    let msg = "the trailhead needs `step: <what it does>`".to_string();
                    self.at_key(path, msg);
                }
                None
            }
            _ => {
                // A misspelt `step`/`verify` was already reported as an unknown key, with the fix.
                if !map.keys().any(|k| nearest(k, &["step", "verify"]).is_some()) {
                    let msg = format!("`{path}` needs `step: <what to do>` or `verify: <what to check>`");
                    self.at_value(path, msg);
                }
                None
            }
        }
    }

    /// A step's `recordable` and `maxRetries`, each checked for its type.
    fn step_options(&mut self, map: &Map<String, Value>, path: &str) -> (Option<bool>, Option<u32>) {
        let recordable = match map.get("recordable") {
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.wrong_type(&child(path, "recordable"), "true or false", other);
                None
            }
            None => None,
        };
        let max_retries = match map.get("maxRetries") {
            None => None,
            Some(n) => match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    self.wrong_type(&child(path, "maxRetries"), "a whole number of retries (0 or more)", n);
                    None
                }
            },
        };
        (recordable, max_retries)
    }

    fn recording(&mut self, v: &Value, path: &str) -> Option<Recording> {
        let map = match v {
            Value::Object(m) => m,
            other => {
                let msg = format!("a map of `{ALL_DEVICES}`, a platform or a device key to tool calls");
                self.wrong_type(path, &msg, other);
                return None;
            }
        };
        let keys = self.recording_keys(true);
        let mut allowed: Vec<&str> = keys.iter().map(String::as_str).collect();
        // Any device classifier is a recording key, as in the original (`desktop`, `android-phone`);
        // a near miss of a known key (`tool`, `andriod`) stays an error.
        let classifiers: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| is_classifier_key(k, &allowed))
            .collect();
        allowed.extend(classifiers);
        self.known_keys(path, map, &allowed, recording_hint);
        // Vectors made at their final size: a vector grown by pushing makes room for four calls
        // (a step has one or two), and a long trail's steps left a megabyte of it unused.
        let mut rec = Recording {
            entries: Vec::with_capacity(map.len()),
        };
        for (key, calls) in map.iter().filter(|(k, _)| allowed.contains(&k.as_str())) {
            let kpath = child(path, key);
            let calls = match calls {
                // The original's explicit empty recording (`android: {}`): a deliberate no-op.
                Value::Object(m) if m.is_empty() => Vec::new(),
                Value::Array(items) => {
                    let mut calls = Vec::with_capacity(items.len());
                    let read = items.iter().enumerate();
                    calls.extend(read.filter_map(|(i, item)| self.tool_call(item, indexed(&kpath, i))));
                    calls
                }
                // The single-call form: `tools: { launchApp: {...} }`.
                Value::Object(_) => self.tool_call(calls, kpath.clone()).into_iter().collect(),
                other => {
                    let msg = "a list of tool calls (`- toolName: {args}`; `[]` for a deliberate no-op)";
                    self.wrong_type(&kpath, msg, other);
                    continue;
                }
            };
            rec.entries.push((key.clone(), calls));
        }
        Some(rec)
    }

    /// The call at `path`, whose text becomes the call's own path (`...tools[2].tapOnPoint`).
    fn tool_call(&mut self, v: &Value, owned: String) -> Option<ToolCall> {
        let path = owned.as_str();
        let map = match v {
            Value::Object(m) => m,
            Value::String(s) if !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)) => {
                let msg =
                    format!("`{path}`: a tool call is a map from the tool name to its arguments; write `{s}: {{}}`");
                self.at_value(path, msg);
                return None;
            }
            other => {
                self.wrong_type(path, "a tool call (`toolName: {args}`)", other);
                return None;
            }
        };
        let mut names = map.keys();
        let Some(tool) = names.next() else {
            self.at_value(
                path,
                format!("`{path}`: an empty tool call; expected `toolName: {{args}}`"),
            );
            return None;
        };
        let extra: Vec<&String> = names.collect();
        if let Some(first) = extra.first() {
            let others = extra.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let msg = format!(
                "`{path}`: a tool call has one key, the tool name, but {others} stands beside `{tool}`; \
                 if it is an argument, indent it under `{tool}:`, or start a new call with `- `"
            );
            self.at_key(&child(path, first), msg);
            return None;
        }
        let apath = extended(owned, tool);
        let args_value = &map[tool];
        let args = match args_value {
            // Moved in by `move_args` once the walk is done; until then, its index in `args_at`.
            Value::Object(_) => Value::from(self.args_at.len()),
            Value::Null => Value::Object(Map::new()),
            other => {
                let msg = format!("the arguments of `{tool}`, a map (`{tool}: {{...}}`; `{{}}` for none)");
                self.wrong_type(&apath, &msg, other);
                return None;
            }
        };
        let apath = self.full_owned(apath);
        let pos = self.doc.position(&apath);
        if args_value.is_object() {
            self.args_at.push(std::ptr::from_ref::<Value>(args_value) as usize);
        }
        Some(ToolCall {
            tool: tool.clone(),
            args,
            pos,
            path: apath,
        })
    }

    /// The original's older list form: `- config: {...}`, `- trailhead: {...}`, `- prompts: [steps]`,
    /// `- tools: [calls]` (recorded calls with no step text of their own), read into the same model.
    /// `trailblaze migrate` rewrites it into the current form.
    fn list_form(&mut self, items: &[Value]) -> (TrailConfig, Option<Step>, Vec<Step>) {
        let mut config = TrailConfig::default();
        let mut trailhead = None;
        let mut steps: Vec<Step> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            self.prefix = format!("[{i}].");
            let key = match item {
                Value::Object(m) if m.len() == 1 => m.keys().next().cloned().unwrap_or_default(),
                other => {
                    let msg = format!("an item of the list form: one of {}", list(&LIST_KEYS));
                    self.wrong_type("", &msg, other);
                    continue;
                }
            };
            let value = &item[key.as_str()];
            match key.as_str() {
                "config" => config = self.config(value),
                "trailhead" => trailhead = self.step(value, "trailhead", 0),
                "prompts" => match value {
                    Value::Array(list) => {
                        for (k, v) in list.iter().enumerate() {
                            let n = steps.len() + 1;
                            steps.extend(self.step(v, &format!("prompts[{k}]"), n));
                        }
                    }
                    other => self.wrong_type("prompts", "a list of steps (`- step: ...`)", other),
                },
                "tools" => {
                    let calls: Vec<ToolCall> = match value {
                        Value::Array(list) => list
                            .iter()
                            .enumerate()
                            .filter_map(|(k, v)| self.tool_call(v, format!("tools[{k}]")))
                            .collect(),
                        other => {
                            self.wrong_type("tools", "a list of tool calls (`- toolName: {args}`)", other);
                            continue;
                        }
                    };
                    let path = self.full("tools");
                    steps.push(Step {
                        number: steps.len() + 1,
                        kind: StepKind::Step,
                        text: LIST_TOOLS_STEP.to_string(),
                        recordable: None,
                        max_retries: None,
                        recording: Some(Recording {
                            entries: vec![(ALL_DEVICES.to_string(), calls)],
                        }),
                        pos: self.doc.position(&path),
                        path,
                    });
                }
                other => {
                    let msg = format!("unknown item `{other}` (expected one of: {})", LIST_KEYS.join(", "));
                    self.at_key(other, msg);
                }
            }
        }
        self.prefix.clear();
        (config, trailhead, steps)
    }
}

/// The keys of the older list form's items.
const LIST_KEYS: [&str; 4] = ["config", "trailhead", "prompts", "tools"];

/// The step text a list form's bare `- tools:` item gets (it has none of its own).
pub const LIST_TOOLS_STEP: &str = "Run the recorded tools";

const RECORDING_HINT: &str = "it belongs under the step's `recording`";

fn top_hint(key: &str) -> Option<String> {
    if STEP_KEYS.contains(&key) || key == ALL_DEVICES || PLATFORMS.contains(&key) {
        Some("it belongs inside a step of `trail` (or the `trailhead`)".into())
    } else if CONFIG_KEYS.contains(&key) {
        Some("it belongs under `config`".into())
    } else if key == "steps" {
        Some("steps are listed under `trail`".into())
    } else {
        None
    }
}

fn step_hint(key: &str) -> Option<String> {
    if key == ALL_DEVICES || PLATFORMS.contains(&key) {
        Some(RECORDING_HINT.into())
    } else if TOP_KEYS.contains(&key) {
        Some("it belongs at the top level of the file".into())
    } else if CONFIG_KEYS.contains(&key) {
        Some("it belongs under `config`".into())
    } else {
        Some("if it is a tool call, it goes under `recording: { tools: [...] }`".into())
    }
}

fn trailhead_hint(key: &str) -> Option<String> {
    match key {
        "verify" => Some("the trailhead is a `step` (the deterministic start), not a `verify`".into()),
        "recordable" | "maxRetries" => Some("only the steps of `trail` take it".into()),
        _ => step_hint(key),
    }
}

/// Whether `key`, which is none of the `known` recording keys, is one all the same: a device
/// classifier, unless it is a near miss of a known key (a platform's variant always is one).
fn is_classifier_key(key: &str, known: &[&str]) -> bool {
    let platform_variant = PLATFORMS
        .iter()
        .any(|p| key.strip_prefix(p).is_some_and(|r| r.starts_with('-')));
    !known.contains(&key) && is_classifier(key) && (platform_variant || nearest(key, known).is_none())
}

/// A device classifier: lowercase words joined by `-` (`desktop`, `android-phone`, `ios-iphone`).
fn is_classifier(key: &str) -> bool {
    !key.is_empty()
        && key.split('-').all(|w| {
            w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

fn recording_hint(_key: &str) -> Option<String> {
    Some(format!(
        "a recording is keyed by `{ALL_DEVICES}` (every device), a platform, or a device key declared in \
         `config.devices`; tool calls go in a list under one of them"
    ))
}
