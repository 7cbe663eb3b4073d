//! A voice call's settings (`[voice]`, with `protocol = "twilio"`, `"pcm-ws"` or `"webrtc"`): what the
//! caller says each turn (a template spoken in Plimsoll's voice, or a WAV of the user's
//! own), the line (Twilio Media Streams: µ-law at 8 kHz in 20 ms frames; raw PCM: 16-bit
//! at a rate and frame size of its own; WebRTC: Opus, its offer signalled as `signaling`
//! says), how long to wait for the bot's answer and what
//! silence ends it, whether the bot speaks first, the share of turns the caller talks over
//! the bot, and Twilio's custom parameters. Read once; a WAV that is not 16-bit mono, or
//! that cannot be read, is an error naming the file and the line.
//!
//! ```toml
//! protocol = "twilio"                 # or "pcm-ws"
//! url = "{{ws_base}}/ws"
//! turns = 3
//! think_ms = 800                      # the caller's pause before speaking again
//! [voice]
//! say = "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] I'd like to check my order."
//! # wav = "caller.wav"                # the user's own utterance (16-bit mono WAV) instead
//! rate = 16000                        # pcm-ws: the line's rate (twilio: 8000, fixed)
//! frame_ms = 20
//! answer_timeout_ms = 8000            # the bot's first audio after the caller stops
//! reply_end_ms = 800                  # the bot has finished after this much silence
//! greeting = false                    # true: the bot speaks first; its greeting is waited for
//! barge_in = 0.0                      # share of turns the caller speaks over the bot
//! custom = { caller = "{{session}}" } # twilio: start.customParameters
//! ```

use super::SessionError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

/// What the caller says by default: the marker and a sentence.
pub const DEFAULT_SAY: &str =
    "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn {{turn}}.";

/// The line a call runs over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Line {
    /// Twilio Media Streams: JSON events, µ-law at 8 kHz.
    Twilio,
    /// Binary WebSocket frames of 16-bit little-endian PCM at `rate`.
    Pcm { rate: u32 },
    /// WebRTC: Opus both ways, heard and spoken at 16 kHz; the offer signalled so.
    WebRtc(rtc::Signaling),
}

impl Line {
    pub fn rate(self) -> u32 {
        match self {
            Line::Twilio => 8000,
            Line::Pcm { rate } => rate,
            Line::WebRtc(_) => WEBRTC_RATE,
        }
    }
}

/// The rate a WebRTC call's audio is spoken and heard at: wideband, where Opus codes speech
/// (SILK at 16 kHz) and the voice is heard, so neither the caller's coder nor its decoder
/// nor its hearing resamples (at 24 kHz each did: a WebRTC call cost the harness 8.0 ms a
/// call-second, `plimsoll bench calls --transport webrtc --calls 100`).
pub const WEBRTC_RATE: u32 = 16000;

#[derive(Clone, Debug)]
pub struct VoiceSpec {
    pub line: Line,
    /// The caller's words, a template filled per turn (unused with `wav`).
    pub say: String,
    /// The user's own utterance: mono samples at their rate.
    pub wav: Option<Arc<(Vec<f32>, u32)>>,
    pub frame_ms: u32,
    pub answer_timeout_ms: u64,
    pub reply_end_ms: u64,
    pub greeting: bool,
    pub barge_in: f64,
    /// Twilio's `start.customParameters` (templates).
    pub custom: Vec<(String, String)>,
    /// With `signaling = "livekit"`: the key pair and how the agent comes.
    pub livekit: Option<LiveKitSpec>,
}

/// A LiveKit call's own settings: the key pair that signs its tokens, and how its agent
/// is sent into each call's room.
#[derive(Clone, Debug)]
pub struct LiveKitSpec {
    pub key: String,
    pub secret: String,
    pub dispatch: rtc::livekit::Dispatch,
}

/// [voice]: a voice call's settings (protocol = "twilio", "pcm-ws" or "webrtc"): what the caller
/// says, the line's audio, and how the bot's replies are waited for.
#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVoice {
    /// The caller's words each turn, a template spoken in Plimsoll's voice. Default:
    /// "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] Please handle turn
    /// {{turn}}."
    say: Option<String>,
    /// A 16-bit mono WAV of the user's own utterance, sent each turn instead of say
    /// (resampled to the line); the path counts from the session file. Its words are not
    /// checked.
    #[schemars(with = "Option<String>")]
    wav: Option<Spanned<String>>,
    /// pcm-ws only: the line's sample rate in Hz, 8000 to 48000. Default 16000. Twilio's
    /// line is fixed at µ-law 8000 Hz.
    #[schemars(with = "Option<i64>")]
    rate: Option<Spanned<i64>>,
    /// Audio per frame in ms, each frame sent on its deadline; 10 to 200. Default 20.
    #[schemars(with = "Option<i64>")]
    frame_ms: Option<Spanned<i64>>,
    /// How long to wait for the bot's first audio after the caller stops speaking, 100 to
    /// 600000 ms. Default 8000.
    #[schemars(with = "Option<i64>")]
    answer_timeout_ms: Option<Spanned<i64>>,
    /// Silence in ms after which the bot's reply counts as finished, 100 to 60000. Default
    /// 800.
    #[schemars(with = "Option<i64>")]
    reply_end_ms: Option<Spanned<i64>>,
    /// true: the bot speaks first, and its greeting is waited for before the caller's first
    /// turn. Default false.
    greeting: Option<bool>,
    /// The share of turns, 0 to 1, in which the caller talks over the bot's reply. Default
    /// 0.
    #[schemars(with = "Option<f64>")]
    barge_in: Option<Spanned<f64>>,
    /// twilio only: start.customParameters sent to the bot, name = template, e.g. { caller
    /// = "{{session}}" }.
    #[serde(default)]
    custom: BTreeMap<String, String>,
    /// webrtc only: how the call's offer reaches the bot — "pipecat" (SmallWebRTC's POST
    /// /api/offer, JSON; the default), "whip" (RFC 9725: POST application/sdp, 201 with a
    /// Location, DELETE to hang up) or "livekit" (a room per call on the LiveKit server at
    /// the session's url, ws://host:port, its agent sent in, the caller joined over /rtc).
    /// The session's url is where the offer goes, its [headers] go with it (a bearer
    /// token).
    #[schemars(with = "Option<String>")]
    signaling: Option<Spanned<String>>,
    /// signaling = "livekit" only: the API key the server knows, which signs each call's
    /// access token. Default: $LIVEKIT_API_KEY.
    #[schemars(with = "Option<String>")]
    api_key: Option<Spanned<String>>,
    /// signaling = "livekit" only: the API key's secret. Default: $LIVEKIT_API_SECRET.
    #[schemars(with = "Option<String>")]
    api_secret: Option<Spanned<String>>,
    /// signaling = "livekit" only: the agent to send into each call's room by name (a
    /// worker registered with that agent_name, dispatched explicitly through the server
    /// API). Absent: the server dispatches a worker's agent when the room is made
    /// (automatic dispatch, a worker with no agent_name).
    #[schemars(with = "Option<String>")]
    agent: Option<Spanned<String>>,
}

/// Which line a voice protocol places a call on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LineKind {
    Twilio,
    Pcm,
    WebRtc,
}

/// The `[voice]` table of a voice protocol (its defaults when absent); an error for a
/// `[voice]` table under any other protocol (`kind` is `None`).
pub(super) fn read(
    raw: Option<Spanned<RawVoice>>,
    kind: Option<LineKind>,
    spans: &spans::Spans,
    dir: &Path,
) -> Result<Option<VoiceSpec>, SessionError> {
    let Some(kind) = kind else {
        return match raw {
            Some(r) => Err(spans.err(
                Some(r.span()),
                "[voice] applies to protocol = \"twilio\", \"pcm-ws\" or \"webrtc\"",
            )),
            None => Ok(None),
        };
    };
    let raw = raw.map(Spanned::into_inner).unwrap_or_default();
    let int = |v: &Option<Spanned<i64>>, name: &str, lo: i64, hi: i64, default: i64| {
        spans.int(v, &format!("voice.{name}"), (lo, hi), default)
    };
    let line = match kind {
        LineKind::Twilio => {
            if let Some(r) = &raw.rate {
                return Err(spans.err(Some(r.span()), "voice.rate: Twilio's line is µ-law at 8000 Hz; rate applies to protocol = \"pcm-ws\""));
            }
            Line::Twilio
        }
        LineKind::Pcm => Line::Pcm {
            rate: int(&raw.rate, "rate", 8000, 48000, 16000)? as u32,
        },
        LineKind::WebRtc => webrtc(&raw, spans)?,
    };
    if let (false, Some(s)) = (matches!(line, Line::WebRtc(_)), &raw.signaling) {
        return Err(spans.err(
            Some(s.span()),
            "voice.signaling applies to protocol = \"webrtc\"",
        ));
    }
    let barge_in = match &raw.barge_in {
        None => 0.0,
        Some(b) if (0.0..=1.0).contains(b.get_ref()) => *b.get_ref(),
        Some(b) => {
            return Err(spans.err(
                Some(b.span()),
                format!(
                    "voice.barge_in is a share of turns, 0 to 1 (got {})",
                    b.get_ref()
                ),
            ))
        }
    };
    let wav = match &raw.wav {
        None => None,
        Some(w) => Some(Arc::new(read_wav(&dir.join(w.get_ref())).map_err(|e| {
            spans.err(Some(w.span()), format!("voice.wav {:?}: {e}", w.get_ref()))
        })?)),
    };
    let frame_ms = frame_ms(&raw, line, spans)?;
    let livekit = livekit(&raw, line, spans)?;
    Ok(Some(VoiceSpec {
        line,
        say: raw.say.unwrap_or_else(|| DEFAULT_SAY.to_string()),
        wav,
        frame_ms,
        answer_timeout_ms: int(
            &raw.answer_timeout_ms,
            "answer_timeout_ms",
            100,
            600_000,
            8000,
        )? as u64,
        reply_end_ms: int(&raw.reply_end_ms, "reply_end_ms", 100, 60_000, 800)? as u64,
        greeting: raw.greeting.unwrap_or(false),
        barge_in,
        livekit,
        custom: raw.custom.into_iter().collect(),
    }))
}

/// A LiveKit call's key pair (the config's, else the environment's) and its dispatch; the
/// three settings refused on any other line.
fn livekit(
    raw: &RawVoice,
    line: Line,
    spans: &spans::Spans,
) -> Result<Option<LiveKitSpec>, SessionError> {
    let fields = [
        ("api_key", &raw.api_key),
        ("api_secret", &raw.api_secret),
        ("agent", &raw.agent),
    ];
    if line != Line::WebRtc(rtc::Signaling::LiveKit) {
        return match fields
            .iter()
            .find_map(|(n, f)| f.as_ref().map(|f| (n, f.span())))
        {
            Some((name, at)) => Err(spans.err(
                Some(at),
                format!("voice.{name} applies to signaling = \"livekit\""),
            )),
            None => Ok(None),
        };
    }
    let pick = |field: &Option<Spanned<String>>,
                name: &str,
                env: &str|
     -> Result<String, SessionError> {
        match field {
            Some(v) if !v.get_ref().is_empty() => Ok(v.get_ref().clone()),
            Some(v) => Err(spans.err(Some(v.span()), format!("voice.{name} is empty"))),
            None => std::env::var(env).ok().filter(|v| !v.is_empty()).ok_or_else(|| {
                spans.err(None, format!("a LiveKit call needs the server's API key pair: set [voice] {name}, or {env} in the environment (a dev server's is devkey / secret)"))
            }),
        }
    };
    let dispatch = match &raw.agent {
        None => rtc::livekit::Dispatch::Automatic,
        Some(a) if a.get_ref().is_empty() => return Err(spans.err(Some(a.span()), "voice.agent is empty: name the agent a worker registered, or leave it out for automatic dispatch")),
        Some(a) => rtc::livekit::Dispatch::Named(a.get_ref().clone()),
    };
    Ok(Some(LiveKitSpec {
        key: pick(&raw.api_key, "api_key", "LIVEKIT_API_KEY")?,
        secret: pick(&raw.api_secret, "api_secret", "LIVEKIT_API_SECRET")?,
        dispatch,
    }))
}

/// The frame length, 10 to 200 ms; a WebRTC call's an Opus frame's.
fn frame_ms(raw: &RawVoice, line: Line, spans: &spans::Spans) -> Result<u32, SessionError> {
    let ms = spans.int(&raw.frame_ms, "voice.frame_ms", (10, 200), 20)? as u32;
    if let (Line::WebRtc(_), false) = (line, [10, 20, 40, 60].contains(&ms)) {
        let at = raw.frame_ms.as_ref().map(|f| f.span());
        return Err(spans.err(
            at,
            format!("voice.frame_ms: an Opus frame is 10, 20, 40 or 60 ms (got {ms})"),
        ));
    }
    Ok(ms)
}

/// A WebRTC call's line: how its offer is signalled ("pipecat" by default).
fn webrtc(raw: &RawVoice, spans: &spans::Spans) -> Result<Line, SessionError> {
    if let Some(r) = &raw.rate {
        return Err(spans.err(Some(r.span()), format!("voice.rate: a WebRTC call's audio is Opus at {WEBRTC_RATE} Hz here; rate applies to protocol = \"pcm-ws\"")));
    }
    let how = match &raw.signaling {
        None => rtc::Signaling::Pipecat,
        Some(s) => rtc::Signaling::parse(s.get_ref()).ok_or_else(|| {
            spans.err(Some(s.span()), format!("voice.signaling must be \"pipecat\" (SmallWebRTC's POST /api/offer), \"whip\" (RFC 9725) or \"livekit\" (a LiveKit room per call), got {:?}", s.get_ref()))
        })?,
    };
    Ok(Line::WebRtc(how))
}

/// A user's utterance: a 16-bit mono WAV file.
fn read_wav(path: &Path) -> Result<(Vec<f32>, u32), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it ({e})"))?;
    let (channels, bits, float) = voice::pcm::wav_format(&bytes).map_err(|e| e.to_string())?;
    if channels != 1 || bits != 16 || float {
        return Err(format!(
            "is {channels} channel{}, {bits}-bit {}: give a 16-bit mono WAV (e.g. sox in.wav -b 16 -c 1 out.wav)",
            if channels == 1 { "" } else { "s" },
            if float { "float" } else { "integer" }
        ));
    }
    let (samples, rate) = voice::pcm::read_wav(&bytes).map_err(|e| e.to_string())?;
    if samples.is_empty() {
        return Err("holds no audio".into());
    }
    Ok((samples, rate))
}

#[cfg(test)]
#[path = "voice_tests.rs"]
mod tests;
