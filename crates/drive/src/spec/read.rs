//! Reading a request/reply session file: the TOML parsed once, its settings range-checked,
//! its requests built (the one-request form's top-level fields, or `[[setup]]`,
//! `[[turn]]` and `[[teardown]]` tables) and its mistakes named with file and line. What
//! the result holds is `session`'s; a bus file goes to `bus`.

use super::bus::{is_bus, BusSpec, Framing};
use super::lint::{headers_in_place, json_body_warnings, unique_names};
use super::raw::Raw;
use super::request::{self, Defaults, RawRequest, Request};
use super::session::{Chat, Protocol, SessionSpec, Wire, CHAT_TEXT, DEFAULT_BODY};
use super::SessionError;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

type Res<T> = Result<T, SessionError>;

/// The settings of the top of the file, range-checked.
struct Top {
    turns: u32,
    turn_timeout_ms: u64,
    expect_status: Option<u16>,
    think_ms: f64,
}

/// What every request of a file inherits from its top, to build each one's [`Defaults`].
struct Inherited<'a> {
    spans: &'a spans::Spans<'a>,
    text: &'a str,
    protocol: Protocol,
    expect_status: Option<u16>,
    headers: BTreeMap<String, String>,
    sequence: bool,
    /// The session file's directory (multipart file paths count from it).
    dir: &'a Path,
    livekit: bool,
}

impl SessionSpec {
    pub fn load(path: &Path) -> Res<SessionSpec> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let hint = "; plimsoll.toml's [session] file names it (default session.toml, counted from plimsoll.toml's directory); `plimsoll init` writes one";
            spans::unreadable(path, &e, hint)
        })?;
        SessionSpec::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Res<SessionSpec> {
        if is_bus(text) {
            return Ok(SessionSpec::of_bus(BusSpec::parse(text, file)?));
        }
        let spans = spans::Spans::new(text, file);
        let mut raw: Raw = toml::from_str(text).map_err(|e| spans.toml(&e, ""))?;
        let protocol = protocol(&raw, &spans)?;
        let top = top(&raw, &spans)?;
        let ws_done = ws_done(&raw, protocol, &spans)?;
        let chat = chat(&raw, protocol, &spans)?;
        headers_in_place(&raw.headers, "[headers]", text, &spans)?;
        let sequence = !raw.turn.is_empty();
        let dir = Path::new(file).parent().unwrap_or(Path::new("."));
        let voice = super::voice::read(raw.voice.take(), protocol.line_kind(), &spans, dir)?;
        let inherited = Inherited {
            spans: &spans,
            text,
            protocol,
            expect_status: top.expect_status,
            headers: raw.headers.clone(),
            sequence,
            dir,
            livekit: voice.as_ref().is_some_and(|v| v.livekit.is_some()),
        };
        let (setup, turn, teardown) = requests(&mut raw, &inherited)?;
        let spec = SessionSpec {
            protocol,
            turns: top.turns,
            think_ms: top.think_ms,
            turn_timeout_ms: top.turn_timeout_ms,
            setup,
            turn,
            teardown,
            sequence,
            ws_done,
            warnings: Vec::new(),
            chat,
            bus: None,
            wire: wire(&raw, protocol, &spans)?,
            voice,
        };
        spec.names_known(&spans)?;
        unique_names(&spec, &spans)?;
        let warnings = if protocol.is_chat() || protocol == Protocol::Raw || protocol.is_voice() {
            Vec::new() // the bodies are the user's text; Plimsoll builds the JSON
        } else {
            spec.requests()
                .flat_map(|r| json_body_warnings(r, sequence))
                .collect()
        };
        Ok(SessionSpec { warnings, ..spec })
    }
}

fn top(raw: &Raw, spans: &spans::Spans) -> Res<Top> {
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
    Ok(Top {
        turns,
        turn_timeout_ms,
        expect_status,
        think_ms,
    })
}

impl Inherited<'_> {
    fn defaults(&self, name: String, span: Option<Range<usize>>) -> Defaults<'_> {
        Defaults {
            spans: self.spans,
            stream: self.protocol == Protocol::Sse,
            expect_status: self.expect_status,
            headers: &self.headers,
            name,
            body: None,
            span,
            ws: self.protocol.over_ws() || self.livekit,
            raw: self.protocol == Protocol::Raw,
            json_content_type: self.sequence,
            dir: self.dir,
        }
    }

    /// One `[[setup]]`, `[[turn]]` or `[[teardown]]` section's requests, named after it
    /// when they have no name (`turn`, or `turn1`, `turn2` … when there are several).
    fn section(&self, list: &mut Vec<Spanned<RawRequest>>, kind: &str) -> Res<Vec<Request>> {
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
                headers_in_place(
                    &r.headers,
                    &format!("[{kind}.headers]"),
                    self.text,
                    self.spans,
                )?;
                request::build(r, &self.defaults(name, span))
            })
            .collect()
    }
}

/// The setup, turn and teardown requests: from their tables, or the one-request form's
/// top-level fields as the one turn request.
fn requests(raw: &mut Raw, top: &Inherited) -> Res<(Vec<Request>, Vec<Request>, Vec<Request>)> {
    let spans = top.spans;
    if top.sequence {
        one_request_fields_absent(raw, top.protocol, spans)?;
        return Ok((
            top.section(&mut raw.setup, "setup")?,
            top.section(&mut raw.turn, "turn")?,
            top.section(&mut raw.teardown, "teardown")?,
        ));
    }
    if let Some(r) = raw.setup.first().or(raw.teardown.first()) {
        return Err(spans.err(
            Some(r.span()),
            "[[setup]] and [[teardown]] need the turn's requests written as [[turn]] too (instead of a top-level url)",
        ));
    }
    if let (true, Some(f)) = (
        top.protocol.is_chat(),
        raw.form.as_ref().or(raw.multipart.as_ref()),
    ) {
        return Err(spans.err(
            Some(f.span()),
            "form and multipart are HTTP bodies; a chat client's body is the user's text",
        ));
    }
    let one = one_request(raw, spans)?;
    let mut d = top.defaults("turn".into(), None);
    d.body = Some(
        if top.protocol.is_chat() {
            CHAT_TEXT
        } else {
            DEFAULT_BODY
        }
        .into(),
    );
    Ok((Vec::new(), vec![request::build(one, &d)?], Vec::new()))
}

fn protocol(raw: &Raw, spans: &spans::Spans) -> Res<Protocol> {
    Ok(match raw.protocol.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
        None | Some(("http", _)) => Protocol::Http,
        Some(("sse", _)) => Protocol::Sse,
        Some(("ws", s))
        | Some(("twilio", s))
        | Some(("pcm-ws", s))
        | Some(("webrtc", s))
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
        Some(("twilio", _)) => Protocol::Twilio,
        Some(("pcm-ws", _)) => Protocol::PcmWs,
        Some(("webrtc", _)) => Protocol::WebRtc,
        Some(("openai-chat", _)) => Protocol::OpenaiChat,
        Some(("anthropic-messages", _)) => Protocol::AnthropicMessages,
        Some((other, s)) => {
            return Err(spans.err(
                Some(s),
                format!("protocol must be \"http\", \"sse\", \"ws\", \"tcp\", \"unix\", \"openai-chat\", \"anthropic-messages\", \"twilio\", \"pcm-ws\" or \"webrtc\" (got {other:?})"),
            ))
        }
    })
}

fn wire(raw: &Raw, protocol: Protocol, spans: &spans::Spans) -> Res<Option<Wire>> {
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
        form: raw.form.take(),
        multipart: raw.multipart.take(),
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
        ("form", raw.form.as_ref().map(|s| s.span())),
        ("multipart", raw.multipart.as_ref().map(|s| s.span())),
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
