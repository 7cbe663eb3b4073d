//! `session.toml`: how one session talks to the SUT.
//!
//! ```toml
//! protocol = "http"            # "http" (one JSON reply per turn), "sse" (a stream per turn),
//!                              # or "ws" (one WebSocket per session, a text message per turn)
//! method = "POST"
//! url = "{{base}}/sessions/{{session}}/turn"
//! turns = 3
//! think_ms = 0                 # pause between a reply and the next turn
//! turn_timeout_ms = 120000
//! expect_status = 200          # default: any 2xx
//! # The body of every turn, or `bodies = [...]`, one per turn (the last one repeats).
//! # Top-level keys go before the first [table]: TOML puts every key after `[headers]`
//! # into the headers.
//! body = '{"message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hello"}'
//! [headers]
//! content-type = "application/json"
//! [extract]                    # values taken from each JSON reply by JSON pointer,
//! conversation = "/id"         # usable as {{conversation}} in later turns
//! [[check]]                    # a reply that fails a check fails the session
//! pointer = "/reply"
//! contains = "fact"            # or equals = <any JSON>, or present = true
//! ```
//!
//! Placeholders: `{{session}}` (s0, s1 …), `{{nonce}}` (psn + 16 hex, unique per session),
//! `{{turn}}` (1-based), `{{base}}` (the SUT's base URL), `{{ws_base}}` (the same as
//! ws://), `{{port}}`, and extracted names.
//!
//! With `protocol = "openai-chat"` Plimsoll is a chat client of an OpenAI-compatible
//! endpoint (a proxy, a gateway, an agent server that speaks Chat Completions): `body` is
//! the user's text of a turn (default: the marker and "Please handle turn N."); each turn
//! sends the whole conversation so far — `{"model", "messages", "stream"}`, with `model =
//! "gpt-4o-mini"` and `stream = false` by default — and appends the assistant's reply, so
//! the mock's history check holds. Time to first token is the first content delta; checks
//! and extracts read the assistant message (`/content`). `protocol = "anthropic-messages"`
//! is the same for the Anthropic Messages API (`max_tokens` 1024; default model
//! `claude-3-5-haiku-latest`; give `anthropic-version` under [headers] — the API needs it;
//! checks read `/content/0/text`).
//!
//! With `protocol = "ws"` the URL is opened once per session and each turn sends the body
//! as one text message. The turn ends with the first message back, or, with
//! `ws_done_pointer = "/type"` and `ws_done_equals = "done"`, with the first JSON message
//! whose pointer has that value (without `ws_done_equals`: whose pointer is present).
//! The `[[plimsoll …]]` marker lets the mock's integrity oracle check the conversation.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The top-level keys of a session file: as a header name, almost surely a key written
/// below `[headers]` by mistake.
const SESSION_KEYS: &[&str] = &[
    "protocol",
    "method",
    "url",
    "turns",
    "think_ms",
    "turn_timeout_ms",
    "expect_status",
    "body",
    "bodies",
    "ws_done_pointer",
    "ws_done_equals",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http,
    Sse,
    Ws,
    /// A chat client of the OpenAI Chat Completions API: it keeps the conversation and
    /// sends all of it every turn, as an application in front of a proxy does.
    OpenaiChat,
    /// The same for the Anthropic Messages API.
    AnthropicMessages,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    Equals(String, serde_json::Value),
    Contains(String, String),
    Present(String),
}

#[derive(Clone, Debug)]
pub struct SessionSpec {
    pub protocol: Protocol,
    pub method: String,
    pub url: String,
    pub turns: u32,
    pub think_ms: f64,
    pub turn_timeout_ms: u64,
    pub expect_status: Option<u16>,
    pub headers: Vec<(String, String)>,
    /// One template per turn; the last repeats.
    pub bodies: Vec<String>,
    pub extract: Vec<(String, String)>,
    pub checks: Vec<Check>,
    /// WebSocket: the message that ends a turn (pointer, and the value it must have).
    pub ws_done: Option<(String, Option<serde_json::Value>)>,
    /// Likely mistakes that do not stop a run, each naming the file and line.
    pub warnings: Vec<String>,
    /// With `protocol = "openai-chat"`: the model asked for and whether to stream.
    pub chat: Option<Chat>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Chat {
    /// The Anthropic Messages API (else OpenAI Chat Completions).
    pub anthropic: bool,
    pub model: String,
    pub stream: bool,
}

impl Protocol {
    /// A chat client that keeps the conversation (`openai-chat`, `anthropic-messages`).
    pub fn is_chat(self) -> bool {
        matches!(self, Protocol::OpenaiChat | Protocol::AnthropicMessages)
    }
}

/// The user's text of a turn with `protocol = "openai-chat"`, when none is given.
pub const CHAT_TEXT: &str =
    "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}.";

/// A session.toml that cannot be used, with where and why.
pub type SessionError = spans::FileError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    protocol: Option<Spanned<String>>,
    method: Option<String>,
    url: Spanned<String>,
    turns: Option<Spanned<i64>>,
    think_ms: Option<Spanned<f64>>,
    turn_timeout_ms: Option<Spanned<i64>>,
    expect_status: Option<Spanned<i64>>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<Spanned<String>>,
    bodies: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    extract: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    check: Vec<Spanned<RawCheck>>,
    ws_done_pointer: Option<Spanned<String>>,
    ws_done_equals: Option<toml::Value>,
    model: Option<String>,
    stream: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    pointer: String,
    equals: Option<toml::Value>,
    contains: Option<String>,
    present: Option<bool>,
}

const BUILTIN: &[&str] = &["session", "nonce", "turn", "base", "ws_base", "port"];

/// The default body: a chat-style message carrying the session marker.
pub const DEFAULT_BODY: &str = r#"{"session": "{{session}}", "message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}."}"#;

fn placeholders(t: &str) -> impl Iterator<Item = &str> {
    t.split("{{")
        .skip(1)
        .filter_map(|r| r.split_once("}}").map(|(n, _)| n.trim()))
}

/// Fills `{{name}}` from `vars` (unknown names render empty; they were rejected at load).
pub fn render(t: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(t.len() + 32);
    let mut rest = t;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        match rest[i + 2..].split_once("}}") {
            Some((name, after)) => {
                if let Some((_, v)) = vars.iter().find(|(k, _)| *k == name.trim()) {
                    out.push_str(v);
                }
                rest = after;
            }
            None => {
                out.push_str(&rest[i..]);
                return out;
            }
        }
    }
    out.push_str(rest);
    out
}

impl SessionSpec {
    pub fn load(path: &Path) -> Result<SessionSpec, SessionError> {
        let text = std::fs::read_to_string(path).map_err(|e| spans::unreadable(path, &e, ""))?;
        SessionSpec::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Result<SessionSpec, SessionError> {
        let spans = spans::Spans::new(text, file);
        let err = |span, message: String| spans.err(span, message);
        let raw: Raw = toml::from_str(text).map_err(|e| spans.toml(&e, ""))?;
        let protocol = match raw
            .protocol
            .as_ref()
            .map(|p| (p.get_ref().as_str(), p.span()))
        {
            None | Some(("http", _)) => Protocol::Http,
            Some(("sse", _)) => Protocol::Sse,
            Some(("ws", _)) => Protocol::Ws,
            Some(("openai-chat", _)) => Protocol::OpenaiChat,
            Some(("anthropic-messages", _)) => Protocol::AnthropicMessages,
            Some((other, s)) => {
                return Err(err(
                    Some(s),
                    format!(
                    "protocol must be \"http\", \"sse\", \"ws\", \"openai-chat\" or \"anthropic-messages\" (got {other:?})"
                ),
                ))
            }
        };
        let int = |v: &Option<Spanned<i64>>, name: &str, lo: i64, hi: i64, default: i64| match v {
            None => Ok(default),
            Some(x) if (lo..=hi).contains(x.get_ref()) => Ok(*x.get_ref()),
            Some(x) => Err(err(
                Some(x.span()),
                format!("{name} must be between {lo} and {hi} (got {})", x.get_ref()),
            )),
        };
        let turns = int(&raw.turns, "turns", 1, 100_000, 3)? as u32;
        let turn_timeout_ms = int(
            &raw.turn_timeout_ms,
            "turn_timeout_ms",
            1,
            86_400_000,
            120_000,
        )? as u64;
        let expect_status = match &raw.expect_status {
            None => None,
            Some(_) => Some(int(&raw.expect_status, "expect_status", 100, 599, 200)? as u16),
        };
        let think_ms = match &raw.think_ms {
            None => 0.0,
            Some(t) if t.get_ref().is_finite() && *t.get_ref() >= 0.0 => *t.get_ref(),
            Some(t) => {
                return Err(err(
                    Some(t.span()),
                    format!("think_ms must be ≥ 0 (got {})", t.get_ref()),
                ))
            }
        };
        let url = raw.url.get_ref().clone();
        let (schemes, hint) = match protocol {
            Protocol::Ws => (["ws://", "{{ws_base}}"], "ws:// or {{ws_base}}"),
            _ => (["http://", "{{base}}"], "http:// or {{base}}"),
        };
        if !schemes.iter().any(|p| url.starts_with(p)) {
            return Err(err(
                Some(raw.url.span()),
                format!("url must start with {hint} for protocol {protocol:?} (got {url:?})"),
            ));
        }
        let ws_done = match (&raw.ws_done_pointer, &raw.ws_done_equals) {
            (Some(p), eq) if protocol == Protocol::Ws => Some((
                p.get_ref().clone(),
                eq.as_ref()
                    .map(|v| serde_json::to_value(v).unwrap_or(serde_json::Value::Null)),
            )),
            (Some(p), _) => {
                return Err(err(
                    Some(p.span()),
                    "ws_done_pointer only applies to protocol = \"ws\"".into(),
                ))
            }
            (None, Some(_)) => {
                return Err(err(
                    None,
                    "ws_done_equals needs ws_done_pointer = \"/field\"".into(),
                ))
            }
            (None, None) => None,
        };
        let bodies = match (&raw.body, &raw.bodies) {
            (Some(_), Some(b)) => {
                return Err(err(Some(b.span()), "give body or bodies, not both".into()))
            }
            (Some(b), None) => vec![b.get_ref().clone()],
            (None, Some(b)) if b.get_ref().is_empty() => {
                return Err(err(Some(b.span()), "bodies must not be empty".into()))
            }
            (None, Some(b)) => b.get_ref().clone(),
            (None, None) if protocol.is_chat() => vec![CHAT_TEXT.to_string()],
            (None, None) => vec![DEFAULT_BODY.to_string()],
        };
        if !protocol.is_chat() && (raw.model.is_some() || raw.stream.is_some()) {
            return Err(err(
                None,
                "model and stream apply only to protocol = \"openai-chat\" or \"anthropic-messages\"".into(),
            ));
        }
        let anthropic = protocol == Protocol::AnthropicMessages;
        let chat = protocol.is_chat().then(|| Chat {
            anthropic,
            model: raw.model.clone().unwrap_or_else(|| {
                if anthropic {
                    "claude-3-5-haiku-latest"
                } else {
                    "gpt-4o-mini"
                }
                .into()
            }),
            stream: raw.stream.unwrap_or(false),
        });
        let names: Vec<&str> = BUILTIN
            .iter()
            .copied()
            .chain(raw.extract.keys().map(String::as_str))
            .collect();
        let mut templates: Vec<(&str, Option<std::ops::Range<usize>>)> =
            vec![(&url, Some(raw.url.span()))];
        let body_span = raw
            .body
            .as_ref()
            .map(|b| b.span())
            .or(raw.bodies.as_ref().map(|b| b.span()));
        templates.extend(bodies.iter().map(|b| (b.as_str(), body_span.clone())));
        if let Some(name) = raw
            .headers
            .keys()
            .find(|k| SESSION_KEYS.contains(&k.as_str()))
        {
            let at = text.find("[headers]").and_then(|h| {
                text[h..]
                    .find(&format!("\n{name}"))
                    .map(|i| h + i + 1..h + i + 2)
            });
            return Err(err(
                at,
                format!("header {name:?} is a session setting written after [headers]: TOML puts every key after a [table] line into that table, so it would be sent as a header; move `{name} = …` above [headers]"),
            ));
        }
        templates.extend(raw.headers.values().map(|h| (h.as_str(), None)));
        for (t, span) in templates {
            if let Some(bad) = placeholders(t).find(|p| !names.contains(p)) {
                return Err(err(
                    span,
                    format!(
                        "unknown placeholder {{{{{bad}}}}}; use {} or a name under [extract]",
                        BUILTIN.join(", ")
                    ),
                ));
            }
        }
        let warnings = if protocol.is_chat() {
            Vec::new() // the bodies are the user's text; Plimsoll builds the JSON
        } else {
            json_body_warnings(&spans, &raw.headers, &bodies, body_span)
        };
        let mut extract = Vec::new();
        for (k, p) in &raw.extract {
            if !(p.get_ref().is_empty() || p.get_ref().starts_with('/')) {
                return Err(err(
                    Some(p.span()),
                    format!(
                        "extract.{k} must be a JSON pointer such as \"/id\" (got {:?})",
                        p.get_ref()
                    ),
                ));
            }
            extract.push((k.clone(), p.get_ref().clone()));
        }
        let mut checks = Vec::new();
        for c in &raw.check {
            let r = c.get_ref();
            let check =
                match (&r.equals, &r.contains, r.present) {
                    (Some(v), None, None) => Check::Equals(
                        r.pointer.clone(),
                        serde_json::to_value(v).map_err(|e| err(Some(c.span()), e.to_string()))?,
                    ),
                    (None, Some(s), None) => Check::Contains(r.pointer.clone(), s.clone()),
                    (None, None, Some(true)) => Check::Present(r.pointer.clone()),
                    _ => return Err(err(
                        Some(c.span()),
                        "each [[check]] needs exactly one of equals, contains or present = true"
                            .into(),
                    )),
                };
            checks.push(check);
        }
        Ok(SessionSpec {
            protocol,
            method: raw.method.unwrap_or_else(|| "POST".into()).to_uppercase(),
            url,
            turns,
            think_ms,
            turn_timeout_ms,
            expect_status,
            headers: raw.headers.into_iter().collect(),
            bodies,
            extract,
            checks,
            ws_done,
            warnings,
            chat,
        })
    }
}

/// A body sent as JSON that is not JSON once its placeholders are filled (a quote missing
/// around `{{name}}`, a trailing comma): the SUT would answer 400 and nothing would say why.
fn json_body_warnings(
    spans: &spans::Spans,
    headers: &BTreeMap<String, String>,
    bodies: &[String],
    span: Option<std::ops::Range<usize>>,
) -> Vec<String> {
    let json = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("json"));
    if !json {
        return Vec::new();
    }
    bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let sample: String = {
                let mut out = b.clone();
                for p in placeholders(b).collect::<Vec<_>>() {
                    out = out.replace(&format!("{{{{{p}}}}}"), "x1");
                }
                out
            };
            let e = serde_json::from_str::<serde_json::Value>(&sample).err()?;
            Some(
                spans
                    .err(
                        span.clone(),
                        format!("warning: body {} is not JSON once filled ({e}), yet content-type says JSON; put quotes around string placeholders, e.g. \"{{{{session}}}}\"", i + 1),
                    )
                    .to_string(),
            )
        })
        .collect()
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
