//! Speech already made, kept for the next request that asks for the same: a voice agent
//! greets every caller with one sentence, and a bench's streams all say one text. The
//! voice is deterministic (the same text at the same length gives the same samples), so
//! a kept copy is exactly what synthesis would make again, without the milliseconds of
//! CPU that, queued behind each other on a busy core, made every stream's first frame
//! late. What is kept is the encoded audio, so a stream's chunks are slices of one copy
//! (no conversion and no copy a request). The few latest are kept (10 s of 24 kHz PCM is
//! ~480 KB).

use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::Mutex;
use wire::audio::realtime::AudioFormat;

/// How many of the latest speeches are kept.
const KEEP: usize = 8;

/// How a speech is kept: in a raw format the APIs stream (16-bit PCM, G.711), or in one
/// of the speech API's compressed formats, encoded from the kept 16-bit PCM
/// (`super::coded`): MP3 (its default), Ogg Opus or FLAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Raw(AudioFormat),
    Mp3,
    Opus,
    Flac,
}

impl From<AudioFormat> for Coding {
    fn from(f: AudioFormat) -> Coding {
        Coding::Raw(f)
    }
}

type Key = (String, u64, Coding);

#[derive(Default)]
pub struct Said {
    kept: Mutex<VecDeque<(Key, Bytes)>>,
}

fn key(text: &str, seconds: f64, coding: impl Into<Coding>) -> Key {
    (text.to_string(), seconds.to_bits(), coding.into())
}

impl Said {
    /// The speech of `text` lasting `seconds` in `format`, when it was made lately.
    pub fn get(&self, text: &str, seconds: f64, format: impl Into<Coding>) -> Option<Bytes> {
        let kept = self.kept.lock().ok()?;
        let k = key(text, seconds, format);
        kept.iter().find(|(t, _)| *t == k).map(|(_, a)| a.clone())
    }

    /// Keeps `audio`, the speech of `text` lasting `seconds` in `format`, dropping the
    /// oldest kept (streams that asked at once and all made it keep one copy).
    pub fn put(&self, text: &str, seconds: f64, format: impl Into<Coding>, audio: Bytes) {
        if let Ok(mut kept) = self.kept.lock() {
            let k = key(text, seconds, format);
            if kept.iter().any(|(t, _)| *t == k) {
                return;
            }
            if kept.len() >= KEEP {
                kept.pop_front();
            }
            kept.push_back((k, audio));
        }
    }
}

/// Samples in `format`'s encoding.
pub(crate) fn encode(x: &[f32], format: AudioFormat) -> Vec<u8> {
    match format {
        AudioFormat::Pcm24 => voice::pcm::to_s16le(x),
        AudioFormat::Pcmu => voice::pcm::to_ulaw(x),
        AudioFormat::Pcma => voice::pcm::to_alaw(x),
    }
}

/// The kept 16-bit little-endian PCM as samples, for the encoders of the compressed
/// codings (MP3, Ogg Opus, FLAC).
pub(crate) fn samples(pcm: &[u8]) -> Vec<i16> {
    pcm.chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// Bytes a sample takes in `format`.
pub(crate) fn sample_bytes(format: AudioFormat) -> usize {
    match format {
        AudioFormat::Pcm24 => 2,
        AudioFormat::Pcmu | AudioFormat::Pcma => 1,
    }
}

/// Bytes of `chunk_ms` of audio in `format` (whole samples, at least 2 bytes).
pub(crate) fn chunk_bytes(format: AudioFormat, chunk_ms: f64) -> usize {
    ((format.rate() as f64 * chunk_ms / 1000.0) as usize * sample_bytes(format)).max(2)
}

/// Seconds that `bytes` of audio in `format` play for.
pub(crate) fn seconds_of(bytes: usize, format: AudioFormat) -> f64 {
    (bytes / sample_bytes(format)) as f64 / format.rate() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_and_tells_lengths_and_formats_apart() {
        let said = Said::default();
        let pcm = AudioFormat::Pcm24;
        said.put("hello", 1.0, pcm, Bytes::from(vec![1u8; 4]));
        said.put("hello", 1.0, pcm, Bytes::from(vec![1u8; 4]));
        assert_eq!(said.kept.lock().unwrap().len(), 1, "one copy of one speech");
        assert_eq!(said.get("hello", 1.0, pcm).unwrap().len(), 4);
        assert!(said.get("hello", 2.0, pcm).is_none());
        assert!(said.get("hello", 1.0, AudioFormat::Pcmu).is_none());
        assert!(said.get("hello", 1.0, Coding::Mp3).is_none());
        for i in 0..KEEP {
            said.put(&format!("t{i}"), 1.0, pcm, Bytes::new());
        }
        assert!(said.get("hello", 1.0, pcm).is_none(), "the oldest goes");
        assert!(said.get(&format!("t{}", KEEP - 1), 1.0, pcm).is_some());
    }

    #[test]
    fn encodes_as_the_format_asks() {
        let x = [0.0f32, 0.5, -0.5];
        assert_eq!(
            encode(&x, AudioFormat::Pcm24).len(),
            3 * sample_bytes(AudioFormat::Pcm24)
        );
        assert_eq!(encode(&x, AudioFormat::Pcmu).len(), 3);
        assert_eq!(encode(&x, AudioFormat::Pcma), voice::pcm::to_alaw(&x));
        // 20 ms: 480 samples of 24 kHz PCM, 160 of 8 kHz G.711.
        assert_eq!(chunk_bytes(AudioFormat::Pcm24, 20.0), 960);
        assert_eq!(chunk_bytes(AudioFormat::Pcmu, 20.0), 160);
        assert_eq!(seconds_of(48_000, AudioFormat::Pcm24), 1.0);
        assert_eq!(seconds_of(8_000, AudioFormat::Pcma), 1.0);
    }
}
