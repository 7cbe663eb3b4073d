//! `opus`, as the speech API sends it: Opus in an Ogg stream (RFC 7845) — an `OpusHead`
//! page (mono, its input rate 24 kHz, the encoder's delay as pre-skip), an `OpusTags`
//! page, then 20 ms packets five to a page, the last page's granule trimming the padding
//! so a decoder plays exactly the speech's samples. Encoded with libopus (the codec the
//! WebRTC caller already builds) once per speech and kept (`said`).

use opus::{Application, Bitrate, Channels, Encoder};

/// The rate the speech is kept at, and Opus encodes at here.
const RATE: u32 = super::mp3::RATE;
/// Samples in one 20 ms packet at 24 kHz.
const PACKET: usize = 480;
/// An Ogg granule counts 48 kHz samples whatever the input rate (RFC 7845 §4).
const GRANULE_PER_SAMPLE: u64 = (48_000 / RATE) as u64;
/// Packets on one page: 100 ms, so a streaming decoder has whole pages early.
const PACKETS_A_PAGE: usize = 5;
/// The stream's serial number (one logical stream; any value will do).
const SERIAL: u32 = 0x706c_6d73;
/// A voice at 48 kbps: its words read back through it as they do through WebRTC's Opus.
const BITS_PER_S: i32 = 48_000;

/// `pcm` (16-bit little-endian mono at 24 kHz) as an Ogg Opus stream; None when libopus
/// refuses.
pub(crate) fn encode(pcm: &[u8]) -> Option<Vec<u8>> {
    let mut samples = super::said::samples(pcm);
    let len = samples.len();
    let mut enc = Encoder::new(RATE, Channels::Mono, Application::Audio).ok()?;
    enc.set_bitrate(Bitrate::Bits(BITS_PER_S)).ok()?;
    let delay = enc.get_lookahead().ok()?.max(0) as usize;
    // The delay's samples come out first (pre-skip), so as many of silence go in last,
    // to a whole packet.
    samples.resize((len + delay).div_ceil(PACKET).max(1) * PACKET, 0);
    let mut w = ogg::PacketWriter::new(Vec::with_capacity(pcm.len() / 8));
    use ogg::PacketWriteEndInfo::{EndPage, EndStream, NormalPacket};
    w.write_packet(
        head(delay as u16 * GRANULE_PER_SAMPLE as u16),
        SERIAL,
        EndPage,
        0,
    )
    .ok()?;
    w.write_packet(tags(), SERIAL, EndPage, 0).ok()?;
    let packets = samples.len() / PACKET;
    let mut out = [0u8; 4000];
    for (i, frame) in samples.chunks_exact(PACKET).enumerate() {
        let n = enc.encode(frame, &mut out).ok()?;
        let last = i + 1 == packets;
        let end = match (last, (i + 1) % PACKETS_A_PAGE) {
            (true, _) => EndStream,
            (false, 0) => EndPage,
            _ => NormalPacket,
        };
        // The last page's granule is where the speech ends: pre-skip and its samples.
        let granule = match last {
            true => (delay + len) as u64 * GRANULE_PER_SAMPLE,
            false => ((i + 1) * PACKET) as u64 * GRANULE_PER_SAMPLE,
        };
        w.write_packet(out[..n].to_vec(), SERIAL, end, granule)
            .ok()?;
    }
    Some(w.into_inner())
}

/// The identification header: version 1, one channel, the pre-skip (48 kHz samples), the
/// input's rate, no gain, channel mapping family 0.
fn head(pre_skip: u16) -> Vec<u8> {
    let mut h = b"OpusHead".to_vec();
    h.push(1);
    h.push(1);
    h.extend_from_slice(&pre_skip.to_le_bytes());
    h.extend_from_slice(&RATE.to_le_bytes());
    h.extend_from_slice(&0i16.to_le_bytes());
    h.push(0);
    h
}

/// The comment header: the vendor string, no comments.
fn tags() -> Vec<u8> {
    let vendor = format!("plimsoll mock (libopus {})", opus::version());
    let mut t = b"OpusTags".to_vec();
    t.extend_from_slice(&(vendor.len() as u32).to_le_bytes());
    t.extend_from_slice(vendor.as_bytes());
    t.extend_from_slice(&0u32.to_le_bytes());
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream's packets, read back by the ogg crate, and the last page's granule.
    fn packets(stream: &[u8]) -> (Vec<Vec<u8>>, u64) {
        let mut r = ogg::PacketReader::new(std::io::Cursor::new(stream));
        let (mut out, mut granule) = (Vec::new(), 0);
        while let Some(p) = r.read_packet().unwrap() {
            assert_eq!(p.stream_serial(), SERIAL);
            granule = p.absgp_page();
            out.push(p.data);
        }
        (out, granule)
    }

    #[test]
    fn a_speech_decodes_to_its_own_samples_and_words() {
        let text = "Your table for two is booked for eight tonight.";
        let x = voice::speak(text, RATE).unwrap();
        let stream = encode(&voice::pcm::to_s16le(&x)).unwrap();
        assert_eq!(&stream[..4], b"OggS");
        let (p, granule) = packets(&stream);
        assert_eq!(&p[0][..8], b"OpusHead");
        assert_eq!(
            (
                p[0][9],
                u32::from_le_bytes(p[0][12..16].try_into().unwrap())
            ),
            (1, RATE)
        );
        assert_eq!(&p[1][..8], b"OpusTags");
        let pre_skip = u16::from_le_bytes([p[0][10], p[0][11]]) as u64;
        // The last granule, less the pre-skip, is the speech's own length (at 48 kHz).
        assert_eq!(granule - pre_skip, x.len() as u64 * GRANULE_PER_SAMPLE);
        // Decoded as a player does: pre-skip dropped, trimmed to the granule.
        let mut dec = opus::Decoder::new(RATE, Channels::Mono).unwrap();
        let mut heard = Vec::new();
        let mut buf = [0i16; 5760];
        for packet in &p[2..] {
            let n = dec.decode(packet, &mut buf, false).unwrap();
            assert_eq!(n, PACKET, "20 ms packets");
            heard.extend_from_slice(&buf[..n]);
        }
        let skip = (pre_skip / GRANULE_PER_SAMPLE) as usize;
        let heard: Vec<f32> = heard[skip..skip + x.len()]
            .iter()
            .map(|&s| s as f32 / 32768.0)
            .collect();
        assert_eq!(voice::hear(&heard, RATE).as_deref(), Some(text));
    }
}
