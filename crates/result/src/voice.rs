//! What a step of voice calls measured (`protocol = "twilio"`, `"pcm-ws"` or `"webrtc"`): the calls
//! and their turns, how long the bot took to answer (the end of the caller's speech to
//! the bot's first audio), how its audio broke as a phone plays it (stalls: the playback
//! buffer run dry before the reply ended), whether the words a call heard were the reply
//! to that call, barge-ins, the call setup, calls dropped, how closely the harness kept its
//! 20 ms frames, and what the mock's audio stages did (transcriptions, speech, Realtime).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VoiceCalls {
    /// "twilio", "pcm-ws" or "webrtc".
    pub protocol: String,
    pub calls: u64,
    /// Calls whose socket closed before they ended, or that never opened.
    pub dropped: u64,
    /// Turns the bot answered.
    pub turns: u64,
    /// The end of the caller's speech to the bot's first audio, in ms.
    pub response_p50_ms: Option<f64>,
    pub response_p95_ms: Option<f64>,
    pub response_p99_ms: Option<f64>,
    /// Stall time (the buffer run dry before the reply ended) per turn, and as a share of
    /// the time the replies played (their sound, first to last, and the stalls: at most
    /// 1); the longest gap; the share of turns with any stall.
    pub stall_ms_per_turn: f64,
    pub stall_share: f64,
    pub longest_gap_ms: f64,
    pub stuttered_share: f64,
    /// Of the stalls, the holes: silence inside the replies' audio, entered while the
    /// voice was loud (a transport that pads a dry queue with silence sends its packets on
    /// time, so the playback clock sees no gap): how many, and ms in all.
    #[serde(default, skip_serializing_if = "crate::cost::is_zero")]
    pub holes: u64,
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub holes_ms: f64,
    /// Seconds of audio the callers spoke and the bot sent.
    pub caller_audio_s: f64,
    pub bot_audio_s: f64,
    /// Connect (and the opening messages) to ready, p50, ms.
    pub setup_p50_ms: Option<f64>,
    /// Replies whose words were heard and attributed: to this call, to another call, or
    /// to none (audio that is not the mock's voice, or damaged past reading).
    pub words_checked: u64,
    pub words_wrong: u64,
    pub words_unheard: u64,
    /// Of the replies heard on their own call, those found by their sound alone where no
    /// words could be read (a pipeline damaged them past reading, or cut all but a stretch).
    #[serde(default, skip_serializing_if = "crate::cost::is_zero")]
    pub words_by_sound: u64,
    /// Barge-ins: turns the caller spoke over the bot, and how long the bot took to fall
    /// silent (a `clear`, or its audio stopping), p50 ms.
    pub barge_ins: u64,
    pub barge_stop_p50_ms: Option<f64>,
    /// How late the harness sent its frames against their deadlines, p99 ms, and the
    /// frames' length.
    pub frame_jitter_p99_ms: f64,
    #[serde(default = "twenty")]
    pub frame_ms: u32,
    /// What the mock's audio APIs did: transcriptions, speech requests, Realtime responses,
    /// and their mean latencies (transcription, speech's first byte, a Realtime response's
    /// first audio), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<VoiceStages>,
    /// A WebRTC call's network part: its setup split, and the bot's packets as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<VoiceNetwork>,
    /// The calls whose audio was kept as WAV files (those with a failed, unheard or wrong
    /// reply, or one found only by its sound, unless every call's was asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_audio: Option<KeptAudio>,
    /// Replies heard on the wrong call, the first ten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crosstalk: Vec<Crosstalk>,
}

/// A reply heard on another call than the one that asked: where it was heard, whose it
/// was, whether it came with the call's own reply, whether the call it belonged to
/// heard any reply of its own in the step, and whether it was found by its sound (its
/// words cut too fine to read: two replies interleaved piece by piece) rather than read.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Crosstalk {
    pub heard_on: String,
    pub owner: String,
    pub with_own: bool,
    pub owner_heard_own: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_sound: bool,
}

/// Where the audio of the step's calls was kept: in `dir`, `NAME.sent.wav` (what the
/// caller said), `NAME.heard.wav` (every sample it received) and `NAME.txt` (where each
/// turn and reply begins) for each call named; and how many more were to keep past the
/// cap of `cap` calls.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KeptAudio {
    pub dir: String,
    pub calls: Vec<String>,
    pub left_out: u64,
    pub cap: u64,
}

/// What the network did to WebRTC calls: how long placing them took, part by part (p50
/// ms), and the bot's RTP packets — received, missing from their sequence (lost, or too
/// late to play), the interarrival jitter the callers' receiver reports gave (p95 of the
/// calls', ms) — and the caller's packets the bot reported lost.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VoiceNetwork {
    pub signaling_p50_ms: Option<f64>,
    pub ice_p50_ms: Option<f64>,
    pub dtls_p50_ms: Option<f64>,
    /// A LiveKit room's: from making the room to its agent ready in it (dispatched,
    /// joined, subscribed to the caller, its own voice published), p50, p99 and the
    /// longest, ms: what calls arriving in a burst wait for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_p99_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_max_ms: Option<f64>,
    /// From making the room to the agent in it (dispatched, its job started and joined),
    /// p50 ms: the part of the wait before it subscribed and published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_joined_p50_ms: Option<f64>,
    pub packets: u64,
    pub packets_lost: u64,
    pub jitter_p95_ms: Option<f64>,
    pub lost_by_bot: u64,
}

impl VoiceNetwork {
    /// The share of the bot's packets that never played.
    pub fn lost_share(&self) -> f64 {
        let all = self.packets + self.packets_lost;
        if all == 0 {
            0.0
        } else {
            self.packets_lost as f64 / all as f64
        }
    }
}

fn twenty() -> u32 {
    20
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VoiceStages {
    pub stt_calls: u64,
    pub stt_ms_mean: Option<f64>,
    pub tts_calls: u64,
    pub tts_first_byte_ms_mean: Option<f64>,
    pub realtime_responses: u64,
    pub realtime_response_ms_mean: Option<f64>,
    /// Audio the mock heard no words in.
    pub unheard: u64,
}

fn is_zero_f(x: &f64) -> bool {
    *x == 0.0
}
