//! The chat clients of `protocol = "openai-chat"` and `"anthropic-messages"`: the request
//! a conversation makes, the assistant message read back from a plain or streamed reply,
//! and when a stream's first token came.

use crate::session::Chat;
use serde_json::{json, Value};

/// The request body: the whole conversation so far, as the official SDKs send it.
pub(crate) fn request(chat: &Chat, conversation: &[Value]) -> String {
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
pub(crate) fn reply(chat: &Chat, body: &[u8]) -> Option<Value> {
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
    let mut text = String::new();
    let mut any = false;
    for line in String::from_utf8_lossy(body).lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(d) = v["choices"][0]["delta"].as_object() {
            any = true;
            if let Some(t) = d.get("content").and_then(Value::as_str) {
                text.push_str(t);
            }
        }
    }
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
    let mut text = String::new();
    let mut any = false;
    for line in String::from_utf8_lossy(body).lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if v["type"] == "message_start" {
            any = true;
        }
        if v["delta"]["type"] == "text_delta" {
            text.push_str(v["delta"]["text"].as_str().unwrap_or(""));
        }
    }
    any.then(|| json!({"role": "assistant", "content": [{"type": "text", "text": text}]}))
}

/// A Messages stream's first token: a non-empty text delta.
pub(crate) fn has_text_delta(chunk: &[u8]) -> bool {
    let s = String::from_utf8_lossy(chunk);
    s.match_indices("\"text_delta\",\"text\":\"")
        .any(|(i, m)| s[i + m.len()..].chars().next().is_some_and(|c| c != '"'))
}

/// Whether a piece of a stream carries the first token: a non-empty content delta.
pub(crate) fn has_content(chunk: &[u8]) -> bool {
    let s = String::from_utf8_lossy(chunk);
    s.match_indices("\"content\":\"")
        .any(|(i, m)| s[i + m.len()..].chars().next().is_some_and(|c| c != '"'))
}

/// Any byte counts as first (plain replies, other protocols).
pub(crate) fn any_byte(_: &[u8]) -> bool {
    true
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
        assert!(!has_content(
            b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}"
        ));
        assert!(has_content(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}"
        ));
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
        assert!(has_text_delta(
            b"{\"delta\":{\"type\":\"text_delta\",\"text\":\"H\"}}"
        ));
    }
}
