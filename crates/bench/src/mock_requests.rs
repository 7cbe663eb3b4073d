//! The requests `plimsoll bench mock` sends: per API its path, the pattern that marks
//! one delta event in the stream, and the body of request `n` — with reasoning asked
//! for, and with a long system prompt shared by every request (what the prompt cache
//! serves) when the bench asks for one.

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
