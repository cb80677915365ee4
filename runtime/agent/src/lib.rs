//! The agent: a trail step with no recording (and, with self-heal, a recorded step that fails) is run
//! by an LLM through the LLM-visible tools — the screen's text to the model, its tool calls to the one
//! dispatcher, their results back — until it reports the objective done or failed, within a turn
//! budget per objective and a token budget per run. What it did is recorded as the step's recording
//! (`recording::SessionRecording`, the same recorder live sessions use).
//!
//! - [`provider`]: the conversation, and the [`Provider`] port; [`openai`] and [`anthropic`] speak
//!   the two wire formats over [`http`] (blocking, timeouts, retries);
//! - [`minimized`]: the minimized tool schemas the model is sent;
//! - `objective`: the loop for one step; `prompt`: what the model is told;
//! - [`vision`]: the screen's picture beside its text, for models that take images.
//!
//! The model never sees a secret's value: it is told the placeholders' names, the screen and every
//! result show `***`, and whatever it says is scrubbed before it is sent back or reported. The API
//! key lives in [`ApiKey`], which never prints.

mod agent_step;
pub mod anthropic;
pub mod http;
mod judge;
pub mod minimized;
mod objective;
pub mod openai;
mod prompt;
pub mod provider;
pub mod vision;
pub mod write_back;

pub use http::{HttpError, HttpSettings};
pub use objective::{Agent, AgentCall, End, ObjectiveRun, Turn};
pub use prompt::Objective;
pub use provider::{ApiKey, ChatReply, ChatRequest, Provider, ProviderConfig, ProviderError, ProviderKind, Usage};
pub use vision::Vision;

/// The provider `config` describes; `redact` (the secrets) is extended with the key, so no text
/// the provider sends back can carry either into an error.
pub fn connect(config: &ProviderConfig, redact: &[String]) -> Box<dyn Provider> {
    let mut values = redact.to_vec();
    if let Some(k) = &config.api_key {
        values.push(k.expose().to_string());
    }
    let loopback = http::is_loopback(&config.base_url);
    let http = http::HttpClient::new(
        config.http.clone(),
        loopback,
        trailblaze_core::secret::Redaction::new(&values),
    );
    match config.kind {
        ProviderKind::OpenAi => Box::new(openai::OpenAi::new(config.clone(), http)),
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(config.clone(), http)),
    }
}

/// `agent` as the judge a session's [`trailblaze_core::Settings::judge`] holds: `assertWithAi` and
/// `rememberWithAi` ask its provider, within its token budget.
pub fn judge_handle(agent: std::sync::Arc<Agent>) -> trailblaze_core::judge::JudgeHandle {
    trailblaze_core::judge::JudgeHandle(agent)
}

/// Model turns one objective may take, by default.
pub const DEFAULT_MAX_TURNS: u32 = 25;
/// Tokens (sent and received) one run may spend, by default.
pub const DEFAULT_MAX_RUN_TOKENS: u64 = 200_000;

/// Where what the agent did is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteBack {
    /// `<file>.healed.yaml` beside the trail (`sign-in.trail.yaml` → `sign-in.trail.healed.yaml`):
    /// not a trail name, so folder runs do not pick it up twice; review it, then move it over.
    #[default]
    Sibling,
    /// The trail file itself, its comments and layout kept where the YAML allows.
    InPlace,
    /// Nowhere (the report still shows what the agent did).
    Off,
}

/// What `run --agent` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub provider: ProviderConfig,
    /// Model turns (requests) one objective may take.
    pub max_turns: u32,
    /// Tokens (sent and received) the whole run may spend.
    pub max_run_tokens: u64,
    /// Also run a recorded step that fails (after its `maxRetries`) through the agent.
    pub self_heal: bool,
    pub write_back: WriteBack,
    /// Whether the model is sent the screen's picture beside its text.
    pub vision: Vision,
}

impl AgentConfig {
    pub fn new(provider: ProviderConfig) -> AgentConfig {
        AgentConfig {
            provider,
            max_turns: DEFAULT_MAX_TURNS,
            max_run_tokens: DEFAULT_MAX_RUN_TOKENS,
            self_heal: false,
            write_back: WriteBack::Sibling,
            vision: Vision::Auto,
        }
    }
}

/// The first request the agent would send for a step on the current screen, as JSON: what
/// `trailblaze tools --tokens --agent` measures.
pub fn first_request(
    kind: ProviderKind,
    catalog: &trailblaze_core::catalog::Catalog,
    objective: &Objective<'_>,
    screen: &str,
    secret_names: &[String],
) -> serde_json::Value {
    let tools = minimized::minimized(catalog.offered_at_start(trailblaze_core::device::Platform::Android));
    let system = prompt::system(objective.verify, secret_names);
    let messages = [provider::Message::User(vec![provider::UserPart::Text(
        prompt::objective(objective, screen),
    )])];
    let req = ChatRequest {
        system: &system,
        tools: &tools,
        messages: &messages,
    };
    match kind {
        ProviderKind::OpenAi => openai::request_body("model", 4096, &req),
        ProviderKind::Anthropic => anthropic::request_body("model", 4096, &req),
    }
}

/// Gives a run its LLM: `agent` takes the steps with no recording (and, with self-heal, those that
/// fail) and answers `assertWithAi`; `judge` alone answers `assertWithAi`. One agent for the run,
/// so its token budget is the run's.
pub fn for_run(
    project: &trailblaze_core::Project,
    agent: Option<&AgentConfig>,
    judge: Option<&AgentConfig>,
    opts: &mut trailblaze_core::RunOptions,
) {
    let Some(config) = agent.or(judge) else { return };
    let llm = std::sync::Arc::new(Agent::new(
        config,
        &project.secrets.values_to_redact(),
        project.secrets.names(),
    ));
    opts.settings.judge = Some(judge_handle(llm.clone()));
    if agent.is_some() {
        opts.agent = Some(trailblaze_core::replay::AgentHandle(llm));
    }
}
