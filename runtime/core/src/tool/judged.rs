//! The tools' side of judging in words (`assertWithAi`, `rememberWithAi`): what is asked of the
//! session's judge ([`crate::judge`]) and how its answer comes back scrubbed.

use super::{ToolCx, ToolFailure};
use crate::judge::{JudgeKind, JudgeRequest, Verdict, no_provider};

/// Asks the session's judge about the current screen for tool `tool`: the prompt scrubbed of
/// secrets, the screen's text as the agent reads it, the screenshot when the judge takes one.
/// What it cost is added to the session's count, verdict or not; the verdict's texts are scrubbed.
pub(crate) fn ask(cx: &ToolCx<'_>, tool: &str, kind: JudgeKind, prompt: &str) -> Result<Verdict, ToolFailure> {
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
        // The fields first: their capture settles a secret typed a moment ago.
        let fields = cx.screen.secret_fields()?;
        Some((cx.screen.screenshot(cx.redact)?, fields))
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
