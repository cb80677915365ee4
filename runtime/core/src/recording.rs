//! Recording a live session (MCP, the shell) as a trail: each LLM-level call becomes one step holding
//! the recordable calls it ran — what `tap`/`type` expanded into, never `tap`/`type` themselves; a
//! recordable scripted or composed tool as itself, not what it ran inside — and the whole is written
//! as a `.trail.yaml` in the format the parse gate reads (DESIGN.md, "Trails").
//!
//! The YAML is written here by hand: every string that could read back as anything but that string
//! (`12345678`, `true`, `a: b`, `{{secret:X}}`) is double-quoted, so a replay sees the same types.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::catalog::Catalog;
use crate::state::log::LogEntry;
use crate::yaml::emit::{emit_map_entry, scalar};

/// One step of a recording: what an LLM-level call did.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftStep {
    /// `verify:` rather than `step:` (an assertion).
    pub verify: bool,
    pub text: String,
    /// The recordable calls, placeholders for secrets, in the order they ran.
    pub calls: Vec<(String, Value)>,
    /// The first of them whose arguments read `***` (what it typed cannot be written): the
    /// recording is refused rather than replay the wrong text.
    pub masked: Option<String>,
}

/// A session's recording, step by step.
#[derive(Debug, Clone, Default)]
pub struct SessionRecording {
    steps: Vec<DraftStep>,
    /// The text the last step was given by its caller (`tool --step TEXT`): the next call given the
    /// same text joins that step instead of starting one.
    named: Option<String>,
}

/// The `config:` of a saved trail.
#[derive(Debug, Clone)]
pub struct TrailMeta {
    pub id: String,
    pub target: String,
    pub title: Option<String>,
    /// The recording key the steps' calls are written under: the device's classifier when it has
    /// one (`ios-iphone`, as the original keys an iPhone's recordings), else `tools` (`None`).
    pub key: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("trail name `{0}` is not allowed: use letters, digits, `-` and `_` (no path)")]
    BadName(String),
    #[error("nothing recorded yet: call tools that act on the device (tap, type, ...) first")]
    Empty,
    #[error("{} exists; pass `overwrite: true` to replace it", .0.display())]
    Exists(PathBuf),
    #[error(
        "step {step} ({tool}) typed a secret in a form its `{{{{secret:NAME}}}}` placeholder cannot stand for \
         (it would be saved as `***` and replay the wrong text): type it as its placeholder, then save"
    )]
    Masked { step: usize, tool: String },
    #[error("{} changed since this session saved it: not overwritten (save under another name)", .0.display())]
    Changed(PathBuf),
    #[error("cannot write {}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl SessionRecording {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn steps(&self) -> &[DraftStep] {
        &self.steps
    }

    /// Adds one LLM-level call `tool {args}` given the steps it logged (`steps[0]` is the call itself
    /// at its depth). A call that recorded nothing (a snapshot, a failure before the device) adds no
    /// step.
    pub fn add_call(&mut self, catalog: &Catalog, tool: &str, args: &Value, steps: &[LogEntry]) {
        self.add_call_in(catalog, tool, args, steps, None);
    }

    /// [`SessionRecording::add_call`] under a step of the caller's words (the original's `tool -s`):
    /// calls given the same text in a row form one step, a `verify:` only when all of them assert.
    pub fn add_call_in(&mut self, catalog: &Catalog, tool: &str, args: &Value, steps: &[LogEntry], step: Option<&str>) {
        let kept = recordable_steps(catalog, steps);
        if kept.is_empty() {
            return;
        }
        let masked = kept.iter().find(|s| s.masked).map(|s| s.tool.clone());
        let calls: Vec<(String, Value)> = kept.into_iter().map(|s| (s.tool.clone(), s.args.clone())).collect();
        let step = step.map(one_line).filter(|s| !s.is_empty());
        if let (Some(text), Some(last)) = (&step, self.steps.last_mut())
            && self.named.as_ref() == Some(text)
        {
            last.verify &= tool.starts_with("assert");
            last.masked = last.masked.take().or(masked);
            last.calls.extend(calls);
            return;
        }
        self.named = step.clone();
        if let Some(text) = step {
            self.steps.push(DraftStep {
                verify: tool.starts_with("assert"),
                text,
                calls,
                masked,
            });
            return;
        }
        let reasoning = args
            .get("reasoning")
            .and_then(Value::as_str)
            .map(one_line)
            .filter(|s| !s.is_empty());
        let text = reasoning.unwrap_or_else(|| describe(tool, args, &calls));
        self.steps.push(DraftStep {
            verify: tool.starts_with("assert"),
            text,
            calls,
            masked,
        });
    }

    /// The trail file's text. The first step becomes the trailhead when it is only a launch.
    pub fn to_trail_yaml(&self, meta: &TrailMeta) -> Result<String, RecordingError> {
        if self.steps.is_empty() {
            return Err(RecordingError::Empty);
        }
        if let Some((i, tool)) = self
            .steps
            .iter()
            .enumerate()
            .find_map(|(i, s)| Some((i, s.masked.clone()?)))
        {
            return Err(RecordingError::Masked { step: i + 1, tool });
        }
        let mut out = String::from("# Recorded by trailblaze from a live session.\nconfig:\n");
        out.push_str(&format!("  id: {}\n", scalar(&Value::String(meta.id.clone()))));
        out.push_str(&format!("  target: {}\n", scalar(&Value::String(meta.target.clone()))));
        if let Some(t) = &meta.title {
            out.push_str(&format!("  title: {}\n", scalar(&Value::String(one_line(t)))));
        }
        let mut steps = self.steps.as_slice();
        if let Some(first) = steps.first()
            && first.calls.iter().all(|(t, _)| t == "launchApp")
        {
            out.push_str("trailhead:\n");
            write_step_body(&mut out, first, "  ", "step", meta.key.as_deref());
            steps = &steps[1..];
        }
        if steps.is_empty() {
            out.push_str("trail: []\n");
        } else {
            out.push_str("trail:\n");
            for s in steps {
                let kw = if s.verify { "verify" } else { "step" };
                out.push_str(&format!("  - {kw}: {}\n", scalar(&Value::String(s.text.clone()))));
                write_recording(&mut out, s, "    ", meta.key.as_deref());
            }
        }
        Ok(out)
    }
}

/// One trail step holding `calls` as its recording, as a trail's `trail:` list writes it: what
/// `trailblaze step` and MCP's `blaze` print for pasting. `None` when a call holds `***` (a secret
/// in a form its placeholder cannot stand for), which must not be pasted.
pub fn step_yaml(verify: bool, text: &str, calls: &[(String, Value)]) -> Option<String> {
    if calls.iter().any(|(_, args)| args.to_string().contains("***")) {
        return None;
    }
    let step = DraftStep {
        verify,
        text: one_line(text),
        calls: calls.to_vec(),
        masked: None,
    };
    let kw = if verify { "verify" } else { "step" };
    let mut out = format!("- {kw}: {}\n", scalar(&Value::String(step.text.clone())));
    write_recording(&mut out, &step, "  ", None);
    Some(out)
}

fn write_step_body(out: &mut String, s: &DraftStep, indent: &str, kw: &str, key: Option<&str>) {
    out.push_str(&format!("{indent}{kw}: {}\n", scalar(&Value::String(s.text.clone()))));
    write_recording(out, s, indent, key);
}

fn write_recording(out: &mut String, s: &DraftStep, indent: &str, key: Option<&str>) {
    let key = key.unwrap_or(crate::trail::model::ALL_DEVICES);
    out.push_str(&format!("{indent}recording:\n{indent}  {key}:\n"));
    for (tool, args) in &s.calls {
        let item = format!("{indent}    - ");
        emit_map_entry(out, &item, &format!("{indent}        "), tool, args);
    }
}

/// The recordable calls among one call's steps: a recordable step is kept (if it succeeded) and
/// what ran inside it is not; a step that is not recordable (`tap`, `runSequence`) is looked into.
pub fn recordable_calls(catalog: &Catalog, steps: &[LogEntry]) -> Vec<(String, Value)> {
    recordable_steps(catalog, steps)
        .into_iter()
        .map(|s| (s.tool.clone(), s.args.clone()))
        .collect()
}

fn recordable_steps<'a>(catalog: &Catalog, steps: &'a [LogEntry]) -> Vec<&'a LogEntry> {
    let mut calls = Vec::new();
    let mut inside: Option<u32> = None;
    for s in steps {
        if let Some(d) = inside {
            if s.depth > d {
                continue;
            }
            inside = None;
        }
        let recordable = catalog.tool(&s.tool).is_some_and(|t| t.flags.is_recordable);
        if recordable {
            if s.ok == Some(true) {
                calls.push(s);
            }
            inside = Some(s.depth);
        }
    }
    calls
}

/// A step's text when the caller gave no `reasoning`: what the call did, in words.
fn describe(tool: &str, args: &Value, calls: &[(String, Value)]) -> String {
    let target = calls
        .iter()
        .find_map(|(_, a)| a.get("nodeSelector"))
        .and_then(selector_words);
    let text = args.get("text").and_then(Value::as_str);
    match (tool, target, text) {
        ("tap", Some(t), _) if args.get("longPress") == Some(&Value::Bool(true)) => format!("Long-press {t}"),
        ("tap", Some(t), _) => format!("Tap {t}"),
        ("type", Some(t), Some(x)) => format!("Type '{}' into {t}", one_line(x)),
        ("type", None, Some(x)) => format!("Type '{}'", one_line(x)),
        ("assertVisible", Some(t), _) => format!("{t} is visible"),
        ("pressKey", _, _) => format!(
            "Press {}",
            args.get("keyCode").and_then(Value::as_str).unwrap_or("a key")
        ),
        ("launchApp", _, _) => format!(
            "Launch {}",
            args.get("appId").and_then(Value::as_str).unwrap_or("the app")
        ),
        _ => {
            let shown: Vec<String> = args
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| *k != "reasoning" && !v.is_object() && !v.is_array())
                .map(|(k, v)| format!("{k}: {}", v.as_str().map(one_line).unwrap_or_else(|| v.to_string())))
                .collect();
            if shown.is_empty() {
                tool.to_string()
            } else {
                format!("{tool} ({})", shown.join(", "))
            }
        }
    }
}

/// `'Sign in'`, `the 'Email' field`, ... from a recorded selector's most telling predicate.
fn selector_words(sel: &Value) -> Option<String> {
    let a = sel.get("androidAccessibility")?;
    let get = |k: &str| a.get(k).and_then(Value::as_str).map(one_line);
    get("textRegex")
        .map(|t| format!("'{t}'"))
        .or_else(|| get("contentDescriptionRegex").map(|t| format!("'{t}'")))
        .or_else(|| get("hintTextRegex").map(|t| format!("the '{t}' field")))
        .or_else(|| get("resourceIdRegex").map(|t| format!("`{}`", t.rsplit('/').next().unwrap_or(&t))))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `<trails_dir>/<name>.trail.yaml`, once `name` is a plain file name.
pub fn trail_path(trails_dir: &Path, name: &str) -> Result<PathBuf, RecordingError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        return Err(RecordingError::BadName(name.chars().take(100).collect()));
    }
    Ok(trails_dir.join(format!("{name}.trail.yaml")))
}

/// Writes `text` to `path` atomically: a temp file beside it, then a rename (replacing) or a hard
/// link (which fails if the file exists, so an existing trail is never replaced by accident).
pub fn write_trail(path: &Path, text: &str, overwrite: bool) -> Result<(), RecordingError> {
    let io = |source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    if !overwrite && path.exists() {
        return Err(RecordingError::Exists(path.to_path_buf()));
    }
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}-{n}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if overwrite {
            std::fs::rename(&tmp, path)
        } else {
            std::fs::hard_link(&tmp, path)
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(RecordingError::Exists(path.to_path_buf())),
        other => other.map_err(io),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(seq: u64, depth: u32, tool: &str, args: Value, ok: bool) -> LogEntry {
        LogEntry {
            seq,
            depth,
            tool: tool.into(),
            args,
            ok: Some(ok),
            masked: false,
            error: None,
            millis: 0.0,
        }
    }

    fn catalog() -> Catalog {
        Catalog::builtins_only(Path::new("."))
    }

    fn meta() -> TrailMeta {
        TrailMeta {
            id: "demo/rec".into(),
            target: "demo".into(),
            title: Some("A: title #1".into()),
            key: None,
        }
    }

    /// Strings that a careless writer would turn into numbers, booleans, nulls, maps or comments.
    const TRICKY: [&str; 12] = [
        "12345678",
        "true",
        "null",
        "a: b",
        "x #y",
        "{{secret:DEMO_PASSWORD}}",
        "",
        " lead",
        "-1",
        "multi\nline \"q\" \\",
        "ünï ✓",
        "~",
    ];

    fn parsed_calls(text: &str) -> Vec<(String, Value)> {
        let trail = crate::trail::parse_trail(text, Path::new("rec.trail.yaml")).expect("the parse gate passes");
        trail
            .calls()
            .map(|(_, _, c)| (c.tool.clone(), c.args.clone()))
            .collect()
    }

    #[test]
    fn recording_round_trips_through_the_parse_gate_with_types_kept() {
        let c = catalog();
        let mut rec = SessionRecording::new();
        for (i, t) in TRICKY.iter().enumerate() {
            let steps = [
                step(1, 0, "type", json!({ "text": t }), true),
                step(2, 1, "inputText", json!({ "text": t }), true),
            ];
            rec.add_call(&c, "type", &json!({ "text": t }), &steps);
            let sel = json!({ "androidAccessibility": { "textRegex": t, "index": i, "isChecked": true } });
            rec.add_call(
                &c,
                "tap",
                &json!({"ref": "y1"}),
                &[
                    step(3, 0, "tap", json!({"ref": "y1"}), true),
                    step(4, 1, "tapOnElementBySelector", json!({ "nodeSelector": sel }), true),
                ],
            );
        }
        // Too long for one line: written in block style, nested lists and maps included.
        let long = json!({ "nodeSelector": { "containsDescendants": [
            { "androidAccessibility": { "textRegex": "a".repeat(120), "index": 0 } },
            [[], {}, "x: y", [1, 2.5, null, false]],
            { "below": { "androidAccessibility": { "hintTextRegex": "b".repeat(90) } }, "empty": {} }
        ] } });
        rec.add_call(
            &c,
            "assertVisible",
            &json!({"ref": "y2"}),
            &[
                step(5, 0, "assertVisible", json!({"ref": "y2"}), true),
                step(6, 1, "assertVisibleBySelector", long, true),
            ],
        );
        let text = rec.to_trail_yaml(&meta()).expect("yaml");
        assert!(text.contains("- verify: "), "an assertion is a verify step:\n{text}");
        assert!(
            text.lines().any(|l| l.trim_start().starts_with("containsDescendants:")),
            "block style was used:\n{text}"
        );
        let want: Vec<(String, Value)> = rec.steps().iter().flat_map(|s| s.calls.clone()).collect();
        assert_eq!(want.len(), TRICKY.len() * 2 + 1);
        assert_eq!(
            parsed_calls(&text),
            want,
            "every value reads back with its type:\n{text}"
        );
        let trail = crate::trail::parse_trail(&text, Path::new("rec.trail.yaml")).expect("parses");
        assert_eq!(trail.config.title.as_deref(), Some("A: title #1"));
        assert_eq!(trail.config.id.as_deref(), Some("demo/rec"));
        assert_eq!(trail.steps.len(), TRICKY.len() * 2 + 1);
    }

    #[test]
    fn a_device_with_a_classifier_gets_its_steps_keyed_by_it() {
        let mut rec = SessionRecording::new();
        let launch = json!({ "appId": "com.example.demo" });
        rec.add_call(
            &catalog(),
            "launchApp",
            &launch,
            &[step(1, 0, "launchApp", launch.clone(), true)],
        );
        let tap = json!({ "nodeSelector": { "iosMaestro": { "textRegex": "Sign in" } } });
        rec.add_call(
            &catalog(),
            "tapOnElementBySelector",
            &tap,
            &[step(2, 0, "tapOnElementBySelector", tap.clone(), true)],
        );
        let iphone = TrailMeta {
            key: Some("ios-iphone".into()),
            ..meta()
        };
        let text = rec.to_trail_yaml(&iphone).expect("yaml");
        assert!(text.contains("ios-iphone:") && !text.contains("tools:"), "{text}");
        let trail = crate::trail::parse_trail(&text, Path::new("rec.trail.yaml")).expect("parses");
        let step = &trail.steps[0];
        assert!(step.calls_for("ios", Some("ios-iphone")).is_some());
        assert!(
            step.calls_for("android", None).is_none(),
            "an Android phone has no recording for it"
        );
        // Control: with no classifier the steps are for every device.
        let text = rec.to_trail_yaml(&meta()).expect("yaml");
        assert!(text.contains("tools:") && !text.contains("ios-iphone"), "{text}");
    }

    /// Control: the gate does see quote style, so the round trip above could fail.
    #[test]
    fn control_an_unquoted_digit_string_reads_back_as_a_number() {
        let text = "config:\n  id: x\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { text: 12345678 }\n";
        assert_eq!(parsed_calls(text)[0].1, json!({ "text": 12345678 }));
        assert_eq!(scalar(&json!("12345678")), "\"12345678\"");
    }

    #[test]
    fn only_recordable_calls_are_kept_and_not_what_ran_inside_them() {
        let c = catalog();
        let steps = [
            step(1, 0, "runSequence", json!({}), true),
            step(2, 1, "tap", json!({"ref": "a"}), true),
            step(3, 2, "tapOnElementBySelector", json!({"n": 1}), true),
            step(4, 1, "pressKey", json!({"keyCode": "ENTER"}), true),
            step(5, 2, "inputText", json!({"text": "inside a recordable call"}), true),
            step(6, 1, "inputText", json!({"text": "failed"}), false),
        ];
        let calls = recordable_calls(&c, &steps);
        let names: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["tapOnElementBySelector", "pressKey"]);
        // Control: the nested call is there to be dropped; alone at depth 0 it is kept.
        assert_eq!(recordable_calls(&c, &steps[4..5]).len(), 1);
    }

    #[test]
    fn a_call_that_recorded_nothing_adds_no_step_and_an_empty_recording_is_an_error() {
        let c = catalog();
        let mut rec = SessionRecording::new();
        rec.add_call(&c, "snapshot", &json!({}), &[step(1, 0, "snapshot", json!({}), true)]);
        assert!(matches!(rec.to_trail_yaml(&meta()), Err(RecordingError::Empty)));
        rec.add_call(
            &c,
            "pressKey",
            &json!({"keyCode": "BACK", "reasoning": "Go\nback"}),
            &[step(2, 0, "pressKey", json!({"keyCode": "BACK"}), true)],
        );
        let text = rec.to_trail_yaml(&meta()).expect("yaml");
        assert!(text.contains("- step: Go back\n"), "{text}");
    }

    #[test]
    fn calls_given_the_same_step_text_in_a_row_form_one_step() {
        let c = catalog();
        let mut rec = SessionRecording::new();
        let key = |k: &str| json!({"keyCode": k});
        let press = |rec: &mut SessionRecording, seq, k: &str, step_text: Option<&str>| {
            rec.add_call_in(
                &c,
                "pressKey",
                &key(k),
                &[step(seq, 0, "pressKey", key(k), true)],
                step_text,
            );
        };
        press(&mut rec, 1, "BACK", Some("Go  back\ntwice"));
        press(&mut rec, 2, "BACK", Some("Go back twice"));
        // A call without a text starts a step of its own, and so does the same text after it.
        press(&mut rec, 3, "HOME", None);
        press(&mut rec, 4, "BACK", Some("Go back twice"));
        press(&mut rec, 5, "ENTER", Some("Submit"));
        let steps = rec.steps();
        let shape: Vec<(&str, usize)> = steps.iter().map(|s| (s.text.as_str(), s.calls.len())).collect();
        assert_eq!(
            shape,
            [
                ("Go back twice", 2),
                ("Press HOME", 1),
                ("Go back twice", 1),
                ("Submit", 1)
            ]
        );
        // A step is a `verify:` only while every call in it asserts.
        let mut rec = SessionRecording::new();
        let sel = json!({"text": "Inbox"});
        let tool = "assertVisibleWithText";
        let assert_step = |seq| [step(seq, 0, tool, sel.clone(), true)];
        rec.add_call_in(&c, tool, &sel, &assert_step(1), Some("Inbox shows"));
        assert!(rec.steps()[0].verify);
        rec.add_call_in(&c, tool, &sel, &assert_step(2), Some("Inbox shows"));
        assert!(rec.steps()[0].verify && rec.steps()[0].calls.len() == 2);
        press(&mut rec, 3, "BACK", Some("Inbox shows"));
        assert!(!rec.steps()[0].verify);
    }

    #[test]
    fn a_first_launch_becomes_the_trailhead() {
        let c = catalog();
        let mut rec = SessionRecording::new();
        let launch = json!({"appId": "com.example.demo"});
        rec.add_call(
            &c,
            "launchApp",
            &launch,
            &[step(1, 0, "launchApp", launch.clone(), true)],
        );
        let text = rec.to_trail_yaml(&meta()).expect("yaml");
        let trail = crate::trail::parse_trail(&text, Path::new("t.trail.yaml")).expect("parses");
        assert!(trail.trailhead.is_some() && trail.steps.is_empty(), "{text}");
        // Control: the same launch after another step stays a step.
        rec.add_call(
            &c,
            "launchApp",
            &launch,
            &[step(2, 0, "launchApp", launch.clone(), true)],
        );
        let mut later = SessionRecording::new();
        later.add_call(
            &c,
            "pressKey",
            &json!({"keyCode": "BACK"}),
            &[step(1, 0, "pressKey", json!({"keyCode": "BACK"}), true)],
        );
        later.add_call(
            &c,
            "launchApp",
            &launch,
            &[step(2, 0, "launchApp", launch.clone(), true)],
        );
        let trail = crate::trail::parse_trail(&later.to_trail_yaml(&meta()).expect("yaml"), Path::new("t.trail.yaml"))
            .expect("parses");
        assert!(trail.trailhead.is_none() && trail.steps.len() == 2);
    }

    #[test]
    fn names_are_plain_file_names() {
        for bad in ["", "../x", "a/b", "a.b", "x y"] {
            assert!(
                matches!(trail_path(Path::new("t"), bad), Err(RecordingError::BadName(_))),
                "{bad}"
            );
        }
        assert_eq!(
            trail_path(Path::new("t"), "sign-in_2").expect("ok"),
            Path::new("t/sign-in_2.trail.yaml")
        );
    }

    #[test]
    fn an_existing_trail_is_replaced_only_when_asked() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("trails/x.trail.yaml");
        write_trail(&path, "one\n", false).expect("a new file is written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "one\n");
        assert!(matches!(
            write_trail(&path, "two\n", false),
            Err(RecordingError::Exists(_))
        ));
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "one\n");
        write_trail(&path, "three\n", true).expect("overwrite");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "three\n");
        let left: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
            .expect("ls")
            .flatten()
            .collect();
        assert_eq!(left.len(), 1, "no temp file is left behind");
    }
}
