//! The LLM-facing tools. The LLM picks elements by ref; recordings hold selectors: `tap` and `type`
//! take a snapshot ref and expand into the recorded tools, carrying the selector the ref resolves to.
//! `type` reuses `tap`'s ref resolution, so the two cannot drift.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};
use crate::device::KeyCode;
use crate::secret::has_placeholder;
use crate::selector::TrailblazeNodeSelector;

const DELEGATING: ToolFlags = ToolFlags {
    surface_to_llm: true,
    is_recordable: false,
    read_only: false,
};

/// Taps an element picked by its ref from the latest `snapshot` (e.g. `y778`). Recorded as a tap on
/// the element's selector, or on its centre when nothing identifies it uniquely.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tap {
    /// The element's ref from the latest snapshot, e.g. `y778`.
    pub r#ref: String,
    /// Hold the press instead of tapping.
    #[serde(default)]
    pub long_press: bool,
    /// Why the caller taps: the recorded tap's `reason`, and the saved step's text.
    #[serde(default)]
    pub reasoning: Option<String>,
}

impl BuiltinTool for Tap {
    fn result_schema() -> Option<Value> {
        super::results::schema::<super::results::Tapped>()
    }
    const NAME: &'static str = "tap";
    const FLAGS: ToolFlags = DELEGATING;
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut calls = tap_expansion(cx, &self.r#ref, self.long_press)?;
        if let (Some(why), Some((tool, args))) = (self.reasoning, calls.first_mut()) {
            // The recorded forms name it as the original does: `reason` on the selector tap.
            let key = if tool == "tapOnElementBySelector" {
                "reason"
            } else {
                "reasoning"
            };
            args[key] = Value::String(why);
        }
        Ok(Outcome::Delegate(calls))
    }
}

/// What a tap on `r` runs: `tapOnElementBySelector` with the node's shortest unique selector, or
/// `tapOnPoint` at its centre when it has none. An unknown ref is an error asking for a fresh snapshot.
pub fn tap_expansion(cx: &ToolCx<'_>, r: &str, long_press: bool) -> Result<Vec<(String, Value)>, ToolFailure> {
    let snap = cx.screen.snapshot()?;
    let i = snap
        .by_ref(r)
        .ok_or_else(|| format!("unknown ref `{r}`: take a fresh snapshot (refs change when the screen does)"))?;
    // A page records the web tools with a web selector (never a ref alone: refs are this session's).
    if snap.nodes[i].web.is_some() && long_press {
        let (x, y) = snap.nodes[i].bounds.center();
        return Ok(vec![(
            "tapOnPoint".to_string(),
            json!({ "x": x, "y": y, "longPress": true }),
        )]);
    }
    if snap.nodes[i].web.is_some() {
        let sel = TrailblazeNodeSelector::for_node(&snap, i).ok_or_else(|| {
            format!("ref `{r}` has nothing that identifies it uniquely on the page (no id, test id, role and name, or CSS path)")
        })?;
        let v = serde_json::to_value(sel).map_err(|e| e.to_string())?;
        return Ok(vec![("web_click".to_string(), json!({ "nodeSelector": v }))]);
    }
    let mut args = match TrailblazeNodeSelector::for_node(&snap, i) {
        Some(sel) => {
            let v = serde_json::to_value(sel).map_err(|e| e.to_string())?;
            ("tapOnElementBySelector".to_string(), json!({ "nodeSelector": v }))
        }
        None => {
            let (x, y) = snap
                .tap_point(i)
                .ok_or_else(|| format!("ref `{r}` has no part on the screen to tap (off screen, or empty bounds)"))?;
            ("tapOnPoint".to_string(), json!({ "x": x, "y": y }))
        }
    };
    if long_press {
        args.1["longPress"] = Value::Bool(true);
    }
    Ok(vec![args])
}

/// Types `text` into the element picked by `ref` (from the latest snapshot), or into the focused field
/// when `ref` is left off. `keyCode` alone presses that key instead. Never combine `text` with
/// `keyCode`: to type and then press a key, send both steps in one `runSequence`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Type {
    /// The text to type; may hold `{{secret:NAME}}`. Not together with `keyCode` (use `runSequence`).
    #[serde(default)]
    pub text: Option<String>,
    /// The field's ref from the latest snapshot; the focused field when absent.
    #[serde(default)]
    pub r#ref: Option<String>,
    /// A key to press instead of typing. Not together with `text` (use `runSequence`).
    #[serde(default)]
    pub key_code: Option<KeyCode>,
}

impl BuiltinTool for Type {
    const NAME: &'static str = "type";
    // The text goes to `inputText` (which takes it), never into a message here.
    const SECRET_ARGS: &'static [&'static str] = &["text"];
    const FLAGS: ToolFlags = DELEGATING;
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        // The shape is refused before anything resolves a secret or touches the device.
        let calls = match (self.text, self.key_code) {
            (Some(text), Some(key)) => return Err(text_and_key_refusal(&text, key, self.r#ref.as_deref()).into()),
            (None, None) => return Err("type needs `text` (or `keyCode` alone, to press a key)".into()),
            (None, Some(key)) => {
                if self.r#ref.is_some() {
                    return Err(
                        "`keyCode` presses a key on the focused field and takes no `ref`; tap the field first".into(),
                    );
                }
                vec![("pressKey".to_string(), json!({ "keyCode": key }))]
            }
            (Some(text), None) => match self.r#ref {
                None => vec![("inputText".to_string(), json!({ "text": text }))],
                Some(r) => {
                    let mut tap = tap_expansion(cx, &r, false)?;
                    match tap.first_mut() {
                        // One recorded step: the selector tap would have recorded, carried by inputText.
                        Some((tool, args)) if tool == "tapOnElementBySelector" => {
                            vec![(
                                "inputText".to_string(),
                                json!({ "text": text, "nodeSelector": args["nodeSelector"].take() }),
                            )]
                        }
                        // On a page: the field filled by its selector, as the original records it.
                        Some((tool, args)) if tool == "web_click" => {
                            vec![(
                                "web_type".to_string(),
                                json!({ "text": text, "nodeSelector": args["nodeSelector"].take() }),
                            )]
                        }
                        _ => {
                            tap.push(("inputText".to_string(), json!({ "text": text })));
                            tap
                        }
                    }
                }
            },
        };
        Ok(Outcome::Delegate(calls))
    }
}

/// The refusal of `type {text, keyCode}`: why, and the literal retry. The text itself is never shown.
pub fn text_and_key_refusal(text: &str, key: KeyCode, r: Option<&str>) -> String {
    let key = serde_json::to_value(key)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let type_args = match r {
        Some(r) => format!("{{text: ..., ref: {r}}}"),
        None => "{text: ...}".to_string(),
    };
    let mut msg = format!(
        "type takes `text` or `keyCode`, never both: a combined call has no order a caller can rely on, so nothing was typed or pressed. \
         Send both steps in one call: runSequence {{steps: [{{tool: type, args: {type_args}}}, {{tool: pressKey, args: {{keyCode: {key}}}}}]}}"
    );
    if has_placeholder(text) {
        msg.push_str(
            ". With a {{secret:...}} placeholder, that one runSequence is safer than two separate calls: nothing is captured between its steps, \
             so no screen showing the typed secret is captured",
        );
    }
    msg
}

/// Runs steps in order, stopping at the first failure. Use it to type and then press a key:
/// `{steps: [{tool: type, args: {text: ...}}, {tool: pressKey, args: {keyCode: ENTER}}]}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunSequence {
    /// The steps, each a tool name and its arguments.
    pub steps: Vec<SequenceStep>,
}

/// One step of a `runSequence`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SequenceStep {
    /// The tool to call.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Map<String, Value>,
}

impl BuiltinTool for RunSequence {
    const NAME: &'static str = "runSequence";
    // Each step is dispatched, and held to its own tool's rule.
    const SECRET_ARGS: &'static [&'static str] = &["steps"];
    const FLAGS: ToolFlags = DELEGATING;
    const DELEGATES: bool = true;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        Ok(Outcome::Sequence(
            self.steps
                .into_iter()
                .map(|s| (s.tool, Value::Object(s.args)))
                .collect(),
        ))
    }
}

/// Checks that the element picked by its ref (from the latest snapshot) is visible. Recorded as a
/// check on the element's selector.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertVisible {
    /// The element's ref from the latest snapshot.
    pub r#ref: String,
}

impl BuiltinTool for AssertVisible {
    fn result_schema() -> Option<Value> {
        super::results::schema::<super::results::Visibility>()
    }
    const NAME: &'static str = "assertVisible";
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: true,
        is_recordable: false,
        read_only: true,
    };
    const DELEGATES: bool = true;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut tap = tap_expansion(cx, &self.r#ref, false)?;
        match tap.first_mut() {
            Some((tool, args)) if tool == "tapOnElementBySelector" => Ok(Outcome::Delegate(vec![(
                "assertVisibleBySelector".to_string(),
                json!({ "nodeSelector": args["nodeSelector"].take() }),
            )])),
            Some((tool, args)) if tool == "web_click" => Ok(Outcome::Delegate(vec![(
                "web_verifyElementVisible".to_string(),
                json!({ "nodeSelector": args["nodeSelector"].take() }),
            )])),
            _ => Err(format!(
                "ref `{}` has nothing that identifies it uniquely, so it cannot be checked by selector",
                self.r#ref
            )
            .into()),
        }
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<Tap>(),
        BuiltinEntry::of::<Type>(),
        BuiltinEntry::of::<RunSequence>(),
        BuiltinEntry::of::<AssertVisible>(),
    ]
}
