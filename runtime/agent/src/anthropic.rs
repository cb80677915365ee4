//! Anthropic-compatible messages: `POST {base}/messages` with `x-api-key` and `anthropic-version`,
//! `tools: [{name, description, input_schema}]`; the reply's `content` holds `text` and `tool_use`
//! blocks; results go back as `tool_result` blocks (first in the next user turn). Streaming off.

use serde_json::{Value, json};

use super::http::HttpClient;
use super::provider::{
    ChatReply, ChatRequest, Message, Provider, ProviderConfig, ProviderError, ProviderKind, ToolCall, Usage, UserPart,
    estimate_tokens, exchange,
};

/// The API version this speaks.
pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    config: ProviderConfig,
    http: HttpClient,
}

impl Anthropic {
    pub fn new(config: ProviderConfig, http: HttpClient) -> Anthropic {
        Anthropic { config, http }
    }
}

impl Provider for Anthropic {
    fn complete(&self, req: &ChatRequest<'_>) -> Result<ChatReply, ProviderError> {
        let body = request_body(&self.config.model, self.config.max_output_tokens, req).to_string();
        let mut headers: Vec<(&str, &str)> = vec![("anthropic-version", API_VERSION)];
        if let Some(k) = &self.config.api_key {
            headers.push(("x-api-key", k.expose()));
        }
        let mut reply = exchange(
            &self.http,
            &self.config.base_url,
            "messages",
            &headers,
            &body,
            parse_reply,
        )?;
        if reply.usage.estimated {
            reply.usage.input = super::vision::estimated_input(ProviderKind::Anthropic, body.len(), req.messages);
        }
        Ok(reply)
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.config.model
    }
}

/// The request's JSON body.
pub fn request_body(model: &str, max_tokens: u32, req: &ChatRequest<'_>) -> Value {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| match m {
            Message::User(parts) => {
                // `tool_result` blocks must come first in the turn that answers the calls.
                let mut blocks: Vec<Value> = parts
                    .iter()
                    .filter_map(|p| match p {
                        UserPart::ToolResult {
                            call_id,
                            content,
                            is_error,
                        } => Some(json!({
                            "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error
                        })),
                        UserPart::Text(_) | UserPart::Image(_) => None,
                    })
                    .collect();
                // Then the text, then the picture that goes with it.
                blocks.extend(parts.iter().filter_map(|p| match p {
                    UserPart::Text(t) => Some(json!({ "type": "text", "text": t })),
                    UserPart::ToolResult { .. } | UserPart::Image(_) => None,
                }));
                blocks.extend(parts.iter().filter_map(|p| match p {
                    UserPart::Image(i) => Some(json!({ "type": "image",
                        "source": { "type": "base64", "media_type": i.mime, "data": i.base64() } })),
                    _ => None,
                }));
                json!({ "role": "user", "content": blocks })
            }
            Message::Assistant { text, calls } => {
                let mut blocks: Vec<Value> = text.iter().map(|t| json!({ "type": "text", "text": t })).collect();
                blocks.extend(calls.iter().map(|c| {
                    let input = c.args.clone().unwrap_or_else(|_| json!({}));
                    json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": input })
                }));
                json!({ "role": "assistant", "content": blocks })
            }
        })
        .collect();
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }))
        .collect();
    json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": req.system,
        "tools": tools,
        "messages": messages,
        "stream": false,
    })
}

fn bad(why: impl Into<String>) -> ProviderError {
    ProviderError::BadReply {
        expected: "an Anthropic message",
        why: why.into(),
    }
}

/// The reply's text, tool calls and usage.
pub fn parse_reply(text: &str) -> Result<ChatReply, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `content` list"))?;
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    texts.push(t.to_string());
                }
            }
            Some("tool_use") => {
                let name = b
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(format!("content[{i}] (tool_use) has no `name`")))?;
                let id = b
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("toolu_{i}"));
                let args = match b.get("input") {
                    None | Some(Value::Null) => Ok(json!({})),
                    Some(v) => Ok(v.clone()),
                };
                calls.push(ToolCall {
                    id,
                    name: name.to_string(),
                    args,
                });
            }
            // Thinking and other blocks carry nothing the loop acts on.
            _ => {}
        }
    }
    let text_out = Some(texts.join("\n")).filter(|t| !t.trim().is_empty());
    let usage = match (
        v.pointer("/usage/input_tokens").and_then(Value::as_u64),
        v.pointer("/usage/output_tokens").and_then(Value::as_u64),
    ) {
        (Some(input), Some(output)) => Usage {
            input,
            output,
            estimated: false,
        },
        _ => Usage {
            input: 0,
            output: estimate_tokens(text.len()),
            estimated: true,
        },
    };
    Ok(ChatReply {
        text: text_out,
        calls,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_the_messages_shape_with_results_first() {
        let messages = vec![
            Message::User(vec![UserPart::Text("Sign in".into())]),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall {
                    id: "toolu_1".into(),
                    name: "tap".into(),
                    args: Ok(json!({ "ref": "d803" })),
                }],
            },
            Message::User(vec![
                UserPart::Text("The screen now: ...".into()),
                UserPart::ToolResult {
                    call_id: "toolu_1".into(),
                    content: "unknown ref".into(),
                    is_error: true,
                },
            ]),
        ];
        let body = request_body(
            "claude",
            512,
            &ChatRequest {
                system: "sys",
                tools: &[],
                messages: &messages,
            },
        );
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], 512);
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(body["messages"][1]["content"][0]["input"]["ref"], "d803");
        let third = &body["messages"][2]["content"];
        assert_eq!(third[0]["type"], "tool_result", "results before text");
        assert_eq!(third[0]["is_error"], true);
        assert_eq!(third[1]["type"], "text");
    }

    #[test]
    fn replies_give_text_calls_and_usage() {
        let text = r#"{"id":"msg_1","type":"message","role":"assistant","content":[
            {"type":"text","text":"I will tap Sign in."},
            {"type":"tool_use","id":"toolu_9","name":"tap","input":{"ref":"d803"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":900,"output_tokens":40}}"#;
        let r = parse_reply(text).expect("parses");
        assert_eq!(r.text.as_deref(), Some("I will tap Sign in."));
        assert_eq!(r.calls[0].id, "toolu_9");
        assert_eq!(r.calls[0].args, Ok(json!({ "ref": "d803" })));
        assert_eq!((r.usage.input, r.usage.output), (900, 40));
        assert!(matches!(
            parse_reply(r#"{"type":"error"}"#),
            Err(ProviderError::BadReply { .. })
        ));
    }
}
