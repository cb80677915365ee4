//! Shared by the integration tests: a fake `HostContext` and test-only host functions.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use trailblaze_host_functions::{HostContext, HostEnv, HostError, HostFunction, HostRegistry, SecretStore};

/// A value that must never show up in an error, a log line or a span.
pub const CANARY: &str = "CANARY-4b9e2d";

/// Stands in for the runtime: records tool calls and answers `echo`.
pub struct FakeContext {
    pub env: HostEnv,
    pub tool_calls: Vec<(String, Value)>,
}

impl FakeContext {
    pub fn new() -> Self {
        Self::with(
            SecretStore::default(),
            PathBuf::from("/nonexistent/trailmaps/demo"),
            &[],
        )
    }

    pub fn with(secrets: SecretStore, trailmap_dir: PathBuf, env_allow: &[&str]) -> Self {
        FakeContext {
            env: HostEnv {
                trailmap_id: "demo".to_string(),
                trailmap_dir,
                env_allow: env_allow.iter().map(|s| s.to_string()).collect(),
                secrets: Arc::new(secrets),
            },
            tool_calls: Vec::new(),
        }
    }
}

impl HostContext for FakeContext {
    fn call_tool(&mut self, name: &str, args: Value) -> Result<Value, String> {
        self.tool_calls.push((name.to_string(), args.clone()));
        match name {
            "echo" => Ok(json!({ "echoed": args })),
            _ => Err(format!("unknown tool `{name}`")),
        }
    }

    fn env(&self) -> &HostEnv {
        &self.env
    }
}

/// Echoes a value three levels down.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nested {
    pub label: String,
    pub outer: Outer,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outer {
    pub middle: Middle,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Middle {
    pub value: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Seen {
    pub seen: String,
}

impl HostFunction for Nested {
    const NAME: &'static str = "nested";
    type Output = Seen;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Seen, HostError> {
        Ok(Seen {
            seen: self.outer.middle.value,
        })
    }
}

/// Panics with its argument in the message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Boom {
    pub secret: String,
}

impl HostFunction for Boom {
    const NAME: &'static str = "boom";
    type Output = Seen;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Seen, HostError> {
        panic!("boom with {}", self.secret)
    }
}

/// Fails with a message of its own.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Refuse {}

impl HostFunction for Refuse {
    const NAME: &'static str = "refuse";
    type Output = Seen;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Seen, HostError> {
        Err(HostError::new("refused: the account is locked"))
    }
}

/// Returns a result whose serialization fails, quoting a value.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unencodable {}

#[derive(JsonSchema)]
pub struct Unserializable {
    pub secret: String,
}

impl Serialize for Unserializable {
    fn serialize<S: Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom(format!("cannot serialize {}", self.secret)))
    }
}

impl HostFunction for Unencodable {
    const NAME: &'static str = "unencodable";
    type Output = Unserializable;
    fn call(self, _cx: &mut dyn HostContext) -> Result<Unserializable, HostError> {
        Ok(Unserializable {
            secret: CANARY.to_string(),
        })
    }
}

/// Dispatches a tool through the context and returns its result.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallsTool {
    pub tool: String,
    pub text: String,
}

impl HostFunction for CallsTool {
    const NAME: &'static str = "callsTool";
    type Output = Value;
    fn call(self, cx: &mut dyn HostContext) -> Result<Value, HostError> {
        cx.call_tool(&self.tool, json!({ "text": self.text }))
            .map_err(HostError)
    }
}

/// The built-ins plus every test function above.
pub fn registry() -> HostRegistry {
    let mut registry = HostRegistry::builtin();
    registry
        .register::<Nested>()
        .register::<Boom>()
        .register::<Refuse>()
        .register::<Unencodable>()
        .register::<CallsTool>();
    registry
}

/// Valid `nested` arguments carrying `value` three levels down.
pub fn nested_args(value: &str) -> Value {
    json!({ "label": "x", "outer": { "middle": { "value": value } } })
}
