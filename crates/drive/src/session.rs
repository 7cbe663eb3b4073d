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
//! `{{uuid}}` (a v4 UUID per session) and `{{request_uuid}}` (a new one per request), both
//! fixed by the seed; `{{turn}}` (1-based), `{{base}}` (the SUT's base URL), `{{ws_base}}`
//! (the same as ws://), `{{port}}`, and extracted names. A name used before any reply has
//! set it is an error naming the line, not an empty string (give the extract a default
//! when empty is meant).
//!
//! Extracts: `name = "/pointer"` from the JSON reply (`/messages/-1/content`: a negative
//! index counts from the end), `name = { header = "location" }` from a reply header, and
//! `default = "…"` in either table form makes one optional.
//!
//! **Agent servers** that open a thread and then run per turn (LangGraph, Letta,
//! Assistants-style APIs) are written as a sequence of named requests instead of one
//! `url`: `[[setup]]` once per session before turn 1, one or more `[[turn]]` per turn
//! (the turn's latency runs from its first request to its last reply), `[[teardown]]`
//! after the last turn (not in turn latency; failures are counted, the session stands).
//! Each request takes `name`, `method`, `url`, `[*.headers]` (added to the top-level
//! ones), `body`, `[*.extract]`, `[[*.check]]`, `expect_status`, `protocol = "sse"`,
//! and `until = { pointer = "/status", equals = "success", interval_ms = 100, timeout_ms
//! = 60000 }` to poll an asynchronous API. A JSON body with no content-type gets
//! `application/json`. Per-request latency (count, p50, p99, errors) goes into RESULT.
//!
//! ```toml
//! turns = 3
//! [[setup]]
//! name = "create"
//! url = "{{base}}/threads"
//! body = "{}"
//! extract = { thread = "/thread_id" }
//! [[turn]]
//! name = "run"
//! url = "{{base}}/threads/{{thread}}/runs/wait"
//! body = '{"input": {"messages": [{"role": "user", "content": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hi"}]}}'
//! [[turn.check]]
//! pointer = "/messages/-1/type"
//! equals = "ai"
//! [[teardown]]
//! name = "delete"
//! method = "DELETE"
//! url = "{{base}}/threads/{{thread}}"
//! ```
//!
//! Streams (`protocol = "sse"`): time to first token is the first event carrying the
//! model's text (OpenAI, Anthropic, Responses, or a LangGraph `messages` event with an AI
//! message — not a tool's result; else the first event), or `ttft_event = "name"` /
//! `{ event = "…", pointer = "/…", equals = …, text = true | "/pointer" }` (all given
//! must hold; `text` asks for non-empty text);
//! `done_event` ends the turn at a matching event; `[[check]] text_contains = "…"` reads
//! the text deltas joined (`text_pointer` says where they are in another API).
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
//! With `protocol = "tcp"` (`url = "tcp://127.0.0.1:{{port}}"`) or `"unix"` (`url =
//! "unix:///path/to.sock"`) the session holds one raw socket and each turn writes the
//! body as one frame and reads one frame back: `framing = "line"` (the default; `\r\n`
//! is added), `"u32"` (a big-endian length prefix) or `"nul"`; `encoding = "msgpack"`
//! sends a JSON body as MessagePack and reads the reply back as JSON for checks and
//! extracts. A session file with `[[role]]` tables is a bus instead (see `bus`).
//! `{{pad N}}` anywhere in a body is N bytes of filler (`ramp --sweep pad=…` moves N).
//!
//! With `protocol = "ws"` the URL is opened once per session and each turn sends the body
//! as one text message. The turn ends with the first message back, or, with
//! `ws_done_pointer = "/type"` and `ws_done_equals = "done"`, with the first JSON message
//! whose pointer has that value (without `ws_done_equals`: whose pointer is present).
//! The `[[plimsoll …]]` marker lets the mock's integrity oracle check the conversation.

use crate::request::{self, Defaults, RawRequest, Request};
use crate::template::placeholders;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

pub use crate::request::{Check, Extract, Source, Until};
pub use crate::template::render;

/// Keys of a session file or of a request: as a header name, almost surely a key written
/// below `[headers]` by mistake.
const SESSION_KEYS: &[&str] = &[
    "protocol",
    "framing",
    "encoding",
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
    "name",
    "until",
    "ttft_event",
    "done_event",
    "text_pointer",
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
    /// A raw TCP or Unix socket per session (`tcp://host:port`, `unix:///path`): each
    /// turn writes one frame and reads one back.
    Raw,
}

/// How a raw socket session (`protocol = "tcp"` or `"unix"`) frames and encodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wire {
    pub framing: crate::bus::spec::Framing,
    /// The body is JSON sent as MessagePack; replies are MessagePack read as JSON.
    pub msgpack: bool,
}

#[derive(Clone, Debug)]
pub struct SessionSpec {
    pub protocol: Protocol,
    pub turns: u32,
    pub think_ms: f64,
    pub turn_timeout_ms: u64,
    /// Once per session before turn 1.
    pub setup: Vec<Request>,
    /// Every turn, in order (the one-request form: one request named "turn").
    pub turn: Vec<Request>,
    /// After the last turn.
    pub teardown: Vec<Request>,
    /// Written as `[[setup]]`/`[[turn]]`/`[[teardown]]`: latency is reported per request.
    pub sequence: bool,
    /// WebSocket: the message that ends a turn (pointer, and the value it must have).
    pub ws_done: Option<(String, Option<serde_json::Value>)>,
    /// Likely mistakes that do not stop a run, each naming the file and line.
    pub warnings: Vec<String>,
    /// With `protocol = "openai-chat"`: the model asked for and whether to stream.
    pub chat: Option<Chat>,
    /// A bus (`[[role]]` tables): publishers and subscribers instead of requests.
    pub bus: Option<crate::bus::spec::BusSpec>,
    /// With `protocol = "tcp"` or `"unix"`: framing and encoding.
    pub wire: Option<Wire>,
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
    turns: Option<Spanned<i64>>,
    think_ms: Option<Spanned<f64>>,
    turn_timeout_ms: Option<Spanned<i64>>,
    expect_status: Option<Spanned<i64>>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    ws_done_pointer: Option<Spanned<String>>,
    framing: Option<Spanned<String>>,
    encoding: Option<Spanned<String>>,
    ws_done_equals: Option<toml::Value>,
    model: Option<String>,
    stream: Option<bool>,
    #[serde(default)]
    setup: Vec<Spanned<RawRequest>>,
    #[serde(default)]
    turn: Vec<Spanned<RawRequest>>,
    #[serde(default)]
    teardown: Vec<Spanned<RawRequest>>,
    // The one-request form.
    method: Option<String>,
    url: Option<Spanned<String>>,
    body: Option<Spanned<String>>,
    bodies: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    extract: BTreeMap<String, Spanned<request::RawExtract>>,
    #[serde(default)]
    check: Vec<Spanned<request::RawCheck>>,
    ttft_event: Option<Spanned<request::RawEvent>>,
    done_event: Option<Spanned<request::RawEvent>>,
    text_pointer: Option<Spanned<String>>,
}

const BUILTIN: &[&str] = &[
    "session",
    "nonce",
    "uuid",
    "request_uuid",
    "turn",
    "base",
    "ws_base",
    "port",
];

/// The default body: a chat-style message carrying the session marker.
pub const DEFAULT_BODY: &str = r#"{"session": "{{session}}", "message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}."}"#;

type Res<T> = Result<T, SessionError>;

impl SessionSpec {
    pub fn load(path: &Path) -> Res<SessionSpec> {
        let text = std::fs::read_to_string(path).map_err(|e| spans::unreadable(path, &e, ""))?;
        SessionSpec::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Res<SessionSpec> {
        if crate::bus::is_bus(text) {
            return Ok(SessionSpec::of_bus(crate::bus::spec::BusSpec::parse(
                text, file,
            )?));
        }
        let spans = spans::Spans::new(text, file);
        let mut raw: Raw = toml::from_str(text).map_err(|e| spans.toml(&e, ""))?;
        let protocol = protocol(&raw, &spans)?;
        let int = |v: &Option<Spanned<i64>>, name: &str, lo: i64, hi: i64, default: i64| {
            spans.int(v, name, (lo, hi), default)
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
                return Err(spans.err(
                    Some(t.span()),
                    format!("think_ms must be ≥ 0 (got {})", t.get_ref()),
                ))
            }
        };
        let ws_done = ws_done(&raw, protocol, &spans)?;
        let chat = chat(&raw, protocol, &spans)?;
        headers_in_place(&raw.headers, "[headers]", text, &spans)?;
        let sequence = !raw.turn.is_empty();
        let top_headers = raw.headers.clone();
        let defaults = |name: String, span| Defaults {
            spans: &spans,
            stream: protocol == Protocol::Sse,
            expect_status,
            headers: &top_headers,
            name,
            body: None,
            span,
            ws: protocol == Protocol::Ws,
            raw: protocol == Protocol::Raw,
            json_content_type: sequence,
        };
        let (setup, turn, teardown) = if sequence {
            one_request_fields_absent(&raw, protocol, &spans)?;
            let section = |list: &mut Vec<Spanned<RawRequest>>, kind: &str| -> Res<Vec<Request>> {
                let n = list.len();
                std::mem::take(list)
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let name = if n == 1 {
                            kind.to_string()
                        } else {
                            format!("{kind}{}", i + 1)
                        };
                        let span = Some(r.span());
                        let r = r.into_inner();
                        headers_in_place(&r.headers, &format!("[{kind}.headers]"), text, &spans)?;
                        request::build(r, &defaults(name, span))
                    })
                    .collect()
            };
            (
                section(&mut raw.setup, "setup")?,
                section(&mut raw.turn, "turn")?,
                section(&mut raw.teardown, "teardown")?,
            )
        } else {
            if let Some(r) = raw.setup.first().or(raw.teardown.first()) {
                return Err(spans.err(
                    Some(r.span()),
                    "[[setup]] and [[teardown]] need the turn's requests written as [[turn]] too (instead of a top-level url)",
                ));
            }
            let one = one_request(&mut raw, &spans)?;
            let mut d = defaults("turn".into(), None);
            d.body = Some(
                if protocol.is_chat() {
                    CHAT_TEXT
                } else {
                    DEFAULT_BODY
                }
                .into(),
            );
            (Vec::new(), vec![request::build(one, &d)?], Vec::new())
        };
        let spec = SessionSpec {
            protocol,
            turns,
            think_ms,
            turn_timeout_ms,
            setup,
            turn,
            teardown,
            sequence,
            ws_done,
            warnings: Vec::new(),
            chat,
            bus: None,
            wire: wire(&raw, protocol, &spans)?,
        };
        spec.names_known(&spans)?;
        unique_names(&spec, &spans)?;
        let warnings = if protocol.is_chat() || protocol == Protocol::Raw {
            Vec::new() // the bodies are the user's text; Plimsoll builds the JSON
        } else {
            spec.requests()
                .flat_map(|r| json_body_warnings(r, sequence))
                .collect()
        };
        Ok(SessionSpec { warnings, ..spec })
    }

    /// A bus session: one "turn" (its deliveries), no requests.
    fn of_bus(bus: crate::bus::spec::BusSpec) -> SessionSpec {
        SessionSpec {
            protocol: Protocol::Ws,
            turns: 1,
            think_ms: 0.0,
            turn_timeout_ms: bus.settle_ms + bus.ready_timeout_ms,
            setup: Vec::new(),
            turn: Vec::new(),
            teardown: Vec::new(),
            sequence: false,
            ws_done: None,
            warnings: Vec::new(),
            chat: None,
            bus: Some(bus),
            wire: None,
        }
    }

    /// Every request, setup first.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.setup.iter().chain(&self.turn).chain(&self.teardown)
    }

    /// Every placeholder is a built-in or extracted somewhere; a setup request uses only
    /// names that an earlier setup request extracts.
    fn names_known(&self, spans: &spans::Spans) -> Res<()> {
        let all: Vec<&str> = self
            .requests()
            .flat_map(|r| r.extract.iter().map(|e| e.name.as_str()))
            .collect();
        let mut before: Vec<&str> = Vec::new();
        for (i, r) in self.requests().enumerate() {
            let in_setup = i < self.setup.len();
            let used = r
                .templates()
                .flat_map(|(t, at)| placeholders(t).map(move |p| (p, at)));
            for (p, at) in used {
                if BUILTIN.contains(&p)
                    || crate::template::pad_len(p).is_some()
                    || (!in_setup && all.contains(&p))
                    || before.contains(&p)
                {
                    continue;
                }
                let line = at.rsplit(':').next().and_then(|l| l.parse().ok());
                let err = spans::FileError {
                    file: spans.err(None, "").file,
                    line,
                    message: String::new(),
                };
                let message = if all.contains(&p) {
                    format!("{{{{{p}}}}} is used by setup request {:?} before any earlier request extracts it", r.name)
                } else {
                    format!(
                        "unknown placeholder {{{{{p}}}}}; use {} or a name under [extract]",
                        BUILTIN.join(", ")
                    )
                };
                return Err(spans::FileError { message, ..err });
            }
            if in_setup {
                before.extend(r.extract.iter().map(|e| e.name.as_str()));
            }
        }
        Ok(())
    }
}

fn protocol(raw: &Raw, spans: &spans::Spans) -> Res<Protocol> {
    Ok(match raw.protocol.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
        None | Some(("http", _)) => Protocol::Http,
        Some(("sse", _)) => Protocol::Sse,
        Some(("ws", s))
        | Some(("openai-chat", s))
        | Some(("anthropic-messages", s))
        | Some(("tcp", s))
        | Some(("unix", s))
            if !raw.turn.is_empty() =>
        {
            return Err(spans.err(Some(s), "[[turn]] requests speak protocol = \"http\" or \"sse\"; ws, tcp, unix and the chat clients take a single top-level url"))
        }
        Some(("tcp", _)) | Some(("unix", _)) => Protocol::Raw,
        Some(("ws", _)) => Protocol::Ws,
        Some(("openai-chat", _)) => Protocol::OpenaiChat,
        Some(("anthropic-messages", _)) => Protocol::AnthropicMessages,
        Some((other, s)) => {
            return Err(spans.err(
                Some(s),
                format!("protocol must be \"http\", \"sse\", \"ws\", \"tcp\", \"unix\", \"openai-chat\" or \"anthropic-messages\" (got {other:?})"),
            ))
        }
    })
}

fn wire(raw: &Raw, protocol: Protocol, spans: &spans::Spans) -> Res<Option<Wire>> {
    use crate::bus::spec::Framing;
    if protocol != Protocol::Raw {
        if let Some(f) = raw.framing.as_ref().or(raw.encoding.as_ref()) {
            return Err(spans.err(
                Some(f.span()),
                "framing and encoding apply to protocol = \"tcp\" or \"unix\"",
            ));
        }
        return Ok(None);
    }
    let framing = match raw.framing.as_ref().map(|f| (f.get_ref().as_str(), f.span())) {
        None | Some(("line", _)) => Framing::Line,
        Some(("u32", _)) => Framing::U32,
        Some(("nul", _)) => Framing::Nul,
        Some((other, s)) => {
            return Err(spans.err(
                Some(s),
                format!("framing must be \"line\", \"u32\" (a big-endian length prefix) or \"nul\" (got {other:?})"),
            ))
        }
    };
    let msgpack = match raw.encoding.as_ref().map(|e| (e.get_ref().as_str(), e.span())) {
        None | Some(("text", _)) => false,
        Some(("msgpack", _)) => true,
        Some((other, s)) => {
            return Err(spans.err(
                Some(s),
                format!("encoding must be \"text\" (the body as written) or \"msgpack\" (a JSON body sent as MessagePack; got {other:?})"),
            ))
        }
    };
    Ok(Some(Wire { framing, msgpack }))
}

fn ws_done(
    raw: &Raw,
    protocol: Protocol,
    spans: &spans::Spans,
) -> Res<Option<(String, Option<serde_json::Value>)>> {
    match (&raw.ws_done_pointer, &raw.ws_done_equals) {
        (Some(p), eq) if protocol == Protocol::Ws => Ok(Some((
            p.get_ref().clone(),
            eq.as_ref()
                .map(|v| serde_json::to_value(v).unwrap_or(serde_json::Value::Null)),
        ))),
        (Some(p), _) => Err(spans.err(
            Some(p.span()),
            "ws_done_pointer only applies to protocol = \"ws\"",
        )),
        (None, Some(_)) => {
            Err(spans.err(None, "ws_done_equals needs ws_done_pointer = \"/field\""))
        }
        (None, None) => Ok(None),
    }
}

fn chat(raw: &Raw, protocol: Protocol, spans: &spans::Spans) -> Res<Option<Chat>> {
    if !protocol.is_chat() && (raw.model.is_some() || raw.stream.is_some()) {
        return Err(spans.err(
            None,
            "model and stream apply only to protocol = \"openai-chat\" or \"anthropic-messages\"",
        ));
    }
    let anthropic = protocol == Protocol::AnthropicMessages;
    Ok(protocol.is_chat().then(|| Chat {
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
    }))
}

/// The one-request form's fields, moved into a request.
fn one_request(raw: &mut Raw, spans: &spans::Spans) -> Res<RawRequest> {
    if raw.url.is_none() {
        return Err(spans.err(
            None,
            "missing field `url`: give url = \"{{base}}/…\" (one request per turn), or the requests as [[turn]] tables",
        ));
    }
    Ok(RawRequest {
        method: raw.method.take(),
        url: raw.url.take(),
        body: raw.body.take(),
        bodies: raw.bodies.take(),
        extract: std::mem::take(&mut raw.extract),
        check: std::mem::take(&mut raw.check),
        ttft_event: raw.ttft_event.take(),
        done_event: raw.done_event.take(),
        text_pointer: raw.text_pointer.take(),
        ..RawRequest::default()
    })
}

/// With [[turn]] tables, the one-request fields belong inside them.
fn one_request_fields_absent(raw: &Raw, _protocol: Protocol, spans: &spans::Spans) -> Res<()> {
    let spanned = [
        ("url", raw.url.as_ref().map(|s| s.span())),
        ("body", raw.body.as_ref().map(|s| s.span())),
        ("bodies", raw.bodies.as_ref().map(|s| s.span())),
        ("text_pointer", raw.text_pointer.as_ref().map(|s| s.span())),
        ("ttft_event", raw.ttft_event.as_ref().map(|s| s.span())),
        ("done_event", raw.done_event.as_ref().map(|s| s.span())),
        ("check", raw.check.first().map(|s| s.span())),
        ("extract", raw.extract.values().next().map(|s| s.span())),
    ];
    if let Some((name, span)) = spanned.into_iter().find(|(_, s)| s.is_some()) {
        return Err(spans.err(span, format!("top-level {name} is the one-request form; with [[turn]] tables, put it inside the [[turn]] (or [[setup]]/[[teardown]]) it belongs to")));
    }
    if raw.method.is_some() {
        return Err(spans.err(None, "top-level method is the one-request form; with [[turn]] tables, give each request its method"));
    }
    Ok(())
}

fn unique_names(spec: &SessionSpec, spans: &spans::Spans) -> Res<()> {
    let mut seen: Vec<&str> = Vec::new();
    for r in spec.requests() {
        if seen.contains(&r.name.as_str()) {
            let line = r.at.rsplit(':').next().and_then(|l| l.parse().ok());
            return Err(spans::FileError {
                line,
                message: format!("two requests are named {:?}; give each a name of its own (latency is reported per name)", r.name),
                ..spans.err(None, "")
            });
        }
        seen.push(&r.name);
    }
    Ok(())
}

/// A key such as `body` under a headers table: TOML put it there, not where it was meant.
fn headers_in_place(
    headers: &BTreeMap<String, String>,
    table: &str,
    text: &str,
    spans: &spans::Spans,
) -> Res<()> {
    let Some(name) = headers.keys().find(|k| SESSION_KEYS.contains(&k.as_str())) else {
        return Ok(());
    };
    let at = text.find(table).and_then(|h| {
        text[h..]
            .find(&format!("\n{name}"))
            .map(|i| h + i + 1..h + i + 2)
    });
    Err(spans.err(
        at,
        format!("header {name:?} is a session setting written after {table}: TOML puts every key after a [table] line into that table, so it would be sent as a header; move `{name} = …` above {table}"),
    ))
}

/// A body sent as JSON that is not JSON once its placeholders are filled (a quote missing
/// around `{{name}}`, a trailing comma): the SUT would answer 400 and nothing would say why.
fn json_body_warnings(r: &Request, sequence: bool) -> Vec<String> {
    let json = r
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("json"));
    if !json {
        return Vec::new();
    }
    r.bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let mut sample = b.clone();
            for p in placeholders(b).collect::<Vec<_>>() {
                sample = sample.replace(&format!("{{{{{p}}}}}"), "x1");
            }
            let e = serde_json::from_str::<serde_json::Value>(&sample).err()?;
            Some(format!("{}: warning: body {} {}is not JSON once filled ({e}), yet content-type says JSON; put quotes around string placeholders, e.g. \"{{{{session}}}}\"", r.body_at, i + 1, if sequence { format!("of request {:?} ", r.name) } else { String::new() }))
        })
        .collect()
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

/// What a sweep (`ramp --sweep NAME=…`) or `run --set NAME=V` can move in a session file.
pub const AXES: &[(&str, &str)] = &[
    ("turns", "turns a session"),
    ("think_ms", "the pause between a reply and the next turn"),
    ("messages", "a bus's messages per publisher"),
    (
        "rate",
        "a bus's messages a second per publisher (0: unpaced)",
    ),
    (
        "subscribers",
        "a bus's subscriber (or consumer) connections",
    ),
    ("publishers", "a bus's publisher connections"),
    (
        "pad",
        "the N of every {{pad N}} in request bodies or a bus's frames: the body size",
    ),
    (
        "settle_ms",
        "how long a bus's subscribers wait for stragglers",
    ),
];

impl SessionSpec {
    /// Sets one axis to `v`; says why when this session has no such thing.
    pub fn set(&mut self, name: &str, v: f64) -> Result<(), String> {
        let whole = |v: f64| {
            (v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64)
                .then_some(v as u64)
                .ok_or_else(|| format!("{name}={v}: a whole number ≥ 0 is needed"))
        };
        if let Some(bus) = self.bus.as_mut() {
            return bus.set(name, v, whole);
        }
        match name {
            "turns" => self.turns = whole(v)?.max(1) as u32,
            "pad" => {
                let n = whole(v)?;
                let mut found = false;
                for r in self
                    .setup
                    .iter_mut()
                    .chain(&mut self.turn)
                    .chain(&mut self.teardown)
                {
                    for b in &mut r.bodies {
                        found |= b.contains("{{pad");
                        *b = crate::template::with_pad(b, n);
                    }
                }
                if !found {
                    return Err("pad sets N in {{pad N}}; no request body has one".into());
                }
            }
            "think_ms" if v >= 0.0 => self.think_ms = v,
            "think_ms" => return Err(format!("think_ms={v}: must be ≥ 0")),
            other if AXES.iter().any(|(n, _)| *n == other) => {
                return Err(format!(
                    "{other} moves a bus ([[role]] tables); this session is request/reply"
                ))
            }
            other => return Err(unknown_axis(other)),
        }
        Ok(())
    }
}

/// The message for a name that is not an axis.
pub fn unknown_axis(name: &str) -> String {
    let known: Vec<&str> = AXES.iter().map(|(n, _)| *n).collect();
    format!(
        "{name:?} is not an axis; use concurrency or one of {}",
        known.join(", ")
    )
}
