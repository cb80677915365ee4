//! The `HostFunction` trait, one type-erased entry per function, and the registry keyed by name.

use std::any::type_name;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;

use crate::clock::{self, Ticks};
use crate::context::HostContext;
use crate::decode;
use crate::error::{HostCallError, HostError};
use crate::schema;

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

/// A compiled-in function's invoker on the script engine's own values.
#[cfg(feature = "quickjs")]
type JsInvoker = for<'js> fn(
    &rquickjs::Ctx<'js>,
    rquickjs::Value<'js>,
    &mut dyn HostContext,
) -> Result<rquickjs::Value<'js>, HostCallError>;

/// A host function an embedder supplies at run time (a C callback, a Java object): JSON arguments
/// in, a JSON result or an error message out. It may be called from any session's thread.
pub type DynamicHostFn = std::sync::Arc<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;

#[derive(Clone)]
enum Invoke {
    /// A compiled-in [`HostFunction`]: decoding is its Rust type's, from JSON or (`js`) straight
    /// from the script's values.
    Typed {
        json: Invoker,
        #[cfg(feature = "quickjs")]
        js: JsInvoker,
    },
    /// An embedder's function: the runtime checks the arguments against `args_schema` first.
    Dynamic(DynamicHostFn),
}

impl std::fmt::Debug for Invoke {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Invoke::Typed { .. } => "Typed",
            Invoke::Dynamic(_) => "Dynamic",
        })
    }
}

/// One registered function: its name, schemas derived from its Rust types (or given with it), and
/// its invoker.
#[derive(Debug, Clone)]
pub struct HostFunctionEntry {
    /// Borrowed for a compiled-in function, owned for an embedder's.
    pub name: Cow<'static, str>,
    /// The args type's doc comment, as schemars read it.
    pub description: String,
    pub args_schema: schemars::Schema,
    pub result_schema: schemars::Schema,
    invoke: Invoke,
}

impl HostFunctionEntry {
    pub fn of<F: HostFunction>() -> Self {
        let args_schema = schemars::schema_for!(F);
        HostFunctionEntry {
            name: Cow::Borrowed(F::NAME),
            description: schema::description(&args_schema, &F::schema_name()),
            args_schema,
            result_schema: schemars::schema_for!(F::Output),
            invoke: Invoke::Typed {
                json: invoke_typed::<F>,
                #[cfg(feature = "quickjs")]
                js: invoke_typed_js::<F>,
            },
        }
    }

    /// An embedder's function `name` (an identifier) with JSON Schemas for its arguments (an object
    /// schema; its `description` is the function's) and its result (`{}`: anything).
    pub fn dynamic(name: &str, args_schema: Value, result_schema: Value, f: DynamicHostFn) -> Result<Self, String> {
        let identifier = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.len() <= 64;
        if !identifier {
            return Err("a host function's name must be an identifier of at most 64 characters".into());
        }
        if args_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(format!(
                "host function `{name}`: its argument schema must have \"type\": \"object\""
            ));
        }
        let description = args_schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let schema = |v: Value, what: &str| {
            schemars::Schema::try_from(v)
                .map_err(|_| format!("host function `{name}`: its {what} schema is not a JSON Schema"))
        };
        Ok(HostFunctionEntry {
            args_schema: schema(args_schema, "argument")?,
            result_schema: schema(result_schema, "result")?,
            name: Cow::Owned(name.to_string()),
            description,
            invoke: Invoke::Dynamic(f),
        })
    }

    /// Whether this is an embedder's function, whose arguments the caller checks against
    /// `args_schema` before [`invoke`](Self::invoke).
    pub fn is_dynamic(&self) -> bool {
        matches!(self.invoke, Invoke::Dynamic(_))
    }

    /// Decodes `args` strictly, runs the function and encodes its result. A panic inside becomes
    /// [`HostCallError::Panicked`] and never unwinds out: this may run beneath QuickJS's C frames.
    /// Leaves one `host_call` span and one log line (name, duration, ok/failed), never values.
    pub fn invoke(&self, args: Value, cx: &mut dyn HostContext) -> Result<Value, HostCallError> {
        self.invoke_timed(args, cx).0
    }

    /// [`invoke`](Self::invoke), also returning how long the call took (callers that tally host calls
    /// need it, and reading the clock twice more per call is measurable on the hot path).
    pub fn invoke_timed(&self, args: Value, cx: &mut dyn HostContext) -> (Result<Value, HostCallError>, Ticks) {
        self.timed(|| match &self.invoke {
            Invoke::Typed { json, .. } => json(args, cx),
            Invoke::Dynamic(f) => {
                let args = if args.is_null() {
                    Value::Object(Default::default())
                } else {
                    args
                };
                f(args).map_err(|message| HostCallError::Failed {
                    name: self.name.to_string(),
                    message,
                })
            }
        })
    }

    /// [`invoke_timed`](Self::invoke_timed) on a script's own values: a compiled-in function decodes
    /// its arguments from `args` and builds its result in `ctx`, with no JSON in between. An
    /// embedder's function still takes JSON: `check` (its schema's check) runs on it first.
    #[cfg(feature = "quickjs")]
    pub fn invoke_js<'js>(
        &self,
        ctx: &rquickjs::Ctx<'js>,
        args: rquickjs::Value<'js>,
        cx: &mut dyn HostContext,
        check: &dyn Fn(&Value) -> Option<decode::DecodeError>,
    ) -> (Result<rquickjs::Value<'js>, HostCallError>, Ticks) {
        self.timed(|| match &self.invoke {
            Invoke::Typed { js, .. } => js(ctx, args, cx),
            Invoke::Dynamic(f) => {
                let decoded = if args.is_null() || args.is_undefined() {
                    Ok(Value::Object(Default::default()))
                } else {
                    crate::quickjs::decode_js::<Value>(&args)
                };
                let decode_error = |source| HostCallError::Decode {
                    name: self.name.to_string(),
                    source,
                };
                let args = decoded.map_err(decode_error)?;
                if let Some(source) = check(&args) {
                    return Err(decode_error(source));
                }
                let result = f(args).map_err(|message| HostCallError::Failed {
                    name: self.name.to_string(),
                    message,
                })?;
                crate::quickjs::ser::to_js(ctx, &result).map_err(|_| HostCallError::Encode {
                    name: self.name.to_string(),
                    type_name: "serde_json::Value",
                })
            }
        })
    }

    /// Runs one call under its span, with panics contained, timed, and logged (name, duration,
    /// ok/failed), never values.
    fn timed<T>(&self, run: impl FnOnce() -> Result<T, HostCallError>) -> (Result<T, HostCallError>, Ticks) {
        let span = tracing::info_span!("host_call", name = %self.name);
        let _entered = span.enter();
        let started = clock::now();
        let outcome = catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|payload| {
            // The payload may hold a value from the arguments: never look at it. Dropping it can
            // itself panic, so that is contained too.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Err(HostCallError::Panicked {
                name: self.name.to_string(),
            })
        });
        let took = started.elapsed();
        // Made into time only when an event is written (the fields are read only then).
        let micros = || u64::try_from(took.to_duration().as_micros()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(_) => tracing::info!(name = %self.name, duration_us = micros(), outcome = %"ok", "host call"),
            Err(e) => {
                tracing::info!(
                    name = %self.name,
                    duration_us = micros(),
                    outcome = %"failed",
                    error = %e.kind(),
                    "host call"
                )
            }
        }
        (outcome, took)
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

#[cfg(feature = "quickjs")]
fn invoke_typed_js<'js, F: HostFunction>(
    ctx: &rquickjs::Ctx<'js>,
    args: rquickjs::Value<'js>,
    cx: &mut dyn HostContext,
) -> Result<rquickjs::Value<'js>, HostCallError> {
    let name = F::NAME;
    // `ctx.host.now()` sends no arguments; treat that as `{}` so argument-less functions need none.
    let args = if args.is_null() || args.is_undefined() {
        crate::quickjs::de::empty(ctx).map_err(|e| HostCallError::Failed {
            name: name.to_string(),
            message: e.to_string(),
        })?
    } else {
        args
    };
    // The script's object is the caller's: decoding only reads it, and `args` is dropped here.
    let function: F = crate::quickjs::decode_js(&args).map_err(|source| HostCallError::Decode {
        name: name.to_string(),
        source,
    })?;
    let output = function.call(cx).map_err(|HostError(message)| HostCallError::Failed {
        name: name.to_string(),
        message,
    })?;
    // The serializer's own message could quote part of the result; name the type instead.
    crate::quickjs::ser::to_js(ctx, &output).map_err(|_| HostCallError::Encode {
        name: name.to_string(),
        type_name: type_name::<F::Output>(),
    })
}

/// All host functions compiled in, keyed by name (the `class:` a `.host.yaml` names).
#[derive(Debug, Clone, Default)]
pub struct HostRegistry {
    entries: BTreeMap<Cow<'static, str>, Arc<HostFunctionEntry>>,
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
            self.entries
                .insert(Cow::Borrowed(F::NAME), Arc::new(HostFunctionEntry::of::<F>()));
        }
        self
    }

    /// Adds an entry made at run time ([`HostFunctionEntry::dynamic`]); a name already registered
    /// is an error, not a warning: the embedder can fix it at once.
    pub fn add(&mut self, entry: HostFunctionEntry) -> Result<(), String> {
        if self.entries.contains_key(&entry.name) {
            return Err(format!("a host function named `{}` is already registered", entry.name));
        }
        self.entries.insert(entry.name.clone(), Arc::new(entry));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&HostFunctionEntry> {
        self.entries.get(name).map(|e| &**e)
    }

    /// The entry itself, for a caller that keeps it (a script engine binds each of its host
    /// functions once, instead of looking the name up on every call).
    pub fn shared(&self, name: &str) -> Option<Arc<HostFunctionEntry>> {
        self.entries.get(name).cloned()
    }

    /// Names in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(|k| k.as_ref())
    }

    /// Entries in name order (for the `.d.ts` and catalog checks).
    pub fn entries(&self) -> impl Iterator<Item = &HostFunctionEntry> {
        self.entries.values().map(|e| &**e)
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
