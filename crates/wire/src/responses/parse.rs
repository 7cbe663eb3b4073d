//! Reading OpenAI Responses requests into a [`Request`]: `instructions`, the `input`
//! items (reasoning items joined to the assistant item after them), `include`, `store`
//! and `previous_response_id`.

use crate::api::Api;
use crate::error::WireError;
use crate::fields::*;
use crate::openai::{cache_ask, effort, tool_choice};
use crate::request::ToolCall;
use crate::request::{finish, Message, ReasoningAsk, Request, Role, Thought, ThoughtKind, Tool};
use serde_json::Value;

pub fn parse_responses(body: &[u8]) -> Result<Request, WireError> {
    let root = parse_root(body)?;
    let model = model(&root)?;
    let stream = stream_flag(&root)?;
    let system = opt_str(&root, "instructions", "")?
        .unwrap_or("")
        .to_string();
    let max_output_tokens = opt_u32(&root, "max_output_tokens", "")?;
    let reasoning = match opt_obj(&root, "reasoning", "")? {
        Some(r) => Some(ReasoningAsk {
            budget: None,
            effort: effort(r, "effort", "reasoning")?,
        }),
        None => None,
    };
    let reasoning_returned = reasoning_returned(&root)?;
    let store = opt_bool(&root, "store", "")?.unwrap_or(true);
    let previous_response_id = opt_str(&root, "previous_response_id", "")?.map(str::to_string);
    let messages = input(&root)?;
    if messages.is_empty() && previous_response_id.is_none() {
        return Err(WireError::invalid(
            "input",
            "must contain at least one item",
        ));
    }
    let tools = tools(&root)?;
    let tool_choice = tool_choice(root.get("tool_choice"), |o| {
        Ok(req_str(o, "name", "tool_choice")?.to_string())
    })?;
    finish(Request {
        api: Api::Responses,
        model,
        stream,
        include_usage: true,
        system,
        messages,
        tools,
        tool_choice,
        max_output_tokens,
        prompt_tokens: 0,
        reasoning,
        reasoning_returned,
        store,
        previous_response_id,
        cache: cache_ask(&root)?,
    })
}

/// `include` asks for `reasoning.encrypted_content`.
fn reasoning_returned(root: &Obj) -> Result<bool, WireError> {
    let mut returned = false;
    for (i, v) in opt_array(root, "include", "")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        match v.as_str() {
            Some(s) => returned |= s == "reasoning.encrypted_content",
            None => return Err(WireError::invalid(join("include", i), "must be a string")),
        }
    }
    Ok(returned)
}

/// `input`: a string (one user message) or items.
fn input(root: &Obj) -> Result<Vec<Message>, WireError> {
    let mut messages = Vec::new();
    match root.get("input") {
        None | Some(Value::Null) => return Err(WireError::invalid("input", "is required")),
        Some(Value::String(s)) => messages.push(Message::new(Role::User, s.clone())),
        Some(Value::Array(items)) => {
            // A reasoning item belongs to the assistant item that follows it.
            let mut pending: Vec<Thought> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let path = join("input", i);
                let item = as_obj(item, &path)?;
                if opt_str(item, "type", &path)? == Some("reasoning") {
                    pending.push(reasoning_item(item, &path)?);
                    continue;
                }
                if let Some(mut m) = response_item(item, &path)? {
                    if let Some(t) = pending.first().filter(|_| m.role != Role::Assistant) {
                        return Err(without_following(t));
                    }
                    m.thoughts.append(&mut pending);
                    messages.push(m);
                }
            }
            if let Some(t) = pending.first() {
                return Err(without_following(t));
            }
        }
        Some(v) => {
            return Err(WireError::invalid(
                "input",
                format!(
                    "must be a string or an array of input items, got {}",
                    type_name(v)
                ),
            ))
        }
    }
    Ok(messages)
}

fn tools(root: &Obj) -> Result<Vec<Tool>, WireError> {
    let mut tools = Vec::new();
    if let Some(raw_tools) = opt_array(root, "tools", "")? {
        for (i, t) in raw_tools.iter().enumerate() {
            let tp = join("tools", i);
            let t = as_obj(t, &tp)?;
            // Built-in tools (web_search, file_search …) are accepted and never called.
            if req_str(t, "type", &tp)? == "function" {
                tools.push(Tool::new(
                    non_empty_name(t, &tp)?,
                    schema(t, "parameters", &tp)?,
                ));
            }
        }
    }
    Ok(tools)
}

/// A Responses `reasoning` input item: its id, summary text and encrypted content.
fn reasoning_item(item: &Obj, path: &str) -> Result<Thought, WireError> {
    let summary = content_text(
        item.get("summary"),
        &join(path, "summary"),
        &["summary_text"],
    )?;
    Ok(Thought {
        kind: ThoughtKind::Reasoning,
        text: summary,
        seal: opt_str(item, "encrypted_content", path)?
            .unwrap_or("")
            .to_string(),
        id: Some(req_str(item, "id", path)?.to_string()),
        path: path.to_string(),
        late: false,
    })
}

/// The API's own words for a reasoning item with nothing after it.
fn without_following(t: &Thought) -> WireError {
    WireError::verbatim(
        Some("input"),
        format!(
            "Item '{}' of type 'reasoning' was provided without its required following item.",
            t.id.as_deref().unwrap_or("")
        ),
        None,
    )
}

/// One item of a Responses `input` array; items the mock has no use for
/// (web search calls …) read as `None`.
fn response_item(item: &Obj, path: &str) -> Result<Option<Message>, WireError> {
    let ty = opt_str(item, "type", path)?.unwrap_or("message");
    let item_id = opt_str(item, "id", path)?.map(str::to_string);
    let msg = response_message(item, ty, path)?;
    Ok(msg.map(|mut m| {
        m.path = path.to_string();
        m.item_id = item_id;
        m
    }))
}

fn response_message(item: &Obj, ty: &str, path: &str) -> Result<Option<Message>, WireError> {
    match ty {
        "message" => {
            let role = req_str(item, "role", path)?;
            let text = content_text(
                item.get("content"),
                &join(path, "content"),
                &["input_text", "output_text", "text"],
            )?;
            let role = match role {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "system" | "developer" => Role::System,
                other => {
                    return Err(WireError::invalid(
                        join(path, "role"),
                        format!("must be one of user, assistant, system, developer; got {other:?}"),
                    ))
                }
            };
            Ok(Some(Message::new(role, text)))
        }
        "function_call" => {
            let mut m = Message::new(Role::Assistant, String::new());
            m.tool_calls.push(ToolCall {
                id: req_str(item, "call_id", path)?.to_string(),
                name: req_str(item, "name", path)?.to_string(),
                arguments: req_str(item, "arguments", path)?.to_string(),
            });
            Ok(Some(m))
        }
        "function_call_output" => {
            let text = content_text(
                item.get("output"),
                &join(path, "output"),
                &["input_text", "output_text", "text"],
            )?;
            let mut m = Message::new(Role::Tool, text);
            m.tool_call_id = Some(req_str(item, "call_id", path)?.to_string());
            Ok(Some(m))
        }
        _ => Ok(None),
    }
}
