//! Reading OpenAI Chat Completions and Responses requests into a [`Request`].

use crate::parse_common::*;
use crate::{
    count_tokens, Api, Message, ReasoningAsk, Request, Role, Thought, ThoughtKind, Tool, ToolCall,
    ToolChoice, WireError,
};
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
        let path = join("messages", i);
        let m = as_obj(m, &path)?;
        let role = req_str(m, "role", &path)?;
        let text = content_text(m.get("content"), &join(&path, "content"), &["text"])?;
        match role {
            "system" | "developer" => system.push(text),
            "user" => messages.push(plain(Role::User, text)),
            "assistant" => {
                let mut msg = plain(Role::Assistant, text);
                msg.path = path.clone();
                if let Some(calls) = opt_array(m, "tool_calls", &path)? {
                    for (j, c) in calls.iter().enumerate() {
                        let cp = join(&join(&path, "tool_calls"), j);
                        let c = as_obj(c, &cp)?;
                        let id = req_str(c, "id", &cp)?.to_string();
                        let f = opt_obj(c, "function", &cp)?.ok_or_else(|| {
                            WireError::invalid(join(&cp, "function"), "is required")
                        })?;
                        let fp = join(&cp, "function");
                        msg.tool_calls.push(ToolCall {
                            id,
                            name: req_str(f, "name", &fp)?.to_string(),
                            arguments: req_str(f, "arguments", &fp)?.to_string(),
                        });
                    }
                }
                messages.push(msg);
            }
            "tool" => {
                let mut msg = plain(Role::Tool, text);
                msg.tool_call_id = Some(req_str(m, "tool_call_id", &path)?.to_string());
                messages.push(msg);
            }
            "function" => {
                let mut msg = plain(Role::Tool, text);
                msg.tool_call_id = Some(req_str(m, "name", &path)?.to_string());
                messages.push(msg);
            }
            other => {
                return Err(WireError::invalid(
                    join(&path, "role"),
                    format!(
                        "must be one of system, developer, user, assistant, tool; got {other:?}"
                    ),
                ))
            }
        }
    }
    let mut tools = Vec::new();
    if let Some(raw_tools) = opt_array(&root, "tools", "")? {
        for (i, t) in raw_tools.iter().enumerate() {
            let tp = join("tools", i);
            let t = as_obj(t, &tp)?;
            let f = opt_obj(t, "function", &tp)?
                .ok_or_else(|| WireError::invalid(join(&tp, "function"), "is required"))?;
            let fp = join(&tp, "function");
            tools.push(Tool {
                name: non_empty_name(f, &fp)?,
                schema: schema(f, "parameters", &fp)?,
            });
        }
    }
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
    })
}

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
    let mut reasoning_returned = false;
    for (i, v) in opt_array(&root, "include", "")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        match v.as_str() {
            Some(s) => reasoning_returned |= s == "reasoning.encrypted_content",
            None => return Err(WireError::invalid(join("include", i), "must be a string")),
        }
    }
    let store = opt_bool(&root, "store", "")?.unwrap_or(true);
    let previous_response_id = opt_str(&root, "previous_response_id", "")?.map(str::to_string);
    let mut messages = Vec::new();
    match root.get("input") {
        None | Some(Value::Null) => return Err(WireError::invalid("input", "is required")),
        Some(Value::String(s)) => messages.push(plain(Role::User, s.clone())),
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
    if messages.is_empty() && previous_response_id.is_none() {
        return Err(WireError::invalid(
            "input",
            "must contain at least one item",
        ));
    }
    let mut tools = Vec::new();
    if let Some(raw_tools) = opt_array(&root, "tools", "")? {
        for (i, t) in raw_tools.iter().enumerate() {
            let tp = join("tools", i);
            let t = as_obj(t, &tp)?;
            // Built-in tools (web_search, file_search …) are accepted and never called.
            if req_str(t, "type", &tp)? == "function" {
                tools.push(Tool {
                    name: non_empty_name(t, &tp)?,
                    schema: schema(t, "parameters", &tp)?,
                });
            }
        }
    }
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
    })
}

/// `reasoning_effort` / `reasoning.effort`: one of the API's levels.
fn effort(obj: &Obj, key: &str, path: &str) -> Result<Option<String>, WireError> {
    const LEVELS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];
    match opt_str(obj, key, path)? {
        None => Ok(None),
        Some(e) if LEVELS.contains(&e) => Ok(Some(e.to_string())),
        Some(e) => Err(WireError::invalid(
            join(path, key),
            format!("must be one of {}; got {e:?}", LEVELS.join(", ")),
        )),
    }
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
            Ok(Some(plain(role, text)))
        }
        "function_call" => {
            let mut m = plain(Role::Assistant, String::new());
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
            let mut m = plain(Role::Tool, text);
            m.tool_call_id = Some(req_str(item, "call_id", path)?.to_string());
            Ok(Some(m))
        }
        _ => Ok(None),
    }
}

/// `"auto" | "none" | "required" | {…named…}`; `named` reads the tool name from the object form.
fn tool_choice(
    v: Option<&Value>,
    named: impl Fn(&Obj) -> Result<String, WireError>,
) -> Result<ToolChoice, WireError> {
    match v {
        None | Some(Value::Null) => Ok(ToolChoice::Auto),
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            other => Err(WireError::invalid(
                "tool_choice",
                format!("must be auto, none, required or a named tool, got {other:?}"),
            )),
        },
        Some(Value::Object(o)) => Ok(ToolChoice::Named(named(o)?)),
        Some(v) => Err(WireError::invalid(
            "tool_choice",
            format!("must be a string or an object, got {}", type_name(v)),
        )),
    }
}

pub fn plain(role: Role, text: String) -> Message {
    Message::new(role, text)
}

/// Merges system-role items into `system`, checks a named tool choice and counts
/// prompt tokens.
pub fn finish(mut r: Request) -> Result<Request, WireError> {
    if let ToolChoice::Named(name) = &r.tool_choice {
        if !r.tools.iter().any(|t| &t.name == name) {
            return Err(WireError::invalid(
                "tool_choice",
                format!("names tool {name:?}, which is not in tools"),
            ));
        }
    }
    let (sys, rest): (Vec<_>, Vec<_>) = r.messages.drain(..).partition(|m| m.role == Role::System);
    for m in sys {
        if !r.system.is_empty() {
            r.system.push('\n');
        }
        r.system.push_str(&m.text);
    }
    r.messages = rest;
    r.prompt_tokens = prompt_tokens(&r);
    Ok(r)
}

pub(crate) fn prompt_tokens(r: &Request) -> u32 {
    let mut n = count_tokens(&r.system);
    for m in &r.messages {
        // Every message costs a few framing tokens in real chat templates.
        n += 4 + count_tokens(&m.text);
        for t in &m.thoughts {
            n += count_tokens(&t.text);
        }
        for c in &m.tool_calls {
            n += count_tokens(&c.name) + count_tokens(&c.arguments);
        }
    }
    for t in &r.tools {
        n += count_tokens(&t.name) + count_tokens(&t.schema.to_string());
    }
    n.max(1)
}
