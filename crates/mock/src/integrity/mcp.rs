//! The oracle across the MCP hop: every result of a call to one of the mock's MCP tools
//! must reach the next model call as the MCP server answered it. Found by the call's
//! arguments (the model gave them; the agent passed them on to `tools/call`), the
//! server's answer must appear in the tool message — as it was, or JSON-escaped inside
//! the agent's own wrapping (the OpenAI Agents SDK sends the content block as JSON).
//! A result missing, empty, shorter than the answer, or other than it is a violation of
//! kind `mcp` that names the tool; so is a result the MCP server never gave (the agent
//! answered for the tool). Each call is reported once, though the conversation that
//! holds it is checked again at every later call.

use crate::integrity::found::Found;
use crate::ledger::Violation;
use crate::mcp::server::McpServer;
use crate::mcp::tools::canonical_text;
use crate::session::Session;
use std::collections::HashMap;
use wire::{Request, Role};

/// Whether `text` (what the model got) carries `answer` (what the MCP server said).
fn reached(answer: &str, text: &str) -> bool {
    if text.contains(answer) {
        return true;
    }
    let quoted = serde_json::to_string(answer).unwrap_or_default();
    text.contains(&quoted[1..quoted.len().saturating_sub(1).max(1)])
}

/// What happened to a result the model got other than the server's answer.
fn fate(answer: &str, text: &str) -> String {
    let n = answer.len();
    if text.trim().is_empty() {
        format!("was dropped: the model got an empty result instead of the MCP server's {n} bytes")
    } else if text.len() < n {
        format!(
            "was truncated: {} of the MCP server's {n} bytes reached the model",
            text.len()
        )
    } else {
        format!("was altered: the model did not get the MCP server's answer ({n} bytes)")
    }
}

pub fn check(req: &Request, session: &Session, mcp: &McpServer) -> Vec<Violation> {
    if mcp.spec.tools.is_empty() {
        return Vec::new();
    }
    let mut f = Found {
        session: session.key(),
        out: Vec::new(),
    };
    // Call id → (tool, arguments, turn) of the MCP calls the conversation made, and
    // which were answered.
    let mut calls: HashMap<&str, (&str, &str, u32)> = HashMap::new();
    let mut answered: Vec<&str> = Vec::new();
    let mut turn = 0u32;
    for m in &req.messages {
        match m.role {
            Role::User => turn += 1,
            Role::Assistant => {
                for c in m
                    .tool_calls
                    .iter()
                    .filter(|c| mcp.spec.tool(&c.name).is_some())
                {
                    calls.insert(&c.id, (&c.name, &c.arguments, turn));
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                if let Some(&(tool, args, t)) = calls.get(id) {
                    answered.push(id);
                    result(&mut f, mcp, (id, tool, args, t), &m.text);
                }
            }
            Role::System => {}
        }
    }
    let mut missing: Vec<_> = calls
        .iter()
        .filter(|(id, _)| !answered.contains(id))
        .collect();
    missing.sort_by_key(|(id, _)| **id);
    for (id, (tool, args, t)) in missing {
        if mcp.ledger.first_report(id) {
            let detail = format!("result of MCP tool {tool} (call {id}) never reached the model");
            f.add(*t, "mcp", detail, args);
        }
    }
    f.out
}

/// One tool message against what the server answered to the call's arguments.
fn result(
    f: &mut Found,
    mcp: &McpServer,
    (id, tool, args, turn): (&str, &str, &str, u32),
    text: &str,
) {
    let Some(canon) = canonical_text(args) else {
        return;
    };
    let answers: Vec<_> = mcp
        .ledger
        .answers(&canon)
        .into_iter()
        .filter(|a| a.tool == tool)
        .collect();
    let detail = match answers.last() {
        None => format!(
            "result of MCP tool {tool} (call {id}) was never given by the MCP server: it was not called with these arguments"
        ),
        Some(_) if answers.iter().any(|a| reached(&a.text, text)) => return,
        Some(a) => format!("result of MCP tool {tool} (call {id}) {}", fate(&a.text, text)),
    };
    if mcp.ledger.first_report(id) {
        f.add(turn, "mcp", detail, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reaches_as_is_or_json_escaped() {
        assert!(reached("psn0123", "the value is psn0123"));
        let a = r#"{"a":"x"}"#;
        assert!(reached(a, r#"{"type": "text", "text": "{\"a\":\"x\"}"}"#));
        assert!(!reached(a, "{}"));
        assert!(fate("abcdef", "").contains("dropped"));
        assert!(fate("abcdef", "abc").contains("truncated: 3 of the MCP server's 6 bytes"));
        assert!(fate("abc", "xyzxyz").contains("altered"));
    }
}
