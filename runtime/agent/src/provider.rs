//! What the loop says to a model and hears back, whatever the provider: a conversation of user and
//! assistant turns, tool calls and their results, token usage. `openai` and `anthropic` turn it
//! into their wire formats.

use std::fmt;

use base64::Engine as _;
use serde_json::Value;

use super::http::{HttpError, HttpSettings};
use trailblaze_core::catalog::ToolDefinition;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProviderKind {
    /// `POST {base}/chat/completions`, `tools: [{type: function, ...}]`, `tool_calls`.
    #[default]
    OpenAi,
    /// `POST {base}/messages`, `tool_use` / `tool_result` blocks, `x-api-key`.
    Anthropic,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn from_name(name: &str) -> Option<ProviderKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }

    /// The public API's base URL, when none is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
        }
    }
}

/// An API key: never printed, whatever prints the config.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into().trim().to_string())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where and how to reach the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// Without the endpoint's path: `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    /// `None`: no key is sent (a local server).
    pub api_key: Option<ApiKey>,
    pub http: HttpSettings,
    /// The most tokens one reply may have (Anthropic requires the number; OpenAI gets it too).
    pub max_output_tokens: u32,
}

impl ProviderConfig {
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: kind.default_base_url().to_string(),
            model: model.into(),
            api_key: None,
            http: HttpSettings::default(),
            max_output_tokens: 4096,
        }
    }
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id, echoed with the result.
    pub id: String,
    pub name: String,
    /// The arguments, or why they could not be read (OpenAI sends them as a JSON string).
    pub args: Result<Value, String>,
}

/// A picture in a user turn.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`.
    pub mime: &'static str,
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Image({}, {}×{}, {} bytes)",
            self.mime,
            self.width,
            self.height,
            self.data.len()
        )
    }
}

impl Image {
    /// The bytes as base64, as both wire formats carry them.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }

    /// `data:image/png;base64,...`: OpenAI's `image_url`.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64())
    }
}

/// A part of a user turn.
#[derive(Debug, Clone, PartialEq)]
pub enum UserPart {
    Text(String),
    /// The screen's picture (the agent's vision), after the text it goes with.
    Image(Image),
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(Vec<UserPart>),
    Assistant { text: Option<String>, calls: Vec<ToolCall> },
}

/// One request: the instructions, the tools, the conversation so far.
pub struct ChatRequest<'a> {
    pub system: &'a str,
    pub tools: &'a [ToolDefinition],
    pub messages: &'a [Message],
}

/// Tokens as the provider counted them (or as estimated when it did not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    /// The provider's reply had no usage: these are estimates (4 characters a token).
    pub estimated: bool,
}

/// One reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// The model's text beside its calls (its reasoning, or an answer without a call).
    pub text: Option<String>,
    pub calls: Vec<ToolCall>,
    pub usage: Usage,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error("the LLM provider: {0}")]
    Http(#[from] HttpError),
    #[error(
        "the LLM provider refused the request (HTTP {status}): check TRAILBLAZE_LLM_API_KEY / --llm-api-key{}",
        .message.as_ref().map(|m| format!(" ({m})")).unwrap_or_default()
    )]
    Unauthorized { status: u16, message: Option<String> },
    #[error("the LLM provider's reply is not {expected}: {why}")]
    BadReply { expected: &'static str, why: String },
}

/// A model behind an HTTP API.
pub trait Provider: Send + Sync {
    fn complete(&self, req: &ChatRequest<'_>) -> Result<ChatReply, ProviderError>;
    /// `openai` / `anthropic`.
    fn kind(&self) -> ProviderKind;
    fn model(&self) -> &str;
}

/// `{base}/{endpoint}` with one slash between.
pub(crate) fn endpoint(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

/// A 401/403 is about the key; anything else stays an HTTP error.
pub(crate) fn http_error(e: HttpError) -> ProviderError {
    match e {
        HttpError::Status {
            status: status @ (401 | 403),
            message,
            ..
        } => ProviderError::Unauthorized { status, message },
        other => ProviderError::Http(other),
    }
}

/// One request of either wire format: `body` posted to `{base}/{path}`, the reply read by `parse`,
/// its input tokens estimated from the body when the reply says none.
pub(crate) fn exchange(
    http: &super::http::HttpClient,
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    parse: fn(&str) -> Result<ChatReply, ProviderError>,
) -> Result<ChatReply, ProviderError> {
    let text = http
        .post_json(&endpoint(base, path), headers, body)
        .map_err(http_error)?;
    let mut reply = parse(&text)?;
    if reply.usage.estimated {
        reply.usage.input = estimate_tokens(body.len());
    }
    Ok(reply)
}

/// Tokens estimated from characters, for a reply without `usage`.
pub(crate) fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_never_prints_its_key() {
        let mut c = ProviderConfig::new(ProviderKind::Anthropic, "m");
        c.api_key = Some(ApiKey::new(" sk-secret-123 "));
        let shown = format!("{c:?} {:?}", crate::AgentConfig::new(c.clone()));
        assert!(
            !shown.contains("sk-secret-123") && shown.contains("ApiKey(***)"),
            "{shown}"
        );
        // Control: the key is there to be sent, trimmed.
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-secret-123"));
    }

    #[test]
    fn a_refused_key_says_so_and_other_answers_stay_http_errors() {
        let status = |status| HttpError::Status {
            host: "h".into(),
            status,
            message: None,
            tries: 1,
        };
        assert!(matches!(
            http_error(status(401)),
            ProviderError::Unauthorized { status: 401, .. }
        ));
        assert!(http_error(status(403)).to_string().contains("TRAILBLAZE_LLM_API_KEY"));
        assert!(matches!(http_error(status(400)), ProviderError::Http(_)));
        assert_eq!(endpoint("http://x/v1/", "messages"), "http://x/v1/messages");
        assert_eq!(ProviderKind::from_name(" Anthropic "), Some(ProviderKind::Anthropic));
    }
}
