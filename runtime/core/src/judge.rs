//! Judging in words: `assertWithAi` and `rememberWithAi` ask an LLM about the current screen. The
//! tools see only this port — a question (the prompt, the screen's text, the screenshot when the
//! judge takes images) in, a structured verdict and what it cost out — so they compile and fail
//! clearly without the `agent` feature; the agent's provider implements it (`agent::judge`).

use std::sync::Arc;

use crate::device::Screenshot;
use crate::snapshot::SecretFields;
use serde::{Deserialize, Serialize};

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeKind {
    /// Does the statement hold on the screen? `{holds, explanation}`.
    Check,
    /// What does the screen show for the prompt? `{value}`.
    Read,
}

/// One question about the screen. Its texts hold no secret value: the screen shows `***` and the
/// prompt is scrubbed before it gets here.
#[derive(Debug, Clone)]
pub struct JudgeRequest {
    pub kind: JudgeKind,
    pub prompt: String,
    /// The screen as the agent reads it (`[c422] EditText hint="Email"`).
    pub screen: String,
    /// The screenshot and the fields a secret was typed into (to be painted over before it
    /// leaves), when [`Judge::wants_image`] says the judge takes one.
    pub image: Option<(Screenshot, SecretFields)>,
}

/// The judge's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Check { holds: bool, explanation: String },
    Read { value: String },
}

/// A verdict and what asking for it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    pub cost: LlmCost,
}

/// A question that got no verdict: why (secrets and the key scrubbed), and what it cost anyway.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct JudgeError {
    pub message: String,
    pub cost: LlmCost,
}

/// Something that answers questions about a screen: an LLM provider, or an embedder's own.
pub trait Judge: Send + Sync {
    fn judge(&self, request: &JudgeRequest) -> Result<Judged, JudgeError>;
    /// Whether the screenshot should be captured and sent with the screen's text.
    fn wants_image(&self) -> bool {
        false
    }
}

/// A shared judge, as a session's settings hold it.
#[derive(Clone)]
pub struct JudgeHandle(pub Arc<dyn Judge>);

impl std::fmt::Debug for JudgeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JudgeHandle")
    }
}

/// How `assertWithAi`'s error begins when the statement does not hold (not when no verdict came).
pub const DOES_NOT_HOLD: &str = "the statement does not hold";

/// What an AI-backed tool says in a session with no judge: the settings that give it one.
pub fn no_provider(tool: &str) -> String {
    format!(
        "{tool} asks an LLM about the screen, and no LLM provider is configured: set TRAILBLAZE_LLM_MODEL \
         (or --llm-model; TRAILBLAZE_LLM_API_KEY for a remote API, or `llm.defaults.model` in \
         trails/config/trailblaze.yaml), see docs/agent.md; or replace it with a deterministic tool \
         (assertVisibleBySelector, rememberText with a node's id)"
    )
}

/// What asking an LLM cost: requests sent, tokens sent and received (as the provider counted them,
/// or estimated at 4 characters a token when it said nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmCost {
    pub requests: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl LlmCost {
    /// What was spent since `earlier` (a tally read before).
    pub fn since(&self, earlier: &LlmCost) -> LlmCost {
        LlmCost {
            requests: self.requests - earlier.requests,
            input_tokens: self.input_tokens - earlier.input_tokens,
            output_tokens: self.output_tokens - earlier.output_tokens,
        }
    }

    pub fn plus(self, other: LlmCost) -> LlmCost {
        LlmCost {
            requests: self.requests + other.requests,
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.requests == 0 && self.input_tokens == 0 && self.output_tokens == 0
    }

    /// The sum of `costs`; `None` when nothing was asked.
    pub fn total<'a>(costs: impl IntoIterator<Item = &'a Option<LlmCost>>) -> Option<LlmCost> {
        let sum = costs.into_iter().flatten().fold(LlmCost::default(), |a, c| a.plus(*c));
        (!sum.is_zero()).then_some(sum)
    }

    /// `3 LLM requests, 2,100 tokens in, 140 out`.
    pub fn describe(&self) -> String {
        format!(
            "{} LLM request{}, {} tokens in, {} out",
            self.requests,
            if self.requests == 1 { "" } else { "s" },
            self.input_tokens,
            self.output_tokens
        )
    }
}
