//! Built-in tools: a Rust type whose fields are the arguments. The schema is derived from the type, the
//! description from its doc comment; decoding denies unknown keys. A built-in either executes or
//! delegates: it expands into other tools, each dispatched by the same rules.

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use trailblaze_host_functions::decode::{self, DecodeError};

use super::ToolFlags;
use super::schema::{Generated, Made, OutputField};
use crate::device::Platform;
use crate::snapshot::Screen;

/// What running a built-in produced.
#[derive(Debug)]
pub enum Outcome {
    /// It executed; this is its structured result.
    Done(Value),
    /// It expands into these calls (`tool`, `args`), run in order, stopping at the first failure.
    Delegate(Vec<(String, Value)>),
    /// Calls its caller chose (`runSequence`): run like [`Outcome::Delegate`], but each must be an
    /// LLM-visible tool, checked before any runs, so a sequence reaches nothing its caller could not
    /// call directly.
    Sequence(Vec<(String, Value)>),
    /// The recorded calls of this trail file (`runTrail`): the dispatcher reads it and runs them
    /// like [`Outcome::Delegate`].
    Trail(std::path::PathBuf),
    /// A JavaScript function body to run with `input` (`script`): the dispatcher hands it to the
    /// session's script engine and runs the calls its returned YAML lists.
    Script { source: String, input: Value },
}

/// Why a built-in tool failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFailure {
    /// The tool's own failure (no node matches, a field refused text): a failed step.
    Failed(String),
    /// The device itself failed (unreachable, lost): an infrastructure error, never a failed step.
    Device(String),
}

impl From<String> for ToolFailure {
    fn from(message: String) -> Self {
        ToolFailure::Failed(message)
    }
}

impl From<&str> for ToolFailure {
    fn from(message: &str) -> Self {
        ToolFailure::Failed(message.to_string())
    }
}

impl From<crate::device::DeviceError> for ToolFailure {
    fn from(e: crate::device::DeviceError) -> Self {
        match e {
            crate::device::DeviceError::Io(_) => ToolFailure::Device(e.to_string()),
            _ => ToolFailure::Failed(e.to_string()),
        }
    }
}

/// What a built-in may touch while it runs: the session's device and snapshot, and the secret values
/// to redact from what it shows. Nothing else of the session.
pub struct ToolCx<'a> {
    pub screen: &'a Screen,
    pub redact: &'a crate::secret::Redaction,
    /// The session's remembered values (`rememberText`, `{{name}}` tokens).
    pub memory: &'a std::cell::RefCell<crate::memory::Memory>,
    /// The running call's deadline: a tool that waits wakes up for it.
    pub deadline: &'a crate::budget::Deadline,
    /// The call's arguments held a secret (where the tool takes one, `BuiltinTool::SECRET_ARGS`):
    /// the tool suggests nothing computed from them (no "nearest on screen" for a secret selector).
    pub secret_input: bool,
    /// The waypoints the session knows (`assertWaypoint`, the snapshot's waypoint line).
    pub waypoints: &'a crate::waypoint::Registry,
    /// The toolsets the session knows, and the ids active now (`setActiveToolSets` changes them).
    pub toolsets: &'a crate::toolset::Toolsets,
    pub active_toolsets: &'a std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// Who answers `assertWithAi` / `rememberWithAi`, if the session has an LLM provider.
    pub judge: Option<&'a dyn crate::judge::Judge>,
    /// Where what the judge's questions cost is added up.
    pub llm_cost: &'a std::cell::Cell<crate::judge::LlmCost>,
    /// The trail's trace, when one is recorded: what a selector matched, time spent waiting.
    pub trace: &'a std::cell::RefCell<Option<crate::trace::Recorder>>,
}

impl ToolCx<'_> {
    /// Sleeps `d`, in slices, ending early with a failure when the call's wall-clock budget runs out
    /// or the call is cancelled.
    pub fn sleep(&self, d: std::time::Duration) -> Result<(), ToolFailure> {
        let started = std::time::Instant::now();
        let out = self.sleep_sliced(d);
        if let Some(t) = self.trace.borrow_mut().as_mut() {
            t.waited(started.elapsed());
        }
        out
    }

    fn sleep_sliced(&self, d: std::time::Duration) -> Result<(), ToolFailure> {
        const SLICE: std::time::Duration = std::time::Duration::from_millis(50);
        let until = std::time::Instant::now() + d;
        loop {
            if self.deadline.expired() {
                return Err("stopped while waiting: the call's time ran out or it was cancelled".into());
            }
            let now = std::time::Instant::now();
            if now >= until {
                return Ok(());
            }
            std::thread::sleep(SLICE.min(until - now));
        }
    }

    /// Whether the trail is traced (what a tool notes for it is worth computing).
    pub fn traced(&self) -> bool {
        self.trace.borrow().is_some()
    }

    /// Notes for the trace the node the running call looked for.
    pub fn note_target(&self, target: crate::trace::Target) {
        if let Some(t) = self.trace.borrow_mut().as_mut() {
            t.note_target(target);
        }
    }

    /// The snapshot as the device shows it now: a fresh capture, for a tool that waits for the
    /// screen to change (a cached one would never change).
    pub fn recapture(&self) -> Result<std::sync::Arc<crate::snapshot::Snapshot>, ToolFailure> {
        self.screen.invalidate();
        Ok(self.screen.snapshot()?)
    }

    /// The centre of the first node `sel` matches in the current snapshot.
    pub fn find(&self, sel: &crate::selector::TrailblazeNodeSelector) -> Result<(i32, i32), ToolFailure> {
        self.locate(sel)?
            .ok_or_else(|| "no node on the screen matches `nodeSelector`".into())
    }

    /// Where to touch the first node `sel` matches (the centre of its part on the screen), or
    /// `None` when none does. A selector with no predicate (it would match nothing, or everything)
    /// is refused, a node with nothing on the screen is an error, and a device failure stays one.
    pub fn locate(&self, sel: &crate::selector::TrailblazeNodeSelector) -> Result<Option<(i32, i32)>, ToolFailure> {
        self.check_selector(sel)?;
        let snap = self.screen.snapshot()?;
        let found = sel.resolve(&snap).into_iter().next();
        if self.traced() {
            self.note_selector(sel, &snap, found);
        }
        let Some(i) = found else {
            return Ok(None);
        };
        snap.tap_point(i).map(Some).ok_or_else(|| off_screen().into())
    }

    /// Notes for the trace what `sel` matched on `snap` (node `found`), or the nodes most like it.
    fn note_selector(
        &self,
        sel: &crate::selector::TrailblazeNodeSelector,
        snap: &crate::snapshot::Snapshot,
        found: Option<usize>,
    ) {
        let candidates = match found {
            // A secret selector suggests nothing, as its error does not.
            None if !self.secret_input => super::by_selector::nearest(self, sel, snap, TRACE_CANDIDATES),
            _ => Vec::new(),
        };
        self.note_found(serde_json::to_value(sel).unwrap_or_default(), snap, found, candidates);
    }

    /// Notes for the trace that `selector` (as the call wrote it) found node `found` of `snap`, or
    /// none, these being the nodes most like it.
    pub(crate) fn note_found(
        &self,
        selector: serde_json::Value,
        snap: &crate::snapshot::Snapshot,
        found: Option<usize>,
        near: Vec<super::by_selector::Near>,
    ) {
        use crate::trace::{Candidate, NodeAt, Target, bounds_of};
        let at = |i: usize| NodeAt {
            r#ref: snap.nodes[i].r#ref.clone(),
            bounds: bounds_of(&snap.nodes[i].bounds),
        };
        let candidates = near
            .into_iter()
            .map(|n| Candidate {
                r#ref: snap.nodes[n.index].r#ref.clone(),
                bounds: bounds_of(&snap.nodes[n.index].bounds),
                why: format!("its texts are {:.0}% like the selector's", n.score * 100.0),
                text: n.label,
                score: (n.score * 1000.0).round() / 1000.0,
            })
            .collect();
        self.note_target(Target {
            selector,
            matched: found.map(at),
            candidates,
        });
    }

    /// Refuses a selector with no predicate (it would match nothing, or everything) or with a pattern
    /// that does not compile, naming its path.
    pub fn check_selector(&self, sel: &crate::selector::TrailblazeNodeSelector) -> Result<(), ToolFailure> {
        if let Some(path) = sel.without_predicate() {
            return Err(format!(
                "`nodeSelector{path}` has no predicate, so it says nothing about which node; name at least one property (e.g. `androidAccessibility.textRegex`)"
            )
            .into());
        }
        if let Some((path, why)) = sel.invalid_pattern() {
            return Err(format!("`nodeSelector{path}`: {why}").into());
        }
        Ok(())
    }
}

/// How many nodes like a selector a trace keeps when it matched none.
const TRACE_CANDIDATES: usize = 5;

/// The error for a node that has no part on the screen to touch.
pub fn off_screen() -> &'static str {
    "the node `nodeSelector` matches has no part on the screen (off screen, or empty bounds); scroll it into view first"
}

pub trait BuiltinTool: DeserializeOwned + JsonSchema + 'static {
    const NAME: &'static str;
    const FLAGS: ToolFlags;
    /// A delegating tool expands into other tools instead of executing; it is never a step itself.
    const DELEGATES: bool = false;
    /// The platforms it works on; empty: every platform. A call on another device is refused
    /// before it runs, naming both platforms.
    const PLATFORMS: &'static [Platform] = &[];
    /// The top-level arguments that may hold a secret (`{{secret:NAME}}`, or a secret's value): those
    /// whose value goes to the device and nowhere else (`inputText.text`, a selector matched
    /// against the screen). A secret in any other argument is refused by the dispatcher, since a
    /// tool that computes on, compares or shows an argument would carry it into a message.
    const SECRET_ARGS: &'static [&'static str] = &[];
    /// The JSON Schema of what the tool resolves to (`results::schema::<T>()`); `None` types it `unknown`.
    fn result_schema() -> Option<Value> {
        None
    }
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure>;
}

type RunFn =
    std::sync::Arc<dyn Fn(&Value, &mut ToolCx<'_>) -> Result<Result<Outcome, ToolFailure>, DecodeError> + Send + Sync>;
type CheckFn = fn(&Value) -> Result<(), DecodeError>;

/// `T`'s input schema, in schemars' keyword order (in tests: checked against schemars' own text).
fn input_schema<T: BuiltinTool>() -> Value {
    let schema = super::schema::of::<T>();
    #[cfg(test)]
    assert_eq!(
        schema.to_string(),
        serde_json::to_value(schemars::schema_for!(T))
            .unwrap_or(Value::Null)
            .to_string(),
        "{}: the schema's keywords are in schemars' order",
        T::NAME
    );
    schema
}

/// A built-in with its type erased: what the catalog stores.
pub struct BuiltinEntry {
    pub name: &'static str,
    pub flags: ToolFlags,
    pub delegates: bool,
    pub platforms: &'static [Platform],
    pub secret_args: &'static [&'static str],
    /// The result schema, made when first read.
    pub result_schema: OutputField,
    /// The input schema and the description (the type's doc comment), made when first read.
    pub schema: Generated,
    check: CheckFn,
    run: RunFn,
}

impl fmt::Debug for BuiltinEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltinEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl BuiltinEntry {
    pub fn of<T: BuiltinTool>() -> Self {
        BuiltinEntry {
            name: T::NAME,
            flags: T::FLAGS,
            delegates: T::DELEGATES,
            platforms: T::PLATFORMS,
            secret_args: T::SECRET_ARGS,
            result_schema: OutputField::Generated(Made::new(T::result_schema)),
            schema: Generated::new(input_schema::<T>),
            check: |v| decode::decode::<T>(v).map(|_| ()),
            run: std::sync::Arc::new(|v, cx| decode::decode::<T>(v).map(|t| t.run(cx))),
        }
    }

    /// `T` run by `run` instead of its own [`BuiltinTool::run`]: a tool the core declares (its
    /// arguments, flags, result) and a part runs (the `web_*` tools and the web device's crate).
    pub fn with_run<T: BuiltinTool>(self, run: fn(T, &mut ToolCx<'_>) -> Result<Outcome, ToolFailure>) -> Self {
        BuiltinEntry {
            run: std::sync::Arc::new(move |v, cx| decode::decode::<T>(v).map(|t| run(t, cx))),
            ..self
        }
    }

    /// Decodes `args` strictly without running anything.
    pub fn check(&self, args: &Value) -> Result<(), DecodeError> {
        (self.check)(args)
    }

    pub fn run(&self, args: &Value, cx: &mut ToolCx<'_>) -> Result<Result<Outcome, ToolFailure>, DecodeError> {
        (self.run)(args, cx)
    }
}
