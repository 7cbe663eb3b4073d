//! The audio APIs' wire, as the official OpenAI SDKs speak them: text to speech
//! (`POST /v1/audio/speech`: the request, the formats the mock produces, the SSE events),
//! speech to text (`POST /v1/audio/transcriptions`: the fields, the response formats, the
//! streamed events, the usage), and the Realtime API's events over WebSocket (`realtime`:
//! the client's events read, the server's written, the session object). No audio is made
//! or heard here: that is the `voice` crate's; no timing: that is the mock's.

pub mod realtime;
pub mod speech;
pub mod transcription;

/// Audio tokens a second of input audio counts as (OpenAI's audio models bill speech in
/// tokens: about one per 100 ms heard).
pub const INPUT_AUDIO_TOKENS_PER_S: f64 = 10.0;
/// … and of output audio (about one per 50 ms spoken).
pub const OUTPUT_AUDIO_TOKENS_PER_S: f64 = 20.0;

/// Audio tokens for `seconds` of audio at `per_s`, at least one for any audio.
pub fn audio_tokens(seconds: f64, per_s: f64) -> u32 {
    if seconds <= 0.0 {
        return 0;
    }
    (seconds * per_s).ceil().max(1.0) as u32
}
