//! The one dispatcher. Every way in — trail replay, `ctx.tools`, MCP, `trailblaze tool`, the FFI — calls
//! [`call`]: depth cap, name resolution, strict decoding, delegation, one step per executable call,
//! secrets resolved at the last moment, snapshot invalidation, panics caught.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use rquickjs::Ctx;
use serde_json::Value;
use trailblaze_host_functions::decode::{DecodeError, nearest_names};

use crate::script::engine;
use crate::secret;
use crate::session::SessionCore;
use crate::session::log::Event;
use crate::tool::{Outcome, ToolCx, ToolKind};

/// Why a call failed. Messages never quote argument values.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error("call depth {cap} reached; refusing {name}")]
    Depth { cap: u32, name: String },
    #[error("unknown tool `{name}`{}", suggest(.suggestions))]
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
}

impl CallError {
    /// The tool the error is about.
    pub fn tool(&self) -> &str {
        match self {
            CallError::Depth { name, .. } | CallError::UnknownTool { name, .. } => name,
            CallError::Args { tool, .. }
            | CallError::Failed { tool, .. }
            | CallError::Panicked { tool }
            | CallError::Script { tool, .. } => tool,
        }
    }
}

pub(crate) fn suggest(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!(
            "; did you mean one of: {}?",
            many.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Dispatches one call. `depth` is 0 for a call from outside (a trail, the CLI, MCP) and one more for
/// each script, delegation or host function in between.
pub fn call<'js>(s: &SessionCore, js: &Ctx<'js>, name: &str, args: Value, depth: u32) -> Result<Value, CallError> {
    // Name and depth only: arguments and results may carry secrets.
    let span = tracing::debug_span!("tool_call", tool = name, depth);
    let _enter = span.enter();
    let started = Instant::now();
    let result = call_inner(s, js, name, args, depth);
    tracing::debug!(
        tool = name,
        ok = result.is_ok(),
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "tool call"
    );
    result
}

fn call_inner<'js>(s: &SessionCore, js: &Ctx<'js>, name: &str, args: Value, depth: u32) -> Result<Value, CallError> {
    let cap = s.settings.depth_cap;
    if depth >= cap {
        return Err(CallError::Depth {
            cap,
            name: name.to_string(),
        });
    }
    let Some(tool) = s.catalog.tool(name) else {
        let names = s.catalog.tool_names();
        return Err(CallError::UnknownTool {
            name: name.to_string(),
            suggestions: nearest_names(name, &names, 3),
        });
    };
    let tool = tool.clone();
    match &tool.kind {
        ToolKind::Builtin(entry) => {
            entry.check(&args).map_err(|source| CallError::Args {
                tool: name.to_string(),
                source,
            })?;
            if entry.delegates {
                let outcome = run_builtin(s, name, &args, |a, cx| entry.run(a, cx))?;
                return match outcome {
                    Outcome::Delegate(calls) => run_expansion(s, js, calls, depth),
                    Outcome::Done(v) => Ok(v),
                };
            }
            step(s, name, &args, depth, true, |resolved| {
                let outcome = run_builtin(s, name, resolved, |a, cx| entry.run(a, cx))?;
                let read_only = tool.flags.read_only;
                match outcome {
                    Outcome::Done(v) => Ok((v, read_only)),
                    Outcome::Delegate(_) => Err(CallError::Failed {
                        tool: name.to_string(),
                        message: "an executable tool tried to delegate".into(),
                    }),
                }
            })
        }
        ToolKind::Composed(composed) => {
            let findings = crate::surface::check_value(&tool.input_schema, None, &args);
            if let Some(f) = findings.first() {
                let at = if f.path.is_empty() {
                    String::new()
                } else {
                    format!("`{}`: ", f.path)
                };
                return Err(CallError::Failed {
                    tool: name.to_string(),
                    message: format!("{at}{}", f.message),
                });
            }
            run_expansion(s, js, crate::tool::composed::expand(composed, &args), depth)
        }
        ToolKind::Broken { message, .. } => Err(CallError::Script {
            tool: name.to_string(),
            message: message.clone(),
        }),
        ToolKind::Scripted(script) => step(s, name, &args, depth, false, |args| {
            // Scripts receive placeholders, never resolved secrets: they resolve at the device.
            let out = engine::run_tool(s, js, script, name, args.clone(), depth)?;
            Ok((out.value, tool.flags.read_only || out.read_only))
        }),
    }
}

/// Runs the calls a delegating tool expanded into, in order, stopping at the first failure. The result
/// is the last call's result.
fn run_expansion<'js>(
    s: &SessionCore,
    js: &Ctx<'js>,
    calls: Vec<(String, Value)>,
    depth: u32,
) -> Result<Value, CallError> {
    let mut last = Value::Null;
    for (tool, args) in calls {
        last = call(s, js, &tool, args, depth + 1)?;
    }
    Ok(last)
}

fn run_builtin(
    s: &SessionCore,
    name: &str,
    args: &Value,
    run: impl FnOnce(&Value, &mut ToolCx<'_>) -> Result<Result<Outcome, String>, DecodeError>,
) -> Result<Outcome, CallError> {
    let mut cx = ToolCx { session: s };
    match catch_unwind(AssertUnwindSafe(|| run(args, &mut cx))) {
        Err(_) => Err(CallError::Panicked { tool: name.to_string() }),
        Ok(Err(source)) => Err(CallError::Args {
            tool: name.to_string(),
            source,
        }),
        Ok(Ok(Err(message))) => Err(CallError::Failed {
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
    args: &Value,
    depth: u32,
    resolve_secrets: bool,
    work: impl FnOnce(&Value) -> Result<(Value, bool), CallError>,
) -> Result<Value, CallError> {
    let seq = {
        let mut log = s.log.borrow_mut();
        let seq = log.next_seq();
        log.append(Event::StepStarted {
            seq,
            depth,
            tool: name,
            args,
        });
        seq
    };
    let started = Instant::now();
    let outcome = if resolve_secrets {
        secret::resolve_placeholders(&s.secrets, args)
            .map_err(|message| CallError::Failed {
                tool: name.to_string(),
                message,
            })
            .and_then(|resolved| work(&resolved))
    } else {
        work(args)
    };
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    // A failed call may still have changed the screen, so only a successful read-only call keeps it.
    if !matches!(outcome, Ok((_, true))) {
        s.invalidate_snapshot();
    }
    let mut log = s.log.borrow_mut();
    match &outcome {
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
    outcome.map(|(v, _)| v)
}
