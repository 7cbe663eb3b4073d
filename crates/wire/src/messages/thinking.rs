//! Anthropic's rules on thinking sent back: every `thinking` block signed as the mock
//! signed it, every `redacted_thinking` block sealed by it, and the assistant message of
//! an open tool loop starting with its thinking. The error texts are the API's own.

use crate::dialect::{Seals, ThoughtFault};
use crate::error::WireError;
use crate::request::{Message, Request, Role, ThoughtKind};

pub fn check_thinking(req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
    for (i, m) in req.messages.iter().enumerate() {
        for t in &m.thoughts {
            let good = match t.kind {
                ThoughtKind::Thinking => seals.signs(&t.text, &t.seal),
                _ => seals.seals(&t.seal, None),
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
                return Some(ThoughtFault::new(i, error, detail, &t.text));
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
    Some(ThoughtFault::new(at, error, detail, &said))
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
