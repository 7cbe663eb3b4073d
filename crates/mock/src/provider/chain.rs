//! Stored conversations: what a later request goes on from (a Responses request's
//! `previous_response_id`).
//!
//! What an API keeps after a reply, and under which id, is its dialect's (Responses:
//! with `store`, the input then the output items as a client would send them back,
//! reasoning items included, under `resp_<reply>`); how much the mock keeps is this
//! module's: the latest [`KEEP`] conversations within [`BUDGET`] bytes of text. An older
//! or unknown id gets the API's own 400 (`previous_response_not_found`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use wire::{Message, Reply, Request, WireError};

/// Responses kept for `previous_response_id` at most …
pub const KEEP: usize = 4096;
/// … and at most this much of their text (a stateless client that lets every response be
/// stored sends its whole conversation each time: the store must not grow with it).
pub const BUDGET: usize = 64 << 20;

/// Stored conversations by response id (with their size), the ids oldest first, and
/// the bytes held.
type Store = (
    HashMap<String, (Arc<Vec<Message>>, usize)>,
    VecDeque<String>,
    usize,
);

#[derive(Default)]
pub struct Chains {
    inner: Mutex<Store>,
}

/// Roughly the bytes a conversation holds.
fn size(conversation: &[Message]) -> usize {
    conversation
        .iter()
        .map(|m| {
            64 + m.text.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.arguments.len() + c.name.len() + c.id.len())
                    .sum::<usize>()
                + m.thoughts
                    .iter()
                    .map(|t| t.text.len() + t.seal.len())
                    .sum::<usize>()
        })
        .sum()
}

impl Chains {
    fn put(&self, id: String, conversation: Vec<Message>) {
        let bytes = size(&conversation);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match g.0.insert(id.clone(), (Arc::new(conversation), bytes)) {
            Some((_, old)) => g.2 -= old,
            None => g.1.push_back(id),
        }
        g.2 += bytes;
        while g.1.len() > KEEP || (g.2 > BUDGET && g.1.len() > 1) {
            if let Some(old) = g.1.pop_front() {
                if let Some((_, b)) = g.0.remove(&old) {
                    g.2 -= b;
                }
            }
        }
    }

    /// Whether the response with this id is stored (it can be referred to by its items).
    pub fn stored(&self, response_id: &str) -> bool {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.contains_key(response_id)
    }

    fn get(&self, id: &str) -> Option<Arc<Vec<Message>>> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.get(id).map(|(c, _)| c.clone())
    }

    /// Puts the stored conversation `req` continues in front of its input.
    pub fn continue_from(&self, req: &mut Request) -> Result<(), WireError> {
        let Some(id) = req.previous_response_id.as_deref() else {
            return Ok(());
        };
        let before = self
            .get(id)
            .ok_or_else(|| req.api.dialect().continuation_missing(id))?;
        let mut all = Vec::with_capacity(before.len() + req.messages.len());
        all.extend(before.iter().cloned());
        all.append(&mut req.messages);
        req.messages = all;
        req.recount();
        Ok(())
    }

    /// Stores the conversation after `reply`, when the request's API keeps it.
    pub fn keep(&self, req: &Request, reply: &Reply) {
        if let Some((id, conversation)) = req.api.dialect().keeps(req, reply) {
            self.put(id, conversation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Part, Role};

    fn req(body: serde_json::Value) -> Request {
        wire::Api::Responses
            .parse(body.to_string().as_bytes())
            .unwrap()
    }

    #[test]
    fn a_stored_response_is_continued_and_the_oldest_are_forgotten() {
        let chains = Chains::default();
        let first = req(serde_json::json!({"model": "m", "input": "one"}));
        let reply = Reply {
            id: "0123456789abcdef".into(),
            model: "m".into(),
            created: 0,
            parts: vec![Part::Text("said".into())],
            stop: wire::StopReason::EndTurn,
            prompt_tokens: 1,
            output_tokens: 1,
            reasoning_tokens: 0,
            cache: Default::default(),
        };
        chains.keep(&first, &reply);
        let mut next = req(serde_json::json!({"model": "m", "input": "two",
            "previous_response_id": "resp_0123456789abcdef"}));
        let before = next.prompt_tokens;
        chains.continue_from(&mut next).unwrap();
        let texts: Vec<&str> = next.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["one", "said", "two"]);
        assert!(next.prompt_tokens > before);
        for i in 0..KEEP {
            let mut r = reply.clone();
            r.id = format!("{i:016x}");
            chains.keep(&first, &r);
        }
        let mut old = req(serde_json::json!({"model": "m", "input": "x",
            "previous_response_id": "resp_0123456789abcdef"}));
        let e = chains.continue_from(&mut old).unwrap_err();
        assert_eq!(e.code, wire::Code::Is("previous_response_not_found"));
        // Unstored (store: false) replies are not kept.
        let unstored = req(serde_json::json!({"model": "m", "input": "x", "store": false}));
        let mut r = reply.clone();
        r.id = "ffffffffffffffff".into();
        chains.keep(&unstored, &r);
        assert!(chains.get("resp_ffffffffffffffff").is_none());
    }

    #[test]
    fn the_store_holds_at_most_its_budget_of_text() {
        let chains = Chains::default();
        let big = |id: &str| {
            chains.put(
                id.into(),
                vec![Message::new(Role::User, "x".repeat(BUDGET / 2 + 1))],
            )
        };
        big("resp_a");
        big("resp_b");
        assert!(!chains.stored("resp_a"), "the oldest went to make room");
        assert!(chains.stored("resp_b"));
        let g = chains.inner.lock().unwrap();
        assert!(g.2 <= BUDGET && g.2 > BUDGET / 2, "{} bytes held", g.2);
    }
}
