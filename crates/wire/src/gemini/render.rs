//! Gemini `generateContent`: `GenerateContentResponse` bodies, and the same objects as
//! SSE `data:` events for `streamGenerateContent?alt=sse` (text in pieces, each function
//! call whole, `finishReason` and the full `usageMetadata` on the last).
//!
//! Reasoning: its tokens count in `thoughtsTokenCount`; shown thoughts (the client
//! asked `includeThoughts`) are `thought: true` text parts; the thought signature rides
//! on the first part of the answer, as the API puts it.

use crate::reply::{At, Part, Reply, StopReason};
use crate::sse;
use serde_json::{json, Value};

fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::MaxTokens => "MAX_TOKENS",
        _ => "STOP",
    }
}

fn usage(r: &Reply) -> Value {
    let answer = r.output_tokens.saturating_sub(r.reasoning_tokens);
    let mut u = json!({
        "promptTokenCount": r.prompt_tokens,
        "candidatesTokenCount": answer,
        "totalTokenCount": r.prompt_tokens + r.output_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": r.prompt_tokens}],
    });
    if r.reasoning_tokens > 0 {
        u["thoughtsTokenCount"] = r.reasoning_tokens.into();
    }
    cached(r, &mut u);
    u
}

/// The implicit cache's hit, as Gemini reports it: only when there was one (a JSON
/// field of zero is left out, as the API's protobuf JSON does).
fn cached(r: &Reply, u: &mut Value) {
    if r.cache.read > 0 {
        u["cachedContentTokenCount"] = r.cache.read.into();
        u["cacheTokensDetails"] = json!([{"modality": "TEXT", "tokenCount": r.cache.read}]);
    }
}

/// The thought signature of the reply, and the index of the part that carries it (the
/// first part of the answer).
fn signature(r: &Reply) -> Option<(usize, &str)> {
    let sig = r.parts.iter().find_map(|p| match p {
        Part::Thinking { signature, .. } => Some(signature.as_str()),
        Part::Hidden { seal, .. } => seal.as_deref(),
        _ => None,
    })?;
    let at = r.parts.iter().position(|p| !p.is_thought())?;
    Some((at, sig))
}

/// Part `k` as the API shows it, with `text` (the whole or one piece).
fn part(r: &Reply, k: usize, text: &str) -> Option<Value> {
    let mut v = match &r.parts[k] {
        Part::Text(_) => json!({"text": text}),
        Part::Thinking { .. } => json!({"text": text, "thought": true}),
        Part::ToolCall(c) => {
            let args: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
            json!({"functionCall": {"id": c.id, "name": c.name, "args": args}})
        }
        Part::Hidden { .. } => return None,
    };
    if let Some((at, sig)) = signature(r) {
        if at == k {
            v["thoughtSignature"] = sig.into();
        }
    }
    Some(v)
}

fn response(r: &Reply, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if last {
        candidate["finishReason"] = finish_reason(r.stop).into();
    }
    let usage = if last {
        usage(r)
    } else {
        let mut u =
            json!({"promptTokenCount": r.prompt_tokens, "totalTokenCount": r.prompt_tokens});
        cached(r, &mut u);
        u
    };
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": r.model,
        "responseId": r.id,
    })
}

pub fn whole(r: &Reply) -> Value {
    let parts = (0..r.parts.len())
        .filter_map(|k| part(r, k, r.parts[k].streamed_text()))
        .collect();
    response(r, parts, true)
}

pub fn frame(r: &Reply, at: &At, out: &mut Vec<u8>) {
    let k = at.chunk.part as usize;
    let piece = match &r.parts[k] {
        // A function call goes whole, once its arguments' time has passed.
        Part::ToolCall(c) if at.part_end => part(r, k, &c.arguments),
        Part::ToolCall(_) | Part::Hidden { .. } => None,
        // Shown thoughts only when asked (they are `Thinking` parts then).
        _ if at.delta.is_empty() => None,
        _ => {
            let mut p = part(r, k, at.delta);
            // The signature goes on the part's first piece only.
            if !at.part_start {
                if let Some(v) = p.as_mut() {
                    v.as_object_mut().map(|o| o.remove("thoughtSignature"));
                }
            }
            p
        }
    };
    if piece.is_none() && !at.last {
        return;
    }
    let chunk = response(r, piece.into_iter().collect(), at.last);
    sse::data(out, chunk.to_string().as_bytes());
}
