//! Host functions: Rust helpers that scripted tools call synchronously as `ctx.host.<name>(args)`.
//!
//! A host function is **not a tool**: a call writes no step, keeps the cached snapshot, is never
//! seen by the LLM nor recorded. It may still dispatch tools through [`HostContext::call_tool`].
//!
//! A host function is its arguments struct. Adding one costs about ten lines: the struct (its doc
//! comment is the description scripts and the `.d.ts` see), a result type, and one `call` body.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use trailblaze_host_functions::{HostContext, HostError, HostFunction, HostRegistry};
//!
//! /// The email address of a test account, from the secret `<ACCOUNT>_USERNAME`.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct AccountEmail { account: String }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Email { email: String }
//!
//! impl HostFunction for AccountEmail {
//!     const NAME: &'static str = "accountEmail";
//!     type Output = Email;
//!     fn call(self, cx: &mut dyn HostContext) -> Result<Email, HostError> {
//!         let key = format!("{}_USERNAME", self.account);
//!         let email = cx.env().secrets.get(&key).ok_or_else(|| HostError::new(format!("no `{key}`")))?;
//!         Ok(Email { email: email.to_string() })
//!     }
//! }
//!
//! let mut registry = HostRegistry::builtin();
//! registry.register::<AccountEmail>();
//! assert!(registry.get("accountEmail").is_some());
//! ```
//!
//! [`HostFunctionEntry::invoke`] does the rest: strict decoding (unknown keys denied at every level;
//! errors give a path and an expected type, never a value), panic containment, encoding, and one
//! tracing span plus one log line per call with no arguments or results in it.

pub mod builtin;
pub mod clock;
mod context;
pub mod decode;
mod error;
#[cfg(feature = "quickjs")]
pub mod quickjs;
mod registry;
mod schema;
pub mod secrets;
mod value_de;

pub use context::{HostContext, HostEnv};
pub use decode::DecodeError;
pub use error::{HostCallError, HostError, script_reply};
pub use registry::{DynamicHostFn, HostFunction, HostFunctionEntry, HostRegistry};
pub use secrets::{SecretStore, SecretsError};
