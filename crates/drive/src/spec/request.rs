//! One request of a session as session.toml describes it — method, URL, headers, body,
//! what to extract from the reply (body pointer or header, optional with a default),
//! checks, expected status, polling `until` a value appears, and for a stream which
//! event is the first token and which ends it — read and validated into a [`Request`].
//! Running it is `driver::sequence`'s business.

use super::form::{self, Fields, RawFields};
use super::reply::{checks, extracts, json, pointer_ok, Check, Extract, RawCheck, RawExtract};
use crate::stream::EventMatch;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// Repeat the request every `interval_ms` until the pointer has a value (any non-null
/// one, or `equals`), for at most `timeout_ms`.
#[derive(Clone, Debug, PartialEq)]
pub struct Until {
    pub pointer: String,
    pub equals: Option<Value>,
    pub interval_ms: u64,
    pub timeout_ms: u64,
}

#[derive(Clone, Debug)]
pub struct Request {
    pub name: String,
    /// Where it is written, for messages at run time (`session.toml:12`).
    pub at: String,
    /// Where its body is written (its url's line when it has none).
    pub body_at: String,
    /// The reply is an SSE stream.
    pub stream: bool,
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// One template per turn, the last repeating; empty: no body (or `fields`).
    pub bodies: Vec<String>,
    /// A body of form or multipart fields instead of `bodies`.
    pub fields: Option<Fields>,
    pub extract: Vec<Extract>,
    pub checks: Vec<Check>,
    pub expect_status: Option<u16>,
    pub until: Option<Until>,
    pub ttft_event: Option<EventMatch>,
    pub done_event: Option<EventMatch>,
    /// Where each stream event keeps its text delta, when not a known API's place.
    pub text_pointer: Option<String>,
}

impl Request {
    /// Its templates with where each is written: the URL, the bodies, the header values.
    pub fn templates(&self) -> impl Iterator<Item = (&str, &str)> {
        std::iter::once((self.url.as_str(), self.at.as_str()))
            .chain(
                self.bodies
                    .iter()
                    .map(|b| (b.as_str(), self.body_at.as_str())),
            )
            .chain(
                self.fields
                    .iter()
                    .flat_map(Fields::texts)
                    .map(|t| (t, self.body_at.as_str())),
            )
            .chain(
                self.headers
                    .iter()
                    .map(|(_, v)| (v.as_str(), self.at.as_str())),
            )
    }
}

/// A [[turn]] (or [[setup]], [[teardown]]) request: one HTTP call of a session's sequence,
/// with its body, the values it extracts, its checks and optional polling.
#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRequest {
    /// The request's name in errors and in RESULT's per-request latency; must be unique.
    /// Default: the section ("setup", "turn", "teardown"), numbered when there are several
    /// (turn1, turn2 …).
    pub name: Option<String>,
    /// "http" (one reply) | "sse" (the reply is a stream). Default: the file's protocol.
    #[schemars(with = "Option<String>")]
    pub protocol: Option<Spanned<String>>,
    /// The HTTP method. Default "POST".
    pub method: Option<String>,
    /// The request's URL template, starting with http:// or {{base}}; may use {{session}},
    /// {{uuid}} and names extracted earlier.
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// Headers of this request, added to the file's [headers] (a same-named one replaces
    /// it).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body template, sent as written; a JSON body without a content-type gets
    /// application/json. Without body, bodies, form or multipart the request sends no body.
    #[schemars(with = "Option<String>")]
    pub body: Option<Spanned<String>>,
    /// One body template per turn instead of body, the last repeating for later turns. Must
    /// not be empty; give body or bodies, not both.
    #[schemars(with = "Option<Vec<String>>")]
    pub bodies: Option<Spanned<Vec<String>>>,
    /// URL-encoded form fields sent as the body instead of body: name = template, number or
    /// boolean; an array repeats the name. Sets the content-type.
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub form: Option<RawFields>,
    /// multipart/form-data fields sent as the body instead of body: text, or a file part {
    /// path = "…" } (relative to the session file) or { bytes = N }, with optional
    /// filename, content_type.
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub multipart: Option<RawFields>,
    /// Values taken from the reply, usable as {{name}} in later requests: name =
    /// "/json/pointer", or { pointer = "…" } or { header = "…" }, with default = "…" to
    /// make it optional.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawExtract>")]
    pub extract: BTreeMap<String, Spanned<RawExtract>>,
    /// [[…check]] tests the reply must pass; a reply that fails one fails the session.
    #[serde(default)]
    #[schemars(with = "Vec<RawCheck>")]
    pub check: Vec<Spanned<RawCheck>>,
    /// The HTTP status the reply must have, 100 to 599. Default: the file's expect_status,
    /// else any 2xx.
    #[schemars(with = "Option<i64>")]
    pub expect_status: Option<Spanned<i64>>,
    /// Poll: repeat the request until a JSON pointer in the reply has a value, e.g. {
    /// pointer = "/status", equals = "success", interval_ms = 100, timeout_ms = 60000 }.
    #[schemars(with = "Option<RawUntil>")]
    pub until: Option<Spanned<RawUntil>>,
    /// protocol = "sse" only: the event that marks the first token: an event name, or {
    /// event, pointer, equals, text }. Default: the first event with the model's text, else
    /// the first event.
    #[schemars(with = "Option<RawEvent>")]
    pub ttft_event: Option<Spanned<RawEvent>>,
    /// protocol = "sse" only: the event that ends the request's reply, as an event name or
    /// { event, pointer, equals, text }. Default: the end of the stream.
    #[schemars(with = "Option<RawEvent>")]
    pub done_event: Option<Spanned<RawEvent>>,
    /// A JSON pointer to the text delta in each stream event, for an API Plimsoll does not
    /// know; [[check]] text_contains reads these deltas joined.
    #[schemars(with = "Option<String>")]
    pub text_pointer: Option<Spanned<String>>,
}

/// Polling of an asynchronous API: the request is sent again every interval_ms until its
/// reply's pointer has a value (or the given one), for at most timeout_ms.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUntil {
    /// The JSON pointer to watch in the reply, e.g. "/status". Required.
    pointer: String,
    /// The value (any TOML value) the pointer must reach. Without it, any non-null value
    /// ends the polling.
    #[schemars(with = "Option<serde_json::Value>")]
    equals: Option<toml::Value>,
    /// Wait between polls in ms, 1 to 86400000. Default 100.
    interval_ms: Option<i64>,
    /// How long to keep polling before the request fails as a timeout, 1 to 86400000 ms.
    /// Default 60000.
    timeout_ms: Option<i64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawEvent {
    Name(String),
    Table(RawEventTable),
}

/// The table form of ttft_event or done_event: an SSE event matches when every key given
/// holds; give at least event, pointer or text.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEventTable {
    /// The event's name (its SSE event: field), e.g. "end" or "messages".
    event: Option<String>,
    /// A JSON pointer into the event's data, e.g. "/type"; without equals it must hold a
    /// non-null value.
    pointer: Option<String>,
    /// The value (any TOML value) the data at pointer must equal. Needs pointer.
    #[schemars(with = "Option<serde_json::Value>")]
    equals: Option<toml::Value>,
    /// The event must carry the model's text (true), or text at this pointer.
    text: Option<RawText>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawText {
    Yes(bool),
    At(String),
}

/// What a request inherits from the top of the file, and where it sits.
pub(crate) struct Defaults<'a> {
    pub spans: &'a spans::Spans<'a>,
    pub stream: bool,
    pub expect_status: Option<u16>,
    pub headers: &'a BTreeMap<String, String>,
    /// The name it gets when it has none (`turn`, `setup2` …).
    pub name: String,
    /// A body when it gives none (the one-request form's default body).
    pub body: Option<String>,
    /// Where the request's table starts, when its fields have no span of their own.
    pub span: Option<Range<usize>>,
    /// The one-request form with protocol = "ws": the URL is a WebSocket's.
    pub ws: bool,
    /// The one-request form with protocol = "tcp" or "unix": a raw socket's address.
    pub raw: bool,
    /// Add `content-type: application/json` to a JSON body that has no content-type.
    pub json_content_type: bool,
    /// The directory a multipart file part's relative path counts from.
    pub dir: &'a std::path::Path,
}

type Res<T> = Result<T, spans::FileError>;

/// A request's table read into a [`Request`], checked, with what it does not say taken
/// from the top of the file.
pub(crate) fn build(raw: RawRequest, d: &Defaults) -> Res<Request> {
    let url = raw
        .url
        .as_ref()
        .ok_or_else(|| d.err(None, format!("request {:?} needs a url", d.name)))?;
    let stream = stream(&raw, d)?;
    url_scheme(url, d)?;
    let expect_status = expect_status(&raw, d)?;
    let fields = fields(&raw, d)?;
    let bodies = match fields {
        Some(_) => Vec::new(),
        None => bodies(&raw, d)?,
    };
    let headers = headers(&raw, &bodies, fields.as_ref(), d)?;
    Ok(Request {
        name: raw.name.clone().unwrap_or_else(|| d.name.clone()),
        at: at(d, Some(url.span())),
        body_at: at(
            d,
            raw.body
                .as_ref()
                .map(|b| b.span())
                .or(raw.bodies.as_ref().map(|b| b.span()))
                .or(raw.form.as_ref().map(|b| b.span()))
                .or(raw.multipart.as_ref().map(|b| b.span()))
                .or(Some(url.span())),
        ),
        stream,
        method: raw
            .method
            .clone()
            .unwrap_or_else(|| "POST".into())
            .to_uppercase(),
        url: url.get_ref().clone(),
        headers,
        bodies,
        fields,
        extract: extracts(&raw.extract, d.spans)?,
        checks: checks(&raw.check, stream, d.spans)?,
        expect_status,
        until: raw.until.as_ref().map(|u| until(u, d)).transpose()?,
        ttft_event: event(&raw.ttft_event, "ttft_event", stream, d)?,
        done_event: event(&raw.done_event, "done_event", stream, d)?,
        text_pointer: text_pointer(&raw, d)?,
    })
}

impl Defaults<'_> {
    /// An error at `span`, or where the request's table starts.
    fn err(&self, span: Option<Range<usize>>, m: String) -> spans::FileError {
        self.spans.err(span.or(self.span.clone()), m)
    }
}

/// Whether the reply is a stream: the request's own protocol, else the file's.
fn stream(raw: &RawRequest, d: &Defaults) -> Res<bool> {
    match raw
        .protocol
        .as_ref()
        .map(|p| (p.get_ref().as_str(), p.span()))
    {
        None => Ok(d.stream),
        Some(("http", _)) => Ok(false),
        Some(("sse", _)) => Ok(true),
        Some((other, s)) => Err(d.err(
            Some(s),
            format!("a request's protocol is \"http\" or \"sse\" (got {other:?})"),
        )),
    }
}

/// The URL starts with a scheme the session's protocol speaks (or its base placeholder).
fn url_scheme(url: &Spanned<String>, d: &Defaults) -> Res<()> {
    let (schemes, hint) = match (d.raw, d.ws) {
        (true, _) => (["tcp://", "unix://"], "tcp://HOST:PORT or unix:///PATH"),
        (false, true) => (["ws://", "{{ws_base}}"], "ws:// or {{ws_base}}"),
        (false, false) => (["http://", "{{base}}"], "http:// or {{base}}"),
    };
    if !schemes.iter().any(|p| url.get_ref().starts_with(p)) {
        return Err(d.err(
            Some(url.span()),
            format!("url must start with {hint} (got {:?})", url.get_ref()),
        ));
    }
    Ok(())
}

fn expect_status(raw: &RawRequest, d: &Defaults) -> Res<Option<u16>> {
    match &raw.expect_status {
        None => Ok(d.expect_status),
        Some(s) if (100..=599).contains(s.get_ref()) => Ok(Some(*s.get_ref() as u16)),
        Some(s) => Err(d.err(
            Some(s.span()),
            format!(
                "expect_status must be between 100 and 599 (got {})",
                s.get_ref()
            ),
        )),
    }
}

/// One body for every turn, one per turn, or the default body.
fn bodies(raw: &RawRequest, d: &Defaults) -> Res<Vec<String>> {
    Ok(match (&raw.body, &raw.bodies) {
        (Some(_), Some(b)) => {
            return Err(d.err(Some(b.span()), "give body or bodies, not both".into()))
        }
        (Some(b), None) => vec![b.get_ref().clone()],
        (None, Some(b)) if b.get_ref().is_empty() => {
            return Err(d.err(Some(b.span()), "bodies must not be empty".into()))
        }
        (None, Some(b)) => b.get_ref().clone(),
        (None, None) => d.body.iter().cloned().collect(),
    })
}

/// A `form` or `multipart` table instead of a body: one of the three, on HTTP.
fn fields(raw: &RawRequest, d: &Defaults) -> Res<Option<Fields>> {
    let table = raw.form.as_ref().or(raw.multipart.as_ref());
    let body = raw.body.is_some() || raw.bodies.is_some();
    match table {
        Some(t) if body => {
            let which = if raw.form.is_some() {
                "form"
            } else {
                "multipart"
            };
            let name = raw.name.as_ref().unwrap_or(&d.name);
            Err(d.err(
                Some(t.span()),
                format!("request {name:?} gives both body and {which}: a request has one body — keep {which} (fields Plimsoll encodes) or body (sent as written), not both"),
            ))
        }
        Some(t) if d.ws || d.raw => Err(d.err(
            Some(t.span()),
            "form and multipart are HTTP bodies: they apply to protocol = \"http\" or \"sse\""
                .into(),
        )),
        _ => {
            let place = form::Place {
                spans: d.spans,
                dir: d.dir,
            };
            form::read(raw.form.as_ref(), raw.multipart.as_ref(), &place)
        }
    }
}

/// The file's headers, then the request's own; a JSON body gets a content-type when
/// the file asks for one and none is given, a field body always gets the one its
/// encoding needs.
fn headers(
    raw: &RawRequest,
    bodies: &[String],
    fields: Option<&Fields>,
    d: &Defaults,
) -> Res<Vec<(String, String)>> {
    let mut headers: BTreeMap<String, String> = d.headers.clone();
    headers.extend(raw.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    let has_type = headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("content-type"));
    if let Some(f) = fields {
        if has_type && matches!(f, Fields::Multipart(_)) {
            return Err(d.err(None, "multipart sets its own content-type (it carries the boundary): remove content-type from [headers]".into()));
        }
        if !has_type {
            headers.insert("content-type".into(), f.content_type());
        }
        return Ok(headers.into_iter().collect());
    }
    let json_body = bodies
        .iter()
        .any(|b| b.trim_start().starts_with(['{', '[']));
    if d.json_content_type && !has_type && json_body {
        headers.insert("content-type".into(), "application/json".into());
    }
    Ok(headers.into_iter().collect())
}

fn text_pointer(raw: &RawRequest, d: &Defaults) -> Res<Option<String>> {
    match &raw.text_pointer {
        Some(p) if !pointer_ok(p.get_ref()) => Err(d.err(
            Some(p.span()),
            format!(
                "text_pointer must be a JSON pointer such as \"/delta\" (got {:?})",
                p.get_ref()
            ),
        )),
        p => Ok(p.as_ref().map(|p| p.get_ref().clone())),
    }
}

/// `file:line` of a span.
fn at(d: &Defaults, span: Option<Range<usize>>) -> String {
    let e = d.spans.err(span, "");
    format!("{}:{}", e.file, e.line.unwrap_or(0))
}

fn until(u: &Spanned<RawUntil>, d: &Defaults) -> Res<Until> {
    let r = u.get_ref();
    let bad = |m: String| d.spans.err(Some(u.span()), m);
    if !pointer_ok(&r.pointer) {
        return Err(bad(format!(
            "until.pointer must be a JSON pointer such as \"/status\" (got {:?})",
            r.pointer
        )));
    }
    let ms = |v: Option<i64>, name: &str, default: i64| match v.unwrap_or(default) {
        x if (1..=86_400_000).contains(&x) => Ok(x as u64),
        x => Err(bad(format!(
            "until.{name} must be between 1 and 86400000 ms (got {x})"
        ))),
    };
    Ok(Until {
        pointer: r.pointer.clone(),
        equals: r.equals.as_ref().map(json),
        interval_ms: ms(r.interval_ms, "interval_ms", 100)?,
        timeout_ms: ms(r.timeout_ms, "timeout_ms", 60_000)?,
    })
}

fn event(
    raw: &Option<Spanned<RawEvent>>,
    key: &str,
    stream: bool,
    d: &Defaults,
) -> Res<Option<EventMatch>> {
    let Some(e) = raw else { return Ok(None) };
    let bad = |m: String| d.spans.err(Some(e.span()), m);
    if !stream {
        return Err(bad(format!(
            "{key} applies to a stream: set protocol = \"sse\""
        )));
    }
    let m = match e.get_ref() {
        RawEvent::Name(n) => EventMatch {
            name: Some(n.clone()),
            ..Default::default()
        },
        RawEvent::Table(t) => EventMatch {
            name: t.event.clone(),
            pointer: t.pointer.clone(),
            equals: t.equals.as_ref().map(json),
            text: match &t.text {
                None | Some(RawText::Yes(false)) => None,
                Some(RawText::Yes(true)) => Some(None),
                Some(RawText::At(p)) => Some(Some(p.clone())),
            },
        },
    };
    if m.name.is_none() && m.pointer.is_none() && m.text.is_none() {
        return Err(bad(format!("{key} needs an event name, e.g. {key} = \"end\", or {{ event = \"messages\", text = true }}, or {{ pointer = \"/type\", equals = \"…\" }}")));
    }
    if m.equals.is_some() && m.pointer.is_none() {
        return Err(bad(format!("{key}: equals needs pointer = \"/field\"")));
    }
    if m.pointer.as_deref().is_some_and(|p| !pointer_ok(p)) {
        return Err(bad(format!(
            "{key}.pointer must be a JSON pointer such as \"/type\""
        )));
    }
    Ok(Some(m))
}
