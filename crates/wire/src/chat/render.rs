//! OpenAI Chat Completions: `chat.completion` bodies and `chat.completion.chunk` streams.

use crate::reply::{At, Part, Reply, StopReason};
use crate::sse;
use serde_json::{json, Value};

fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "stop",
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
    }
}

fn usage(r: &Reply) -> Value {
    json!({
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.output_tokens,
        "total_tokens": r.prompt_tokens + r.output_tokens,
        "prompt_tokens_details": {"cached_tokens": r.cache.read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": r.reasoning_tokens, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    })
}

fn text_of(r: &Reply) -> Option<String> {
    let texts: Vec<&str> = r
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.concat())
}

pub fn whole(r: &Reply) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": text_of(r),
        "refusal": null,
        "annotations": [],
    });
    let calls: Vec<Value> = r
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(json!({
                "id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": format!("chatcmpl-{}", r.id),
        "object": "chat.completion",
        "created": r.created,
        "model": r.model,
        "system_fingerprint": "fp_plimsoll",
        "service_tier": "default",
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": finish_reason(r.stop)}],
        "usage": usage(r),
    })
}

/// Index of a tool-call part among the tool-call parts (OpenAI numbers them apart
/// from text).
fn tool_index(r: &Reply, part: usize) -> usize {
    r.parts[..part]
        .iter()
        .filter(|p| matches!(p, Part::ToolCall(_)))
        .count()
}

/// Opens a `data:` chunk up to its `"delta":`. Written by hand, without
/// allocating: this is the hot path of every chat stream.
fn open(r: &Reply, out: &mut Vec<u8>) {
    use std::io::Write;
    out.extend_from_slice(b"data: {\"id\":\"chatcmpl-");
    out.extend_from_slice(r.id.as_bytes());
    out.extend_from_slice(b"\",\"object\":\"chat.completion.chunk\",\"created\":");
    let _ = write!(out, "{}", r.created);
    out.extend_from_slice(b",\"model\":");
    sse::json_str(out, &r.model);
    out.extend_from_slice(
        b",\"system_fingerprint\":\"fp_plimsoll\",\"service_tier\":\"default\",\"choices\":[{\"index\":0,\"delta\":",
    );
}

/// Closes a chunk opened with [`open`]; `finish` is raw JSON (`null` or a string).
fn close(include_usage: bool, finish: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b",\"logprobs\":null,\"finish_reason\":");
    out.extend_from_slice(finish.as_bytes());
    out.extend_from_slice(b"}]");
    if include_usage {
        out.extend_from_slice(b",\"usage\":null");
    }
    out.extend_from_slice(b"}\n\n");
}

pub fn frame(r: &Reply, at: &At, include_usage: bool, out: &mut Vec<u8>) {
    use std::io::Write;
    let part = &r.parts[at.chunk.part as usize];
    if at.first {
        let answer = r.parts.iter().find(|p| !p.is_thought());
        let content = if matches!(answer, Some(Part::Text(_))) {
            "\"\""
        } else {
            "null"
        };
        open(r, out);
        let _ = write!(
            out,
            "{{\"role\":\"assistant\",\"content\":{content},\"refusal\":null}}"
        );
        close(include_usage, "null", out);
    }
    match part {
        Part::Text(_) => {
            if !at.delta.is_empty() {
                open(r, out);
                out.extend_from_slice(b"{\"content\":");
                sse::json_str(out, at.delta);
                out.push(b'}');
                close(include_usage, "null", out);
            }
        }
        Part::ToolCall(c) => {
            let index = tool_index(r, at.chunk.part as usize);
            if at.part_start {
                open(r, out);
                let head = json!({"tool_calls": [{"index": index, "id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": ""}}]});
                sse::json(out, &head);
                close(include_usage, "null", out);
            }
            if !at.delta.is_empty() {
                open(r, out);
                let _ = write!(
                    out,
                    "{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":"
                );
                sse::json_str(out, at.delta);
                out.extend_from_slice(b"}}]}");
                close(include_usage, "null", out);
            }
        }
        // Chat Completions never shows reasoning: it only takes its time.
        Part::Thinking { .. } | Part::Hidden { .. } => {}
    }
    if at.last {
        open(r, out);
        out.extend_from_slice(b"{}");
        close(
            include_usage,
            &format!("\"{}\"", finish_reason(r.stop)),
            out,
        );
        if include_usage {
            let tail = json!({
                "id": format!("chatcmpl-{}", r.id), "object": "chat.completion.chunk",
                "created": r.created, "model": r.model, "system_fingerprint": "fp_plimsoll",
                "service_tier": "default", "choices": [], "usage": usage(r),
            });
            sse::data(out, tail.to_string().as_bytes());
        }
        sse::data(out, b"[DONE]");
    }
}
