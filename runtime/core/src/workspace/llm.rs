//! The original's `llm:` block of `trails/config/trailblaze.yaml`: which provider and model the
//! workspace uses by default (`defaults.model: openai/gpt-4.1`), each provider's base URL, the
//! variable its key is in, and a model's `max_output_tokens`. Flags and `TRAILBLAZE_LLM_*` win over
//! it. Read strictly: an unknown key names its path.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LlmBlock {
    #[serde(default)]
    providers: BTreeMap<String, ProviderBlock>,
    #[serde(default)]
    defaults: Option<DefaultsBlock>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultsBlock {
    #[serde(default)]
    model: Option<String>,
    /// Kept as data (screenshot scaling is the vision settings').
    #[serde(default)]
    #[allow(dead_code)]
    screenshot: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderBlock {
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    chat_completions_path: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    auth: Option<AuthBlock>,
    #[serde(default)]
    models: Vec<ModelBlock>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthBlock {
    #[serde(default)]
    env_var: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    required: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ModelBlock {
    id: String,
    #[serde(default)]
    tier: Option<String>,
    #[serde(default)]
    vision: Option<bool>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    context_length: Option<u64>,
    #[serde(default)]
    max_output_tokens: Option<u32>,
    #[serde(default)]
    cost: Option<Value>,
    #[serde(default)]
    screenshot: Option<Value>,
}

/// What the workspace says about the LLM, once resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceLlm {
    /// `openai` or `anthropic` (the wire format).
    pub wire: &'static str,
    pub base_url: Option<String>,
    pub model: String,
    /// The environment variable holding the key (`auth.env_var`, else the provider's usual one).
    pub key_env: Option<String>,
    pub max_output_tokens: Option<u32>,
}

/// The wire format and default base URL of a provider type of the original.
fn wire_of(kind: &str) -> Result<(&'static str, Option<&'static str>), String> {
    Ok(match kind {
        "openai" => ("openai", None),
        "anthropic" => ("anthropic", None),
        "openai_compatible" => ("openai", None),
        "ollama" => ("openai", Some("http://localhost:11434/v1")),
        "openrouter" => ("openai", Some("https://openrouter.ai/api/v1")),
        other => {
            return Err(format!(
                "provider type `{other}` is not spoken here (openai, anthropic, openai_compatible, ollama, openrouter)"
            ));
        }
    })
}

fn usual_key_env(kind: &str) -> Option<&'static str> {
    match kind {
        "openai" => Some("OPENAI_API_KEY"),
        "anthropic" => Some("ANTHROPIC_API_KEY"),
        "openrouter" => Some("OPENROUTER_API_KEY"),
        _ => None,
    }
}

/// Resolves the `llm:` block: `None` when it names no default model. Errors name the key's path.
pub fn resolve(llm: &Value) -> Result<Option<WorkspaceLlm>, String> {
    let block: LlmBlock = serde_json::from_value(llm.clone()).map_err(|e| format!("`llm`: {e}"))?;
    let Some(wanted) = block
        .defaults
        .as_ref()
        .and_then(|d| d.model.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty())
    else {
        return Ok(None);
    };
    // `provider/model` names both; a bare id is looked for in the providers' model lists.
    let (provider_key, model) = match wanted.split_once('/') {
        Some((p, m)) if block.providers.contains_key(p) || wire_of(p).is_ok() => (Some(p.to_string()), m.to_string()),
        _ => (
            block
                .providers
                .iter()
                .filter(|(_, p)| p.enabled != Some(false))
                .find(|(_, p)| p.models.iter().any(|m| m.id == wanted))
                .map(|(k, _)| k.clone()),
            wanted.to_string(),
        ),
    };
    let provider_key = provider_key.unwrap_or_else(|| "openai".to_string());
    let provider = block.providers.get(&provider_key).cloned().unwrap_or_default();
    if provider.enabled == Some(false) {
        return Err(format!(
            "`llm.providers.{provider_key}` is disabled but `llm.defaults.model` names it"
        ));
    }
    let kind = provider.kind.clone().unwrap_or_else(|| provider_key.clone());
    let (wire, default_url) = wire_of(&kind).map_err(|e| format!("`llm.providers.{provider_key}.type`: {e}"))?;
    if kind == "openai_compatible" && provider.base_url.is_none() {
        return Err(format!(
            "`llm.providers.{provider_key}.base_url` is required for openai_compatible"
        ));
    }
    if provider.chat_completions_path.is_some() {
        return Err(format!(
            "`llm.providers.{provider_key}.chat_completions_path` is not supported here: give a base_url whose `/chat/completions` is the endpoint"
        ));
    }
    if provider.headers.as_ref().is_some_and(|h| !h.is_empty()) {
        return Err(format!(
            "`llm.providers.{provider_key}.headers` is not supported here yet (only the key's header is sent)"
        ));
    }
    Ok(Some(WorkspaceLlm {
        wire,
        base_url: provider.base_url.clone().or(default_url.map(str::to_string)),
        max_output_tokens: provider
            .models
            .iter()
            .find(|m| m.id == model)
            .and_then(|m| m.max_output_tokens),
        key_env: provider
            .auth
            .and_then(|a| a.env_var)
            .or(usual_key_env(&kind).map(str::to_string)),
        model,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_default_model_names_its_provider() {
        let llm = json!({
            "providers": { "corp": { "type": "openai_compatible", "base_url": "http://127.0.0.1:9/v1",
                                     "auth": { "env_var": "CORP_KEY" },
                                     "models": [{ "id": "gpt-4.1", "max_output_tokens": 900 }] } },
            "defaults": { "model": "gpt-4.1" }
        });
        let got = resolve(&llm).expect("reads").expect("a model");
        assert_eq!(got.wire, "openai");
        assert_eq!(got.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(
            (got.model.as_str(), got.key_env.as_deref()),
            ("gpt-4.1", Some("CORP_KEY"))
        );
        assert_eq!(got.max_output_tokens, Some(900));
        let a = resolve(&json!({ "defaults": { "model": "anthropic/claude-sonnet-4-5" } }))
            .expect("reads")
            .expect("a model");
        assert_eq!((a.wire, a.model.as_str()), ("anthropic", "claude-sonnet-4-5"));
        assert_eq!(a.key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        // Controls: no default model is no setting; a typo is an error naming the key.
        assert_eq!(resolve(&json!({ "providers": {} })), Ok(None));
        let e = resolve(&json!({ "defaults": { "modle": "x" } })).expect_err("unknown key");
        assert!(e.contains("modle"), "{e}");
        let e = resolve(&json!({ "providers": { "g": { "type": "google" } }, "defaults": { "model": "g/gemini" } }))
            .expect_err("unsupported");
        assert!(e.contains("llm.providers.g.type"), "{e}");
    }
}
