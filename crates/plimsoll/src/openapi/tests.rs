//! Sessions written from small OpenAPI documents shaped like two agent servers': a
//! thread API (create a thread, run it, delete it; the assistant found by a search) and a
//! form/multipart run endpoint under an agent id found by a list.

use super::*;
use serde_json::json;

fn threads() -> Doc {
    Doc::parse(json!({"paths": {
        "/threads": {"post": {"operationId": "create_thread",
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"metadata": {"type": "object"}}}}}},
            "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thread"}}}}}}},
        "/threads/{thread_id}": {"delete": {"responses": {"204": {}}}},
        "/assistants/search": {"post": {"responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Assistant"}}}}}}}},
        "/threads/{thread_id}/runs/wait": {"post": {"operationId": "wait_run",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/RunCreate"}}}},
            "responses": {"200": {"content": {"application/json": {"schema": {}}}}}}}
    }, "components": {"schemas": {
        "Thread": {"type": "object", "properties": {"thread_id": {"type": "string"}}},
        "Assistant": {"type": "object", "properties": {"assistant_id": {"type": "string"}}},
        "RunCreate": {"type": "object", "required": ["assistant_id"], "properties": {
            "assistant_id": {"anyOf": [{"type": "string"}]},
            "input": {"anyOf": [{"type": "object"}, {"type": "string"}, {"type": "null"}]},
            "stream_mode": {"type": "string"}}}
    }}}))
    .unwrap()
}

#[test]
fn a_thread_api_gets_a_created_thread_a_found_assistant_and_a_teardown() {
    let doc = threads();
    let op = doc.pick("POST /threads/{thread_id}/runs/wait").unwrap();
    assert_eq!(op.params, ["thread_id"]);
    let text = session(&doc, op).unwrap();
    let s =
        drive::SessionSpec::parse(&text, "session.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(s.setup.len(), 2, "{text}");
    assert_eq!(s.setup[0].url, "{{base}}/threads");
    assert_eq!(s.setup[1].url, "{{base}}/assistants/search");
    assert_eq!(s.turn[0].url, "{{base}}/threads/{{thread_id}}/runs/wait");
    let body: serde_json::Value =
        serde_json::from_str(&drive::template::render(&s.turn[0].bodies[0], &[])).unwrap();
    assert_eq!(body["input"]["messages"][0]["role"], "user");
    assert!(body["input"]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("[[plimsoll session="));
    assert_eq!(s.teardown[0].method, "DELETE");
    assert!(
        text.contains("extract = { assistant_id = \"/0/assistant_id\" }"),
        "{text}"
    );
}

#[test]
fn a_multipart_run_endpoint_gets_its_fields_and_an_agent_from_the_list() {
    let doc = Doc::parse(json!({"paths": {
        "/agents": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}}}}},
        "/agents/{agent_id}/runs": {"post": {"operationId": "create_agent_run",
            "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object", "required": ["message"], "properties": {
                "message": {"type": "string"}, "stream": {"type": "boolean", "default": true},
                "session_id": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "files": {"type": "array"}}}}}}}}
    }})).unwrap();
    let op = doc.pick("create_agent_run").unwrap();
    assert!(op.takes_a_message());
    let text = session(&doc, op).unwrap();
    let s =
        drive::SessionSpec::parse(&text, "session.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(
        text.contains("extract = { agent_id = \"/0/id\" }"),
        "{text}"
    );
    let Some(drive::spec::Fields::Multipart(parts)) = &s.turn[0].fields else {
        panic!("{text}")
    };
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["message", "session_id", "stream"]);
    let e = doc.pick("POST /nowhere").unwrap_err().to_string();
    assert!(e.contains("names no operation"), "{e}");
}

/// A FastAPI agent whose `POST /chat` takes `{"session": str, "message": str}` (issue 40):
/// the written session gives `session` each session's own name, never a constant, and a
/// required `user_id` a UUID of its own — the oracle would otherwise blame the SUT for one
/// conversation shared by every session.
#[test]
fn a_conversation_field_gets_a_value_per_session_never_a_constant() {
    let doc = Doc::parse(json!({"paths": {
        "/chat": {"post": {"operationId": "chat_chat_post",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Chat"}}}},
            "responses": {"200": {"content": {"application/json": {"schema": {}}}}}}}
    }, "components": {"schemas": {
        "Chat": {"type": "object", "required": ["session", "message", "user_id", "model"], "properties": {
            "session": {"type": "string", "title": "Session"},
            "message": {"type": "string"},
            "user_id": {"type": "string"},
            "model": {"type": "string"}}}
    }}}))
    .unwrap();
    let op = doc.pick("chat_chat_post").unwrap();
    let text = session(&doc, op).unwrap();
    let s =
        drive::SessionSpec::parse(&text, "session.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let body: serde_json::Value = serde_json::from_str(&s.turn[0].bodies[0]).unwrap();
    assert_eq!(body["session"], "{{session}}", "{text}");
    assert_eq!(body["user_id"], "{{uuid}}", "{text}");
    assert_eq!(
        body["model"], "plimsoll",
        "a field that names no conversation keeps its value"
    );
    assert!(s.shared_values().is_empty(), "{:?}", s.shared_values());
}
