//! Judging in words: `assertWithAi` and `rememberWithAi` ask an LLM about the current screen. The
//! tools see only this port — a question (the prompt, the screen's text, the screenshot when the
//! judge takes images) in, a structured verdict and what it cost out — so they compile and fail
//! clearly without the `agent` feature; the agent's provider implements it (`agent::judge`).

use std::sync::Arc;

use crate::device::Screenshot;
pub use crate::trail::report::LlmCost;

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
    /// The screenshot, when [`Judge::wants_image`] says the judge takes one.
    pub image: Option<Screenshot>,
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

/// Asks the session's judge about the current screen for tool `tool`: the prompt scrubbed of
/// secrets, the screen's text as the agent reads it, the screenshot when the judge takes one.
/// What it cost is added to the session's count, verdict or not; the verdict's texts are scrubbed.
pub(crate) fn ask(
    cx: &crate::tool::ToolCx<'_>,
    tool: &str,
    kind: JudgeKind,
    prompt: &str,
) -> Result<Verdict, crate::tool::ToolFailure> {
    let judge = cx.judge.ok_or_else(|| no_provider(tool))?;
    if prompt.trim().is_empty() {
        return Err("`prompt` is empty".into());
    }
    let snap = cx.screen.snapshot()?;
    let mut screen = snap.render(cx.redact);
    let here = cx.waypoints.matching(&snap, cx.screen.platform());
    if !here.is_empty() {
        screen = format!("waypoint: {}\n{screen}", here.join(", "));
    }
    let image = if judge.wants_image() {
        Some(cx.screen.with_device(|d| d.screenshot())?)
    } else {
        None
    };
    let request = JudgeRequest {
        kind,
        prompt: cx.redact.text(prompt).into_owned(),
        screen,
        image,
    };
    let answered = judge.judge(&request);
    let cost = match &answered {
        Ok(j) => j.cost,
        Err(e) => e.cost,
    };
    cx.llm_cost.set(cx.llm_cost.get().plus(cost));
    let judged = answered.map_err(|e| cx.redact.text(&e.message).into_owned())?;
    Ok(match judged.verdict {
        Verdict::Check { holds, explanation } => Verdict::Check {
            holds,
            explanation: cx.redact.text(&explanation).into_owned(),
        },
        Verdict::Read { value } => Verdict::Read {
            value: cx.redact.text(&value).into_owned(),
        },
    })
}
