//! The model's reasoning and its seals: signatures the mock puts on what it thought,
//! checked when the client sends the thoughts back.
//!
//! Anthropic `thinking` blocks carry a `signature` bound to the run's seed, the
//! session and the thinking text; `redacted_thinking` `data` and OpenAI reasoning
//! items' `encrypted_content` are bound to the session and a nonce (the reply or item
//! id). A request that drops, moves or alters them gets the API's own 400, and the
//! oracle records what was lost.

use crate::hash::fnv1a;
use crate::ledger::Violation;
use std::fmt::Write;
use wire::{Api, Message, Request, Role, Thought, ThoughtKind, WireError};

/// The run's sealing key: from the seed, so replies stay byte-identical per seed.
pub fn key(seed: u64) -> u64 {
    fnv1a(seed, b"plimsoll thoughts")
}

/// 256 bits of keyed hash over `parts`, as 64 hex digits.
fn tag(key: u64, parts: &[&str]) -> String {
    let mut h = key;
    for p in parts {
        h = fnv1a(h, p.as_bytes());
        h = fnv1a(h, &[0xff]);
    }
    let mut out = String::with_capacity(64);
    for round in 0..4u8 {
        let _ = write!(out, "{:016x}", fnv1a(h, &[round]));
    }
    out
}

/// The `signature` of a thinking block with `text`, said to `session`.
pub fn signature(key: u64, session: &str, text: &str) -> String {
    tag(key, &["thinking", session, text])
}

/// Opaque reasoning (`redacted_thinking` data, `encrypted_content`) bound to
/// `session` and `nonce`: the tag, then the nonce.
pub fn seal(key: u64, session: &str, nonce: &str) -> String {
    format!("{}{nonce}", tag(key, &["sealed", session, nonce]))
}

/// Whether `sealed` is a seal this run made for `session`, and for `nonce` when given.
fn unsealed(key: u64, session: &str, sealed: &str, nonce: Option<&str>) -> bool {
    let (Some(t), Some(n)) = (sealed.get(..64), sealed.get(64..)) else {
        return false;
    };
    nonce.is_none_or(|want| want == n) && t == tag(key, &["sealed", session, n])
}

/// A request the mock refuses over reasoning, and what the oracle records.
pub struct Refused {
    pub error: WireError,
    pub violation: Violation,
}

/// Checks the reasoning a request carries back: Anthropic thinking (when the
/// request enables it), OpenAI reasoning items (always; `stored` says whether a
/// response id is in the mock's store, for items sent back by id only), Gemini thought
/// signatures (unless thinking is off). `None` when all is well.
pub fn check(
    req: &Request,
    session: &str,
    key: u64,
    stored: impl Fn(&str) -> bool,
) -> Option<Refused> {
    match req.api {
        Api::Messages if req.reasoning.is_some() => check_thinking(req, session, key),
        Api::Responses => check_reasoning_items(req, session, key, stored),
        Api::Gemini if req.reasoning.is_some() => check_signatures(req, session, key),
        _ => None,
    }
}

fn refused(
    session: &str,
    req: &Request,
    at: usize,
    error: WireError,
    detail: String,
    excerpt: &str,
) -> Option<Refused> {
    let turn = req.messages[..at]
        .iter()
        .filter(|m| m.role == Role::User)
        .count() as u32;
    Some(Refused {
        error,
        violation: Violation {
            session: session.to_string(),
            turn,
            kind: "reasoning",
            detail,
            excerpt: excerpt.chars().take(120).collect(),
        },
    })
}

fn check_thinking(req: &Request, session: &str, key: u64) -> Option<Refused> {
    for (i, m) in req.messages.iter().enumerate() {
        for t in &m.thoughts {
            let good = match t.kind {
                ThoughtKind::Thinking => t.seal == signature(key, session, &t.text),
                _ => unsealed(key, session, &t.seal, None),
            };
            if !good {
                let (block, field) = match t.kind {
                    ThoughtKind::Thinking => ("thinking", "signature"),
                    _ => ("redacted_thinking", "data"),
                };
                let error = WireError::invalid(
                    t.path.clone(),
                    format!("Invalid `{field}` in `{block}` block"),
                );
                let detail = format!(
                    "{block} block altered: its {field} does not match (at {})",
                    t.path
                );
                return refused(session, req, i, error, detail, &t.text);
            }
        }
    }
    let (at, m) = open_tool_loop(&req.messages)?;
    if m.thoughts.first().is_some_and(|t| !t.late) {
        return None;
    }
    let found = if m.lead.is_empty() {
        "tool_use"
    } else {
        m.lead
    };
    let error = WireError::invalid(
        format!("{}.content.0.type", m.path),
        format!("Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"),
    );
    let call = m.tool_calls.first().map_or("", |c| c.id.as_str());
    let detail = if m.thoughts.is_empty() {
        format!("thinking block before tool call {call} dropped")
    } else {
        format!("thinking block before tool call {call} moved after the {found} block")
    };
    let said = match m.tool_calls.first() {
        Some(c) if m.text.is_empty() => format!("{}({})", c.name, c.arguments),
        _ => m.text.clone(),
    };
    refused(session, req, at, error, detail, &said)
}

/// Gemini: every thought signature sent back must be one this run gave the session, and
/// each function-calling model turn since the user last spoke must carry its own on
/// its first function call.
fn check_signatures(req: &Request, session: &str, key: u64) -> Option<Refused> {
    for (i, m) in req.messages.iter().enumerate() {
        if let Some(t) = m
            .thoughts
            .iter()
            .find(|t| !unsealed(key, session, &t.seal, None))
        {
            let error = WireError::verbatim(None, "Corrupted thought signature.", None);
            let detail = format!(
                "thought signature altered: it does not verify (at {})",
                t.path
            );
            return refused(session, req, i, error, detail, &t.seal);
        }
    }
    let turn = req
        .messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |u| u + 1);
    for (i, m) in req.messages.iter().enumerate().skip(turn) {
        let Some(call) = m.tool_calls.first() else {
            continue;
        };
        if m.thoughts.first().is_some_and(|t| !t.late) {
            continue;
        }
        let position = m
            .path
            .rsplit('.')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .map_or(i + 1, |n| n + 1);
        let error = WireError::verbatim(
            None,
            format!("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , position {position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", call.name),
            None,
        );
        let detail = format!("thought signature of tool call {} dropped", call.id);
        let said = format!("{}({})", call.name, call.arguments);
        return refused(session, req, i, error, detail, &said);
    }
    None
}

/// The assistant message whose tool calls the conversation is still answering: the
/// last assistant message, when it has tool calls and what follows it answers them (tool
/// results, with or without text beside them in the same user message).
fn open_tool_loop(messages: &[Message]) -> Option<(usize, &Message)> {
    let at = messages.iter().rposition(|m| m.role == Role::Assistant)?;
    let after = &messages[at + 1..];
    let answering = after.iter().any(|m| m.role == Role::Tool)
        && after
            .iter()
            .all(|m| matches!(m.role, Role::Tool | Role::User));
    (answering && !messages[at].tool_calls.is_empty()).then(|| (at, &messages[at]))
}

/// The reasoning item the mock issued before function call item `fc_<reply>_<k>`
/// (k ≥ 1: the reply reasoned first, at part 0).
fn required_reasoning(item_id: &str) -> Option<String> {
    let rest = item_id.strip_prefix("fc_")?;
    let (reply, k) = rest.rsplit_once('_')?;
    let issued = reply.len() == 16 && reply.bytes().all(|b| b.is_ascii_hexdigit());
    (issued && k.parse::<u32>().ok()? >= 1).then(|| format!("rs_{reply}_0"))
}

fn check_reasoning_items(
    req: &Request,
    session: &str,
    key: u64,
    stored: impl Fn(&str) -> bool,
) -> Option<Refused> {
    let mut seen: Vec<&Thought> = Vec::new();
    for (i, m) in req.messages.iter().enumerate() {
        for t in &m.thoughts {
            let id = t.id.as_deref().unwrap_or("");
            // Sent back by id only: the API looks it up among stored responses' items.
            let response = id
                .strip_prefix("rs_")
                .and_then(|r| r.rsplit_once('_'))
                .map(|(r, _)| format!("resp_{r}"));
            if let (true, Some(response)) = (t.seal.is_empty(), response) {
                if !stored(&response) {
                    let error = WireError::verbatim(
                        Some("input"),
                        format!("Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."),
                        None,
                    )
                    .of_kind(wire::ErrorKind::NotFound);
                    let detail = format!("reasoning item {id} sent back by id only, but its response was not stored: send its encrypted_content (include \"reasoning.encrypted_content\") or let the response be stored");
                    return refused(session, req, i, error, detail, id);
                }
            }
            if !t.seal.is_empty() && !unsealed(key, session, &t.seal, Some(id)) {
                let error = WireError::verbatim(
                    None,
                    format!("The encrypted content for item {id} could not be verified. Reason: Encrypted content could not be decrypted or parsed."),
                    Some("invalid_encrypted_content"),
                );
                let detail =
                    format!("reasoning item {id} altered: its encrypted content does not verify");
                return refused(session, req, i, error, detail, &t.seal);
            }
            seen.push(t);
        }
        let Some(item) = m.item_id.as_deref() else {
            continue;
        };
        let Some(need) = required_reasoning(item) else {
            continue;
        };
        if !seen.iter().any(|t| t.id.as_deref() == Some(need.as_str())) {
            let error = WireError::verbatim(
                Some("input"),
                format!("Item '{item}' of type 'function_call' was provided without its required 'reasoning' item: '{need}'."),
                None,
            );
            let call = m.tool_calls.first().map_or("", |c| c.id.as_str());
            let detail = format!("reasoning item {need} before tool call {call} dropped");
            return refused(session, req, i, error, detail, &m.text);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(body: serde_json::Value) -> Request {
        Api::Messages.parse(body.to_string().as_bytes()).unwrap()
    }

    fn tool_loop(assistant: serde_json::Value) -> Request {
        messages(json!({"model": "m", "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": assistant},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
        ]}))
    }

    const USE: &str = "tool_use";

    fn use_block() -> serde_json::Value {
        json!({"type": USE, "id": "toolu_1", "name": "f", "input": {}})
    }

    #[test]
    fn a_signed_thinking_block_passes_and_any_change_is_refused() {
        let k = key(1);
        let sig = signature(k, "s1", "I plan.");
        let good = tool_loop(
            json!([{"type": "thinking", "thinking": "I plan.", "signature": sig}, use_block()]),
        );
        assert!(check(&good, "s1", k, |_| true).is_none());
        // Another session, altered text, altered signature: all refused.
        assert!(check(&good, "s2", k, |_| true).is_some());
        let altered = tool_loop(
            json!([{"type": "thinking", "thinking": "I plan!", "signature": sig}, use_block()]),
        );
        let r = check(&altered, "s1", k, |_| true).expect("refused");
        assert_eq!(
            r.error.message,
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        );
        assert_eq!(r.violation.kind, "reasoning");
        assert_eq!(r.violation.turn, 1);
    }

    #[test]
    fn a_dropped_or_moved_thinking_block_gets_the_apis_words() {
        let k = key(1);
        let dropped = check(&tool_loop(json!([use_block()])), "s", k, |_| true).expect("refused");
        assert!(
            dropped.error.message.starts_with("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."),
            "{}", dropped.error.message
        );
        assert_eq!(
            dropped.violation.detail,
            "thinking block before tool call toolu_1 dropped"
        );
        let sig = signature(k, "s", "x");
        let moved = tool_loop(
            json!([use_block(), {"type": "thinking", "thinking": "x", "signature": sig}]),
        );
        let r = check(&moved, "s", k, |_| true).expect("refused");
        assert!(r
            .violation
            .detail
            .contains("moved after the tool_use block"));
        // A redacted block sealed for this session leads the message: fine.
        let data = seal(k, "s", "0123456789abcdef");
        let redacted = tool_loop(json!([{"type": "redacted_thinking", "data": data}, use_block()]));
        assert!(check(&redacted, "s", k, |_| true).is_none());
        // Text beside the tool result in the same user message: still the tool loop.
        let with_text = messages(json!({"model": "m", "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use_block()]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
                {"type": "text", "text": "and then?"}]},
        ]}));
        assert!(check(&with_text, "s", k, |_| true).is_some());
        // Thinking switched off in the request: nothing to check.
        let mut off = tool_loop(json!([use_block()]));
        off.reasoning = None;
        assert!(check(&off, "s", k, |_| true).is_none());
    }

    #[test]
    fn responses_reasoning_items_are_verified_and_required_before_their_calls() {
        let k = key(3);
        let enc = seal(k, "s", "rs_0123456789abcdef_0");
        let body = |items: serde_json::Value| {
            Api::Responses
                .parse(json!({"model": "m", "input": items}).to_string().as_bytes())
                .unwrap()
        };
        let call = json!({"type": "function_call", "id": "fc_0123456789abcdef_1",
            "call_id": "call_0123456789abcdef", "name": "f", "arguments": "{}"});
        let out = json!({"type": "function_call_output", "call_id": "call_0123456789abcdef", "output": "ok"});
        let user = json!({"role": "user", "content": "hi"});
        let reasoning = json!({"type": "reasoning", "id": "rs_0123456789abcdef_0", "summary": [], "encrypted_content": enc});
        let good = body(json!([user, reasoning, call, out]));
        assert!(check(&good, "s", k, |_| true).is_none());
        let r = check(&body(json!([user, call, out])), "s", k, |_| true).expect("refused");
        assert_eq!(r.error.message, "Item 'fc_0123456789abcdef_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_0123456789abcdef_0'.");
        let mut bad = reasoning.clone();
        bad["encrypted_content"] = json!(seal(k, "other", "rs_0123456789abcdef_0"));
        let r = check(&body(json!([user, bad, call, out])), "s", k, |_| true).expect("refused");
        assert!(r.error.message.contains("could not be verified"));
    }
}
