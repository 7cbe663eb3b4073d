//! What the audio APIs did for a session: seconds of the caller's audio heard
//! (transcriptions, a Realtime input buffer), seconds of audio spoken (speech, Realtime
//! output), how long transcriptions took, when speech's first byte left, how long a
//! Realtime response took to start speaking, and audio in which no words could be heard.
//! Absent from the ledger's JSON for a run without audio.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Voice {
    /// Seconds of audio heard, and spoken.
    pub heard_s: f64,
    /// Realtime responses, and their time from the end of the caller's speech (or the
    /// request) to the first audio, summed.
    pub realtime_responses: u64,
    pub realtime_response_ms: f64,
    pub spoken_s: f64,
    /// Transcriptions, and their scheduled latency summed.
    pub stt_calls: u64,
    pub stt_ms: f64,
    /// Speech requests, and the time to their first audio byte summed.
    pub tts_calls: u64,
    pub tts_first_byte_ms: f64,
    /// Audio the mock heard no words in (not the voice, or damaged past reading).
    pub unheard: u64,
}

impl Voice {
    pub fn is_empty(&self) -> bool {
        *self == Voice::default()
    }

    pub fn add(&mut self, o: &Voice) {
        self.heard_s += o.heard_s;
        self.realtime_responses += o.realtime_responses;
        self.realtime_response_ms += o.realtime_response_ms;
        self.spoken_s += o.spoken_s;
        self.stt_calls += o.stt_calls;
        self.stt_ms += o.stt_ms;
        self.tts_calls += o.tts_calls;
        self.tts_first_byte_ms += o.tts_first_byte_ms;
        self.unheard += o.unheard;
    }
}

/// A text's sentences, each with its words joined by one space (what a TTS request of one
/// sentence of a reply carries, however the agent split and trimmed it).
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        cur.push(w);
        if w.ends_with(['.', '!', '?']) {
            out.push(cur.join(" "));
            cur.clear();
        }
    }
    if !cur.is_empty() {
        out.push(cur.join(" "));
    }
    out
}

/// The owners' key of one sentence.
pub fn sentence_key(s: &str) -> String {
    format!("sentence:{:016x}", crate::hash::fnv1a(11, s.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reply_is_cut_into_its_sentences() {
        assert_eq!(
            super::sentences("Sure.  I can help!\nWhat is your order number? thanks"),
            [
                "Sure.",
                "I can help!",
                "What is your order number?",
                "thanks"
            ]
        );
    }
}
