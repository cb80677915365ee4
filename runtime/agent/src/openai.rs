//! OpenAI-compatible chat completions (OpenAI, Azure-style gateways, vLLM, llama.cpp, Ollama, ...):
//! `POST {base}/chat/completions` with `tools: [{type: "function", function: {name, description,
//! parameters}}]`; the reply's `choices[0].message` holds `content` and `tool_calls` (arguments as
//! a JSON string); results go back as `role: "tool"` messages. Streaming off.

use serde_json::{Value, json};

use super::http::HttpClient;
use super::provider::{
    ChatReply, ChatRequest, Message, Provider, ProviderConfig, ProviderError, ProviderKind, ToolCall, Usage, UserPart,
    estimate_tokens, exchange,
};

pub struct OpenAi {
    config: ProviderConfig,
    http: HttpClient,
}

impl OpenAi {
    pub fn new(config: ProviderConfig, http: HttpClient) -> OpenAi {
        OpenAi { config, http }
    }
}

impl Provider for OpenAi {
    fn complete(&self, req: &ChatRequest<'_>) -> Result<ChatReply, ProviderError> {
        let body = request_body(&self.config.model, self.config.max_output_tokens, req).to_string();
        let auth = self.config.api_key.as_ref().map(|k| format!("Bearer {}", k.expose()));
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let mut reply = exchange(
            &self.http,
            &self.config.base_url,
            "chat/completions",
            &headers,
            &body,
            parse_reply,
        )?;
        if reply.usage.estimated {
            reply.usage.input = super::vision::estimated_input(ProviderKind::OpenAi, body.len(), req.messages);
        }
        Ok(reply)
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAi
    }

    fn model(&self) -> &str {
        &self.config.model
    }
}

/// The request's JSON body.
pub fn request_body(model: &str, max_tokens: u32, req: &ChatRequest<'_>) -> Value {
    let mut messages = vec![json!({ "role": "system", "content": req.system })];
    for m in req.messages {
        match m {
            Message::User(parts) => {
                // Tool results first (they must follow the assistant's calls), then any text.
                let (mut text, mut images) = (Vec::new(), Vec::new());
                for p in parts {
                    match p {
                        UserPart::ToolResult { call_id, content, .. } => {
                            messages.push(json!({ "role": "tool", "tool_call_id": call_id, "content": content }))
                        }
                        UserPart::Text(t) => text.push(t.as_str()),
                        UserPart::Image(i) => images.push(i),
                    }
                }
                if !images.is_empty() {
                    // Content parts: the text, then each picture (a tool message cannot hold one).
                    let mut content = vec![json!({ "type": "text", "text": text.join("\n\n") })];
                    content.extend(images.iter().map(
                        |i| json!({ "type": "image_url", "image_url": { "url": i.data_url(), "detail": "high" } }),
                    ));
                    messages.push(json!({ "role": "user", "content": content }));
                } else if !text.is_empty() {
                    messages.push(json!({ "role": "user", "content": text.join("\n\n") }));
                }
            }
            Message::Assistant { text, calls } => {
                let mut msg = json!({ "role": "assistant", "content": text });
                if !calls.is_empty() {
                    msg["tool_calls"] = calls
                        .iter()
                        .map(|c| {
                            let args = match &c.args {
                                Ok(v) => v.to_string(),
                                Err(_) => "{}".to_string(),
                            };
                            json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": args } })
                        })
                        .collect();
                }
                messages.push(msg);
            }
        }
    }
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({ "type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.input_schema } })
        })
        .collect();
    json!({
        "model": model,
        "messages": messages,
        "tools": tools,
        "tool_choice": "auto",
        "max_tokens": max_tokens,
        "stream": false,
    })
}

fn bad(why: impl Into<String>) -> ProviderError {
    ProviderError::BadReply {
        expected: "an OpenAI chat completion",
        why: why.into(),
    }
}

/// The reply's text, tool calls and usage.
pub fn parse_reply(text: &str) -> Result<ChatReply, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let message = v
        .pointer("/choices/0/message")
        .ok_or_else(|| bad("no `choices[0].message`"))?;
    let content = match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        // Some servers send content parts: `[{type: text, text}]`.
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
    .filter(|s| !s.trim().is_empty());
    let mut calls = Vec::new();
    for (i, c) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = c
            .get("function")
            .ok_or_else(|| bad(format!("tool_calls[{i}] has no `function`")))?;
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("tool_calls[{i}] has no `function.name`")))?;
        let args = match f.get("arguments") {
            None | Some(Value::Null) => Ok(json!({})),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(json!({})),
            Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                .map_err(|e| format!("the arguments are not valid JSON ({e}); send one JSON object")),
            // Some servers send the object itself.
            Some(other) => Ok(other.clone()),
        };
        let id = c
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{i}"));
        calls.push(ToolCall {
            id,
            name: name.to_string(),
            args,
        });
    }
    let usage = match (
        v.pointer("/usage/prompt_tokens").and_then(Value::as_u64),
        v.pointer("/usage/completion_tokens").and_then(Value::as_u64),
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
        text: content,
        calls,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trailblaze_core::catalog::ToolDefinition;

    fn tools() -> Vec<ToolDefinition> {
        vec![ToolDefinition {
            name: "tap".into(),
            description: "Taps.".into(),
            input_schema: json!({ "type": "object", "properties": { "ref": { "type": "string" } } }),
        }]
    }

    #[test]
    fn the_request_is_the_chat_completions_shape() {
        let messages = vec![
            Message::User(vec![UserPart::Text("Sign in".into())]),
            Message::Assistant {
                text: Some("Tapping.".into()),
                calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "tap".into(),
                    args: Ok(json!({ "ref": "d803" })),
                }],
            },
            Message::User(vec![
                UserPart::ToolResult {
                    call_id: "c1".into(),
                    content: "{}".into(),
                    is_error: false,
                },
                UserPart::Text("The screen now: ...".into()),
            ]),
        ];
        let t = tools();
        let body = request_body(
            "m",
            100,
            &ChatRequest {
                system: "sys",
                tools: &t,
                messages: &messages,
            },
        );
        assert_eq!(body["model"], "m");
        assert_eq!(body["stream"], false);
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(
            body["tools"][0]["function"]["parameters"]["properties"]["ref"]["type"],
            "string"
        );
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["role"].as_str())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"ref\":\"d803\"}"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
    }

    #[test]
    fn replies_give_text_calls_and_usage() {
        let text = r#"{"choices":[{"message":{"role":"assistant","content":"Let me tap.","tool_calls":[
            {"id":"a","type":"function","function":{"name":"tap","arguments":"{\"ref\":\"d803\"}"}},
            {"id":"b","type":"function","function":{"name":"snapshot","arguments":""}},
            {"id":"c","type":"function","function":{"name":"tap","arguments":"{not json"}}]}}],
            "usage":{"prompt_tokens":120,"completion_tokens":30}}"#;
        let r = parse_reply(text).expect("parses");
        assert_eq!(r.text.as_deref(), Some("Let me tap."));
        assert_eq!(r.calls.len(), 3);
        assert_eq!(r.calls[0].args, Ok(json!({ "ref": "d803" })));
        assert_eq!(r.calls[1].args, Ok(json!({})));
        assert!(r.calls[2].args.is_err(), "bad JSON is told to the model, not fatal");
        assert_eq!((r.usage.input, r.usage.output, r.usage.estimated), (120, 30, false));
        let none = parse_reply(r#"{"choices":[{"message":{"content":null}}]}"#).expect("parses");
        assert!(none.text.is_none() && none.calls.is_empty() && none.usage.estimated);
        assert!(matches!(parse_reply("{}"), Err(ProviderError::BadReply { .. })));
        assert!(matches!(parse_reply("<html>"), Err(ProviderError::BadReply { .. })));
    }
}
