//! Audio as the APIs carry it: 16-bit little-endian PCM, G.711 µ-law and A-law (8 kHz
//! telephone audio), WAV files (read with whatever header they have, written 16-bit
//! mono), and resampling between rates (rubato's FFT resampler, its delay trimmed, so a
//! sample keeps its time).

use rubato::{FftFixedIn, Resampler};

/// Samples in [−1, 1] as 16-bit little-endian bytes.
pub fn to_s16le(x: &[f32]) -> Vec<u8> {
    x.iter()
        .flat_map(|v| ((v.clamp(-1.0, 1.0) * 32767.0).round() as i16).to_le_bytes())
        .collect()
}

/// 16-bit little-endian bytes as samples (an odd last byte is dropped).
pub fn from_s16le(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]) as f32 / 32768.0)
        .collect()
}

/// G.711 µ-law of one 16-bit sample.
pub fn ulaw_encode(s: i16) -> u8 {
    const BIAS: i32 = 0x84;
    const CLIP: i32 = 32635;
    let sign = if s < 0 { 0x80 } else { 0 };
    let mut x = (s as i32).abs().min(CLIP) + BIAS;
    let mut exp = 7;
    let mut mask = 0x4000;
    while exp > 0 && x & mask == 0 {
        exp -= 1;
        mask >>= 1;
    }
    let mantissa = (x >> (exp + 3)) & 0x0F;
    x = sign | (exp << 4) | mantissa;
    !(x as u8)
}

/// One µ-law byte as a 16-bit sample.
pub fn ulaw_decode(u: u8) -> i16 {
    let u = !u as i32;
    let sign = u & 0x80;
    let exp = (u >> 4) & 0x07;
    let mantissa = u & 0x0F;
    let x = (((mantissa << 3) + 0x84) << exp) - 0x84;
    (if sign != 0 { -x } else { x }) as i16
}

/// G.711 A-law of one 16-bit sample.
pub fn alaw_encode(s: i16) -> u8 {
    let (sign, mut x) = if s >= 0 {
        (0xD5u8, s as i32)
    } else {
        (0x55u8, -(s as i32) - 1)
    };
    x = x.min(32767) >> 3;
    let out = if x < 32 {
        (x >> 1) as u8
    } else {
        let mut exp = 1;
        while x >= 64 && exp < 7 {
            x >>= 1;
            exp += 1;
        }
        ((exp << 4) | ((x >> 1) & 0x0F)) as u8
    };
    out ^ sign
}

/// One A-law byte as a 16-bit sample.
pub fn alaw_decode(a: u8) -> i16 {
    let a = a ^ 0x55;
    let exp = ((a >> 4) & 0x07) as i32;
    let mantissa = (a & 0x0F) as i32;
    let x = if exp == 0 {
        (mantissa << 4) + 8
    } else {
        ((mantissa << 4) + 0x108) << (exp - 1)
    };
    (if a & 0x80 != 0 { x } else { -x }) as i16
}

/// Samples as µ-law bytes, and back.
pub fn to_ulaw(x: &[f32]) -> Vec<u8> {
    x.iter()
        .map(|v| ulaw_encode((v.clamp(-1.0, 1.0) * 32767.0).round() as i16))
        .collect()
}

pub fn from_ulaw(b: &[u8]) -> Vec<f32> {
    b.iter().map(|u| ulaw_decode(*u) as f32 / 32768.0).collect()
}

pub fn to_alaw(x: &[f32]) -> Vec<u8> {
    x.iter()
        .map(|v| alaw_encode((v.clamp(-1.0, 1.0) * 32767.0).round() as i16))
        .collect()
}

pub fn from_alaw(b: &[u8]) -> Vec<f32> {
    b.iter().map(|a| alaw_decode(*a) as f32 / 32768.0).collect()
}

/// Why audio could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    #[error("not a WAV file or a damaged one: {0}")]
    Wav(String),
    #[error("the WAV's data ends early: {got} of {declared} bytes (a truncated file)")]
    Truncated { got: usize, declared: usize },
    #[error("{0}")]
    Unsupported(String),
}

/// A WAV file's audio, mixed to mono: (samples, rate). PCM of 8, 16, 24 or 32 bits,
/// 32-bit float, µ-law and A-law are read; a data chunk shorter than its header says is
/// refused.
pub fn read_wav(bytes: &[u8]) -> Result<(Vec<f32>, u32), AudioError> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(AudioError::Wav("no RIFF/WAVE header".into()));
    }
    if let Some((fmt, data, declared)) = chunks(bytes) {
        if data.len() < declared {
            return Err(AudioError::Truncated {
                got: data.len(),
                declared,
            });
        }
        let tag = u16::from_le_bytes([fmt[0], fmt[1]]);
        let channels = u16::from_le_bytes([fmt[2], fmt[3]]).max(1) as usize;
        let rate = u32::from_le_bytes([fmt[4], fmt[5], fmt[6], fmt[7]]);
        let mono = |x: Vec<f32>| -> Vec<f32> {
            x.chunks(channels)
                .map(|c| c.iter().sum::<f32>() / channels as f32)
                .collect()
        };
        match tag {
            7 => return Ok((mono(from_ulaw(&data[..declared])), rate)),
            6 => return Ok((mono(from_alaw(&data[..declared])), rate)),
            _ => {}
        }
    }
    let r = hound::WavReader::new(std::io::Cursor::new(bytes))
        .map_err(|e| AudioError::Wav(e.to_string()))?;
    let spec = r.spec();
    let ch = spec.channels.max(1) as usize;
    let samples: Result<Vec<f32>, hound::Error> = match spec.sample_format {
        hound::SampleFormat::Float => r.into_samples::<f32>().collect(),
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32;
            r.into_samples::<i32>()
                .map(|s| s.map(|v| v as f32 * scale))
                .collect()
        }
    };
    let x = samples.map_err(|e| AudioError::Wav(e.to_string()))?;
    Ok((
        x.chunks(ch)
            .map(|c| c.iter().sum::<f32>() / ch as f32)
            .collect(),
        spec.sample_rate,
    ))
}

/// A WAV file's channels, bits a sample and whether its samples are floats.
pub fn wav_format(bytes: &[u8]) -> Result<(u16, u16, bool), AudioError> {
    let r = hound::WavReader::new(std::io::Cursor::new(bytes))
        .map_err(|e| AudioError::Wav(e.to_string()))?;
    let s = r.spec();
    Ok((
        s.channels,
        s.bits_per_sample,
        s.sample_format == hound::SampleFormat::Float,
    ))
}

/// The `fmt ` chunk, the data chunk's bytes present and the size it declares.
fn chunks(b: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let mut i = 12;
    let mut fmt = None;
    while i + 8 <= b.len() {
        let id = &b[i..i + 4];
        let size = u32::from_le_bytes([b[i + 4], b[i + 5], b[i + 6], b[i + 7]]) as usize;
        let body = &b[i + 8..(i + 8 + size).min(b.len())];
        match id {
            b"fmt " if body.len() >= 16 => fmt = Some(body),
            b"data" => return Some((fmt?, body, size)),
            _ => {}
        }
        i += 8 + size + (size & 1);
    }
    None
}

/// Samples as a 16-bit mono WAV file at `rate`.
pub fn write_wav(x: &[f32], rate: u32) -> Vec<u8> {
    let ints: Vec<i16> = x
        .iter()
        .map(|v| (v.clamp(-1.0, 1.0) * 32767.0).round() as i16)
        .collect();
    write_wav_i16(&ints, rate)
}

/// 16-bit samples as a mono WAV file at `rate`, each as it is.
pub fn write_wav_i16(x: &[i16], rate: u32) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = std::io::Cursor::new(Vec::with_capacity(44 + 2 * x.len()));
    {
        let mut w = hound::WavWriter::new(&mut out, spec).expect("writing to memory cannot fail");
        for v in x {
            let _ = w.write_sample(*v);
        }
        let _ = w.finalize();
    }
    out.into_inner()
}

/// The samples at another rate, of the length that rate gives them, each at its time.
pub fn resample(x: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || x.is_empty() {
        return x.to_vec();
    }
    let chunk = 1024;
    let Ok(mut r) = FftFixedIn::<f32>::new(from as usize, to as usize, chunk, 2, 1) else {
        return x.to_vec();
    };
    let delay = r.output_delay();
    let want = (x.len() as u64 * to as u64).div_ceil(from as u64) as usize;
    let mut out: Vec<f32> = Vec::with_capacity(want + delay + chunk);
    let mut pos = 0;
    while out.len() < want + delay {
        let need = r.input_frames_next();
        let mut block: Vec<f32> = x[pos.min(x.len())..(pos + need).min(x.len())].to_vec();
        block.resize(need, 0.0);
        pos += need;
        match r.process(&[&block[..]], None) {
            Ok(o) => out.extend_from_slice(&o[0]),
            Err(_) => break,
        }
    }
    out.drain(..delay.min(out.len()));
    out.truncate(want);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g711_round_trips_within_its_step() {
        for s in [-32768i16, -1000, -1, 0, 1, 100, 1000, 12345, 32767] {
            let u = ulaw_decode(ulaw_encode(s));
            assert!(
                (u as i32 - s as i32).abs() <= (s as i32).abs() / 16 + 8,
                "{s} -> {u}"
            );
            let a = alaw_decode(alaw_encode(s));
            assert!(
                (a as i32 - s as i32).abs() <= (s as i32).abs() / 16 + 16,
                "{s} -> {a}"
            );
        }
        // The standard's silence codes.
        assert_eq!(ulaw_encode(0), 0xFF);
        assert_eq!(alaw_encode(0), 0xD5);
    }

    #[test]
    fn a_wav_round_trips_and_a_truncated_one_is_refused() {
        let x: Vec<f32> = (0..800).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        let w = write_wav(&x, 8000);
        let (y, rate) = read_wav(&w).unwrap();
        assert_eq!((rate, y.len()), (8000, 800));
        assert!((y[10] - x[10]).abs() < 1e-3);
        assert!(matches!(
            read_wav(&w[..w.len() - 100]),
            Err(AudioError::Truncated { .. })
        ));
        assert!(matches!(
            read_wav(b"not audio at all"),
            Err(AudioError::Wav(_))
        ));
    }

    #[test]
    fn resampling_keeps_length_and_time() {
        // A 440 Hz tone at 24 kHz to 8 kHz: a third of the samples, the same phase.
        let x: Vec<f32> = (0..24000)
            .map(|i| (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 24000.0).sin())
            .collect();
        let y = resample(&x, 24000, 8000);
        assert_eq!(y.len(), 8000);
        for i in [1000usize, 4000, 7000] {
            let want = (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 8000.0).sin();
            // Within half a sample of its time (0.5 × 2π·440/8000 rad ≈ 0.17).
            assert!((y[i] - want).abs() < 0.17, "{i}: {} vs {want}", y[i]);
        }
    }
}
