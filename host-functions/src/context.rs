//! What a host function can reach: the trailmap's environment and the session's one dispatcher.

use std::path::PathBuf;
use std::sync::Arc;

use crate::secrets::SecretStore;

/// Everything a host function may use: the trailmap's environment and the one dispatcher.
pub trait HostContext {
    /// Dispatches a tool through the session's one dispatcher, one level deeper than this host call
    /// (depth cap included). Returns the tool's structured result or its error message.
    fn call_tool(&mut self, name: &str, args: serde_json::Value) -> Result<serde_json::Value, String>;

    fn env(&self) -> &HostEnv;
}

/// Per-trailmap facts host functions need.
#[derive(Debug, Clone)]
pub struct HostEnv {
    pub trailmap_id: String,
    /// The trailmap's folder; fixtures live in `<trailmap_dir>/fixtures/`.
    pub trailmap_dir: PathBuf,
    /// Environment variables `env {name}` may read, declared by the trailmap (`host_env:`).
    pub env_allow: Vec<String>,
    pub secrets: Arc<SecretStore>,
}

impl HostEnv {
    /// The folder `readFixture` reads from.
    pub fn fixtures_dir(&self) -> PathBuf {
        self.trailmap_dir.join("fixtures")
    }
}
