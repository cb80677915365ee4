//! The two error types: what a host function reports, and what a host call fails with.

use crate::decode::{DecodeError, did_you_mean};

/// An error the function itself chose. Its message reaches the script unchanged, so it must not
/// carry a secret value; names (an account, a fixture path) are fine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HostError(pub String);

impl HostError {
    pub fn new(message: impl Into<String>) -> Self {
        HostError(message.into())
    }
}

impl From<String> for HostError {
    fn from(message: String) -> Self {
        HostError(message)
    }
}

impl From<&str> for HostError {
    fn from(message: &str) -> Self {
        HostError(message.to_string())
    }
}

/// What a host call can fail with, as the script sees it: `{"ok":false,"error": <Display>}`.
///
/// No variant holds an argument or result value: decode errors carry a path and an expected type,
/// encode errors the Rust type name, a panic only the function's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostCallError {
    #[error("unknown host function `{name}`{}", did_you_mean(suggestions))]
    UnknownFunction { name: String, suggestions: Vec<String> },
    #[error("host function `{name}`: {source}")]
    Decode { name: String, source: DecodeError },
    #[error("host function `{name}` returned a result that could not be encoded as `{type_name}`")]
    Encode { name: String, type_name: &'static str },
    /// The function's own [`HostError`]; its message passes through unchanged.
    #[error("{message}")]
    Failed { name: String, message: String },
    #[error("host function {name} panicked")]
    Panicked { name: String },
}

impl HostCallError {
    /// An unknown name, with the nearest of `known` as suggestions. The runtime passes the names a
    /// trailmap can see, which may be fewer than the registry holds.
    pub fn unknown<S: AsRef<str>>(name: &str, known: &[S]) -> Self {
        HostCallError::UnknownFunction {
            name: name.to_string(),
            suggestions: crate::decode::nearest_names(name, known, 3),
        }
    }

    /// The host function's name as the script called it.
    pub fn name(&self) -> &str {
        match self {
            HostCallError::UnknownFunction { name, .. }
            | HostCallError::Decode { name, .. }
            | HostCallError::Encode { name, .. }
            | HostCallError::Failed { name, .. }
            | HostCallError::Panicked { name } => name,
        }
    }

    /// A short, value-free label for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            HostCallError::UnknownFunction { .. } => "unknown",
            HostCallError::Decode { .. } => "decode",
            HostCallError::Encode { .. } => "encode",
            HostCallError::Failed { .. } => "failed",
            HostCallError::Panicked { .. } => "panicked",
        }
    }
}

/// The reply a script's `__trailblazeHost` binding (or the subprocess `call_host` action) returns:
/// `{"ok":true,"value":...}` or `{"ok":false,"error":"..."}`. One function keeps both ways in alike.
pub fn script_reply(result: Result<serde_json::Value, HostCallError>) -> serde_json::Value {
    match result {
        Ok(value) => serde_json::json!({ "ok": true, "value": value }),
        Err(error) => serde_json::json!({ "ok": false, "error": error.to_string() }),
    }
}
