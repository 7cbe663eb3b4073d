//! A request/reply session file as TOML gives it, before `read` checks it: every key
//! with its place in the file, and the doc of each, which the file's JSON Schema is made
//! from (`plimsoll schema session`).

use super::request::{self, RawRequest};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A request/reply session file (session.toml): how one session talks to the system under
/// test, with a top-level url (one request per turn) or [[setup]], [[turn]] and
/// [[teardown]] tables.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    /// How sessions talk: "http" (default) | "sse" | "ws" | "tcp" | "unix" | "openai-chat"
    /// | "anthropic-messages" | "twilio" | "pcm-ws" | "webrtc". With [[turn]] tables only "http" or
    /// "sse".
    #[schemars(with = "Option<String>")]
    pub(super) protocol: Option<Spanned<String>>,
    /// Turns per session, 1 to 100000. Default 3.
    #[schemars(with = "Option<i64>")]
    pub(super) turns: Option<Spanned<i64>>,
    /// Pause in ms before each turn after the first (a caller's pause in a voice call), 0
    /// or more. Default 0.
    #[schemars(with = "Option<f64>")]
    pub(super) think_ms: Option<Spanned<f64>>,
    /// How long one reply may take before it fails as a timeout, 1 to 86400000 ms. Default
    /// 120000.
    #[schemars(with = "Option<i64>")]
    pub(super) turn_timeout_ms: Option<Spanned<i64>>,
    /// The HTTP status every reply must have, 100 to 599; default any 2xx. Each request
    /// inherits it unless it sets its own.
    #[schemars(with = "Option<i64>")]
    pub(super) expect_status: Option<Spanned<i64>>,
    /// Headers sent with every HTTP request; a request's own headers add to and override
    /// them. Top-level keys go before this table, or TOML reads them as headers.
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    /// protocol = "ws" only: a JSON pointer (e.g. "/type"); the turn ends at the first JSON
    /// message where it is present. Default: the first message back ends the turn.
    #[schemars(with = "Option<String>")]
    pub(super) ws_done_pointer: Option<Spanned<String>>,
    /// protocol = "tcp" or "unix" only: how frames are cut: "line" (default; sending adds
    /// \r\n) | "u32" (big-endian length prefix) | "nul".
    #[schemars(with = "Option<String>")]
    pub(super) framing: Option<Spanned<String>>,
    /// protocol = "tcp" or "unix" only: "text" (default; the body as written) | "msgpack"
    /// (a JSON body sent as MessagePack, the reply read back as JSON).
    #[schemars(with = "Option<String>")]
    pub(super) encoding: Option<Spanned<String>>,
    /// The value (any TOML value) ws_done_pointer must have for a message to end the turn.
    /// Needs ws_done_pointer; without it any value there ends the turn.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) ws_done_equals: Option<toml::Value>,
    /// openai-chat or anthropic-messages only: the model named in each request. Default
    /// "gpt-4o-mini" (openai-chat) or "claude-3-5-haiku-latest" (anthropic-messages).
    pub(super) model: Option<String>,
    /// openai-chat or anthropic-messages only: ask for a streamed reply; time to first
    /// token is then the first content delta. Default false.
    pub(super) stream: Option<bool>,
    /// [[setup]] requests run once per session before turn 1, in order (not part of turn
    /// latency). Needs the turn written as [[turn]] tables.
    #[serde(default)]
    #[schemars(with = "Vec<RawRequest>")]
    pub(super) setup: Vec<Spanned<RawRequest>>,
    /// [[turn]] requests run every turn, in order; a turn runs from its first request to
    /// its last reply. With them, url, body and the other one-request keys go inside the
    /// tables.
    #[serde(default)]
    #[schemars(with = "Vec<RawRequest>")]
    pub(super) turn: Vec<Spanned<RawRequest>>,
    /// [[teardown]] requests run once per session after the last turn (not part of turn
    /// latency); their failures are counted but the session stands.
    #[serde(default)]
    #[schemars(with = "Vec<RawRequest>")]
    pub(super) teardown: Vec<Spanned<RawRequest>>,
    // The one-request form.
    /// The HTTP method of every turn (one-request form). Default "POST".
    pub(super) method: Option<String>,
    /// The URL of every turn (one-request form): http:// or {{base}} (http, sse, chat, webrtc),
    /// ws:// or {{ws_base}} (ws, twilio, pcm-ws; webrtc with signaling = "livekit": the server,
    /// e.g. a [[service]]'s ws://127.0.0.1:{{livekit.port}}), tcp://HOST:PORT or unix:///PATH.
    #[schemars(with = "Option<String>")]
    pub(super) url: Option<Spanned<String>>,
    /// The body template of every turn (one-request form). Default: a JSON message with
    /// {{session}} and the [[plimsoll …]] marker; with openai-chat or anthropic-messages,
    /// the user's text.
    #[schemars(with = "Option<String>")]
    pub(super) body: Option<Spanned<String>>,
    /// One body template per turn instead of body, the last repeating for later turns
    /// (one-request form). Must not be empty; give body or bodies, not both.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) bodies: Option<Spanned<Vec<String>>>,
    /// URL-encoded form fields sent as the body instead of body (HTTP only): name =
    /// template, number or boolean; an array repeats the name. Sets the content-type.
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub(super) form: Option<super::form::RawFields>,
    /// multipart/form-data fields sent as the body instead of body (HTTP only): text, or a
    /// file part { path = "…" } (relative to this file) or { bytes = N }, with optional
    /// filename, content_type.
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub(super) multipart: Option<super::form::RawFields>,
    /// Values taken from each reply, usable as {{name}} in later turns: name =
    /// "/json/pointer", or { pointer = "…" } or { header = "…" }, with default = "…" to
    /// make it optional.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, super::reply::RawExtract>")]
    pub(super) extract: BTreeMap<String, Spanned<super::reply::RawExtract>>,
    /// [[check]] tests each reply must pass (one-request form); a reply that fails one
    /// fails the session.
    #[serde(default)]
    #[schemars(with = "Vec<super::reply::RawCheck>")]
    pub(super) check: Vec<Spanned<super::reply::RawCheck>>,
    /// protocol = "sse" only: the event that marks the first token: an event name, or {
    /// event, pointer, equals, text }. Default: the first event with the model's text, else
    /// the first event.
    #[schemars(with = "Option<request::RawEvent>")]
    pub(super) ttft_event: Option<Spanned<request::RawEvent>>,
    /// protocol = "sse" only: the event that ends the turn, as an event name or { event,
    /// pointer, equals, text }. Default: the end of the stream.
    #[schemars(with = "Option<request::RawEvent>")]
    pub(super) done_event: Option<Spanned<request::RawEvent>>,
    /// protocol = "sse": a JSON pointer to the text delta in each event, for an API
    /// Plimsoll does not know; [[check]] text_contains reads these deltas joined.
    #[schemars(with = "Option<String>")]
    pub(super) text_pointer: Option<Spanned<String>>,
    /// [voice] settings of a voice call: what the caller says, the line, and reply timing.
    /// Only with protocol = "twilio", "pcm-ws" or "webrtc"; defaults when absent.
    #[schemars(with = "Option<super::voice::RawVoice>")]
    pub(super) voice: Option<Spanned<super::voice::RawVoice>>,
}
