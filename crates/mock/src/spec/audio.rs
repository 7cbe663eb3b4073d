//! The scenario's `[audio]` table: how the mock's voice speaks and hears in time.
//!
//! ```toml
//! [audio]
//! chars_per_s = 15          # speaking rate: speech lasts as long as its text takes to say
//! tts_first_byte_ms = 150   # speech's first audio byte leaves this long after the request
//! tts_speed = 2.0           # the rest streams this many times faster than it plays
//! chunk_ms = 100            # audio per streamed chunk (speech, a Realtime delta)
//! stt_ms = 120              # a transcription's fixed latency …
//! stt_rtf = 0.1             # … plus this share of the audio's duration
//! ```

use serde::Deserialize;

/// The [audio] table: how speech, transcriptions and the Realtime API keep time.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AudioSettings {
    /// Speaking rate in characters per second (> 0): speech lasts as long as its text takes
    /// to say. Default 15.
    pub chars_per_s: f64,
    /// Time from a speech request to its first audio byte, in ms (≥ 0). Default 150.
    pub tts_first_byte_ms: f64,
    /// How many times faster than real time the rest of the speech streams (> 0), for
    /// speech and Realtime audio. Default 2.0.
    pub tts_speed: f64,
    /// Audio per streamed chunk (speech, a Realtime delta), in ms (≥ 10). Default 100.
    pub chunk_ms: f64,
    /// A transcription's fixed latency, in ms (≥ 0). Default 120.
    pub stt_ms: f64,
    /// A transcription's added latency as a share of the audio's duration (≥ 0; 0.1 = 100
    /// ms per second of audio). Default 0.1.
    pub stt_rtf: f64,
}

impl Default for AudioSettings {
    fn default() -> Self {
        AudioSettings {
            chars_per_s: 15.0,
            tts_first_byte_ms: 150.0,
            tts_speed: 2.0,
            chunk_ms: 100.0,
            stt_ms: 120.0,
            stt_rtf: 0.1,
        }
    }
}

impl AudioSettings {
    /// The first field out of range, with what it takes.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("chars_per_s", self.chars_per_s),
            ("tts_speed", self.tts_speed),
            ("chunk_ms", self.chunk_ms),
        ];
        for (k, v) in positive {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("{k} must be > 0 (got {v})"));
            }
        }
        for (k, v) in [
            ("tts_first_byte_ms", self.tts_first_byte_ms),
            ("stt_ms", self.stt_ms),
            ("stt_rtf", self.stt_rtf),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("{k} must be ≥ 0 (got {v})"));
            }
        }
        if self.chunk_ms < 10.0 {
            return Err(format!(
                "chunk_ms must be ≥ 10 (got {}): smaller chunks cost more than they time",
                self.chunk_ms
            ));
        }
        Ok(())
    }

    /// How long `text` takes to say at the speaking rate, in seconds.
    pub fn seconds_of(&self, text: &str) -> f64 {
        text.chars().count() as f64 / self.chars_per_s
    }

    /// A transcription's latency for `seconds` of audio, in ms.
    pub fn stt_latency_ms(&self, seconds: f64) -> f64 {
        self.stt_ms + self.stt_rtf * seconds * 1000.0
    }
}
