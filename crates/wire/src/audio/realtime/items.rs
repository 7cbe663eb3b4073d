//! A Realtime conversation's items — messages (text, or audio with the transcript the
//! server heard), function calls and their outputs — read from `conversation.item.create`,
//! written as the server's events carry them, and turned into one normalized
//! [`Request`] so a response is decided, and its conversation checked, as a chat call is.

use crate::error::WireError;
use crate::request::{Message, Request, Role, ToolCall};
use crate::Api;
use serde_json::{json, Value};

/// One piece of a message's content.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// Typed text (`input_text` from the user, `output_text` from the assistant).
    Text(String),
    /// Audio, with the transcript of it (the server's hearing, or what it said).
    Audio { transcript: Option<String> },
}

/// One item of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Message {
        id: String,
        role: Role,
        content: Vec<Content>,
    },
    FunctionCall {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
    FunctionCallOutput {
        id: String,
        call_id: String,
        output: String,
    },
}

impl Item {
    pub fn id(&self) -> &str {
        match self {
            Item::Message { id, .. }
            | Item::FunctionCall { id, .. }
            | Item::FunctionCallOutput { id, .. } => id,
        }
    }

    /// Reads an item of `conversation.item.create`; an item without an id gets one later.
    pub fn read(v: &Value) -> Result<Item, WireError> {
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let text = |k: &str| -> Result<String, WireError> {
            v.get(k)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| WireError::invalid(format!("item.{k}"), "is required"))
        };
        match v.get("type").and_then(Value::as_str) {
            Some("message") | None => {
                let role = match v.get("role").and_then(Value::as_str) {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    Some("system") => Role::System,
                    _ => {
                        return Err(WireError::invalid(
                            "item.role",
                            "must be user, assistant or system",
                        ))
                    }
                };
                let content = v
                    .get("content")
                    .and_then(Value::as_array)
                    .ok_or_else(|| WireError::invalid("item.content", "is required (an array)"))?
                    .iter()
                    .map(|c| match c.get("type").and_then(Value::as_str) {
                        Some("input_audio" | "output_audio" | "audio") => Content::Audio {
                            transcript: c
                                .get("transcript")
                                .and_then(Value::as_str)
                                .map(String::from),
                        },
                        _ => Content::Text(
                            c.get("text")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                        ),
                    })
                    .collect();
                Ok(Item::Message { id, role, content })
            }
            Some("function_call") => Ok(Item::FunctionCall {
                id,
                call_id: text("call_id")?,
                name: text("name")?,
                arguments: text("arguments")?,
            }),
            Some("function_call_output") => Ok(Item::FunctionCallOutput {
                id,
                call_id: text("call_id")?,
                output: text("output")?,
            }),
            Some(other) => Err(WireError::invalid(
                "item.type",
                format!("{other:?} is not one of message, function_call, function_call_output"),
            )),
        }
    }

    /// The item as the server's events carry it (`status` completed unless given).
    pub fn to_json(&self, status: &str) -> Value {
        match self {
            Item::Message { id, role, content } => {
                let (input, role) = match role {
                    Role::User => (true, "user"),
                    Role::System => (true, "system"),
                    _ => (false, "assistant"),
                };
                let parts: Vec<Value> = content
                    .iter()
                    .map(|c| match (c, input) {
                        (Content::Text(t), true) => json!({"type": "input_text", "text": t}),
                        (Content::Text(t), false) => json!({"type": "output_text", "text": t}),
                        (Content::Audio { transcript }, true) => {
                            json!({"type": "input_audio", "transcript": transcript})
                        }
                        (Content::Audio { transcript }, false) => {
                            json!({"type": "output_audio", "transcript": transcript})
                        }
                    })
                    .collect();
                json!({"id": id, "object": "realtime.item", "type": "message", "status": status, "role": role, "content": parts})
            }
            Item::FunctionCall {
                id,
                call_id,
                name,
                arguments,
            } => json!({"id": id, "object": "realtime.item",
                "type": "function_call", "status": status, "call_id": call_id, "name": name, "arguments": arguments}),
            Item::FunctionCallOutput {
                id,
                call_id,
                output,
            } => json!({"id": id, "object": "realtime.item",
                "type": "function_call_output", "status": status, "call_id": call_id, "output": output}),
        }
    }

    /// What a message says, its texts and transcripts joined.
    fn said(content: &[Content]) -> String {
        content
            .iter()
            .filter_map(|c| match c {
                Content::Text(t) => Some(t.as_str()),
                Content::Audio { transcript } => transcript.as_deref(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The conversation as one request of the session's model: the instructions as its
/// system prompt, each message with what it said (a user's audio by its transcript), each
/// function call on the assistant message before it, each output a tool result.
pub fn conversation(
    session: &super::Session,
    items: &[Item],
    stream: bool,
) -> Result<Request, WireError> {
    let mut messages: Vec<Message> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Message { role, content, .. } => {
                let mut m = Message::new(*role, Item::said(content));
                m.path = format!("items.{i}");
                messages.push(m);
            }
            Item::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                let call = ToolCall {
                    id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                };
                match messages.last_mut() {
                    Some(m) if m.role == Role::Assistant => m.tool_calls.push(call),
                    _ => {
                        let mut m = Message::new(Role::Assistant, String::new());
                        m.tool_calls.push(call);
                        m.path = format!("items.{i}");
                        messages.push(m);
                    }
                }
            }
            Item::FunctionCallOutput {
                call_id, output, ..
            } => {
                let mut m = Message::new(Role::Tool, output.clone());
                m.tool_call_id = Some(call_id.clone());
                m.path = format!("items.{i}");
                messages.push(m);
            }
        }
    }
    crate::request::finish(Request {
        api: Api::Responses,
        model: session.model.clone(),
        stream,
        include_usage: true,
        system: session.instructions.clone(),
        messages,
        tools: session.tools.clone(),
        tool_choice: session.tool_choice.clone(),
        max_output_tokens: session.max_output_tokens,
        prompt_tokens: 0,
        reasoning: None,
        reasoning_returned: false,
        store: false,
        previous_response_id: None,
        cache: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_of_audio_and_calls_is_one_request() {
        let mut s = super::super::Session::new("s".into(), "gpt-realtime".into());
        s.instructions = "be brief".into();
        let items = vec![
            Item::Message {
                id: "i1".into(),
                role: Role::User,
                content: vec![Content::Audio {
                    transcript: Some("[[plimsoll session=a-s0 nonce=psn1 turn=1]] hi".into()),
                }],
            },
            Item::FunctionCall {
                id: "i2".into(),
                call_id: "call_1".into(),
                name: "lookup".into(),
                arguments: "{}".into(),
            },
            Item::FunctionCallOutput {
                id: "i3".into(),
                call_id: "call_1".into(),
                output: "42".into(),
            },
        ];
        let r = conversation(&s, &items, true).unwrap();
        assert_eq!(r.system, "be brief");
        assert_eq!(r.messages.len(), 3);
        assert!(r.messages[0].text.starts_with("[[plimsoll session=a-s0"));
        assert_eq!(r.messages[1].tool_calls[0].name, "lookup");
        assert_eq!(r.messages[2].tool_call_id.as_deref(), Some("call_1"));
        let v = items[0].to_json("completed");
        assert_eq!(v["content"][0]["type"], "input_audio");
        let read = Item::read(&serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]})).unwrap();
        assert!(matches!(
            read,
            Item::Message {
                role: Role::User,
                ..
            }
        ));
        assert!(
            Item::read(&serde_json::json!({"type": "message", "role": "bot", "content": []}))
                .is_err()
        );
    }
}
