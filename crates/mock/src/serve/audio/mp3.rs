//! MP3, the speech API's default `response_format` (and the one LiveKit's OpenAI plugin
//! asks for): the voice at 24 kHz, mono, 160 kbps constant bit rate, with no ID3 or Xing
//! tag — one continuous MPEG-2 Layer III stream, which is what a client's decoder is fed
//! chunk by chunk. Encoded with LAME once per speech and kept (`said`), so a stream's
//! chunks are slices of one copy. At this rate a frame is 576 samples (24 ms) in exactly
//! 480 bytes, so a chunk of whole frames is always a whole number of bytes.

use mp3lame_encoder::{Bitrate, Builder, FlushGap, Mode, MonoPcm, Quality};
use std::num::NonZeroU32;

/// The rate every OpenAI TTS format carries.
pub(crate) const RATE: u32 = 24_000;
/// The bit rate, in kilobits a second.
const KBPS: usize = 160;
/// Samples in one MPEG-2 Layer III frame.
const FRAME_SAMPLES: usize = 576;
/// Bytes in one frame: 72 × bit rate / sample rate (no padding slot at 24 kHz).
pub(crate) const FRAME_BYTES: usize = 72 * KBPS * 1000 / RATE as usize;

/// `pcm` (16-bit little-endian mono at 24 kHz, as the speech is kept) as MP3; None when
/// LAME refuses.
pub(crate) fn encode(pcm: &[u8]) -> Option<Vec<u8>> {
    let samples = super::said::samples(pcm);
    let mut b = Builder::new()?;
    b.set_num_channels(1).ok()?;
    b.set_sample_rate(RATE).ok()?;
    b.set_output_sample_rate(NonZeroU32::new(RATE)).ok()?;
    b.set_mode(Mode::Mono).ok()?;
    b.set_brate(Bitrate::Kbps160).ok()?;
    // LAME's -q 5: at 160 kbps a mono 24 kHz voice loses nothing its words need, in about
    // half the time of the default -q 3 (`bench mock --audio --format mp3 --distinct`).
    b.set_quality(Quality::Good).ok()?;
    b.set_to_write_vbr_tag(false).ok()?;
    let mut enc = b.build().ok()?;
    let mut out = Vec::with_capacity(mp3lame_encoder::max_required_buffer_size(samples.len()));
    enc.encode_to_vec(MonoPcm(&samples[..]), &mut out).ok()?;
    // The last frames, padded with silence to a whole frame (with LAME's own delay),
    // come out at the flush.
    out.reserve(7200);
    enc.flush_to_vec::<FlushGap>(&mut out).ok()?;
    Some(out)
}

/// Bytes of about `chunk_ms` of MP3: whole frames, at least one.
pub fn chunk_bytes(chunk_ms: f64) -> usize {
    let frames = (chunk_ms * RATE as f64 / 1000.0 / FRAME_SAMPLES as f64).round() as usize;
    frames.max(1) * FRAME_BYTES
}

/// Seconds that `bytes` of this MP3 play for.
pub fn seconds_of(bytes: usize) -> f64 {
    bytes as f64 * FRAME_SAMPLES as f64 / (FRAME_BYTES as f64 * RATE as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of an MPEG-2 Layer III stream at 24 kHz, 160 kbps, mono, from its
    /// headers: each begins with the sync word and its header says what we asked for.
    fn frames(mp3: &[u8]) -> usize {
        assert_eq!(mp3.len() % FRAME_BYTES, 0, "whole frames: {}", mp3.len());
        for f in mp3.chunks(FRAME_BYTES) {
            // 0xFFF3: sync, MPEG-2, Layer III, no CRC.
            assert_eq!((f[0], f[1]), (0xFF, 0xF3), "a frame's header");
            assert_eq!(f[2] >> 4, 14, "bit rate index 14: 160 kbps at MPEG-2");
            assert_eq!((f[2] >> 2) & 3, 1, "sample rate index 1: 24 kHz at MPEG-2");
            assert_eq!(f[3] >> 6, 3, "mono");
        }
        mp3.len() / FRAME_BYTES
    }

    #[test]
    fn a_speech_is_whole_frames_as_long_as_its_samples_with_no_tag() {
        let x = voice::speak_for("Hello there, how can I help?", RATE, 1.0).unwrap();
        let mp3 = encode(&voice::pcm::to_s16le(&x)).unwrap();
        let n = frames(&mp3);
        let played = n * FRAME_SAMPLES;
        // LAME's delay and the flush add at most a few frames.
        assert!(played >= x.len(), "{played} samples for {}", x.len());
        assert!(
            played <= x.len() + 4 * FRAME_SAMPLES,
            "{played} for {}",
            x.len()
        );
        assert_eq!(FRAME_BYTES, 480);
    }

    #[test]
    fn chunks_are_whole_frames() {
        assert_eq!(chunk_bytes(100.0), 4 * FRAME_BYTES);
        assert_eq!(chunk_bytes(20.0), FRAME_BYTES);
        assert_eq!(chunk_bytes(1.0), FRAME_BYTES);
        assert_eq!(seconds_of(FRAME_BYTES), 0.024);
        assert!((seconds_of(chunk_bytes(100.0)) - 0.096).abs() < 1e-12);
    }
}
