//! The LLM's flags, shared by `run` (the agent, and `assertWithAi`/`rememberWithAi` in a replay),
//! `step`/`ask`/`verify` and `mcp`: the provider, model, key, budgets. The workspace's `llm:`
//! settings (`trails/config/trailblaze.yaml`) fill in what neither a flag nor `TRAILBLAZE_LLM_*` gives.

use clap::Args;
use trailblaze::agent::{AgentConfig, ApiKey, ProviderConfig, ProviderKind};
use trailblaze::workspace::{WorkspaceConfig, WorkspaceLlm};

use super::{Failure, Located, usage_help};

#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
#[command(next_help_heading = "The LLM (docs/agent.md)")]
pub struct LlmArgs {
    /// The API's wire format: `openai` (chat completions) or `anthropic` (messages) [default: the
    /// workspace's `llm:` provider, else openai].
    #[arg(long, env = "TRAILBLAZE_LLM_PROVIDER", value_enum, value_name = "P")]
    pub llm_provider: Option<LlmProvider>,
    /// The API's base URL, without the endpoint [default: https://api.openai.com/v1 or
    /// https://api.anthropic.com/v1].
    #[arg(long, env = "TRAILBLAZE_LLM_BASE_URL", value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// The model's name, e.g. `gpt-4.1` or `claude-sonnet-4-5` [default: the workspace's
    /// `llm.defaults.model`].
    #[arg(long, env = "TRAILBLAZE_LLM_MODEL", value_name = "NAME")]
    pub llm_model: Option<String>,
    /// The API key (better: the environment variable, which `ps` does not show). Never printed.
    #[arg(long, env = "TRAILBLAZE_LLM_API_KEY", hide_env_values = true, value_name = "KEY")]
    pub llm_api_key: Option<String>,
    /// Model turns (requests) one step may take before it fails.
    #[arg(long, value_name = "N", default_value_t = trailblaze::agent::DEFAULT_MAX_TURNS,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub agent_max_steps: u32,
    /// Tokens (sent and received) the whole run may spend on the LLM.
    #[arg(long, value_name = "TOKENS", default_value_t = trailblaze::agent::DEFAULT_MAX_RUN_TOKENS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub agent_max_tokens: u64,
    /// Seconds to wait for one LLM reply.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = super::seconds)]
    pub llm_timeout: f64,
    /// Tries of one LLM request in all: 429 and 5xx answers and refused connections are tried
    /// again, with exponential backoff (and `Retry-After`).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub llm_max_tries: u32,
    /// Send the model the screen's picture beside its text: `auto` until the provider refuses one
    /// (then text only), `on` (a refusal fails the step), `off`.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub agent_vision: AgentVision,
}

#[derive(Clone, Copy, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum AgentVision {
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum LlmProvider {
    Openai,
    Anthropic,
}

/// The `llm:` settings of the workspace's `trails/config/trailblaze.yaml`, if it has any.
pub fn workspace_llm(located: &Located) -> Result<Option<WorkspaceLlm>, Failure> {
    let Some(anchor) = &located.anchor else {
        return Ok(None);
    };
    let config = WorkspaceConfig::load(anchor).map_err(|e| {
        Failure::Usage(trailblaze::ProjectError::Load(trailblaze::errors::LoadErrors { errors: vec![e] }).into())
    })?;
    config.llm_settings().map_err(|e| {
        usage_help(
            format!("{}: {e}", anchor.display()),
            "see docs/agent.md, \"Workspace settings\"",
        )
    })
}

impl LlmArgs {
    /// The LLM's config, or `None` when no model is named by a flag, the environment or the workspace.
    pub fn config(&self, workspace: Option<&WorkspaceLlm>) -> Result<Option<AgentConfig>, Failure> {
        let Some(model) = self
            .llm_model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or(workspace.map(|w| w.model.clone()))
        else {
            return Ok(None);
        };
        let kind = match (self.llm_provider, workspace.map(|w| w.wire)) {
            (Some(LlmProvider::Anthropic), _) | (None, Some("anthropic")) => ProviderKind::Anthropic,
            _ => ProviderKind::OpenAi,
        };
        let mut provider = ProviderConfig::new(kind, model);
        let url = self
            .llm_base_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_string)
            .or(workspace.and_then(|w| w.base_url.clone()));
        if let Some(url) = url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(usage_help(
                    "--llm-base-url must start with http:// or https://",
                    "e.g. https://api.openai.com/v1",
                ));
            }
            provider.base_url = url;
        }
        let from_workspace = || {
            workspace
                .and_then(|w| w.key_env.as_deref())
                .and_then(|v| std::env::var(v).ok())
        };
        provider.api_key = self
            .llm_api_key
            .clone()
            .or_else(from_workspace)
            .filter(|k| !k.trim().is_empty())
            .map(ApiKey::new);
        if let Some(n) = workspace.and_then(|w| w.max_output_tokens) {
            provider.max_output_tokens = n;
        }
        provider.http.read_timeout = std::time::Duration::from_secs_f64(self.llm_timeout);
        provider.http.max_tries = self.llm_max_tries;
        let mut config = AgentConfig::new(provider);
        config.max_turns = self.agent_max_steps;
        config.max_run_tokens = self.agent_max_tokens;
        config.vision = match self.agent_vision {
            AgentVision::Auto => trailblaze::agent::Vision::Auto,
            AgentVision::On => trailblaze::agent::Vision::On,
            AgentVision::Off => trailblaze::agent::Vision::Off,
        };
        Ok(Some(config))
    }

    /// The same flags with the key read now (the flag, else the workspace's `key_env` variable): a
    /// session's process is handed them and keeps no key in its environment.
    pub fn with_key_read(&self, workspace: Option<&WorkspaceLlm>) -> LlmArgs {
        let mut read = self.clone();
        read.llm_api_key = self.llm_api_key.clone().or_else(|| {
            workspace
                .and_then(|w| w.key_env.as_deref())
                .and_then(|v| std::env::var(v).ok())
        });
        read
    }

    /// [`LlmArgs::config`] for a command that cannot work without one: a usage error names the settings.
    pub fn required(&self, workspace: Option<&WorkspaceLlm>, what: &str) -> Result<AgentConfig, Failure> {
        self.config(workspace)?.ok_or_else(|| {
            usage_help(
                format!("{what} needs a model"),
                "pass --llm-model NAME or set TRAILBLAZE_LLM_MODEL (or `llm.defaults.model` in trails/config/trailblaze.yaml; see docs/agent.md)",
            )
        })
    }
}
