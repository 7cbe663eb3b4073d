//! Values every session sends alike in a field that names a conversation: a JSON body's
//! `"session": "plimsoll"`, a form's `thread_id = "abc"`, a `?user=x` query or an
//! `x-session-id` header with no placeholder in it. The SUT then keeps one conversation
//! for every session, and the mock's oracle sees one session's messages in another's —
//! the session file's doing, not the SUT's. Which fields name a conversation is decided
//! here, once, for `init --from-openapi` (which gives them a value per session) and for
//! explaining isolation violations.

use super::form::{Fields, PartValue};
use super::session::SessionSpec;

/// Words that name a conversation (or whose it is) in a field's name.
const CONVERSATION_WORDS: &[&str] = &["session", "conversation", "thread", "chat", "user"];

/// Words of a field that carries the user's text, not a conversation's name
/// (`user_message`, `chat_input`).
const TEXT_WORDS: &[&str] = &[
    "message", "messages", "input", "content", "prompt", "query", "question", "text",
];

/// A field that every session sends with the same value.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedValue {
    /// Where it is written: `session.toml:12`.
    pub at: String,
    /// The request that sends it (`turn`, `create`).
    pub request: String,
    /// Where in the request: "JSON body", "form", "query", "header".
    pub place: &'static str,
    pub field: String,
    pub value: String,
}

impl std::fmt::Display for SharedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` = \"{}\" in the {} of request `{}` ({})",
            self.field, self.value, self.place, self.request, self.at
        )
    }
}

/// Whether a field's name names a conversation, a session, a thread, a chat or a user
/// (`session`, `session_id`, `threadId`, `user`, `x-chat-id`), and not the user's text.
pub fn names_a_conversation(name: &str) -> bool {
    let w = words(name);
    w.iter().any(|w| CONVERSATION_WORDS.contains(&w.as_str()))
        && !w.iter().any(|w| TEXT_WORDS.contains(&w.as_str()))
}

/// Whether a conversation's field is an id (`session_id`, `threadId`, `chat-uuid`): a
/// well-formed UUID suits it better than a name.
pub fn is_an_id(name: &str) -> bool {
    words(name).last().is_some_and(|w| w == "id" || w == "uuid")
}

/// A field name's words, lower case: `session_id`, `sessionId` and `session-id` are
/// `session` and `id`.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A value with no placeholder: the same in every session.
fn literal(v: &str) -> bool {
    !v.contains("{{") && !v.trim().is_empty()
}

impl SessionSpec {
    /// The fields that name a conversation and carry the same literal value in every
    /// session, over the requests sent before and during the turns.
    pub fn shared_values(&self) -> Vec<SharedValue> {
        let mut out = Vec::new();
        for r in self.setup.iter().chain(&self.turn) {
            let mut add = |place: &'static str, field: &str, value: &str, at: &str| {
                if names_a_conversation(field) && literal(value) {
                    out.push(SharedValue {
                        at: at.to_string(),
                        request: r.name.clone(),
                        place,
                        field: field.to_string(),
                        value: value.to_string(),
                    });
                }
            };
            for body in &r.bodies {
                if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(body) {
                    for (k, v) in &m {
                        if let Some(s) = v.as_str() {
                            add("JSON body", k, s, &r.body_at);
                        }
                    }
                }
            }
            match &r.fields {
                Some(Fields::Form(f)) => f.iter().for_each(|(k, v)| add("form", k, v, &r.body_at)),
                Some(Fields::Multipart(p)) => p.iter().for_each(|p| {
                    if let PartValue::Text(t) = &p.value {
                        add("multipart form", &p.name, t, &r.body_at);
                    }
                }),
                None => {}
            }
            let query = r.url.split_once('?').map_or("", |(_, q)| q);
            for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
                add("query", k, v, &r.at);
            }
            for (k, v) in &r.headers {
                add("header", k, v, &r.at);
            }
        }
        out.dedup_by(|a, b| a.field == b.field && a.value == b.value && a.place == b.place);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_that_name_a_conversation_by_their_words() {
        for yes in [
            "session",
            "session_id",
            "sessionId",
            "thread_id",
            "x-chat-id",
            "user",
            "userId",
            "conversation",
        ] {
            assert!(names_a_conversation(yes), "{yes}");
        }
        for no in [
            "message",
            "user_message",
            "chat_input",
            "stream",
            "model",
            "sessions_total_text",
            "assistant_id",
        ] {
            assert!(!names_a_conversation(no), "{no}");
        }
        assert!(is_an_id("session_id") && is_an_id("threadId") && !is_an_id("session"));
    }

    #[test]
    fn a_constant_session_field_is_found_and_a_placeholder_is_not() {
        let text = r#"
method = "POST"
url = "{{base}}/chat?user=alice"
body = '{"session": "plimsoll", "message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hi", "thread_id": "{{uuid}}"}'
[headers]
content-type = "application/json"
x-session-id = "fixed"
"#;
        let s = SessionSpec::parse(text, "session.toml").unwrap();
        let found: Vec<String> = s.shared_values().iter().map(|v| v.to_string()).collect();
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(
            found[0].starts_with(
                "`session` = \"plimsoll\" in the JSON body of request `turn` (session.toml:"
            ),
            "{found:#?}"
        );
        assert!(found
            .iter()
            .any(|f| f.starts_with("`user` = \"alice\" in the query")));
        assert!(found
            .iter()
            .any(|f| f.starts_with("`x-session-id` = \"fixed\" in the header")));
        let fine = SessionSpec::parse(
            "method = \"POST\"\nurl = \"{{base}}/chat\"\nbody = '{\"session\": \"{{session}}\", \"message\": \"hi\"}'\n",
            "session.toml",
        )
        .unwrap();
        assert!(fine.shared_values().is_empty());
    }
}
