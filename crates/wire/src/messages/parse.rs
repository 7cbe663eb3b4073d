//! Reading Anthropic Messages requests into a [`Request`].

use crate::api::Api;
use crate::error::WireError;
use crate::fields::*;
use crate::request::{finish, Message, ReasoningAsk, Request, Role, Thought, ThoughtKind};
use crate::request::{Tool, ToolCall, ToolChoice};
use serde_json::Value;

pub fn parse_messages(body: &[u8]) -> Result<Request, WireError> {
    let root = parse_root(body)?;
    let model = model(&root)?;
    let stream = stream_flag(&root)?;
    let max_tokens = opt_u32(&root, "max_tokens", "")?
        .ok_or_else(|| WireError::invalid("max_tokens", "is required"))?;
    let reasoning = thinking(&root, max_tokens)?;
    let system = content_text(root.get("system"), "system", &["text"])?;
    let raw = non_empty_array(&root, "messages", "message")?;
    let mut messages = Vec::new();
    for (i, m) in raw.iter().enumerate() {
        message(m, i, &mut messages)?;
    }
    let tools = tools(&root)?;
    let tool_choice = tool_choice(&root)?;
    let cache = super::cache::cache_ask(&root)?;
    finish(Request {
        api: Api::Messages,
        model,
        stream,
        include_usage: true,
        system,
        messages,
        tools,
        tool_choice,
        max_output_tokens: Some(max_tokens),
        prompt_tokens: 0,
        reasoning,
        reasoning_returned: false,
        store: false,
        previous_response_id: None,
        cache,
    })
}

/// Message `i` of `messages`, appended to `out`: an assistant message whole, a user
/// message as its tool results and then its text.
fn message(m: &Value, i: usize, out: &mut Vec<Message>) -> Result<(), WireError> {
    let path = join("messages", i);
    let m = as_obj(m, &path)?;
    let role = match req_str(m, "role", &path)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => {
            return Err(WireError::invalid(
                join(&path, "role"),
                format!("must be user or assistant, got {other:?}"),
            ))
        }
    };
    let cpath = join(&path, "content");
    match m.get("content") {
        None | Some(Value::Null) => return Err(WireError::invalid(cpath, "is required")),
        Some(Value::String(s)) => {
            let mut msg = Message::new(role, s.clone());
            msg.path = path;
            msg.lead = "text";
            out.push(msg)
        }
        Some(Value::Array(blocks)) => {
            let b = read_blocks(blocks, &cpath)?;
            if role == Role::Assistant {
                let mut msg = Message::new(role, b.text.join("\n"));
                msg.tool_calls = b.calls;
                msg.thoughts = b.thoughts;
                msg.path = path;
                msg.lead = b.lead;
                out.push(msg);
            } else {
                out.extend(b.results);
                if !b.text.is_empty() {
                    out.push(Message::new(role, b.text.join("\n")));
                }
            }
        }
        Some(v) => {
            return Err(WireError::invalid(
                cpath,
                format!(
                    "must be a string or an array of content blocks, got {}",
                    type_name(v)
                ),
            ))
        }
    }
    Ok(())
}

/// What a message's content blocks hold, by kind.
#[derive(Default)]
struct Blocks {
    text: Vec<String>,
    calls: Vec<ToolCall>,
    results: Vec<Message>,
    thoughts: Vec<Thought>,
    /// The type of the first block, as the API names it.
    lead: &'static str,
}

fn read_blocks(blocks: &[Value], cpath: &str) -> Result<Blocks, WireError> {
    let mut out = Blocks::default();
    for (j, b) in blocks.iter().enumerate() {
        let bp = join(cpath, j);
        let b = as_obj(b, &bp)?;
        let ty = req_str(b, "type", &bp)?;
        if j == 0 {
            out.lead = block_name(ty);
        }
        let late = !out.text.is_empty() || !out.calls.is_empty();
        match ty {
            "thinking" => out.thoughts.push(Thought {
                kind: ThoughtKind::Thinking,
                text: req_str(b, "thinking", &bp)?.to_string(),
                seal: req_str(b, "signature", &bp)?.to_string(),
                id: None,
                path: bp,
                late,
            }),
            "redacted_thinking" => out.thoughts.push(Thought {
                kind: ThoughtKind::Redacted,
                text: String::new(),
                seal: req_str(b, "data", &bp)?.to_string(),
                id: None,
                path: bp,
                late,
            }),
            "text" => out.text.push(req_str(b, "text", &bp)?.to_string()),
            "tool_use" => {
                let input = opt_obj(b, "input", &bp)?
                    .ok_or_else(|| WireError::invalid(join(&bp, "input"), "is required"))?;
                out.calls.push(ToolCall {
                    id: req_str(b, "id", &bp)?.to_string(),
                    name: req_str(b, "name", &bp)?.to_string(),
                    arguments: Value::Object(input.clone()).to_string(),
                })
            }
            "tool_result" => {
                let text = content_text(b.get("content"), &join(&bp, "content"), &["text"])?;
                let mut r = Message::new(Role::Tool, text);
                r.tool_call_id = Some(req_str(b, "tool_use_id", &bp)?.to_string());
                out.results.push(r);
            }
            _ => {} // images, documents: not the mock's business
        }
    }
    Ok(out)
}

fn tools(root: &Obj) -> Result<Vec<Tool>, WireError> {
    let mut tools = Vec::new();
    if let Some(raw_tools) = opt_array(root, "tools", "")? {
        for (i, t) in raw_tools.iter().enumerate() {
            let tp = join("tools", i);
            let t = as_obj(t, &tp)?;
            // Server tools (web_search_…, bash_…) carry a versioned type; only custom
            // tools are ever called by the mock.
            match opt_str(t, "type", &tp)? {
                None | Some("custom") => tools.push(Tool::new(
                    non_empty_name(t, &tp)?,
                    schema(t, "input_schema", &tp)?,
                )),
                Some(_) => {}
            }
        }
    }
    Ok(tools)
}

fn tool_choice(root: &Obj) -> Result<ToolChoice, WireError> {
    Ok(match opt_obj(root, "tool_choice", "")? {
        None => ToolChoice::Auto,
        Some(o) => match req_str(o, "type", "tool_choice")? {
            "auto" => ToolChoice::Auto,
            "any" => ToolChoice::Required,
            "none" => ToolChoice::None,
            "tool" => ToolChoice::Named(req_str(o, "name", "tool_choice")?.to_string()),
            other => {
                return Err(WireError::invalid(
                    "tool_choice.type",
                    format!("must be auto, any, tool or none, got {other:?}"),
                ))
            }
        },
    })
}

/// The block types the API names in its errors (others read as "").
fn block_name(ty: &str) -> &'static str {
    [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "tool_result",
        "image",
    ]
    .into_iter()
    .find(|n| *n == ty)
    .unwrap_or("")
}

/// The `thinking` parameter: `enabled` with a budget of at least 1024 tokens below
/// `max_tokens`, `adaptive`, or `disabled`.
fn thinking(root: &Obj, max_tokens: u32) -> Result<Option<ReasoningAsk>, WireError> {
    let Some(t) = opt_obj(root, "thinking", "")? else {
        return Ok(None);
    };
    match req_str(t, "type", "thinking")? {
        "disabled" => Ok(None),
        "adaptive" => Ok(Some(ReasoningAsk::default())),
        "enabled" => {
            let budget = opt_u32(t, "budget_tokens", "thinking")?
                .ok_or_else(|| WireError::invalid("thinking.budget_tokens", "Field required"))?;
            if budget < 1024 {
                return Err(WireError::invalid(
                    "thinking.enabled.budget_tokens",
                    "Input should be greater than or equal to 1024",
                ));
            }
            if budget >= max_tokens {
                return Err(WireError::invalid(
                    "max_tokens",
                    format!("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size (got {max_tokens} ≤ {budget})"),
                ));
            }
            Ok(Some(ReasoningAsk {
                budget: Some(budget),
                effort: None,
            }))
        }
        other => Err(WireError::invalid(
            "thinking.type",
            format!("must be enabled, adaptive or disabled, got {other:?}"),
        )),
    }
}
