//! Reading Gemini `generateContent` requests into a [`Request`].
//!
//! The model and whether to stream come from the URL
//! (`models/{model}:generateContent` / `:streamGenerateContent`), so the caller sets
//! them. `functionResponse` parts answer the calls of the model turn before them: by
//! `id` when the client sends one, else by name in order.

use crate::api::Api;
use crate::error::WireError;
use crate::fields::*;
use crate::request::{finish, Message, ReasoningAsk, Request, Role, Thought, ThoughtKind};
use crate::request::{Tool, ToolCall, ToolChoice};
use serde_json::Value;

pub fn parse_generate(body: &[u8]) -> Result<Request, WireError> {
    let root = parse_root(body)?;
    let system = match opt_obj(&root, "systemInstruction", "")? {
        Some(s) => parts_text(s, "systemInstruction")?,
        None => String::new(),
    };
    let raw = non_empty_array(&root, "contents", "content")?;
    let mut messages = Vec::new();
    // Calls of the latest model turn not yet answered: (name, id).
    let mut open: Vec<(String, String)> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let path = join("contents", i);
        let c = as_obj(c, &path)?;
        let role = opt_str(c, "role", &path)?.unwrap_or("user");
        let parts = opt_array(c, "parts", &path)?
            .ok_or_else(|| WireError::invalid(join(&path, "parts"), "is required"))?;
        match role {
            "model" => {
                let m = model_turn(parts, &path)?;
                open = m
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.clone(), c.id.clone()))
                    .collect();
                messages.push(m);
            }
            "user" | "function" | "tool" => {
                messages.extend(user_turn(parts, &path, &mut open)?);
            }
            other => {
                return Err(WireError::invalid(
                    join(&path, "role"),
                    format!("must be user or model, got {other:?}"),
                ))
            }
        }
    }
    let (tools, tool_choice) = tools(&root)?;
    let (max_output_tokens, reasoning, shown) = generation(&root)?;
    finish(Request {
        api: Api::Gemini,
        model: String::new(),
        stream: false,
        include_usage: true,
        system,
        messages,
        tools,
        tool_choice,
        max_output_tokens,
        prompt_tokens: 0,
        reasoning,
        reasoning_returned: shown,
        store: false,
        previous_response_id: None,
        cache: crate::CacheAsk::default(),
    })
}

/// Google's JSON takes a field in lowerCamelCase or snake_case (the Python SDK sends
/// some nested ones as snake_case): the name this object uses.
fn either<'a>(obj: &Obj, camel: &'a str, snake: &'a str) -> &'a str {
    if obj.contains_key(camel) {
        camel
    } else {
        snake
    }
}

/// `generationConfig`: the output cap; whether the model thinks (on unless
/// `thinkingBudget` is 0; a budget caps it, a level sets the effort); whether its
/// thoughts are shown (`includeThoughts`).
fn generation(root: &Obj) -> Result<(Option<u32>, Option<ReasoningAsk>, bool), WireError> {
    let mut reasoning = Some(ReasoningAsk::default());
    let Some(g) = opt_obj(root, "generationConfig", "")? else {
        return Ok((None, reasoning, false));
    };
    let gp = "generationConfig";
    let max = opt_u32(g, either(g, "maxOutputTokens", "max_output_tokens"), gp)?;
    let Some(t) = opt_obj(g, either(g, "thinkingConfig", "thinking_config"), gp)? else {
        return Ok((max, reasoning, false));
    };
    let tp = "generationConfig.thinkingConfig";
    match t
        .get(either(t, "thinkingBudget", "thinking_budget"))
        .and_then(Value::as_i64)
    {
        Some(0) => reasoning = None,
        Some(n) if n > 0 => {
            reasoning = Some(ReasoningAsk {
                budget: Some(n.min(u32::MAX as i64) as u32),
                effort: None,
            })
        }
        _ => {} // -1: dynamic
    }
    if let Some(level) = opt_str(t, either(t, "thinkingLevel", "thinking_level"), tp)? {
        reasoning = Some(ReasoningAsk {
            budget: None,
            effort: Some(level.to_ascii_lowercase()),
        });
    }
    let include = opt_bool(t, either(t, "includeThoughts", "include_thoughts"), tp)?;
    Ok((
        max,
        reasoning.clone(),
        include == Some(true) && reasoning.is_some(),
    ))
}

/// `{ "parts": [{ "text": … }] }` read leniently (a string `parts` is not valid, but
/// `text` blocks without a `type` are Gemini's form).
fn parts_text(obj: &Obj, path: &str) -> Result<String, WireError> {
    let mut out = Vec::new();
    for (j, p) in opt_array(obj, "parts", path)?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let pp = join(&join(path, "parts"), j);
        if let Some(t) = opt_str(as_obj(p, &pp)?, "text", &pp)? {
            out.push(t.to_string());
        }
    }
    Ok(out.join("\n"))
}

/// A `model` content: its text (thought summaries left out), its function calls, and
/// the thought signature on its first function call (or anywhere, marked late).
fn model_turn(parts: &[Value], path: &str) -> Result<Message, WireError> {
    let mut m = Message::new(Role::Assistant, String::new());
    m.path = path.to_string();
    let mut text = Vec::new();
    for (j, p) in parts.iter().enumerate() {
        let pp = join(&join(path, "parts"), j);
        let p = as_obj(p, &pp)?;
        let first_call = m.tool_calls.is_empty() && p.contains_key("functionCall");
        if let Some(f) = opt_obj(p, "functionCall", &pp)? {
            let fp = join(&pp, "functionCall");
            let name = non_empty_name(f, &fp)?;
            let id = opt_str(f, "id", &fp)?
                .map(str::to_string)
                .unwrap_or_else(|| format!("{name}#{path}.{j}"));
            let args = opt_obj(f, "args", &fp)?.cloned().unwrap_or_default();
            if m.lead.is_empty() {
                m.lead = "functionCall";
            }
            m.tool_calls.push(ToolCall {
                id,
                name,
                arguments: Value::Object(args).to_string(),
            });
        } else if let Some(t) = opt_str(p, "text", &pp)? {
            if opt_bool(p, "thought", &pp)? != Some(true) {
                text.push(t.to_string());
            }
        }
        if let Some(sig) = opt_str(p, "thoughtSignature", &pp)? {
            m.thoughts.push(Thought {
                kind: ThoughtKind::Signature,
                text: String::new(),
                seal: sig.to_string(),
                id: None,
                path: pp,
                late: !first_call,
            });
        }
    }
    m.text = text.join("");
    Ok(m)
}

/// A `user` content: its function responses (each a tool result) and its text.
fn user_turn(
    parts: &[Value],
    path: &str,
    open: &mut Vec<(String, String)>,
) -> Result<Vec<Message>, WireError> {
    let mut out = Vec::new();
    let mut text = Vec::new();
    for (j, p) in parts.iter().enumerate() {
        let pp = join(&join(path, "parts"), j);
        let p = as_obj(p, &pp)?;
        if let Some(f) = opt_obj(p, "functionResponse", &pp)? {
            let fp = join(&pp, "functionResponse");
            let name = non_empty_name(f, &fp)?;
            let id = match opt_str(f, "id", &fp)? {
                Some(id) => {
                    open.retain(|o| o.1 != id);
                    id.to_string()
                }
                None => match open.iter().position(|o| o.0 == name) {
                    Some(k) => open.remove(k).1,
                    None => name.clone(),
                },
            };
            let response = f.get("response").cloned().unwrap_or(Value::Null);
            let mut r = Message::new(Role::Tool, result_text(&response));
            r.tool_call_id = Some(id);
            out.push(r);
        } else if let Some(t) = opt_str(p, "text", &pp)? {
            text.push(t.to_string());
        }
    }
    if !text.is_empty() {
        let mut m = Message::new(Role::User, text.join("\n"));
        m.path = path.to_string();
        out.push(m);
    }
    Ok(out)
}

/// A function response as the text the oracle reads: a lone string field as itself
/// (`{"result": "42"}` → `42`), anything else as its JSON.
fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 1 => match o.values().next() {
            Some(Value::String(s)) => s.clone(),
            Some(x) => x.to_string(),
            None => String::new(),
        },
        other => other.to_string(),
    }
}

fn tools(root: &Obj) -> Result<(Vec<Tool>, ToolChoice), WireError> {
    let mut tools = Vec::new();
    for (i, t) in opt_array(root, "tools", "")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let tp = join("tools", i);
        let t = as_obj(t, &tp)?;
        // googleSearch, codeExecution …: accepted, never called.
        for (k, d) in opt_array(t, "functionDeclarations", &tp)?
            .into_iter()
            .flatten()
            .enumerate()
        {
            let dp = join(&join(&tp, "functionDeclarations"), k);
            let d = as_obj(d, &dp)?;
            let key = if d.contains_key("parametersJsonSchema") {
                "parametersJsonSchema"
            } else {
                "parameters"
            };
            tools.push(Tool::new(
                non_empty_name(d, &dp)?,
                lower_types(schema(d, key, &dp)?),
            ));
        }
    }
    let mut choice = ToolChoice::Auto;
    if let Some(cfg) = opt_obj(root, "toolConfig", "")? {
        if let Some(f) = opt_obj(cfg, "functionCallingConfig", "toolConfig")? {
            let fp = "toolConfig.functionCallingConfig";
            let names: Vec<&str> = opt_array(f, "allowedFunctionNames", fp)?
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            choice = match opt_str(f, "mode", fp)?.unwrap_or("AUTO") {
                "AUTO" | "MODE_UNSPECIFIED" | "VALIDATED" => ToolChoice::Auto,
                "NONE" => ToolChoice::None,
                "ANY" if names.len() == 1 => ToolChoice::Named(names[0].to_string()),
                "ANY" => ToolChoice::Required,
                other => {
                    return Err(WireError::invalid(
                        join(fp, "mode"),
                        format!("must be AUTO, ANY, NONE or VALIDATED, got {other:?}"),
                    ))
                }
            };
        }
    }
    Ok((tools, choice))
}

/// Gemini's OpenAPI-style schemas write types in capitals (`OBJECT`, `STRING`): the
/// mock's argument maker reads JSON Schema's lower-case names.
fn lower_types(mut v: Value) -> Value {
    match &mut v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(s) if k == "type" => *s = s.to_ascii_lowercase(),
                    _ => *x = lower_types(x.take()),
                }
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = lower_types(x.take());
            }
        }
        _ => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn function_responses_answer_their_calls_and_signatures_are_placed() {
        let body = json!({
            "systemInstruction": {"parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [
                    {"text": "thinking…", "thought": true},
                    {"functionCall": {"name": "f", "args": {"k": 1}}, "thoughtSignature": "abc"},
                    {"functionCall": {"name": "g", "args": {}}}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "g", "response": {"result": "two"}}},
                    {"functionResponse": {"name": "f", "response": {"n": 1}}}]},
            ],
            "tools": [{"functionDeclarations": [{"name": "f", "parameters": {"type": "OBJECT",
                "properties": {"type": {"type": "STRING"}}}}]}, {"googleSearch": {}}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}},
            "generationConfig": {"max_output_tokens": 99, "thinkingConfig": {"thinking_budget": 0}},
        });
        let r = parse_generate(body.to_string().as_bytes()).unwrap();
        assert_eq!(r.system, "be brief");
        assert_eq!(r.max_output_tokens, Some(99));
        assert!(r.reasoning.is_none(), "a zero budget turns thinking off");
        assert_eq!(r.tool_choice, ToolChoice::Named("f".into()));
        assert_eq!(r.tools[0].schema["properties"]["type"]["type"], "string");
        let model = &r.messages[1];
        assert_eq!(model.text, "", "thought summaries are not the answer");
        assert_eq!(model.tool_calls.len(), 2);
        assert_eq!(model.thoughts.len(), 1);
        assert!(!model.thoughts[0].late, "on the first function call");
        let (g, f) = (&r.messages[2], &r.messages[3]);
        assert_eq!(g.tool_call_id.as_ref(), Some(&model.tool_calls[1].id));
        assert_eq!(g.text, "two");
        assert_eq!(f.tool_call_id.as_ref(), Some(&model.tool_calls[0].id));
        assert_eq!(f.text, "1");
    }
}
