//! The one dispatcher. Every way in — trail replay, `ctx.tools`, the subprocess callback, MCP,
//! `trailblaze tool`, the FFI — calls [`call`]: depth cap, name resolution, strict decoding for every
//! kind of tool, delegation, one step per executable call, secrets resolved at the last moment,
//! snapshot invalidation, panics caught. It sees JSON only: a scripted tool runs behind the
//! [`ScriptRuntime`] port, which calls back through [`Back`].

mod edge;
mod expand;
mod fetch;
mod frames;
mod host;
mod secret_gate;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use serde_json::Value;
use trailblaze_host_functions::decode::{DecodeError, nearest_names};

pub use host::call_host;

use crate::script::port::{Callbacks, HostInvoke, ScriptRuntime, ScriptedTool};
use crate::state::SessionCore;
use crate::state::log::Event;
use crate::tool::{BuiltinEntry, Outcome, ToolCx, ToolDescriptor, ToolFailure, ToolKind};

/// Why a call failed. Messages never quote argument values.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error("call depth {cap} reached; refusing {name}")]
    Depth { cap: u32, name: String },
    #[error("unknown tool `{name}`{}", did_you_mean(.suggestions))]
    UnknownTool { name: String, suggestions: Vec<String> },
    #[error("{tool}: {source}")]
    Args { tool: String, source: DecodeError },
    #[error("{tool}: {message}")]
    Failed { tool: String, message: String },
    #[error("tool {tool} panicked")]
    Panicked { tool: String },
    /// A scripted tool failed: thrown error, syntax error, time, memory or stack limit.
    #[error("{tool}: {message}")]
    Script { tool: String, message: String },
    /// The tool is for other platforms than the session's device (`web_click` on Android).
    #[error("{tool} is a tool for {wants}; this session's device is {device}")]
    Platform {
        tool: String,
        wants: String,
        device: String,
    },
    /// The device itself failed (unreachable, lost): an infrastructure error, not a failed step.
    #[error("{tool}: the device failed: {message}")]
    Device { tool: String, message: String },
}

impl CallError {
    /// The tool the error is about.
    pub fn tool(&self) -> &str {
        match self {
            CallError::Depth { name, .. } | CallError::UnknownTool { name, .. } => name,
            CallError::Args { tool, .. }
            | CallError::Failed { tool, .. }
            | CallError::Panicked { tool }
            | CallError::Script { tool, .. }
            | CallError::Platform { tool, .. }
            | CallError::Device { tool, .. } => tool,
        }
    }

    /// The same error with every secret value in its texts replaced by `***`.
    pub fn redacted(self, redaction: &crate::secret::Redaction) -> CallError {
        let r = |m: String| redaction.text(&m).into_owned();
        match self {
            CallError::Failed { tool, message } => CallError::Failed {
                tool,
                message: r(message),
            },
            CallError::Script { tool, message } => CallError::Script {
                tool,
                message: r(message),
            },
            CallError::Device { tool, message } => CallError::Device {
                tool,
                message: r(message),
            },
            other => other,
        }
    }

    /// Whether the device failed rather than the call (a run reports it as an error, exit 2).
    pub fn is_device_failure(&self) -> bool {
        matches!(self, CallError::Device { .. })
    }
}

pub use crate::tool::did_you_mean;

/// The dispatcher as a script runtime calls it back: the same session, the same runtime in effect,
/// the same depth stack.
pub struct Back<'a> {
    pub core: &'a SessionCore,
    pub runtime: &'a dyn ScriptRuntime,
}

impl Callbacks for Back<'_> {
    fn call_tool(&self, name: &str, args: Value) -> Result<Value, String> {
        call(self.core, self.runtime, name, args).map_err(|e| e.to_string())
    }

    fn call_host(&self, name: &str, args: Value) -> Result<Value, String> {
        call_host(self.core, self.runtime, name, args)
    }

    fn call_host_in_place(
        &self,
        name: &str,
        bound: Option<&trailblaze_host_functions::HostFunctionEntry>,
        invoke: &mut HostInvoke<'_>,
    ) -> Result<(), String> {
        host::call_host_with(self.core, self.runtime, name, bound, invoke)
    }

    fn console(&self, tool: Option<&str>, level: &str, text: &str) {
        self.core.console(tool, level, text);
    }

    fn fetch(&self, request: Value) -> Result<Value, String> {
        fetch::fetch(self.core, request)
    }
}

/// Dispatches one call at the session's current depth (0 from outside; one more for each script,
/// delegation or host function in between, counted by the session's depth stack).
pub fn call(s: &SessionCore, rt: &dyn ScriptRuntime, name: &str, args: Value) -> Result<Value, CallError> {
    // Name and depth only: arguments and results may carry secrets.
    let depth = s.depth();
    let span = tracing::debug_span!("tool_call", tool = name, depth);
    let _enter = span.enter();
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| call_inner(s, rt, name, args)))
        .unwrap_or_else(|_| Err(CallError::Panicked { tool: name.to_string() }));
    tracing::debug!(
        tool = name,
        ok = result.is_ok(),
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "tool call"
    );
    result
}

fn call_inner(s: &SessionCore, rt: &dyn ScriptRuntime, name: &str, args: Value) -> Result<Value, CallError> {
    // A loop of tool calls spends its time here, not in JS where the interrupt handler looks: every
    // call past the deadline (or after a cancel, or after the top-level call returned) is refused.
    if s.deadline.expired()
        && let Some(message) = s.deadline.stop_message(&s.settings.limits)
    {
        return Err(CallError::Failed {
            tool: name.to_string(),
            message,
        });
    }
    let guard = s
        .enter_call(name)
        .map_err(|(cap, name)| CallError::Depth { cap, name })?;
    let depth = guard.depth();
    if depth == 0 {
        s.begin_top_level();
    }
    let Some(tool) = s.catalog.tool(name) else {
        let names = s.catalog.tool_names();
        return Err(CallError::UnknownTool {
            name: name.to_string(),
            suggestions: nearest_names(name, &names, 3),
        });
    };
    let tool = tool.clone();
    platform_gate(s, &tool)?;
    validate(&tool, &args).map_err(|source| CallError::Args {
        tool: name.to_string(),
        source,
    })?;
    match s.catalog.edge(name) {
        None => run_tool(s, rt, name, &tool, args, depth),
        Some(edge) => edge::along(s, rt, name, edge, || run_tool(s, rt, name, &tool, args, depth)),
    }
}

/// Runs a tool whose name, platform and arguments passed the gates.
fn run_tool(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    tool: &ToolDescriptor,
    args: Value,
    depth: u32,
) -> Result<Value, CallError> {
    match &tool.kind {
        ToolKind::Builtin(entry) => run_builtin_tool(s, rt, name, tool, entry, args, depth),
        ToolKind::Composed(composed) => run_expansion(s, rt, crate::tool::composed::expand(composed, &args)),
        // An embedder's device that says it is a browser still has no driver for these here.
        ToolKind::Foreign(p) => Err(CallError::Failed {
            tool: name.to_string(),
            message: format!("this host has no {p} driver to run it"),
        }),
        ToolKind::Broken { message, .. } => Err(CallError::Script {
            tool: name.to_string(),
            message: message.clone(),
        }),
        ToolKind::Scripted(script) => run_scripted(s, rt, name, tool, script, args, depth),
    }
}

/// Runs a built-in tool: the calls it expands into when it delegates, else one step.
fn run_builtin_tool(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    tool: &ToolDescriptor,
    entry: &BuiltinEntry,
    args: Value,
    depth: u32,
) -> Result<Value, CallError> {
    // A secret where the tool would compute on it is refused before it is resolved.
    if let Some(path) = secret_gate::secret_outside(&args, entry.secret_args, &s.redact) {
        return Err(CallError::Failed {
            tool: name.to_string(),
            message: secret_gate::refusal(name, &path, entry.secret_args),
        });
    }
    let secret_input = secret_gate::holds_secret(&args, &s.redact);
    if entry.delegates {
        return run_delegating(s, rt, name, entry, &args);
    }
    step(s, name, args, depth, true, |resolved| {
        // What memory tokens put in is held to the same rule (a value read off the screen).
        if let Some(path) = secret_gate::secret_outside(resolved, entry.secret_args, &s.redact) {
            return Err(CallError::Failed {
                tool: name.to_string(),
                message: secret_gate::refusal(name, &path, entry.secret_args),
            });
        }
        let outcome = run_builtin(s, name, resolved, |a, cx| {
            cx.secret_input = secret_input;
            entry.run(a, cx)
        })?;
        match outcome {
            Outcome::Done(v) => Ok((v, tool.flags.read_only)),
            Outcome::Delegate(_) | Outcome::Sequence(_) | Outcome::Trail(_) | Outcome::Script { .. } => {
                Err(CallError::Failed {
                    tool: name.to_string(),
                    message: "an executable tool tried to delegate".into(),
                })
            }
        }
    })
}

/// Runs a delegating built-in, then the calls it expanded into.
fn run_delegating(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    entry: &BuiltinEntry,
    args: &Value,
) -> Result<Value, CallError> {
    // An expansion's error may name what it was given: redacted like a step's.
    let outcome = run_builtin(s, name, args, |a, cx| entry.run(a, cx)).map_err(|e| e.redacted(&s.redact))?;
    match outcome {
        Outcome::Delegate(calls) => run_expansion(s, rt, calls),
        Outcome::Sequence(calls) => {
            llm_visible_only(s, name, &calls)?;
            run_expansion(s, rt, calls)
        }
        Outcome::Trail(path) => run_expansion(s, rt, expand::trail_calls(s, name, &path)?),
        Outcome::Script { source, input } => {
            let calls = expand::script_calls(s, rt, name, &source, input)?;
            run_expansion(s, rt, calls)
        }
        Outcome::Done(v) => Ok(v),
    }
}

/// Runs a scripted tool as one step, in its own time budget when it has one and is the top-level call.
fn run_scripted(
    s: &SessionCore,
    rt: &dyn ScriptRuntime,
    name: &str,
    tool: &ToolDescriptor,
    script: &ScriptedTool,
    args: Value,
    depth: u32,
) -> Result<Value, CallError> {
    step(s, name, args, depth, false, |args| {
        // A tool's own budget (`timeoutMs` in its tool.yaml) replaces the session's when it is
        // the top-level call; called from another tool it runs in its caller's budget.
        let own = script.timeout.filter(|_| depth == 0);
        if let Some(timeout) = own {
            s.deadline.begin(&crate::budget::Limits {
                timeout,
                ..s.settings.limits.clone()
            });
        }
        // Scripts receive placeholders, never resolved secrets: they resolve at the device.
        let back = Back { core: s, runtime: rt };
        let out = s
            .as_script(name, || rt.run_tool(&back, script, name, args))
            .map_err(|message| CallError::Script {
                tool: name.to_string(),
                message: match own {
                    // The runtimes word a timeout with the session's limit; this call had its own.
                    Some(t) if s.deadline.stopped() == Some(crate::budget::Stop::TimedOut) => {
                        format!("exceeded its time limit of {} ms (timeoutMs)", t.as_millis())
                    }
                    _ => message,
                },
            })?;
        Ok((out.value, tool.flags.read_only || out.read_only))
    })
}

/// A tool's arguments as its step records them when one of them is a secret by its meaning
/// (`web_fillSecret`'s `value`): a literal becomes `***`; a `{{secret:NAME}}` placeholder stays, so
/// a recording replays it.
pub(crate) fn secret_arguments_masked(name: &str, args: &Value) -> Option<Value> {
    if name != "web_fillSecret" {
        return None;
    }
    let value = args.get("value")?.as_str()?;
    let placeholder_only = value.starts_with("{{secret:") && value.ends_with("}}") && value.matches("{{").count() == 1;
    if placeholder_only {
        return None;
    }
    let mut masked = args.clone();
    masked["value"] = Value::String("***".into());
    Some(masked)
}

/// Refuses a tool made for other platforms than the session's device, before its arguments are
/// read: the error names both, never "unknown tool".
fn platform_gate(s: &SessionCore, tool: &ToolDescriptor) -> Result<(), CallError> {
    let device = s.screen.platform();
    if tool.runs_on(device) {
        return Ok(());
    }
    Err(CallError::Platform {
        tool: tool.name.clone(),
        wants: tool.platforms().join(" or "),
        device: device.as_str().to_string(),
    })
}

/// Calls one top-level call may expand into through delegating and composed tools.
pub const MAX_EXPANDED: u64 = 10_000;

/// Strict arguments for every kind of tool, before anything runs: a built-in decodes into its Rust
/// type; a scripted or composed tool is held to the input schema its analyzer or `parameters:` gave.
/// Either way an error reads the same: the path, the expected type, never the value.
pub fn validate(tool: &ToolDescriptor, args: &Value) -> Result<(), DecodeError> {
    match &tool.kind {
        ToolKind::Builtin(entry) => entry.check(args),
        ToolKind::Broken { .. } => Ok(()),
        ToolKind::Scripted(_) | ToolKind::Composed(_) | ToolKind::Foreign(_) => {
            if !args.is_object() {
                return Err(DecodeError {
                    path: String::new(),
                    kind: trailblaze_host_functions::decode::DecodeErrorKind::WrongType {
                        expected: "an object".into(),
                        found: crate::surface::value_check::kind_of(args),
                    },
                });
            }
            match crate::surface::check_value(&tool.input_schema, None, args).first() {
                Some(f) => Err(f.to_decode_error()),
                None => Ok(()),
            }
        }
    }
}

/// Refuses a sequence that names a tool its caller could not call directly (hidden from the LLM, or
/// unknown), before any of it runs.
fn llm_visible_only(s: &SessionCore, name: &str, calls: &[(String, Value)]) -> Result<(), CallError> {
    for (i, (tool, _)) in calls.iter().enumerate() {
        if let Err(e) = s.catalog.llm_tool(tool) {
            return Err(CallError::Failed {
                tool: name.to_string(),
                message: format!("`steps[{i}].tool`: {e}"),
            });
        }
    }
    Ok(())
}

/// Runs the calls a delegating tool expanded into, in order, stopping at the first failure. The result
/// is the last call's result.
fn run_expansion(s: &SessionCore, rt: &dyn ScriptRuntime, calls: Vec<(String, Value)>) -> Result<Value, CallError> {
    let mut last = Value::Null;
    for (tool, args) in calls {
        // Composed tools fan out (each call may expand again): a budget holds here, and the deadline
        // at each call's entry.
        let n = s.expanded.get() + 1;
        s.expanded.set(n);
        if n > MAX_EXPANDED {
            return Err(CallError::Failed {
                tool,
                message: format!(
                    "the call expanded into more than {MAX_EXPANDED} calls (a composed tool that fans out?); refusing the rest"
                ),
            });
        }

        last = call(s, rt, &tool, args)?;
    }
    Ok(last)
}

fn run_builtin(
    s: &SessionCore,
    name: &str,
    args: &Value,
    run: impl FnOnce(&Value, &mut ToolCx<'_>) -> Result<Result<Outcome, ToolFailure>, DecodeError>,
) -> Result<Outcome, CallError> {
    let mut cx = s.tool_cx();
    match catch_unwind(AssertUnwindSafe(|| run(args, &mut cx))) {
        Err(_) => Err(CallError::Panicked { tool: name.to_string() }),
        Ok(Err(source)) => Err(CallError::Args {
            tool: name.to_string(),
            source,
        }),
        Ok(Ok(Err(ToolFailure::Failed(message)))) => Err(CallError::Failed {
            tool: name.to_string(),
            message,
        }),
        Ok(Ok(Err(ToolFailure::Device(message)))) => Err(CallError::Device {
            tool: name.to_string(),
            message,
        }),
        Ok(Ok(Ok(outcome))) => Ok(outcome),
    }
}

/// One executable call as a logged step: the step (with placeholders) first, then the secrets resolved,
/// then the work, then the snapshot invalidated unless the tool was read-only, then the outcome.
fn step(
    s: &SessionCore,
    name: &str,
    args: Value,
    depth: u32,
    resolve_secrets: bool,
    work: impl FnOnce(&Value) -> Result<(Value, bool), CallError>,
) -> Result<Value, CallError> {
    let (seq, logged) = log_step_started(s, name, &args, depth);
    let given = args;
    let args = &given;
    let traced = s.trace.borrow().is_some();
    if traced {
        trace_started(s, seq, depth, name, logged.as_ref().unwrap_or(args), !resolve_secrets);
    }
    let started = Instant::now();
    let outcome = if resolve_secrets {
        work_resolved(s, name, args, work)
    } else {
        work(args)
    };
    // A device or tool may echo what it was given (`unknown app id ...`): after resolution that is
    // the secret itself, so the error leaves here already redacted.
    // Results likewise: no reply of the dispatcher (to a script, a trail, MCP, the FFI) carries a
    // secret value, whoever computed it.
    let outcome = outcome
        .map(|(mut v, read_only)| {
            s.redact.value(&mut v);
            (v, read_only)
        })
        .map_err(|e| e.redacted(&s.redact));
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    // A failed call may still have changed the screen, so only a successful read-only call keeps it.
    if !matches!(outcome, Ok((_, true))) {
        s.screen.invalidate();
    }
    if traced {
        trace_finished(s, seq, &outcome, millis);
    }
    log_step_finished(s, seq, name, logged.unwrap_or(given), &outcome, millis);
    outcome.map(|(v, _)| v)
}

/// A traced call began: the screen as it found it, then its record.
fn trace_started(s: &SessionCore, seq: u64, depth: u32, name: &str, args: &Value, scripted: bool) {
    let before = frames::capture_frame(s);
    let busy = s.screen.busy();
    if let Some(t) = s.trace.borrow_mut().as_mut() {
        t.call_started(seq, depth, name, args.clone(), scripted, before, busy);
    }
}

/// A traced call ended: the screen as it left it (captured only if the call may have changed it).
fn trace_finished(s: &SessionCore, seq: u64, outcome: &Result<(Value, bool), CallError>, millis: f64) {
    let busy = s.screen.busy();
    let error = outcome.as_ref().err().map(|e| e.to_string());
    let result = match outcome {
        Ok((v, _)) => Ok(v),
        Err(_) => Err(error.as_deref().unwrap_or_default()),
    };
    let index = s
        .trace
        .borrow_mut()
        .as_mut()
        .and_then(|t| t.call_finished(seq, result, millis, busy));
    // The screen it left: captured only when the call may have changed it (its snapshot went).
    let after = frames::capture_frame(s);
    if let (Some(t), Some(index)) = (s.trace.borrow_mut().as_mut(), index) {
        t.left(index, after);
    }
}

/// Logs the start of a step; returns its sequence number and the arguments as logged when they
/// differ from `args` (placeholders put back, a secret masked).
fn log_step_started(s: &SessionCore, name: &str, args: &Value, depth: u32) -> (u64, Option<Value>) {
    // A secret's value typed literally is logged (and so recorded) as its placeholder: a
    // recording replays the same text, where `***` would type the wrong one.
    let recorded = s.placeholders.recorded(args);
    let masked = secret_arguments_masked(name, recorded.as_ref().unwrap_or(args));
    let mut log = s.log.borrow_mut();
    let seq = log.next_seq();
    log.append(Event::StepStarted {
        seq,
        depth,
        tool: name,
        args: masked.as_ref().or(recorded.as_ref()).unwrap_or(args),
        masked: masked.is_some(),
    });
    // What was logged, kept for the step's record at its end (not copied now).
    (seq, masked.or(recorded))
}

/// Runs `work` on `args` with memory tokens and secrets resolved, the deadline paused meanwhile.
fn work_resolved(
    s: &SessionCore,
    name: &str,
    args: &Value,
    work: impl FnOnce(&Value) -> Result<(Value, bool), CallError>,
) -> Result<(Value, bool), CallError> {
    // A built-in works the device: its time counts against the wall clock, not the script's.
    s.deadline.pause();
    // Memory tokens (`{{total}}`) and secrets in one pass at the last moment, so the step keeps
    // the placeholders, a recording replays with its own run's values, and nothing a
    // placeholder put in (text off the screen) is expanded again.
    let expanded = crate::placeholder::expand(args, &s.memory.borrow(), s.secrets());
    let outcome = expanded
        .map_err(|message| CallError::Failed {
            tool: name.to_string(),
            message,
        })
        .and_then(|resolved| work(resolved.as_ref().unwrap_or(args)));
    s.deadline.resume();
    outcome
}

/// Logs the end of step `seq`, handing the log the arguments it recorded.
fn log_step_finished(
    s: &SessionCore,
    seq: u64,
    name: &str,
    logged: Value,
    outcome: &Result<(Value, bool), CallError>,
    millis: f64,
) {
    let mut log = s.log.borrow_mut();
    log.give_args(seq, logged);
    match outcome {
        Ok((value, _)) => log.append(Event::StepFinished {
            seq,
            tool: name,
            ok: true,
            result: Some(value),
            error: None,
            millis,
        }),
        Err(e) => {
            let msg = e.to_string();
            log.append(Event::StepFinished {
                seq,
                tool: name,
                ok: false,
                result: None,
                error: Some(&msg),
                millis,
            })
        }
    }
}

#[cfg(test)]
mod secret_argument_tests {
    use serde_json::json;

    use super::secret_arguments_masked;

    #[test]
    fn a_literal_fill_secret_value_is_masked_and_a_placeholder_kept() {
        let literal = secret_arguments_masked("web_fillSecret", &json!({ "ref": "css=#pw", "value": "hunter2" }));
        assert_eq!(literal, Some(json!({ "ref": "css=#pw", "value": "***" })));
        // A placeholder replays: it stays. Another tool's arguments are its own.
        assert_eq!(
            secret_arguments_masked("web_fillSecret", &json!({ "ref": "x", "value": "{{secret:PW}}" })),
            None
        );
        assert_eq!(secret_arguments_masked("web_type", &json!({ "text": "hunter2" })), None);
        // Text around a placeholder is a literal too.
        let mixed = secret_arguments_masked("web_fillSecret", &json!({ "ref": "x", "value": "a{{secret:PW}}" }));
        assert_eq!(mixed.map(|v| v["value"].clone()), Some(json!("***")));
    }
}
