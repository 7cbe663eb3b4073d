//! OpenAI Chat Completions: `chat.completion` bodies and `chat.completion.chunk` streams.

use crate::sse;
use crate::stream::At;
use crate::{Part, Reply, StopReason};
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
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    })
}

fn text_of(r: &Reply) -> Option<String> {
    let texts: Vec<&str> = r
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            Part::ToolCall(_) => None,
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
            Part::Text(_) => None,
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

/// One `data:` chunk whose `delta` is the raw JSON `delta` and `finish_reason` the
/// raw JSON `finish`. Written by hand: this is the hot path of every chat stream.
fn chunk(r: &Reply, include_usage: bool, delta: &[u8], finish: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"data: {\"id\":\"chatcmpl-");
    out.extend_from_slice(r.id.as_bytes());
    out.extend_from_slice(b"\",\"object\":\"chat.completion.chunk\",\"created\":");
    out.extend_from_slice(r.created.to_string().as_bytes());
    out.extend_from_slice(b",\"model\":");
    sse::json_str(out, &r.model);
    out.extend_from_slice(b",\"system_fingerprint\":\"fp_plimsoll\",\"service_tier\":\"default\",\"choices\":[{\"index\":0,\"delta\":");
    out.extend_from_slice(delta);
    out.extend_from_slice(b",\"logprobs\":null,\"finish_reason\":");
    out.extend_from_slice(finish.as_bytes());
    out.extend_from_slice(b"}]");
    if include_usage {
        out.extend_from_slice(b",\"usage\":null");
    }
    out.extend_from_slice(b"}\n\n");
}

pub fn frame(r: &Reply, at: &At, include_usage: bool, out: &mut Vec<u8>) {
    let part = &r.parts[at.chunk.part as usize];
    let mut delta = Vec::with_capacity(64 + at.delta.len());
    if at.first {
        let content = if matches!(r.parts[0], Part::Text(_)) {
            "\"\""
        } else {
            "null"
        };
        delta.extend_from_slice(b"{\"role\":\"assistant\",\"content\":");
        delta.extend_from_slice(content.as_bytes());
        delta.extend_from_slice(b",\"refusal\":null}");
        chunk(r, include_usage, &delta, "null", out);
        delta.clear();
    }
    match part {
        Part::Text(_) => {
            if !at.delta.is_empty() {
                delta.extend_from_slice(b"{\"content\":");
                sse::json_str(&mut delta, at.delta);
                delta.push(b'}');
                chunk(r, include_usage, &delta, "null", out);
            }
        }
        Part::ToolCall(c) => {
            let index = tool_index(r, at.chunk.part as usize);
            if at.part_start {
                let head = json!({"tool_calls": [{"index": index, "id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": ""}}]});
                sse::json(&mut delta, &head);
                chunk(r, include_usage, &delta, "null", out);
                delta.clear();
            }
            if !at.delta.is_empty() {
                delta.extend_from_slice(b"{\"tool_calls\":[{\"index\":");
                delta.extend_from_slice(index.to_string().as_bytes());
                delta.extend_from_slice(b",\"function\":{\"arguments\":");
                sse::json_str(&mut delta, at.delta);
                delta.extend_from_slice(b"}}]}");
                chunk(r, include_usage, &delta, "null", out);
            }
        }
    }
    if at.last {
        let finish = format!("\"{}\"", finish_reason(r.stop));
        chunk(r, include_usage, b"{}", &finish, out);
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
