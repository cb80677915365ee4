//! What a parsed trail file holds. Every part keeps its position so the type gate and the replay can
//! point back into the file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

use crate::yaml::{Document, Pos, YamlError};

/// The recording key that fits every device.
pub const ALL_DEVICES: &str = "tools";

/// Platforms a recording (or a per-device `skip`) may be keyed by.
pub const PLATFORMS: [&str; 3] = ["android", "ios", "web"];

/// A parsed, structurally valid trail file.
#[derive(Debug, Clone)]
pub struct Trail {
    pub file: PathBuf,
    pub config: TrailConfig,
    /// Step 0: the deterministic start, run before the `trail` steps.
    pub trailhead: Option<Step>,
    /// The `trail` steps, numbered from 1.
    pub steps: Vec<Step>,
    /// The file's text, as read.
    pub text: String,
    /// The parsed file, to position findings anywhere in it: made when first asked for (see
    /// [`Trail::doc`]) when a trail was made without it.
    pub(super) doc: OnceLock<Document>,
}

impl Trail {
    /// The parsed file, to position a finding anywhere in it (see [`Trail::error_in_call`]). Its
    /// value is not the trail's: the calls' arguments may have been moved into the `ToolCall`s.
    pub fn doc(&self) -> &Document {
        self.doc
            .get_or_init(|| crate::yaml::parse_again(&self.text, &self.file))
    }

    /// The trailhead (if any), then the `trail` steps: the order a replay runs them in.
    pub fn all_steps(&self) -> impl Iterator<Item = &Step> {
        self.trailhead.iter().chain(self.steps.iter())
    }

    /// Every recorded call of every step under every recording key, in file order, for the type gate
    /// (which checks all of them, not only the ones a given device would run).
    pub fn calls(&self) -> impl Iterator<Item = (&Step, &str, &ToolCall)> {
        self.all_steps().flat_map(|step| {
            step.recording.iter().flat_map(move |rec| {
                rec.entries
                    .iter()
                    .flat_map(move |(key, calls)| calls.iter().map(move |c| (step, key.as_str(), c)))
            })
        })
    }

    /// An error positioned inside a call's arguments: `arg_path` is relative to the args (`text`,
    /// `nodeSelector.androidAccessibility.textRegex`); an empty path or one that is not in the file
    /// falls back to the nearest enclosing part, at worst the tool name.
    pub fn error_in_call(&self, call: &ToolCall, arg_path: &str, message: impl Into<String>) -> YamlError {
        self.doc().error_at(&call.arg_path(arg_path), message)
    }
}

/// The `config:` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrailConfig {
    pub id: Option<String>,
    /// The trailmap whose surface the trail uses.
    pub target: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub priority: Option<String>,
    /// Device key → driver name, in file order. The keys may key recordings.
    pub devices: Vec<(String, String)>,
    pub skip: Option<Skip>,
    pub tags: Vec<String>,
    /// Free-form context for the agent.
    pub context: Option<String>,
    /// Pre-seeded variables, in file order. Scalars are kept as their text, as Trailblaze does.
    pub memory: Vec<(String, String)>,
    /// Informational only, in file order.
    pub metadata: Vec<(String, String)>,
    /// Declared trail parameters (`{{args.name}}`), in file order.
    pub args: Vec<TrailArg>,
}

impl TrailConfig {
    /// The driver pinned for a device key.
    pub fn driver(&self, device_key: &str) -> Option<&str> {
        lookup(&self.devices, device_key)
    }

    /// Why the trail is skipped on this device, if it is: a plain `skip` applies everywhere; a
    /// per-device map is looked up by device key first, then by platform.
    pub fn skip_reason(&self, platform: &str, device_key: Option<&str>) -> Option<&str> {
        match self.skip.as_ref()? {
            Skip::Always(reason) => Some(reason),
            Skip::PerDevice(map) => device_key
                .and_then(|k| lookup(map, k))
                .or_else(|| lookup(map, platform)),
        }
    }
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// `config.skip`: a reason (the trail is skipped everywhere), or reasons per platform or device key
/// (the newer Trailblaze form). A reason is never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    Always(String),
    PerDevice(Vec<(String, String)>),
}

/// One declared trail parameter. Optional exactly when it has a default (Terraform's rule, as in
/// Trailblaze).
#[derive(Debug, Clone, PartialEq)]
pub struct TrailArg {
    pub name: String,
    pub ty: ArgType,
    pub description: Option<String>,
    pub default: Option<Value>,
    pub pos: Pos,
}

impl TrailArg {
    pub fn required(&self) -> bool {
        self.default.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    String,
    Integer,
    Boolean,
    Array,
    Object,
}

impl ArgType {
    pub const NAMES: [&'static str; 5] = ["string", "integer", "boolean", "array", "object"];

    pub fn from_name(name: &str) -> Option<ArgType> {
        Some(match name {
            "string" => ArgType::String,
            "integer" => ArgType::Integer,
            "boolean" => ArgType::Boolean,
            "array" => ArgType::Array,
            "object" => ArgType::Object,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Boolean => "boolean",
            ArgType::Array => "array",
            ArgType::Object => "object",
        }
    }

    /// Whether `v` is a value of this type (a quoted `'3'` is a string, not an integer).
    pub fn admits(self, v: &Value) -> bool {
        match self {
            ArgType::String => v.is_string(),
            ArgType::Integer => v.is_i64() || v.is_u64(),
            ArgType::Boolean => v.is_boolean(),
            ArgType::Array => v.is_array(),
            ArgType::Object => v.is_object(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// `step:` — something to do.
    Step,
    /// `verify:` — something to check.
    Verify,
}

impl StepKind {
    pub fn keyword(self) -> &'static str {
        match self {
            StepKind::Step => "step",
            StepKind::Verify => "verify",
        }
    }
}

/// The trailhead (number 0) or one `trail` step (numbers 1..).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub number: usize,
    pub kind: StepKind,
    /// What the step does or checks, in words.
    pub text: String,
    /// `recordable: false`: always run by the agent. `None` when not written.
    pub recordable: Option<bool>,
    /// Per-step retry budget override. `None` when not written.
    pub max_retries: Option<u32>,
    pub recording: Option<Recording>,
    /// Where the step starts (the `trailhead` key for the trailhead).
    pub pos: Pos,
    /// Its YAML path: `trailhead` or `trail[i]` (0-based).
    pub path: String,
}

impl Step {
    /// `trailhead` or `step N`, as findings and reports name it.
    pub fn label(&self) -> String {
        if self.number == 0 {
            "trailhead".to_string()
        } else {
            format!("step {}", self.number)
        }
    }

    pub fn is_trailhead(&self) -> bool {
        self.number == 0
    }

    /// The calls this device replays; `None` when the step has nothing recorded for it (the agent
    /// runs it, or it is reported as not recorded). `Some(&[])` is a deliberate no-op.
    pub fn calls_for(&self, platform: &str, device_key: Option<&str>) -> Option<&[ToolCall]> {
        self.recording.as_ref()?.for_device(platform, device_key)
    }
}

/// A step's `recording:` map: key (`tools`, a platform, or a device key) → calls, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    pub entries: Vec<(String, Vec<ToolCall>)>,
}

impl Recording {
    /// The calls for a device: its device key wins over its platform, which wins over `tools`.
    pub fn for_device(&self, platform: &str, device_key: Option<&str>) -> Option<&[ToolCall]> {
        let get = |key: &str| self.entries.iter().find(|(k, _)| k == key).map(|(_, c)| c.as_slice());
        // A classifier of the platform (`android-phone` on an Android device) before `tools`: the
        // original keys recordings by device classifiers, and this host's devices are phones.
        let variant = || {
            self.entries
                .iter()
                .find(|(k, _)| k.strip_prefix(platform).is_some_and(|r| r.starts_with('-')))
                .map(|(_, c)| c.as_slice())
        };
        device_key
            .and_then(get)
            .or_else(|| get(platform))
            .or_else(variant)
            .or_else(|| get(ALL_DEVICES))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }
}

/// One recorded call: `toolName: {args}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub tool: String,
    /// Always a JSON object; scalars keep their YAML quote style (`'123'` is a string).
    pub args: Value,
    /// Where the tool name stands.
    pub pos: Pos,
    /// The YAML path of the args (`trail[0].recording.tools[1].inputText`).
    pub path: String,
}

impl ToolCall {
    /// The YAML path of a part of the args (`text` → `trail[0].recording.tools[1].inputText.text`).
    pub fn arg_path(&self, sub: &str) -> String {
        match sub {
            "" => self.path.clone(),
            _ if sub.starts_with('[') => format!("{}{sub}", self.path),
            _ => format!("{}.{sub}", self.path),
        }
    }
}

/// `{{args.NAME}}`: a trail parameter, replaced before a call is dispatched (see [`Trail::with_args`]).
const ARGS_PREFIX: &str = "args.";

impl Trail {
    /// The steps, trailhead first, with every `{{args.NAME}}` in their texts and in the strings of their
    /// recorded calls replaced by its value: `given` wins over the default `config.args` declares (a
    /// non-string default reads as its JSON text). A placeholder with no value is an error at its
    /// position, each one reported; nothing else (`{{secret:NAME}}`, `{{memory}}`) is touched.
    ///
    /// A step with no `{{` anywhere is handed back as it is, not copied: most steps of most trails.
    pub fn with_args(&self, given: &BTreeMap<String, String>) -> Result<Vec<Cow<'_, Step>>, Vec<YamlError>> {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        for a in &self.config.args {
            if let Some(d) = &a.default {
                values.insert(&a.name, d.as_str().map(str::to_string).unwrap_or_else(|| d.to_string()));
            }
        }
        for (k, v) in given {
            values.insert(k, v.clone());
        }
        let mut errors = Vec::new();
        let mut steps = Vec::new();
        for step in self.all_steps() {
            if !step.has_placeholder() {
                steps.push(Cow::Borrowed(step));
                continue;
            }
            let mut step = step.clone();
            let mut problems = Vec::new();
            step.text = substitute(&step.text, &values, &mut problems);
            let key = format!("{}.{}", step.path, step.kind.keyword());
            errors.extend(problems.into_iter().map(|m| self.doc().error_at(&key, m)));
            if let Some(rec) = step.recording.as_mut() {
                for (_, calls) in &mut rec.entries {
                    for call in calls.iter_mut() {
                        let mut found = Vec::new();
                        substitute_value(&mut call.args, "", &values, &mut found);
                        errors.extend(found.into_iter().map(|(path, m)| self.error_in_call(call, &path, m)));
                    }
                }
            }
            steps.push(Cow::Owned(step));
        }
        if errors.is_empty() { Ok(steps) } else { Err(errors) }
    }
}

impl Step {
    /// Whether `{{` stands in the step's text or in any string of its recorded calls: a placeholder
    /// of some kind may need replacing.
    fn has_placeholder(&self) -> bool {
        fn in_value(v: &Value) -> bool {
            match v {
                Value::String(s) => s.contains("{{"),
                Value::Array(items) => items.iter().any(in_value),
                Value::Object(map) => map.values().any(in_value),
                _ => false,
            }
        }
        self.text.contains("{{")
            || self
                .recording
                .iter()
                .flat_map(|rec| rec.entries.iter())
                .any(|(_, calls)| calls.iter().any(|c| in_value(&c.args)))
    }
}

fn missing_arg(name: &str) -> String {
    format!(
        "`{{{{args.{name}}}}}` has no value: pass it to the run (`--arg {name}=VALUE`) or declare it with a `default` under `config.args`"
    )
}

/// Why `{{args.NAME}}`'s value cannot be filled in: it would be read as a placeholder afterwards. An
/// argument's value is data (a CI variable, a PR title), so it is never expanded again; the value
/// itself is not shown (it may be anything).
fn placeholder_in_arg(name: &str) -> String {
    format!(
        "the value of `{{{{args.{name}}}}}` holds `{{{{` or `${{`, which would be read as a placeholder once filled in; argument values are never expanded, so pass plain text (a secret goes in the trail as `{{{{secret:NAME}}}}`)"
    )
}

/// `text` with each `{{args.NAME}}` that has a value replaced; what cannot be replaced (no value, or
/// a value holding a placeholder opener) goes to `problems` as a message.
fn substitute(text: &str, values: &BTreeMap<&str, String>, problems: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else { break };
        let inner = rest[start + 2..start + len].trim();
        out.push_str(&rest[..start]);
        match inner.strip_prefix(ARGS_PREFIX) {
            Some(name) => match values.get(name) {
                Some(v) if !(v.contains("{{") || v.contains("${")) => out.push_str(v),
                Some(_) => {
                    problems.push(placeholder_in_arg(name));
                    out.push_str(&rest[start..start + len + 2]);
                }
                None => {
                    problems.push(missing_arg(name));
                    out.push_str(&rest[start..start + len + 2]);
                }
            },
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// [`substitute`] over every string of a call's arguments; `missing` gets `(arg path, name)`.
fn substitute_value(v: &mut Value, path: &str, values: &BTreeMap<&str, String>, missing: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) if s.contains("{{") => {
            let mut problems = Vec::new();
            *s = substitute(s, values, &mut problems);
            missing.extend(problems.into_iter().map(|m| (path.to_string(), m)));
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                substitute_value(item, &format!("{path}[{i}]"), values, missing);
            }
        }
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                substitute_value(item, &sub, values, missing);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod args_tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use serde_json::json;

    use crate::trail::parse_trail;

    const TRAIL: &str = "config:\n  args:\n    who: { type: string, default: ana }\n    n: { type: integer, default: 3 }\n    city: string\ntrail:\n  - step: Greet {{args.who}} in {{ args.city }}\n    recording:\n      tools:\n        - inputText: { text: \"{{args.who}} x{{args.n}} {{secret:PIN}} {{memory}}\", list: [\"{{args.city}}\"] }\n";

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn args_are_replaced_in_texts_and_call_strings_and_only_args() {
        let t = parse_trail(TRAIL, Path::new("t.trail.yaml")).expect("parses");
        let steps = t
            .with_args(&given(&[("city", "Lima"), ("who", "Sam")]))
            .expect("all given");
        assert_eq!(
            steps[0].text, "Greet Sam in Lima",
            "a given value wins over the default"
        );
        let calls = steps[0].calls_for("android", None).expect("recorded");
        assert_eq!(
            calls[0].args,
            json!({"text": "Sam x3 {{secret:PIN}} {{memory}}", "list": ["Lima"]})
        );
        // Control: the trail itself keeps its placeholders.
        assert!(t.steps[0].text.contains("{{args.who}}"));
    }

    #[test]
    fn an_arg_with_no_value_is_an_error_at_each_place() {
        let t = parse_trail(TRAIL, Path::new("t.trail.yaml")).expect("parses");
        let errors = t.with_args(&BTreeMap::new()).expect_err("city has no value");
        let lines: Vec<String> = errors.iter().map(|e| e.headline()).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("t.trail.yaml:7:") && lines[0].contains("`{{args.city}}` has no value"));
        assert!(lines[1].starts_with("t.trail.yaml:10:"), "{lines:?}");
    }
}
