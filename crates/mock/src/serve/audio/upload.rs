//! A transcription upload in a compressed container, decoded to mono samples at its own
//! rate: mp3, AAC in MP4 (`m4a`) and Vorbis by Symphonia (the pure-Rust demuxers and
//! decoders Rust's audio players use); Opus in Ogg or WebM, which Symphonia demuxes but
//! does not decode, by libopus (the codec the speech API's `opus` and the WebRTC caller
//! already build); FLAC by claxon (rodio's FLAC decoder: Symphonia 0.5's FLAC reader
//! refused the stream flacenc writes, the mock's own `flac`, which claxon and FFmpeg
//! read). What it cannot read is said in one phrase for the refusal.

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CodecParameters, DecoderOptions, CODEC_TYPE_NULL, CODEC_TYPE_OPUS};
use symphonia::core::errors::Error;
use symphonia::core::formats::{FormatOptions, FormatReader, Packet};
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// The containers read here, as a refusal names them.
pub(crate) const READ: &str =
    "mp3, flac, m4a/mp4 (AAC), ogg or oga (Opus, Vorbis), opus, webm (Opus, Vorbis)";

/// The most audio an upload may decode to: 25 minutes, more than the API's 25 MB holds at
/// a speech bitrate, so a small file that would unpack to hours (FLAC of silence) is
/// refused before it fills the memory of the process the mock runs in.
const MAX_SECONDS: usize = 25 * 60;
/// What is said of an upload over [`MAX_SECONDS`].
const TOO_LONG: &str = "it holds more than 25 minutes of audio";

/// Opus decodes at 48 kHz, its own rate, whatever the encoder's input was.
const OPUS_RATE: u32 = 48_000;
/// Opus's longest packet: 120 ms at 48 kHz.
const OPUS_MAX_FRAME: usize = 5760;

/// `bytes`' audio as mono samples in [-1, 1] and their rate (`ext`, the file name's
/// extension, is a hint; the container is found by its bytes); Err says what was wrong.
pub(crate) fn decode(ext: &str, bytes: &[u8]) -> Result<(Vec<f32>, u32), String> {
    if bytes.starts_with(b"fLaC") {
        return flac(bytes);
    }
    let source = Box::new(std::io::Cursor::new(bytes.to_vec()));
    let stream = MediaSourceStream::new(source, MediaSourceStreamOptions::default());
    let mut hint = Hint::new();
    if !ext.is_empty() {
        hint.with_extension(ext);
    }
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            stream,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(|e| format!("its container is not one this mock reads ({e})"))?;
    let mut format = probed.format;
    let track = format
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or("it holds no audio track")?;
    let (id, params) = (track.id, track.codec_params.clone());
    if params.codec == CODEC_TYPE_OPUS {
        return opus(format.as_mut(), id, &params);
    }
    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions::default())
        .map_err(|e| format!("its codec is not one this mock decodes ({e})"))?;
    let (mut out, mut rate) = (Vec::new(), params.sample_rate.unwrap_or(0));
    while let Some(packet) = next(format.as_mut(), id)? {
        let decoded = match decoder.decode(&packet) {
            Ok(d) => d,
            // A damaged frame is skipped, as a player skips it.
            Err(Error::DecodeError(_)) => continue,
            Err(e) => return Err(format!("it could not be decoded ({e})")),
        };
        let spec = *decoded.spec();
        rate = spec.rate;
        let mut buf = SampleBuffer::<f32>::new(decoded.capacity() as u64, spec);
        buf.copy_interleaved_ref(decoded);
        mono(buf.samples(), spec.channels.count(), &mut out);
        if out.len() > MAX_SECONDS * rate as usize {
            return Err(TOO_LONG.into());
        }
    }
    if out.is_empty() || rate == 0 {
        return Err("it holds no audio".into());
    }
    Ok((out, rate))
}

/// A FLAC stream's samples, mixed to mono, scaled from their bit depth to [-1, 1].
fn flac(bytes: &[u8]) -> Result<(Vec<f32>, u32), String> {
    let mut r = claxon::FlacReader::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("its FLAC header could not be read ({e})"))?;
    let info = r.streaminfo();
    let channels = info.channels.max(1) as usize;
    let scale = 1.0 / (1u64 << (info.bits_per_sample.clamp(1, 32) - 1)) as f32;
    let most = MAX_SECONDS * info.sample_rate as usize * channels;
    let mut samples = Vec::new();
    for s in r.samples() {
        let v = s.map_err(|e| format!("a FLAC frame could not be decoded ({e})"))?;
        if samples.len() == most {
            return Err(TOO_LONG.into());
        }
        samples.push(v as f32 * scale);
    }
    let mut out = Vec::with_capacity(samples.len() / channels);
    mono(&samples, channels, &mut out);
    match out.is_empty() {
        true => Err("it holds no audio".into()),
        false => Ok((out, info.sample_rate)),
    }
}

/// The track's next packet; None at the stream's end.
fn next(format: &mut dyn FormatReader, id: u32) -> Result<Option<Packet>, String> {
    loop {
        match format.next_packet() {
            Ok(p) if p.track_id() == id => return Ok(Some(p)),
            Ok(_) => continue,
            Err(Error::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ok(None)
            }
            Err(Error::ResetRequired) => return Ok(None),
            Err(e) => return Err(format!("it could not be read ({e})")),
        }
    }
}

/// Interleaved frames of `channels` averaged to one channel, onto `out`.
fn mono(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    let c = channels.max(1);
    out.extend(
        interleaved
            .chunks(c)
            .map(|f| f.iter().sum::<f32>() / c as f32),
    );
}

/// An Opus track's packets decoded by libopus to mono at 48 kHz (a stereo packet is mixed
/// down by libopus itself), the stream's pre-skip (its encoder's delay, RFC 7845 §4.2)
/// dropped: Ogg's demuxer gives it, WebM's only in the OpusHead it keeps.
fn opus(
    format: &mut dyn FormatReader,
    id: u32,
    params: &CodecParameters,
) -> Result<(Vec<f32>, u32), String> {
    let mut decoder = opus::Decoder::new(OPUS_RATE, opus::Channels::Mono)
        .map_err(|e| format!("libopus refused it ({e})"))?;
    let mut frame = vec![0f32; OPUS_MAX_FRAME];
    let mut out = Vec::new();
    while let Some(packet) = next(format, id)? {
        // An empty packet would have libopus conceal a whole frame of audio nobody sent.
        if packet.data.is_empty() {
            continue;
        }
        if out.len() > MAX_SECONDS * OPUS_RATE as usize {
            return Err(TOO_LONG.into());
        }
        let n = decoder
            .decode_float(&packet.data, &mut frame, false)
            .map_err(|e| format!("an Opus packet could not be decoded ({e})"))?;
        out.extend_from_slice(&frame[..n]);
    }
    let head = params
        .extra_data
        .as_deref()
        .filter(|h| h.len() >= 19 && h.starts_with(b"OpusHead"));
    let skip = params
        .delay
        .or_else(|| head.map(|h| u32::from(u16::from_le_bytes([h[10], h[11]]))))
        .unwrap_or(0) as usize;
    out.drain(..skip.min(out.len()));
    Ok((out, OPUS_RATE))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second of a 440 Hz tone at 24 kHz, as 16-bit little-endian PCM.
    fn tone() -> Vec<u8> {
        (0..24_000)
            .map(|i| {
                ((i as f32 * 440.0 * std::f32::consts::TAU / 24_000.0).sin() * 12_000.0) as i16
            })
            .flat_map(|s| s.to_le_bytes())
            .collect()
    }

    /// The mock's own encoders' output read back here: a second of audio each, at the rate
    /// its codec decodes at, and as loud as it went in (within what a lossy codec loses).
    #[test]
    fn the_mocks_own_mp3_opus_and_flac_are_read_back() {
        let pcm = tone();
        let rms = |x: &[f32]| (x.iter().map(|s| s * s).sum::<f32>() / x.len() as f32).sqrt();
        for (ext, bytes, rate) in [
            ("mp3", super::super::mp3::encode(&pcm).unwrap(), 24_000),
            ("ogg", super::super::ogg_opus::encode(&pcm).unwrap(), 48_000),
            ("flac", super::super::flac::encode(&pcm).unwrap(), 24_000),
        ] {
            let (x, r) = decode(ext, &bytes).unwrap_or_else(|e| panic!("{ext}: {e}"));
            assert_eq!(r, rate, "{ext}");
            let secs = x.len() as f64 / r as f64;
            assert!((0.98..1.1).contains(&secs), "{ext}: {secs} s");
            let level = rms(&x);
            assert!((0.22..0.30).contains(&level), "{ext}: rms {level}");
        }
    }

    /// 26 minutes of silence at 1 kHz: a FLAC of a few kilobytes that unpacks past the
    /// limit is refused, not decoded whole.
    #[test]
    fn an_upload_that_unpacks_past_the_limit_is_refused() {
        use flacenc::component::BitRepr;
        use flacenc::error::Verify;
        let rate = 1_000;
        let silence = vec![0i32; 26 * 60 * rate];
        let config = flacenc::config::Encoder::default().into_verified().unwrap();
        let source = flacenc::source::MemSource::from_samples(&silence, 1, 16, rate);
        let stream =
            flacenc::encode_with_fixed_block_size(&config, source, config.block_size).unwrap();
        let mut sink = flacenc::bitsink::ByteSink::new();
        stream.write(&mut sink).unwrap();
        assert!(
            sink.as_slice().len() < 64 << 10,
            "{} bytes",
            sink.as_slice().len()
        );
        assert_eq!(decode("flac", sink.as_slice()).unwrap_err(), TOO_LONG);
    }

    #[test]
    fn bytes_of_no_container_are_said_as_such() {
        let e = decode("mp3", b"this is not audio at all, only words").unwrap_err();
        assert!(
            e.starts_with("its container is not one this mock reads"),
            "{e}"
        );
    }
}
