//! Request parsing across the three APIs: what is read, and which field an error names.

use serde_json::json;
use wire::{Api, Role, ToolChoice};

fn param(api: Api, body: serde_json::Value) -> String {
    api.parse(body.to_string().as_bytes())
        .unwrap_err()
        .param
        .unwrap()
}

#[test]
fn chat_reads_system_tools_and_tool_results() {
    let r = Api::ChatCompletions
        .parse(
            json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                "max_tokens": 9, "tool_choice": "required",
                "tools": [{"type": "function", "function": {"name": "f"}}],
                "messages": [
                    {"role": "developer", "content": "rules"},
                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "b"}]},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"k\":1}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "done"}]})
            .to_string()
            .as_bytes(),
        )
        .unwrap();
    assert!(r.stream && r.include_usage);
    assert_eq!(r.system, "rules");
    assert_eq!(r.max_output_tokens, Some(9));
    assert_eq!(r.tool_choice, ToolChoice::Required);
    assert_eq!(r.messages.len(), 3);
    assert_eq!(r.messages[0].text, "a\nb");
    assert_eq!(r.messages[1].tool_calls[0].arguments, "{\"k\":1}");
    assert_eq!(
        (r.messages[2].role, r.messages[2].tool_call_id.as_deref()),
        (Role::Tool, Some("c1"))
    );
    assert!(r.prompt_tokens > 5);
}

#[test]
fn anthropic_splits_tool_results_out_of_user_messages() {
    let r = Api::Messages
        .parse(
            json!({"model": "m", "max_tokens": 5, "system": "s", "tool_choice": {"type": "tool", "name": "f"},
                "tools": [{"name": "f", "input_schema": {"type": "object"}}, {"type": "web_search_20250305", "name": "web_search"}],
                "messages": [{"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
                    {"type": "text", "text": "and"}]}]})
            .to_string()
            .as_bytes(),
        )
        .unwrap();
    assert_eq!(r.tools.len(), 1, "server tools are never called");
    assert_eq!(r.tool_choice, ToolChoice::Named("f".into()));
    assert_eq!(r.messages[0].role, Role::Tool);
    assert_eq!(r.messages[1].text, "and");
}

#[test]
fn errors_name_the_exact_field() {
    assert_eq!(
        param(Api::ChatCompletions, json!({"messages": []})),
        "model"
    );
    assert_eq!(
        param(Api::ChatCompletions, json!({"model": "m"})),
        "messages"
    );
    assert_eq!(
        param(
            Api::ChatCompletions,
            json!({"model": "m", "messages": [{"role": "user"}], "stream": "yes"})
        ),
        "stream"
    );
    assert_eq!(
        param(
            Api::ChatCompletions,
            json!({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "f"}}]}]})
        ),
        "messages.0.tool_calls.0.function.arguments"
    );
    assert_eq!(
        param(Api::Responses, json!({"model": "m", "input": 3})),
        "input"
    );
    assert_eq!(
        param(
            Api::Responses,
            json!({"model": "m", "input": [{"type": "function_call_output", "output": "x"}]})
        ),
        "input.0.call_id"
    );
    assert_eq!(
        param(
            Api::Messages,
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}]})
        ),
        "max_tokens"
    );
    assert_eq!(
        param(
            Api::Messages,
            json!({"model": "m", "max_tokens": 0, "messages": []})
        ),
        "max_tokens"
    );
    assert_eq!(
        param(
            Api::Messages,
            json!({"model": "m", "max_tokens": 3, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}]})
        ),
        "messages.0.content.0.input"
    );
    assert_eq!(param(Api::Messages, json!([1, 2])), "body");
}
