//! Reading OpenAI Chat Completions requests into a [`Request`].

use crate::api::Api;
use crate::error::WireError;
use crate::fields::*;
use crate::openai::{cache_ask, effort, tool_choice};
use crate::request::{finish, Message, ReasoningAsk, Request, Role, Tool, ToolCall};
use serde_json::Value;

pub fn parse_chat(body: &[u8]) -> Result<Request, WireError> {
    let root = parse_root(body)?;
    let model = model(&root)?;
    let stream = stream_flag(&root)?;
    if let Some(n) = opt_u32(&root, "n", "")? {
        if n != 1 {
            return Err(WireError::invalid(
                "n",
                format!("only n=1 is supported, got {n}"),
            ));
        }
    }
    let include_usage = match opt_obj(&root, "stream_options", "")? {
        Some(o) => opt_bool(o, "include_usage", "stream_options")?.unwrap_or(false),
        None => false,
    };
    let reasoning = effort(&root, "reasoning_effort", "")?.map(|e| ReasoningAsk {
        budget: None,
        effort: Some(e),
    });
    let max_output_tokens = match opt_u32(&root, "max_completion_tokens", "")? {
        Some(n) => Some(n),
        None => opt_u32(&root, "max_tokens", "")?,
    };
    let raw = non_empty_array(&root, "messages", "message")?;
    let mut system = Vec::new();
    let mut messages = Vec::with_capacity(raw.len());
    for (i, m) in raw.iter().enumerate() {
        match message(m, i)? {
            Said::System(text) => system.push(text),
            Said::Message(msg) => messages.push(msg),
        }
    }
    let tools = tools(&root)?;
    let tool_choice = tool_choice(root.get("tool_choice"), |o| {
        let f = opt_obj(o, "function", "tool_choice")?
            .ok_or_else(|| WireError::invalid("tool_choice.function", "is required"))?;
        Ok(req_str(f, "name", "tool_choice.function")?.to_string())
    })?;
    let system = system.join("\n");
    finish(Request {
        api: Api::ChatCompletions,
        model,
        stream,
        include_usage,
        system,
        messages,
        tools,
        tool_choice,
        max_output_tokens,
        prompt_tokens: 0,
        reasoning,
        reasoning_returned: false,
        store: false,
        previous_response_id: None,
        cache: cache_ask(&root)?,
    })
}

/// A message read: system text (joined into the prompt's system) or a message.
enum Said {
    System(String),
    Message(Message),
}

/// Message `i` of `messages`.
fn message(m: &Value, i: usize) -> Result<Said, WireError> {
    let path = join("messages", i);
    let m = as_obj(m, &path)?;
    let role = req_str(m, "role", &path)?;
    let text = content_text(m.get("content"), &join(&path, "content"), &["text"])?;
    let msg = match role {
        "system" | "developer" => return Ok(Said::System(text)),
        "user" => Message::new(Role::User, text),
        "assistant" => {
            let mut msg = Message::new(Role::Assistant, text);
            msg.path = path.clone();
            if let Some(calls) = opt_array(m, "tool_calls", &path)? {
                for (j, c) in calls.iter().enumerate() {
                    msg.tool_calls
                        .push(tool_call(c, &join(&join(&path, "tool_calls"), j))?);
                }
            }
            msg
        }
        "tool" => {
            let mut msg = Message::new(Role::Tool, text);
            msg.tool_call_id = Some(req_str(m, "tool_call_id", &path)?.to_string());
            msg
        }
        "function" => {
            let mut msg = Message::new(Role::Tool, text);
            msg.tool_call_id = Some(req_str(m, "name", &path)?.to_string());
            msg
        }
        other => {
            return Err(WireError::invalid(
                join(&path, "role"),
                format!("must be one of system, developer, user, assistant, tool; got {other:?}"),
            ))
        }
    };
    Ok(Said::Message(msg))
}

/// One of an assistant message's `tool_calls`, at `cp`.
fn tool_call(c: &Value, cp: &str) -> Result<ToolCall, WireError> {
    let c = as_obj(c, cp)?;
    let id = req_str(c, "id", cp)?.to_string();
    let f = opt_obj(c, "function", cp)?
        .ok_or_else(|| WireError::invalid(join(cp, "function"), "is required"))?;
    let fp = join(cp, "function");
    Ok(ToolCall {
        id,
        name: req_str(f, "name", &fp)?.to_string(),
        arguments: req_str(f, "arguments", &fp)?.to_string(),
    })
}

fn tools(root: &Obj) -> Result<Vec<Tool>, WireError> {
    let mut tools = Vec::new();
    if let Some(raw_tools) = opt_array(root, "tools", "")? {
        for (i, t) in raw_tools.iter().enumerate() {
            let tp = join("tools", i);
            let t = as_obj(t, &tp)?;
            let f = opt_obj(t, "function", &tp)?
                .ok_or_else(|| WireError::invalid(join(&tp, "function"), "is required"))?;
            let fp = join(&tp, "function");
            tools.push(Tool::new(
                non_empty_name(f, &fp)?,
                schema(f, "parameters", &fp)?,
            ));
        }
    }
    Ok(tools)
}
