//! Reasoning sent back intact: the thoughts a client returns must carry the seals the
//! model put on them (`provider/thoughts.rs`), where and as the API requires them (its
//! dialect's rules). A request that drops, moves or alters them gets the API's own 400,
//! and the oracle records what was lost.

use crate::ledger::Violation;
use crate::provider::thoughts::{signature, unsealed};
use wire::{Request, Role, Seals, WireError};

/// A request the mock refuses over reasoning, and what the oracle records.
pub struct Refused {
    pub error: WireError,
    pub violation: Violation,
}

/// The run's seals for one session, as a dialect checks them; `stored` says whether a
/// response id is in the mock's store (for reasoning items sent back by id only).
struct SessionSeals<'a, F> {
    key: u64,
    session: &'a str,
    stored: F,
}

impl<F: Fn(&str) -> bool> Seals for SessionSeals<'_, F> {
    fn signs(&self, text: &str, sig: &str) -> bool {
        sig == signature(self.key, self.session, text)
    }

    fn seals(&self, sealed: &str, nonce: Option<&str>) -> bool {
        unsealed(self.key, self.session, sealed, nonce)
    }

    fn stored(&self, response_id: &str) -> bool {
        (self.stored)(response_id)
    }
}

/// Checks the reasoning a request carries back by its API's rules (Anthropic thinking
/// when the request enables it, OpenAI reasoning items always, Gemini thought signatures
/// unless thinking is off). `None` when all is well.
pub fn check(
    req: &Request,
    session: &str,
    key: u64,
    stored: impl Fn(&str) -> bool,
) -> Option<Refused> {
    let seals = SessionSeals {
        key,
        session,
        stored,
    };
    let fault = req.api.dialect().check_thoughts(req, &seals)?;
    // The turn: the user messages before the one at fault.
    let turn = req.messages[..fault.at]
        .iter()
        .filter(|m| m.role == Role::User)
        .count() as u32;
    Some(Refused {
        error: fault.error,
        violation: Violation {
            session: session.to_string(),
            turn,
            kind: "reasoning".into(),
            detail: fault.detail,
            excerpt: fault.excerpt.chars().take(120).collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::thoughts::{key, seal};
    use serde_json::json;
    use wire::Api;

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
