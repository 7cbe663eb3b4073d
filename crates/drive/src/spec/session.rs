//! What a session file becomes: the protocol, turns, think and timeout, its requests
//! (setup, turn, teardown), and per protocol what ends a WebSocket turn, the chat
//! client's model, a raw socket's wire or a bus. Reading it from TOML is `read`'s
//! business; running it is the runners'.

use super::bus::{BusSpec, Framing};
use super::request::Request;

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
    /// A voice call as Twilio Media Streams places it (`[voice]`).
    Twilio,
    /// A voice call of raw 16-bit PCM over a WebSocket (`[voice]`).
    PcmWs,
    /// A voice call over WebRTC, as a browser places it: the offer signalled over HTTP
    /// (`[voice] signaling`), Opus both ways (`[voice]`).
    WebRtc,
}

/// How a raw socket session (`protocol = "tcp"` or `"unix"`) frames and encodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wire {
    pub framing: Framing,
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
    pub bus: Option<BusSpec>,
    /// With `protocol = "tcp"` or `"unix"`: framing and encoding.
    pub wire: Option<Wire>,
    /// With `protocol = "twilio"` or `"pcm-ws"`: the call's voice and line.
    pub voice: Option<super::voice::VoiceSpec>,
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

    /// A voice call (`twilio`, `pcm-ws`, `webrtc`).
    pub fn is_voice(self) -> bool {
        matches!(self, Protocol::Twilio | Protocol::PcmWs | Protocol::WebRtc)
    }

    /// The line a voice protocol places a call on; None for any other.
    pub(super) fn line_kind(self) -> Option<super::voice::LineKind> {
        match self {
            Protocol::Twilio => Some(super::voice::LineKind::Twilio),
            Protocol::PcmWs => Some(super::voice::LineKind::Pcm),
            Protocol::WebRtc => Some(super::voice::LineKind::WebRtc),
            _ => None,
        }
    }

    /// Whether its url is a WebSocket's (a WebRTC call's is where its offer is POSTed).
    pub fn over_ws(self) -> bool {
        matches!(self, Protocol::Ws | Protocol::Twilio | Protocol::PcmWs)
    }

    /// A voice protocol's name, as a session file and RESULT write it.
    pub fn voice_name(self) -> &'static str {
        match self {
            Protocol::Twilio => "twilio",
            Protocol::WebRtc => "webrtc",
            _ => "pcm-ws",
        }
    }
}

/// The user's text of a turn with `protocol = "openai-chat"`, when none is given.
pub const CHAT_TEXT: &str =
    "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}.";

/// The placeholders every session has (besides the names its requests extract).
pub(super) const BUILTIN: &[&str] = &[
    "session",
    "nonce",
    "uuid",
    "request_uuid",
    "turn",
    "prompt",
    "base",
    "ws_base",
    "port",
];

/// The default body: a chat-style message carrying the session marker.
pub const DEFAULT_BODY: &str = r#"{"session": "{{session}}", "message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}."}"#;

impl SessionSpec {
    /// A bus session: one "turn" (its deliveries), no requests.
    pub(super) fn of_bus(bus: BusSpec) -> SessionSpec {
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
            voice: None,
        }
    }

    /// Every request, setup first.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.setup.iter().chain(&self.turn).chain(&self.teardown)
    }

    /// The top-level keys of the first turn request's JSON body, when it sends one (for
    /// explaining a refusal of it); None for form, multipart, chat or other bodies.
    pub fn json_keys(&self) -> Option<Vec<String>> {
        let r = self.turn.first().filter(|_| !self.protocol.is_chat())?;
        let json = r
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("json"))
            || (!self.sequence && r.fields.is_none());
        let body = r.bodies.first().filter(|_| json && r.fields.is_none())?;
        let sample = crate::template::render(body, &[]);
        match serde_json::from_str::<serde_json::Value>(&sample).ok()? {
            serde_json::Value::Object(m) => Some(m.keys().cloned().collect()),
            _ => None,
        }
    }
}
