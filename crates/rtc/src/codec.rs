//! A call's Opus: the caller's words encoded ahead of their time (libopus), and the RTP
//! time of each frame on Opus's 48 kHz clock, following the wall clock. The bot's packets
//! are decoded off the clock (`decode`).

use crate::decode::{Backlog, Decoding, Lane};
use crate::error::CallError;
use std::time::Duration;
use str0m::media::{Frequency, MediaTime};

/// The caller's encoder complexity (libopus's 0 to 10; its default is 10, a desktop
/// browser's 9). A caller is one of hundreds a harness core drives, and what the bot does
/// with its voice is to detect speech and transcribe it: at 0 a WebRTC call costs the
/// harness 25 ms of CPU a second instead of 41 (`plimsoll bench calls --transport webrtc`,
/// 20 calls on a 2-core EPYC VM), and the voice is heard word for word after it
/// (`plimsoll_s_voice_survives_the_callers_coder`).
const COMPLEXITY: i32 = 0;

fn encoder(rate: u32) -> Result<opus::Encoder, CallError> {
    let bad = |e: opus::Error| CallError::new("media", format!("Opus at {rate} Hz: {e}"));
    let mut enc =
        opus::Encoder::new(rate, opus::Channels::Mono, opus::Application::Voip).map_err(bad)?;
    enc.set_complexity(COMPLEXITY).map_err(bad)?;
    Ok(enc)
}

/// The caller's words as Opus packets, a frame each, coded ahead of their time (off the
/// call's clock: a caller's frames then go out on time however many calls share the core).
/// The last frame is padded with silence.
pub fn encode(samples: &[f32], rate: u32, frame: Duration) -> Result<Vec<Vec<u8>>, CallError> {
    let mut enc = encoder(rate)?;
    let n = (rate as u128 * frame.as_millis() / 1000) as usize;
    let mut out = vec![0u8; 1500];
    let mut pcm = Vec::with_capacity(n);
    samples
        .chunks(n.max(1))
        .map(|f| {
            pcm.clear();
            pcm.extend(f.iter().map(|x| (x.clamp(-1.0, 1.0) * 32767.0) as i16));
            pcm.resize(n, 0);
            let len = enc.encode(&pcm, &mut out).map_err(|e| {
                CallError::new("media", format!("encoding the caller's audio: {e}"))
            })?;
            Ok(out[..len].to_vec())
        })
        .collect()
}

/// The packet a caller sends while it says nothing: silence, as its coder settles on it.
pub fn silence(rate: u32, frame: Duration) -> Result<Vec<u8>, CallError> {
    let n = (rate as u128 * frame.as_millis() / 1000) as usize;
    let packets = encode(&vec![0.0; n * 10], rate, frame)?;
    Ok(packets.last().cloned().unwrap_or_default())
}

/// A call's RTP clock (48 kHz for Opus), a frame at a time, and the lane its bot's packets
/// are decoded on (none for a connection that only sends).
pub(crate) struct Coder {
    pub lane: Option<Lane>,
    rtp_per_frame: u64,
    last_rtp: Option<u64>,
}

impl Coder {
    pub(crate) fn new(
        rate: u32,
        frame: Duration,
        decoding: &Decoding,
        backlog: Backlog,
    ) -> Result<Coder, CallError> {
        Ok(Coder {
            lane: Some(decoding.lane(rate, backlog)?),
            ..Coder::sending(frame)
        })
    }

    /// The clock of a connection that only sends (LiveKit's publisher): no decoder, no
    /// place on a decoding lane.
    pub(crate) fn sending(frame: Duration) -> Coder {
        Coder {
            lane: None,
            rtp_per_frame: (48 * frame.as_millis()) as u64,
            last_rtp: None,
        }
    }

    /// The RTP time of the caller's frame due `at_ms` into the call: the frame's slot on
    /// the wall clock, never behind the last one's (a pacer that fell behind and started
    /// again from now leaves a gap in RTP time too).
    pub(crate) fn stamp(&mut self, at_ms: u64) -> MediaTime {
        let slot = (at_ms * 48 + self.rtp_per_frame / 2) / self.rtp_per_frame;
        let rtp = match self.last_rtp {
            Some(last) => (slot * self.rtp_per_frame).max(last + self.rtp_per_frame),
            None => slot * self.rtp_per_frame,
        };
        self.last_rtp = Some(rtp);
        MediaTime::new(rtp, Frequency::FORTY_EIGHT_KHZ)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opus_round_trips_a_frame_at_the_calls_rate() {
        let rate = 24000;
        let frame = Duration::from_millis(20);
        let tone: Vec<f32> = (0..2400).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        let packets = encode(&tone[..2300], rate, frame).unwrap();
        assert_eq!(packets.len(), 5, "a packet a frame, the last one padded");
        let mut d = crate::decode::Decoder::new(rate).unwrap();
        let heard = packets.iter().map(|p| d.decode(p).unwrap()).last().unwrap();
        assert_eq!(heard.len(), 480);
        assert!(heard.iter().map(|x| x.abs()).fold(0.0, f32::max) > 0.2);
        let quiet = silence(rate, frame).unwrap();
        assert!(
            quiet.len() < packets[2].len(),
            "silence codes smaller than a tone"
        );
        let after = (0..5).map(|_| d.decode(&quiet).unwrap()).last().unwrap();
        assert!(
            after.iter().all(|x| x.abs() < 0.01),
            "the tone dies away into silence"
        );
        let mut c =
            Coder::new(rate, frame, &Decoding::new("t-opus", 1), Backlog::default()).unwrap();
        for i in 0..5 {
            c.stamp(i * 20);
        }
        assert_eq!(
            c.stamp(100).numer(),
            5 * 960,
            "the RTP clock runs at 48 kHz for Opus"
        );
        // Due early (a jittery pacer): still a frame on from the last.
        assert_eq!(c.stamp(101).numer(), 6 * 960);
        // The pacer fell behind and went on from now: RTP time jumps with the wall clock.
        assert_eq!(c.stamp(2000).numer(), 100 * 960);
        assert!(d.decode(&[0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn plimsoll_s_voice_survives_the_callers_coder() {
        // As a bot hears a caller: decoded at 48 kHz (aiortc, LiveKit) or 16 kHz (an STT's
        // rate), the words read back are the words said.
        let said = "Where is my order? It was due on Monday, and the tracking page says nothing.";
        let speech = voice::speak(said, 24000).unwrap();
        let quiet = silence(24000, Duration::from_millis(20)).unwrap();
        let packets = encode(&speech, 24000, Duration::from_millis(20)).unwrap();
        for rate in [48000, 16000] {
            let mut dec = opus::Decoder::new(rate, opus::Channels::Mono).unwrap();
            let mut heard = Vec::new();
            let mut pcm = vec![0i16; 5760];
            // Silence before the words, from the call's own coder, as a call sends it.
            for p in std::iter::repeat_n(&quiet, 10).chain(&packets) {
                let n = dec.decode(p, &mut pcm, false).unwrap();
                heard.extend(pcm[..n].iter().map(|&s| s as f32 / 32768.0));
            }
            assert_eq!(
                voice::hear(&heard, rate).as_deref(),
                voice::hear(&speech, 24000).as_deref(),
                "at {rate} Hz"
            );
            let words = voice::hear(&heard, rate).unwrap_or_default().to_lowercase();
            assert!(
                words.contains("monday") && words.contains("tracking"),
                "{words}"
            );
        }
    }
}
