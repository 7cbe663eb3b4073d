//! A call's Opus: the caller's frames encoded and the bot's packets decoded at the call's
//! rate (libopus), and the RTP time of each frame on Opus's 48 kHz clock, following the
//! wall clock.

use crate::CallError;
use std::time::Duration;
use str0m::media::{Frequency, MediaTime};

/// Opus both ways at the call's rate; the RTP clock (48 kHz for Opus) a frame at a time.
pub(crate) struct Coder {
    enc: opus::Encoder,
    dec: opus::Decoder,
    samples: usize,
    rtp_per_frame: u64,
    last_rtp: Option<u64>,
    pcm: Vec<i16>,
    packet: Vec<u8>,
}

impl Coder {
    pub(crate) fn new(rate: u32, frame: Duration) -> Result<Coder, CallError> {
        let bad = |e: opus::Error| CallError::new("media", format!("Opus at {rate} Hz: {e}"));
        let enc =
            opus::Encoder::new(rate, opus::Channels::Mono, opus::Application::Voip).map_err(bad)?;
        let dec = opus::Decoder::new(rate, opus::Channels::Mono).map_err(bad)?;
        Ok(Coder {
            enc,
            dec,
            samples: (rate as u128 * frame.as_millis() / 1000) as usize,
            rtp_per_frame: (48 * frame.as_millis()) as u64,
            last_rtp: None,
            pcm: vec![0; 5760],
            packet: vec![0; 1500],
        })
    }

    /// One frame of the caller's audio, due `at_ms` into the call, as an Opus packet and
    /// its RTP time: the frame's slot on the wall clock, never behind the last one's (a
    /// pacer that fell behind and started again from now leaves a gap in RTP time too).
    pub(crate) fn encode(
        &mut self,
        frame: &[f32],
        at_ms: u64,
    ) -> Result<(Vec<u8>, MediaTime), CallError> {
        let mut pcm: Vec<i16> = frame
            .iter()
            .map(|x| (x.clamp(-1.0, 1.0) * 32767.0) as i16)
            .collect();
        pcm.resize(self.samples, 0);
        let n = self
            .enc
            .encode(&pcm, &mut self.packet)
            .map_err(|e| CallError::new("media", format!("encoding the caller's audio: {e}")))?;
        let slot = (at_ms * 48 + self.rtp_per_frame / 2) / self.rtp_per_frame;
        let rtp = match self.last_rtp {
            Some(last) => (slot * self.rtp_per_frame).max(last + self.rtp_per_frame),
            None => slot * self.rtp_per_frame,
        };
        self.last_rtp = Some(rtp);
        let t = MediaTime::new(rtp, Frequency::FORTY_EIGHT_KHZ);
        Ok((self.packet[..n].to_vec(), t))
    }

    /// The bot's packet as samples at the call's rate.
    pub(crate) fn decode(&mut self, packet: &[u8]) -> Result<Vec<f32>, CallError> {
        let n = self.dec.decode(packet, &mut self.pcm, false).map_err(|e| {
            CallError::new(
                "media",
                format!("the bot sent an Opus payload that does not decode ({e})"),
            )
        })?;
        Ok(self.pcm[..n].iter().map(|&s| s as f32 / 32768.0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opus_round_trips_a_frame_at_the_calls_rate() {
        let mut c = Coder::new(24000, Duration::from_millis(20)).unwrap();
        let tone: Vec<f32> = (0..480).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        let mut heard = Vec::new();
        for i in 0..5 {
            let (p, _) = c.encode(&tone, i * 20).unwrap();
            heard = c.decode(&p).unwrap();
        }
        assert_eq!(heard.len(), 480);
        assert!(heard.iter().map(|x| x.abs()).fold(0.0, f32::max) > 0.2);
        let (_, t) = c.encode(&tone, 100).unwrap();
        assert_eq!(t.numer(), 5 * 960, "the RTP clock runs at 48 kHz for Opus");
        // Due early (a jittery pacer): still a frame on from the last.
        assert_eq!(c.encode(&tone, 101).unwrap().1.numer(), 6 * 960);
        // The pacer fell behind and went on from now: RTP time jumps with the wall clock.
        assert_eq!(c.encode(&tone, 2000).unwrap().1.numer(), 100 * 960);
        assert!(c.decode(&[0xff, 0xff, 0xff]).is_err());
    }
}
