//! `flac`, as the speech API sends it: the voice losslessly, 16-bit mono at 24 kHz, in
//! FLAC frames of 4,096 samples behind the `fLaC` marker and its STREAMINFO (with the
//! samples' MD5, so a decoder checks what it got). Encoded once per speech and kept
//! (`said`), by flacenc (pure Rust: nothing more to build).

use flacenc::component::BitRepr;
use flacenc::error::Verify;

/// The rate the speech is kept at.
const RATE: u32 = super::mp3::RATE;

/// `pcm` (16-bit little-endian mono at 24 kHz) as a FLAC stream; None when the encoder
/// refuses.
pub(crate) fn encode(pcm: &[u8]) -> Option<Vec<u8>> {
    let samples: Vec<i32> = super::said::samples(pcm)
        .into_iter()
        .map(i32::from)
        .collect();
    let mut config = flacenc::config::Encoder::default();
    // One thread: the mock encodes on its voice pool, a thread a core already.
    config.multithread = false;
    let config = config.into_verified().ok()?;
    let source = flacenc::source::MemSource::from_samples(&samples, 1, 16, RATE as usize);
    let stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size).ok()?;
    let mut sink = flacenc::bitsink::ByteSink::new();
    stream.write(&mut sink).ok()?;
    Some(sink.as_slice().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speech_decodes_to_exactly_its_samples() {
        let text = "Your table for two is booked for eight tonight.";
        let x = voice::speak(text, RATE).unwrap();
        let pcm = voice::pcm::to_s16le(&x);
        let flac = encode(&pcm).unwrap();
        assert_eq!(&flac[..4], b"fLaC");
        assert!(flac.len() < pcm.len(), "{} of {}", flac.len(), pcm.len());
        // Read by another decoder (claxon), every sample as it went in.
        let mut r = claxon::FlacReader::new(std::io::Cursor::new(&flac)).unwrap();
        let info = r.streaminfo();
        assert_eq!(
            (info.sample_rate, info.channels, info.bits_per_sample),
            (RATE, 1, 16)
        );
        assert_eq!(info.samples, Some(x.len() as u64));
        let back: Vec<i16> = r.samples().map(|s| s.unwrap() as i16).collect();
        let sent: Vec<i16> = pcm
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(back, sent);
    }
}
