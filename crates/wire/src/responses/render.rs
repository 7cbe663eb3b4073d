//! OpenAI Responses: `response` bodies and the typed event stream
//! (`response.created`, `response.output_item.added`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`, … `response.completed`), each event
//! carrying its `sequence_number`.

use crate::reply::{At, Part, Reply, StopReason};
use crate::responses::items::item_id;
use crate::sse;
use serde_json::{json, Value};

fn text_content(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

fn item(r: &Reply, part: usize, done: bool) -> Value {
    let status = if done { "completed" } else { "in_progress" };
    match &r.parts[part] {
        Part::Text(t) => json!({
            "id": item_id(r, part), "type": "message", "status": status, "role": "assistant",
            "content": if done { vec![text_content(t)] } else { vec![] },
        }),
        Part::ToolCall(c) => json!({
            "id": item_id(r, part), "type": "function_call", "status": status,
            "call_id": c.id, "name": c.name,
            "arguments": if done { c.arguments.as_str() } else { "" },
        }),
        Part::Hidden { seal, .. } => {
            let mut v = json!({"id": item_id(r, part), "type": "reasoning", "summary": []});
            if let (true, Some(s)) = (done, seal) {
                v["encrypted_content"] = Value::from(s.as_str());
            }
            v
        }
        Part::Thinking { .. } => {
            json!({"id": item_id(r, part), "type": "reasoning", "summary": []})
        }
    }
}

fn response(r: &Reply, done: bool) -> Value {
    let (status, output, usage) = if done {
        let output: Vec<Value> = (0..r.parts.len()).map(|i| item(r, i, true)).collect();
        let usage = json!({
            "input_tokens": r.prompt_tokens,
            "input_tokens_details": {"cached_tokens": r.cache.read, "cache_write_tokens": 0},
            "output_tokens": r.output_tokens,
            "output_tokens_details": {"reasoning_tokens": r.reasoning_tokens},
            "total_tokens": r.prompt_tokens + r.output_tokens,
        });
        (
            if r.stop == StopReason::MaxTokens {
                "incomplete"
            } else {
                "completed"
            },
            output,
            usage,
        )
    } else {
        ("in_progress", vec![], Value::Null)
    };
    let incomplete =
        (done && r.stop == StopReason::MaxTokens).then(|| json!({"reason": "max_output_tokens"}));
    json!({
        "id": format!("resp_{}", r.id),
        "object": "response",
        "created_at": r.created,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "instructions": null,
        "max_output_tokens": null,
        "model": r.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    })
}

pub fn whole(r: &Reply) -> Value {
    response(r, true)
}

fn event(out: &mut Vec<u8>, seq: &mut u32, name: &str, mut v: Value) {
    v["type"] = Value::from(name);
    v["sequence_number"] = Value::from(*seq);
    *seq += 1;
    sse::event(out, name, v.to_string().as_bytes());
}

pub fn frame(r: &Reply, at: &At, seq: &mut u32, out: &mut Vec<u8>) {
    let p = at.chunk.part as usize;
    let id = item_id(r, p);
    if at.first {
        for name in ["response.created", "response.in_progress"] {
            event(out, seq, name, json!({"response": response(r, false)}));
        }
    }
    if at.part_start {
        item_added(r, p, &id, seq, out);
    }
    if !at.delta.is_empty() && !r.parts[p].is_thought() {
        delta(r, p, &id, at.delta, seq, out);
    }
    if at.part_end {
        item_done(r, p, &id, seq, out);
    }
    if at.last {
        let name = if r.stop == StopReason::MaxTokens {
            "response.incomplete"
        } else {
            "response.completed"
        };
        event(out, seq, name, json!({"response": response(r, true)}));
    }
}

/// Part `p` begins: its item, and for text its content part.
fn item_added(r: &Reply, p: usize, id: &str, seq: &mut u32, out: &mut Vec<u8>) {
    event(
        out,
        seq,
        "response.output_item.added",
        json!({"output_index": p, "item": item(r, p, false)}),
    );
    if matches!(r.parts[p], Part::Text(_)) {
        event(
            out,
            seq,
            "response.content_part.added",
            json!({"item_id": id, "output_index": p, "content_index": 0, "part": text_content("")}),
        );
    }
}

/// One delta of text or of a function call's arguments. Hand-written: the hot path of
/// every Responses stream.
fn delta(r: &Reply, p: usize, id: &str, delta: &str, seq: &mut u32, out: &mut Vec<u8>) {
    let is_text = matches!(r.parts[p], Part::Text(_));
    let name = if is_text {
        "response.output_text.delta"
    } else {
        "response.function_call_arguments.delta"
    };
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: {\"type\":\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\",\"sequence_number\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    *seq += 1;
    out.extend_from_slice(b",\"item_id\":");
    sse::json_str(out, id);
    out.extend_from_slice(b",\"output_index\":");
    out.extend_from_slice(p.to_string().as_bytes());
    if is_text {
        out.extend_from_slice(b",\"content_index\":0,\"logprobs\":[]");
    }
    out.extend_from_slice(b",\"delta\":");
    sse::json_str(out, delta);
    out.extend_from_slice(b"}\n\n");
}

/// Part `p` ends: its text or arguments whole, then its item done.
fn item_done(r: &Reply, p: usize, id: &str, seq: &mut u32, out: &mut Vec<u8>) {
    match &r.parts[p] {
        Part::Text(t) => {
            event(
                out,
                seq,
                "response.output_text.done",
                json!({"item_id": id, "output_index": p, "content_index": 0, "text": t, "logprobs": []}),
            );
            event(
                out,
                seq,
                "response.content_part.done",
                json!({"item_id": id, "output_index": p, "content_index": 0, "part": text_content(t)}),
            );
        }
        Part::ToolCall(c) => {
            event(
                out,
                seq,
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": p, "name": c.name, "arguments": c.arguments}),
            );
        }
        Part::Thinking { .. } | Part::Hidden { .. } => {}
    }
    event(
        out,
        seq,
        "response.output_item.done",
        json!({"output_index": p, "item": item(r, p, true)}),
    );
}
