//! The values a written session gives an operation's body fields: the user's message
//! (with the session marker) in the field that looks like it, a session id per session
//! where the API keeps conversations, `stream = false`, the ids other calls make as
//! placeholders, and what a required field of each type takes. Which calls make those ids
//! is `write`'s business.

use serde_json::{json, Value};

/// The user's text of a turn, with the marker the mock's oracle reads.
pub const MESSAGE: &str =
    "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}.";

/// Names of the field that carries the user's message, most likely first.
const MESSAGE_NAMES: &[&str] = &[
    "message",
    "input",
    "messages",
    "content",
    "prompt",
    "query",
    "question",
    "text",
    "user_input",
    "user_message",
];

/// A conversation's value per session: an id (`session_id`, `thread_id`) a well-formed
/// UUID (servers often check it), anything else the session's name. Which fields name a
/// conversation is `drive::spec`'s decision.
fn conversation_value(name: &str) -> Value {
    Value::String(
        match drive::spec::is_an_id(name) {
            true => "{{uuid}}",
            false => "{{session}}",
        }
        .into(),
    )
}

/// The field of `schema` that carries the user's message.
pub fn message_field(schema: &Value) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    MESSAGE_NAMES
        .iter()
        .find(|n| props.contains_key(**n))
        .map(|n| n.to_string())
}

/// The types a schema allows (`type`, or those of `anyOf` / `oneOf`); empty: any.
fn types(raw: &Value, s: &Value) -> Vec<String> {
    let s = super::refs::resolve(raw, s, 0);
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        return vec![t.to_string()];
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| s.get(*k).and_then(Value::as_array))
        .flatten()
        .flat_map(|v| types(raw, v))
        .collect()
}

/// What the message field gets: text where text is allowed, a chat message list where a
/// list or an object is (LangGraph's `input`, a `messages` array).
fn message_value(name: &str, allowed: &[String]) -> Value {
    let user = json!([{"role": "user", "content": MESSAGE}]);
    let allows = |t: &str| allowed.is_empty() || allowed.iter().any(|a| a == t);
    match name {
        "messages" if allows("array") => user,
        "input" if allows("object") => json!({ "messages": user }),
        _ if allows("string") => Value::String(MESSAGE.into()),
        _ if allows("array") => user,
        _ => json!({ "messages": user }),
    }
}

/// A body's fields and their values, and the ids it needs from other calls (as
/// `{{name}}` placeholders). Optional fields are left out, except the message, a
/// conversation id and `stream`.
pub fn fill(raw: &Value, schema: &Value) -> (Vec<(String, Value)>, Vec<String>) {
    let mut out = Vec::new();
    let mut ids = Vec::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return (out, ids);
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let message = message_field(schema);
    for (name, s) in props {
        let allowed = types(raw, s);
        let s = super::refs::resolve(raw, s, 0);
        let value = if message.as_deref() == Some(name) {
            message_value(name, &allowed)
        } else if drive::spec::names_a_conversation(name) && allowed_text(&allowed) {
            conversation_value(name)
        } else if name == "stream" && allowed.iter().any(|t| t == "boolean") {
            Value::Bool(false)
        } else if !required.contains(&name.as_str()) {
            continue;
        } else if name == "id" || name.ends_with("_id") {
            ids.push(name.clone());
            Value::String(format!("{{{{{name}}}}}"))
        } else {
            required_value(&s, &allowed)
        };
        out.push((name.clone(), value));
    }
    (out, ids)
}

/// Text is among the types a field allows (or any type is).
fn allowed_text(allowed: &[String]) -> bool {
    allowed.is_empty() || allowed.iter().any(|t| t == "string")
}

/// What a required field takes: its default, its first choice, or a value of its type.
fn required_value(s: &Value, allowed: &[String]) -> Value {
    if let Some(d) = s.get("default") {
        return d.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match allowed.first().map(String::as_str) {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("plimsoll"),
    }
}
