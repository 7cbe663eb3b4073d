//! Output items by id: the ids a reply's items are rendered with (`msg_…`, `fc_…`,
//! `rs_…`), the same items as a client sends them back (what a stored response keeps),
//! and the API's rules on reasoning items sent back.
//!
//! The rendering of the items is `render.rs`'s; the keeping of stored responses is the
//! mock's.

use crate::dialect::{Seals, ThoughtFault};
use crate::error::{ErrorKind, WireError};
use crate::reply::{Part, Reply};
use crate::request::{Message, Request, Role, Thought, ThoughtKind};

/// The id of part `part`'s output item.
pub fn item_id(r: &Reply, part: usize) -> String {
    match &r.parts[part] {
        Part::Text(_) => format!("msg_{}_{part}", r.id),
        Part::ToolCall(_) => format!("fc_{}_{part}", r.id),
        Part::Hidden { id, .. } => id.clone(),
        Part::Thinking { .. } => format!("rs_{}_{part}", r.id),
    }
}

/// A reply's output as the input items a client sends back (reasoning items joined to
/// the item after them, as the parser joins them).
pub fn output_items(reply: &Reply) -> Vec<Message> {
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for (k, p) in reply.parts.iter().enumerate() {
        let mut m = match p {
            Part::Hidden { id, seal, .. } => {
                pending.push(Thought {
                    kind: ThoughtKind::Reasoning,
                    text: String::new(),
                    seal: seal.clone().unwrap_or_default(),
                    id: Some(id.clone()),
                    path: String::new(),
                    late: false,
                });
                continue;
            }
            Part::Thinking { .. } => continue,
            Part::Text(t) => {
                let mut m = Message::new(Role::Assistant, t.clone());
                m.item_id = Some(item_id(reply, k));
                m
            }
            Part::ToolCall(c) => {
                let mut m = Message::new(Role::Assistant, String::new());
                m.tool_calls.push(c.clone());
                m.item_id = Some(item_id(reply, k));
                m
            }
        };
        m.thoughts.append(&mut pending);
        out.push(m);
    }
    out
}

/// The reasoning item the mock issued before function call item `fc_<reply>_<k>`
/// (k ≥ 1: the reply reasoned first, at part 0; the mock's reply ids are 16 hex digits).
fn required_reasoning(item_id: &str) -> Option<String> {
    let rest = item_id.strip_prefix("fc_")?;
    let (reply, k) = rest.rsplit_once('_')?;
    let issued = reply.len() == 16 && reply.bytes().all(|b| b.is_ascii_hexdigit());
    (issued && k.parse::<u32>().ok()? >= 1).then(|| format!("rs_{reply}_0"))
}

/// Reasoning items sent back: each one sealed by the mock for its id (or, sent back by id
/// only, from a stored response), and each issued function call with its reasoning item
/// before it.
pub fn check_reasoning_items(req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
    let mut seen: Vec<&Thought> = Vec::new();
    for (i, m) in req.messages.iter().enumerate() {
        for t in &m.thoughts {
            if let Some(f) = check_item(i, t, seals) {
                return Some(f);
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
            return Some(ThoughtFault::new(i, error, detail, &m.text));
        }
    }
    None
}

/// One reasoning item of message `i`.
fn check_item(i: usize, t: &Thought, seals: &dyn Seals) -> Option<ThoughtFault> {
    let id = t.id.as_deref().unwrap_or("");
    // Sent back by id only: the API looks it up among stored responses' items.
    let response = id
        .strip_prefix("rs_")
        .and_then(|r| r.rsplit_once('_'))
        .map(|(r, _)| format!("resp_{r}"));
    if let (true, Some(response)) = (t.seal.is_empty(), response) {
        if !seals.stored(&response) {
            let error = WireError::verbatim(
                Some("input"),
                format!("Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."),
                None,
            )
            .of_kind(ErrorKind::NotFound);
            let detail = format!("reasoning item {id} sent back by id only, but its response was not stored: send its encrypted_content (include \"reasoning.encrypted_content\") or let the response be stored");
            return Some(ThoughtFault::new(i, error, detail, id));
        }
    }
    if !t.seal.is_empty() && !seals.seals(&t.seal, Some(id)) {
        let error = WireError::verbatim(
            None,
            format!("The encrypted content for item {id} could not be verified. Reason: Encrypted content could not be decrypted or parsed."),
            Some("invalid_encrypted_content"),
        );
        let detail = format!("reasoning item {id} altered: its encrypted content does not verify");
        return Some(ThoughtFault::new(i, error, detail, &t.seal));
    }
    None
}
