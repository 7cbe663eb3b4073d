//! The requests `plimsoll bench mock` sends: per API its path, the pattern that marks
//! one delta event in the stream, and the body of request `n` — with reasoning asked
//! for, and with a long system prompt shared by every request (what the prompt cache
//! serves) when the bench asks for one, and with an agent's history (turns of tool
//! calls and their JSON results, what an agent framework sends back every call).

use anyhow::bail;

/// A system prompt of `tokens` tokens (one word each), the same for every request.
pub(crate) fn system_prompt(tokens: u32) -> String {
    let mut s = String::with_capacity(tokens as usize * 5);
    for i in 0..tokens {
        s.push_str(if i == 0 { "rule" } else { " rule" });
    }
    s
}

/// The path, the pattern that marks one delta event, and the body of request `n`.
/// With `reasoning`, the request asks the model to reason, and Anthropic thinking
/// deltas count as delta events beside text ones.
pub(crate) fn api_parts(
    api: &str,
    n: usize,
    reasoning: bool,
    system: &str,
) -> anyhow::Result<(&'static str, &'static [u8], String)> {
    let prompt = format!("benchmark stream {n}: say something");
    let mut parts = match api {
        "chat" => (
            "/v1/chat/completions",
            &b"\"delta\":{\"content\""[..],
            serde_json::json!({"model": "bench", "stream": true,
                "messages": [{"role": "user", "content": prompt}]}),
        ),
        "responses" => (
            "/v1/responses",
            &b"\"type\":\"response.output_text.delta\""[..],
            serde_json::json!({"model": "bench", "stream": true, "input": prompt}),
        ),
        "messages" => (
            "/v1/messages",
            &b"\"type\":\"text_delta\""[..],
            serde_json::json!({"model": "bench", "stream": true, "max_tokens": 100000,
                "messages": [{"role": "user", "content": prompt}]}),
        ),
        other => bail!("--api must be chat, responses or messages (got {other:?})"),
    };
    if !system.is_empty() {
        let body = &mut parts.2;
        match api {
            "chat" => body["messages"]
                .as_array_mut()
                .expect("chat bodies have messages")
                .insert(0, serde_json::json!({"role": "system", "content": system})),
            "responses" => body["instructions"] = system.into(),
            _ => {
                body["system"] = serde_json::json!([{"type": "text", "text": system,
                    "cache_control": {"type": "ephemeral"}}])
            }
        }
    }
    if reasoning {
        let body = &mut parts.2;
        match api {
            "chat" => body["reasoning_effort"] = "medium".into(),
            "responses" => {
                body["reasoning"] = serde_json::json!({"effort": "medium"});
                body["include"] = serde_json::json!(["reasoning.encrypted_content"]);
                body["store"] = false.into();
            }
            _ => {
                body["thinking"] = serde_json::json!({"type": "enabled", "budget_tokens": 50000});
                // text_delta and thinking_delta alike.
                parts.1 = b"\"delta\":{\"type\":\"t";
            }
        }
    }
    Ok((parts.0, parts.1, parts.2.to_string()))
}

/// The tools an agent declares in every request (four, with JSON Schema parameters).
fn tools(api: &str) -> serde_json::Value {
    let names = [
        "search_orders",
        "get_customer",
        "refund_order",
        "send_email",
    ];
    let each = names.iter().map(|name| {
        let params = serde_json::json!({"type": "object", "properties": {
            "id": {"type": "string", "description": "the record's id, as the CRM writes it"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "note": {"type": "string", "description": "free text kept with the action"}},
            "required": ["id"]});
        let what = format!("{name}: looks up or changes a record in the shop's back office");
        match api {
            "chat" => serde_json::json!({"type": "function", "function": {
                "name": name, "description": what, "parameters": params}}),
            _ => serde_json::json!({"name": name, "description": what, "input_schema": params}),
        }
    });
    serde_json::Value::Array(each.collect())
}

/// A tool's JSON result, about 1 KB: what an agent's tools return.
fn tool_result(conv: usize, turn: usize) -> String {
    let rows: Vec<serde_json::Value> = (0..8)
        .map(|i| {
            serde_json::json!({"order": format!("ord-{conv}-{turn}-{i}"),
            "status": "shipped", "total_cents": 1999 + i * 100, "items": i + 1,
            "updated": "2026-11-26T20:00:00Z"})
        })
        .collect();
    serde_json::json!({"ok": true, "rows": rows}).to_string()
}

/// `turns` turns of an agent's history, each a user's message, the model's tool call,
/// the tool's JSON result and the model's answer; then the new turn's question and its
/// tool call answered, so the model replies in text (an agent's second call of a turn).
/// Conversation `conv` is its own (its ids and figures differ from every other's).
pub(crate) fn agent_body(
    api: &str,
    conv: usize,
    turns: usize,
    system: &str,
) -> anyhow::Result<(&'static str, &'static [u8], String)> {
    let mut msgs = Vec::new();
    for t in 0..=turns {
        let id = format!("call_{conv}_{t}");
        let args = serde_json::json!({"id": format!("cust-{conv}"), "limit": 8});
        let user = format!("conversation {conv}, turn {t}: what happened to my last orders?");
        let result = tool_result(conv, t);
        let mut turn = if api == "chat" {
            vec![
                serde_json::json!({"role": "user", "content": user}),
                serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": id,
                    "type": "function", "function": {"name": "search_orders", "arguments": args.to_string()}}]}),
                serde_json::json!({"role": "tool", "tool_call_id": id, "content": result}),
            ]
        } else {
            vec![
                serde_json::json!({"role": "user", "content": user}),
                serde_json::json!({"role": "assistant", "content": [{"type": "tool_use", "id": id,
                    "name": "search_orders", "input": args}]}),
                serde_json::json!({"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": id, "content": result}]}),
            ]
        };
        if t < turns {
            let answer = format!(
                "Your {} orders have shipped; the latest on 26 November.",
                8 + t
            );
            turn.push(serde_json::json!({"role": "assistant", "content": answer}));
        }
        msgs.extend(turn);
    }
    let (path, pattern, body) = api_parts(api, conv, false, system)?;
    let mut body: serde_json::Value = serde_json::from_str(&body)?;
    let Some(sent) = body["messages"].as_array_mut() else {
        anyhow::bail!("--history needs --api chat or messages (got {api:?})");
    };
    // The new turn's question, its tool call answered: the model now writes its reply.
    sent.pop();
    sent.extend(msgs);
    body["tools"] = tools(api);
    Ok((path, pattern, body.to_string()))
}
