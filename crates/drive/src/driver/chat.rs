//! The chat clients of `protocol = "openai-chat"` and `"anthropic-messages"`: the request
//! a conversation makes, the assistant message read back from a plain or streamed reply
//! and appended to the conversation, over one kept HTTP connection. The turn loop is
//! `talk`'s.

use super::http_turn::{send, status_ok, Outgoing};
use super::talk::{Link, Reply, Turn};
use crate::address::target;
use crate::checks::sse_events;
use crate::http::Conn;
use crate::run::Failure;
use crate::spec::Chat;
use crate::stream;
use serde_json::{json, Value};

/// A chat client's session: its connection and the conversation so far.
pub(super) struct ChatLink<'a> {
    chat: &'a Chat,
    http: Option<Conn>,
    conversation: Vec<Value>,
}

impl<'a> ChatLink<'a> {
    pub fn new(chat: &'a Chat) -> ChatLink<'a> {
        ChatLink {
            chat,
            http: None,
            conversation: Vec::new(),
        }
    }
}

impl Link for ChatLink<'_> {
    /// The user's `body` appended to the conversation, all of it sent; the assistant's
    /// reply appended in turn, and what checks and extracts read.
    async fn turn(&mut self, t: &Turn<'_>, url: String, body: String) -> Result<Reply, Failure> {
        let (addr, path) =
            target(&url, t.allow_remote).map_err(|e| Failure::new("config", e.to_string()))?;
        self.conversation
            .push(json!({"role": "user", "content": body}));
        let body = request(self.chat, &self.conversation);
        let mut headers = Vec::with_capacity(t.req.headers.len());
        for (k, v) in &t.req.headers {
            headers.push((k.clone(), t.fill(v)?));
        }
        let out = Outgoing {
            addr,
            method: &t.req.method,
            path: &path,
            headers: &headers,
            body: body.into_bytes(),
            timeout_ms: t.spec.turn_timeout_ms,
            done_event: None,
            pace_bps: t.pace_bps,
        };
        let reply = send(out, &mut self.http).await?;
        status_ok(&reply, t.req.expect_status)?;
        let first = match self.chat.stream {
            true => {
                let events = stream::events(&reply.body);
                stream::first_token(&events, None).and_then(|i| reply.arrival(events[i].end))
            }
            false => None,
        };
        let m = self::reply(self.chat, &reply.body).ok_or_else(|| {
            let snippet: String = String::from_utf8_lossy(&reply.body)
                .chars()
                .take(200)
                .collect();
            Failure::new(
                "protocol",
                format!("the reply is not a chat completion: {snippet}"),
            )
        })?;
        self.conversation.push(m.clone());
        Ok(Reply {
            doc: Some(m),
            first,
            headers: Some(reply.headers),
        })
    }
}

/// The request body: the whole conversation so far, as the official SDKs send it.
fn request(chat: &Chat, conversation: &[Value]) -> String {
    if chat.anthropic {
        let mut body = json!({"model": chat.model, "max_tokens": 1024, "messages": conversation});
        if chat.stream {
            body["stream"] = json!(true);
        }
        return body.to_string();
    }
    let mut body = json!({"model": chat.model, "messages": conversation});
    if chat.stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    body.to_string()
}

/// The assistant message of a reply, to append to the conversation (and to check).
fn reply(chat: &Chat, body: &[u8]) -> Option<Value> {
    if chat.anthropic {
        return anthropic_reply(chat.stream, body);
    }
    if !chat.stream {
        let v: Value = serde_json::from_slice(body).ok()?;
        let m = &v["choices"][0]["message"];
        let mut out = json!({"role": "assistant", "content": m["content"].clone()});
        if m["tool_calls"].as_array().is_some_and(|t| !t.is_empty()) {
            out["tool_calls"] = m["tool_calls"].clone();
        }
        return m.is_object().then_some(out);
    }
    let events = sse_events(body);
    let deltas: Vec<&serde_json::Map<String, Value>> = events
        .iter()
        .filter_map(|v| v["choices"][0]["delta"].as_object())
        .collect();
    let any = !deltas.is_empty();
    let text: String = deltas
        .iter()
        .filter_map(|d| d.get("content").and_then(Value::as_str))
        .collect();
    any.then(|| json!({"role": "assistant", "content": text}))
}

/// A Messages reply: its content blocks as they are (plain), or the text deltas joined
/// into one text block (streamed).
fn anthropic_reply(stream: bool, body: &[u8]) -> Option<Value> {
    if !stream {
        let v: Value = serde_json::from_slice(body).ok()?;
        return v["content"]
            .is_array()
            .then(|| json!({"role": "assistant", "content": v["content"].clone()}));
    }
    let events = sse_events(body);
    let any = events.iter().any(|v| v["type"] == "message_start");
    let text: String = events
        .iter()
        .filter(|v| v["delta"]["type"] == "text_delta")
        .filter_map(|v| v["delta"]["text"].as_str())
        .collect();
    any.then(|| json!({"role": "assistant", "content": [{"type": "text", "text": text}]}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_the_conversation_and_replies_extend_it() {
        let chat = Chat {
            anthropic: false,
            model: "m".into(),
            stream: true,
        };
        let conv = vec![json!({"role": "user", "content": "hi"})];
        let r: Value = serde_json::from_str(&request(&chat, &conv)).unwrap();
        assert_eq!(r["messages"], json!(conv));
        assert_eq!(r["stream"], true);
        let plain = br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello","refusal":null},"finish_reason":"stop"}]}"#;
        let plain_chat = Chat {
            stream: false,
            ..chat.clone()
        };
        assert_eq!(
            reply(&plain_chat, plain).unwrap(),
            json!({"role": "assistant", "content": "Hello"})
        );
        let sse = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: {\"choices\":[],\"usage\":{}}\n\ndata: [DONE]\n\n";
        assert_eq!(
            reply(&chat, sse).unwrap(),
            json!({"role": "assistant", "content": "Hello"})
        );
        // The first token is the first delta with text, not the role chunk.
        let events = crate::stream::events(sse);
        assert_eq!(crate::stream::first_token(&events, None), Some(1));
        assert_eq!(reply(&plain_chat, b"not json"), None);
    }

    #[test]
    fn messages_replies_keep_their_blocks_or_join_their_deltas() {
        let plain =
            br#"{"type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}]}"#;
        assert_eq!(
            anthropic_reply(false, plain).unwrap(),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Hi"}]})
        );
        let sse = b"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"H\"}}\n\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"i\"}}\n\n";
        assert_eq!(
            anthropic_reply(true, sse).unwrap()["content"][0]["text"],
            "Hi"
        );
        assert_eq!(
            crate::stream::first_token(&crate::stream::events(sse), None),
            Some(1)
        );
    }
}
