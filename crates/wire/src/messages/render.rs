//! Anthropic Messages: `message` bodies and the typed event stream
//! (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`).

use crate::reply::{At, Part, Reply, StopReason};
use crate::sse;
use serde_json::{json, Value};

fn stop_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
    }
}

/// The prompt's tokens as Anthropic counts them: those after the last breakpoint
/// (`input_tokens`), those written to the cache and those read from it; the three add up
/// to the whole prompt.
fn input_tokens(r: &Reply) -> u32 {
    r.prompt_tokens
        .saturating_sub(r.cache.read + r.cache.written())
}

fn usage(r: &Reply, output: u32) -> Value {
    json!({
        "input_tokens": input_tokens(r),
        "output_tokens": output,
        "cache_creation_input_tokens": r.cache.written(),
        "cache_read_input_tokens": r.cache.read,
        "cache_creation": {"ephemeral_5m_input_tokens": r.cache.write_5m,
                           "ephemeral_1h_input_tokens": r.cache.write_1h},
        "service_tier": "standard",
    })
}

/// A tool call's arguments as a JSON object (what `input` holds).
fn input_of(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| json!({}))
}

fn block(part: &Part, whole: bool) -> Value {
    match part {
        Part::Text(t) => json!({"type": "text", "text": if whole { t.as_str() } else { "" }}),
        Part::Thinking { text, signature } => json!({
            "type": "thinking",
            "thinking": if whole { text.as_str() } else { "" },
            "signature": if whole { signature.as_str() } else { "" },
        }),
        Part::Hidden { seal, .. } => {
            json!({"type": "redacted_thinking", "data": seal.as_deref().unwrap_or("")})
        }
        Part::ToolCall(c) => json!({
            "type": "tool_use", "id": c.id, "name": c.name,
            "input": if whole { input_of(&c.arguments) } else { json!({}) },
        }),
    }
}

pub fn whole(r: &Reply) -> Value {
    json!({
        "id": format!("msg_{}", r.id),
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": r.parts.iter().map(|p| block(p, true)).collect::<Vec<_>>(),
        "stop_reason": stop_reason(r.stop),
        "stop_sequence": null,
        "usage": usage(r, r.output_tokens),
    })
}

fn event(out: &mut Vec<u8>, name: &str, v: &Value) {
    sse::event(out, name, v.to_string().as_bytes());
}

pub fn frame(r: &Reply, at: &At, out: &mut Vec<u8>) {
    let index = at.chunk.part;
    let part = &r.parts[index as usize];
    if at.first {
        let message = json!({
            "id": format!("msg_{}", r.id), "type": "message", "role": "assistant",
            "model": r.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage(r, 1),
        });
        event(
            out,
            "message_start",
            &json!({"type": "message_start", "message": message}),
        );
        event(out, "ping", &json!({"type": "ping"}));
    }
    if at.part_start {
        event(
            out,
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block(part, false)}),
        );
    }
    if !at.delta.is_empty() {
        // Hand-written: the hot path of every Anthropic stream.
        out.extend_from_slice(
            b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":",
        );
        out.extend_from_slice(index.to_string().as_bytes());
        match part {
            Part::Text(_) => {
                out.extend_from_slice(b",\"delta\":{\"type\":\"text_delta\",\"text\":")
            }
            Part::ToolCall(_) => out
                .extend_from_slice(b",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":"),
            Part::Thinking { .. } => {
                out.extend_from_slice(b",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":")
            }
            Part::Hidden { .. } => unreachable!("hidden reasoning streams no text"),
        }
        sse::json_str(out, at.delta);
        out.extend_from_slice(b"}}\n\n");
    }
    if let (true, Part::Thinking { signature, .. }) = (at.part_end, part) {
        event(
            out,
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": signature}}),
        );
    }
    if at.part_end {
        event(
            out,
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
    }
    if at.last {
        event(
            out,
            "message_delta",
            &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop_reason(r.stop), "stop_sequence": null},
                    "usage": {"input_tokens": input_tokens(r), "output_tokens": r.output_tokens,
                              "cache_creation_input_tokens": r.cache.written(),
                              "cache_read_input_tokens": r.cache.read}}),
        );
        event(out, "message_stop", &json!({"type": "message_stop"}));
    }
}
