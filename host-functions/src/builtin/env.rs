//! `env {name}`: an environment variable the trailmap declared readable.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secrets::ENV_PREFIX;
use crate::{HostContext, HostError, HostFunction};

/// The value of an environment variable on the host. Only variables the trailmap lists under
/// `host_env:` in its `trailmap.yaml` can be read; `value` is `null` when a listed variable is unset.
/// Secrets (`TRAILBLAZE_SECRET_*`) are never readable this way: use `lookupCredential`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// The variable's exact name, e.g. `API_BASE_URL`.
    pub name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = crate::schema::require_all_properties)]
pub struct EnvValue {
    /// The value, or `null` when the variable is not set.
    pub value: Option<String>,
}

impl HostFunction for Env {
    const NAME: &'static str = "env";
    type Output = EnvValue;

    fn call(self, cx: &mut dyn HostContext) -> Result<EnvValue, HostError> {
        let env = cx.env();
        if self.name.starts_with(ENV_PREFIX) {
            return Err(HostError(format!(
                "environment variable `{}` is a secret and is not readable with `env`; use lookupCredential",
                self.name
            )));
        }
        if !env.env_allow.contains(&self.name) {
            let allowed = if env.env_allow.is_empty() {
                "none".to_string()
            } else {
                env.env_allow.join(", ")
            };
            return Err(HostError(format!(
                "environment variable `{name}` is not readable: declare it in trailmaps/{id}/trailmap.yaml \
                 as `host_env: [{name}]` (readable now: {allowed})",
                name = self.name,
                id = env.trailmap_id,
            )));
        }
        match std::env::var(&self.name) {
            Ok(value) => Ok(EnvValue { value: Some(value) }),
            Err(std::env::VarError::NotPresent) => Ok(EnvValue { value: None }),
            Err(std::env::VarError::NotUnicode(_)) => Err(HostError(format!(
                "environment variable `{}` is set but is not UTF-8",
                self.name
            ))),
        }
    }
}
