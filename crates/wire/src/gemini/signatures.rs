//! Gemini's rules on thought signatures sent back: every one sealed by the mock for the
//! session, and each function-calling model turn since the user last spoke carrying its
//! own on its first function call. The error texts are the API's own.

use crate::dialect::{Seals, ThoughtFault};
use crate::error::WireError;
use crate::request::{Request, Role};

pub fn check_signatures(req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
    for (i, m) in req.messages.iter().enumerate() {
        if let Some(t) = m.thoughts.iter().find(|t| !seals.seals(&t.seal, None)) {
            let error = WireError::verbatim(None, "Corrupted thought signature.", None);
            let detail = format!(
                "thought signature altered: it does not verify (at {})",
                t.path
            );
            return Some(ThoughtFault::new(i, error, detail, &t.seal));
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
        return Some(ThoughtFault::new(i, error, detail, &said));
    }
    None
}
