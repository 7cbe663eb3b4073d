//! The caller's side of a Realtime connection: the input audio buffer in the session's
//! format, server VAD over it (speech started and stopped, from the audio itself), and a
//! committed turn heard for the words it carries.

use ::voice::vad::{Detector, Edge};
use wire::audio::realtime::{AudioFormat, Session};

/// The input audio since the last commit or clear, with the VAD that watches it.
pub(crate) struct Input {
    rate: u32,
    /// Samples since `origin_ms` (ms from the connection's first audio).
    samples: Vec<f32>,
    origin_ms: u64,
    vad: Option<Detector>,
    /// Where speech started (ms), while the caller speaks.
    pub started_ms: Option<u64>,
    /// The item the speech will become.
    pub item_id: Option<String>,
}

impl Input {
    pub fn new(s: &Session) -> Input {
        let mut i = Input {
            rate: s.input_format.rate(),
            samples: Vec::new(),
            origin_ms: 0,
            vad: None,
            started_ms: None,
            item_id: None,
        };
        i.configure(s);
        i
    }

    /// A session's formats and VAD set again (after `session.update`).
    pub fn configure(&mut self, s: &Session) {
        self.rate = s.input_format.rate();
        let elapsed = self.vad.as_ref().map_or(0, Detector::elapsed_ms);
        self.vad = s.vad.as_ref().map(|v| {
            let mut d = Detector::new(
                self.rate,
                v.threshold,
                v.prefix_padding_ms,
                v.silence_duration_ms,
            );
            // Keep the stream's clock: silence stands in for what was already heard.
            d.feed(&vec![0.0; (elapsed * self.rate as u64 / 1000) as usize]);
            d
        });
    }

    /// Audio in the session's input format, decoded and appended; the VAD's edges.
    pub fn append(&mut self, bytes: &[u8], format: AudioFormat) -> Vec<Edge> {
        let x = match format {
            AudioFormat::Pcm24 => ::voice::pcm::from_s16le(bytes),
            AudioFormat::Pcmu => ::voice::pcm::from_ulaw(bytes),
            AudioFormat::Pcma => ::voice::pcm::from_alaw(bytes),
        };
        self.samples.extend_from_slice(&x);
        match self.vad.as_mut() {
            Some(v) => v.feed(&x),
            None => Vec::new(),
        }
    }

    /// The buffer's length in ms.
    pub fn buffered_ms(&self) -> u64 {
        self.samples.len() as u64 * 1000 / self.rate.max(1) as u64
    }

    /// Takes the turn: the audio from `from_ms` (or all of it) to now, emptied after.
    pub fn take(&mut self, from_ms: Option<u64>) -> (Vec<f32>, u32) {
        let skip = from_ms.map_or(0, |f| {
            (f.saturating_sub(self.origin_ms) * self.rate as u64 / 1000) as usize
        });
        let turn = self.samples[skip.min(self.samples.len())..].to_vec();
        self.clear();
        (turn, self.rate)
    }

    /// Empties the buffer (its clock runs on).
    pub fn clear(&mut self) {
        self.origin_ms += self.samples.len() as u64 * 1000 / self.rate.max(1) as u64;
        self.samples.clear();
        self.started_ms = None;
    }
}

/// The words a turn's audio carries (every utterance in it, joined), or "" when none.
pub(crate) fn hear(samples: &[f32], rate: u32) -> String {
    ::voice::hear_all(samples, rate)
        .into_iter()
        .map(|u| u.text)
        .collect::<Vec<_>>()
        .join(" ")
}
