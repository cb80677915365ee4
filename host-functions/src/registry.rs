//! The `HostFunction` trait, one type-erased entry per function, and the registry keyed by name.

use std::any::type_name;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::context::HostContext;
use crate::error::{HostCallError, HostError};
use crate::{decode, schema};

/// A Rust helper scripts call as `ctx.host.<NAME>(args)`. The implementing type is the arguments:
/// derive `Deserialize` (with `#[serde(deny_unknown_fields)]` on it and every nested struct) and
/// `JsonSchema`; its doc comment is the description.
pub trait HostFunction: serde::de::DeserializeOwned + schemars::JsonSchema + 'static {
    /// The name scripts call: `ctx.host.<NAME>(args)`; also the registry key.
    const NAME: &'static str;
    type Output: serde::Serialize + schemars::JsonSchema;
    fn call(self, cx: &mut dyn HostContext) -> Result<Self::Output, HostError>;
}

type Invoker = fn(Value, &mut dyn HostContext) -> Result<Value, HostCallError>;

/// One registered function: its name, schemas derived from its Rust types, and its invoker.
#[derive(Debug, Clone)]
pub struct HostFunctionEntry {
    pub name: &'static str,
    /// The args type's doc comment, as schemars read it.
    pub description: String,
    pub args_schema: schemars::Schema,
    pub result_schema: schemars::Schema,
    invoke: Invoker,
}

impl HostFunctionEntry {
    pub fn of<F: HostFunction>() -> Self {
        let args_schema = schemars::schema_for!(F);
        HostFunctionEntry {
            name: F::NAME,
            description: schema::description(&args_schema, &F::schema_name()),
            args_schema,
            result_schema: schemars::schema_for!(F::Output),
            invoke: invoke_typed::<F>,
        }
    }

    /// Decodes `args` strictly, runs the function and encodes its result. A panic inside becomes
    /// [`HostCallError::Panicked`] and never unwinds out: this may run beneath QuickJS's C frames.
    /// Leaves one `host_call` span and one log line (name, duration, ok/failed), never values.
    pub fn invoke(&self, args: Value, cx: &mut dyn HostContext) -> Result<Value, HostCallError> {
        self.invoke_timed(args, cx).0
    }

    /// [`invoke`](Self::invoke), also returning how long the call took (callers that tally host calls
    /// need it, and reading the clock twice more per call is measurable on the hot path).
    pub fn invoke_timed(&self, args: Value, cx: &mut dyn HostContext) -> (Result<Value, HostCallError>, Duration) {
        let span = tracing::info_span!("host_call", name = %self.name);
        let _entered = span.enter();
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| (self.invoke)(args, cx))).unwrap_or_else(|payload| {
            // The payload may hold a value from the arguments: never look at it. Dropping it can
            // itself panic, so that is contained too.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Err(HostCallError::Panicked {
                name: self.name.to_string(),
            })
        });
        let elapsed = started.elapsed();
        let duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(_) => tracing::info!(name = %self.name, duration_us, outcome = %"ok", "host call"),
            Err(e) => {
                tracing::info!(
                    name = %self.name,
                    duration_us,
                    outcome = %"failed",
                    error = %e.kind(),
                    "host call"
                )
            }
        }
        (outcome, elapsed)
    }

    /// Paths (JSON pointers) of object schemas in the arguments that accept unknown keys: a struct
    /// missing `#[serde(deny_unknown_fields)]`. Catalog tests require this to be empty.
    pub fn open_objects(&self) -> Vec<String> {
        schema::open_objects(&self.args_schema)
    }
}

fn invoke_typed<F: HostFunction>(args: Value, cx: &mut dyn HostContext) -> Result<Value, HostCallError> {
    let name = F::NAME;
    // `ctx.host.now()` sends no arguments; treat that as `{}` so argument-less functions need none.
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    let function: F = decode::decode(&args).map_err(|source| HostCallError::Decode {
        name: name.to_string(),
        source,
    })?;
    // The arguments may hold secrets; free them before the call, which may dispatch tools.
    drop(args);
    let output = function.call(cx).map_err(|HostError(message)| HostCallError::Failed {
        name: name.to_string(),
        message,
    })?;
    // serde's own message could quote part of the result; name the type instead.
    serde_json::to_value(&output).map_err(|_| HostCallError::Encode {
        name: name.to_string(),
        type_name: type_name::<F::Output>(),
    })
}

/// All host functions compiled in, keyed by name (the `class:` a `.host.yaml` names).
#[derive(Debug, Clone, Default)]
pub struct HostRegistry {
    entries: BTreeMap<&'static str, HostFunctionEntry>,
}

impl HostRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in host functions (see [`crate::builtin`]).
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        crate::builtin::register_all(&mut registry);
        registry
    }

    /// Adds `F` under `F::NAME`. A name registered twice keeps the first, with a warning, as
    /// `.host.yaml` declarations do.
    pub fn register<F: HostFunction>(&mut self) -> &mut Self {
        if self.entries.contains_key(F::NAME) {
            tracing::warn!(
                name = F::NAME,
                ignored = type_name::<F>(),
                "host function registered twice; keeping the first"
            );
        } else {
            self.entries.insert(F::NAME, HostFunctionEntry::of::<F>());
        }
        self
    }

    pub fn get(&self, name: &str) -> Option<&HostFunctionEntry> {
        self.entries.get(name)
    }

    /// Names in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.entries.keys().copied()
    }

    /// Entries in name order (for the `.d.ts` and catalog checks).
    pub fn entries(&self) -> impl Iterator<Item = &HostFunctionEntry> {
        self.entries.values()
    }

    /// Looks `name` up and invokes it; an unknown name gets the nearest registered names.
    pub fn call(&self, name: &str, args: Value, cx: &mut dyn HostContext) -> Result<Value, HostCallError> {
        match self.get(name) {
            Some(entry) => entry.invoke(args, cx),
            None => {
                let known: Vec<&str> = self.names().collect();
                Err(HostCallError::unknown(name, &known))
            }
        }
    }
}
