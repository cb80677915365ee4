//! The agent's provider as the session's [`Judge`]: `assertWithAi` / `rememberWithAi` (and the
//! CLI's `ask`/`verify`, MCP's `ask`/`verify`) send one question with the screen and get a
//! structured answer back as a call of one tool (`verdict {holds, explanation}` or
//! `answer {value}`), which both wire formats carry. Requests count against the run's token
//! budget like the agent's turns.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::objective::Agent;
use super::provider::{ChatRequest, Image, Message, UserPart};
use super::vision::picture_of;
use trailblaze_core::catalog::ToolDefinition;
use trailblaze_core::judge::{Judge, JudgeError, JudgeKind, JudgeRequest, Judged, LlmCost, Verdict};

/// Requests one question may take: the first, and one more when the model answered without the tool.
const MAX_REQUESTS: u32 = 2;

const SYSTEM_CHECK: &str = "You judge a statement about the current screen of a mobile app under test. \
Decide from the screen alone (its nodes are listed one a line; `***` hides a secret). Call the tool `verdict` \
once: holds true only when the screen shows the statement is true; explanation: one line citing what on the \
screen decides it.";

const SYSTEM_READ: &str = "You read one value off the current screen of a mobile app under test, as the \
request describes it (its nodes are listed one a line; `***` hides a secret). Call the tool `answer` once \
with the value exactly as the screen shows it (no quotes, no extra words); if the screen does not show it, \
answer with an empty string.";

fn answer_tool(kind: JudgeKind) -> ToolDefinition {
    match kind {
        JudgeKind::Check => ToolDefinition {
            name: "verdict".into(),
            description: "Whether the statement holds on the screen, and why.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "holds": { "type": "boolean" },
                    "explanation": { "type": "string" }
                },
                "required": ["holds", "explanation"],
                "additionalProperties": false
            }),
        },
        JudgeKind::Read => ToolDefinition {
            name: "answer".into(),
            description: "The value read off the screen.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "value": { "type": "string" } },
                "required": ["value"],
                "additionalProperties": false
            }),
        },
    }
}

/// The question as the model reads it: the one place the judging request is built from the screen,
/// its picture (secret fields painted over) after the text when there is one.
pub(crate) fn judge_messages(req: &JudgeRequest, image: Option<Image>) -> Vec<Message> {
    let ask = match req.kind {
        JudgeKind::Check => "Statement",
        JudgeKind::Read => "Read",
    };
    let text = format!("{ask}: {}\n\nThe screen:\n{}", req.prompt.trim(), req.screen.trim_end());
    let mut parts = vec![UserPart::Text(text)];
    parts.extend(image.map(UserPart::Image));
    vec![Message::User(parts)]
}

/// The verdict in a call's arguments, strictly: what is wrong is told back to the model.
fn verdict_of(kind: JudgeKind, args: &Value) -> Result<Verdict, String> {
    match kind {
        JudgeKind::Check => {
            let holds = args
                .get("holds")
                .and_then(Value::as_bool)
                .ok_or("`holds` must be a boolean")?;
            let explanation = args
                .get("explanation")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_string();
            Ok(Verdict::Check { holds, explanation })
        }
        JudgeKind::Read => match args.get("value") {
            Some(Value::String(s)) => Ok(Verdict::Read {
                value: s.trim().to_string(),
            }),
            // A number or a flag read off the screen is still its text.
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Ok(Verdict::Read { value: v.to_string() }),
            _ => Err("`value` must be a string".into()),
        },
    }
}

impl Judge for Agent {
    /// The screen's picture goes with the question as it goes with the agent's turns: unless
    /// `--agent-vision off`, or `auto` after the provider refused one.
    fn wants_image(&self) -> bool {
        self.eyes().sees()
    }

    fn judge(&self, req: &JudgeRequest) -> Result<Judged, JudgeError> {
        let tool = answer_tool(req.kind);
        let tools = [tool];
        let system = match req.kind {
            JudgeKind::Check => SYSTEM_CHECK,
            JudgeKind::Read => SYSTEM_READ,
        };
        let image = req.image.as_ref().and_then(|(shot, fields)| {
            picture_of(shot, fields.clone(), self.provider().kind())
                .inspect_err(|e| tracing::warn!(error = %e, "no picture of the screen for the judge"))
                .ok()
        });
        let mut messages = judge_messages(req, image);
        let mut cost = LlmCost::default();
        let fail = |message: String, cost: LlmCost| JudgeError { message, cost };
        for _ in 0..MAX_REQUESTS {
            let used = self.tokens_used();
            if used >= self.max_run_tokens() {
                return Err(fail(
                    format!(
                        "the run's token budget is spent: {used} of {} tokens used (raise --agent-max-tokens)",
                        self.max_run_tokens()
                    ),
                    cost,
                ));
            }
            let reply = self
                .eyes()
                .complete(
                    self.provider(),
                    &ChatRequest {
                        system,
                        tools: &tools,
                        messages: &messages,
                    },
                )
                .map_err(|e| fail(self.scrub(&e.to_string()), cost))?;
            self.spent()
                .fetch_add(reply.usage.input + reply.usage.output, Ordering::Relaxed);
            cost = cost.plus(LlmCost {
                requests: 1,
                input_tokens: reply.usage.input,
                output_tokens: reply.usage.output,
            });
            let mut results = Vec::new();
            for call in &reply.calls {
                let why = match (&call.args, call.name == tools[0].name) {
                    (Ok(args), true) => match verdict_of(req.kind, args) {
                        Ok(verdict) => return Ok(Judged { verdict, cost }),
                        Err(why) => why,
                    },
                    (Err(why), true) => why.clone(),
                    (_, false) => format!("unknown tool `{}`: call `{}`", call.name, tools[0].name),
                };
                results.push(UserPart::ToolResult {
                    call_id: call.id.clone(),
                    content: why,
                    is_error: true,
                });
            }
            let text = reply.text.as_deref().map(|t| self.scrub(t));
            if results.is_empty() {
                results.push(UserPart::Text(format!("Answer by calling `{}`.", tools[0].name)));
            }
            messages.push(Message::Assistant {
                text,
                calls: reply.calls,
            });
            messages.push(Message::User(results));
        }
        Err(fail(
            format!("the model gave no answer through `{}`", tools[0].name),
            cost,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_strictly() {
        let v = verdict_of(JudgeKind::Check, &json!({ "holds": false, "explanation": " no " }));
        assert_eq!(
            v,
            Ok(Verdict::Check {
                holds: false,
                explanation: "no".into()
            })
        );
        assert!(verdict_of(JudgeKind::Check, &json!({ "holds": "yes" })).is_err());
        assert_eq!(
            verdict_of(JudgeKind::Read, &json!({ "value": 42 })),
            Ok(Verdict::Read { value: "42".into() })
        );
        assert!(verdict_of(JudgeKind::Read, &json!({})).is_err());
    }
}
