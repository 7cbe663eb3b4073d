//! Speech and silence told apart as audio streams in, as a server's voice activity
//! detection does: the energy of each 10 ms frame against a threshold set by the
//! session's `threshold` (0.5 ≈ −45 dBFS), speech starting after 30 ms of voiced frames
//! (reported with the prefix padding before it) and stopping after `silence_ms` of quiet
//! frames. The voice's own pauses (120 ms between phrases, 40 ms stop closures) are
//! shorter than any silence a server waits for, so one utterance is one turn.

/// What the detector saw in the audio it was just given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Edge {
    /// Speech started at this time (ms from the stream's start, prefix padding included).
    Started(u64),
    /// Speech stopped at this time (ms: the end of the last voiced frame).
    Stopped(u64),
}

/// A streaming detector.
#[derive(Clone, Debug)]
pub struct Detector {
    rate: u32,
    threshold_db: f64,
    prefix_ms: u64,
    silence_ms: u64,
    frame: Vec<f32>,
    /// Frames seen so far.
    frames: u64,
    speaking: bool,
    voiced_run: u64,
    quiet_run: u64,
    last_voiced_end_ms: u64,
}

const FRAME_MS: u64 = 10;

impl Detector {
    /// A detector for audio at `rate`: `threshold` in [0, 1] as the API takes it.
    pub fn new(rate: u32, threshold: f64, prefix_ms: u32, silence_ms: u32) -> Detector {
        Detector {
            rate,
            // 0 → −70 dBFS (anything), 0.5 → −45 dBFS, 1 → −20 dBFS (only loud speech).
            threshold_db: -70.0 + 50.0 * threshold.clamp(0.0, 1.0),
            prefix_ms: prefix_ms as u64,
            silence_ms: silence_ms.max(FRAME_MS as u32) as u64,
            frame: Vec::new(),
            frames: 0,
            speaking: false,
            voiced_run: 0,
            quiet_run: 0,
            last_voiced_end_ms: 0,
        }
    }

    pub fn speaking(&self) -> bool {
        self.speaking
    }

    /// Milliseconds of audio given so far.
    pub fn elapsed_ms(&self) -> u64 {
        self.frames * FRAME_MS
    }

    /// Takes more audio; the edges it crossed.
    pub fn feed(&mut self, samples: &[f32]) -> Vec<Edge> {
        let n = (self.rate as u64 * FRAME_MS / 1000) as usize;
        let mut out = Vec::new();
        for &s in samples {
            self.frame.push(s);
            if self.frame.len() < n {
                continue;
            }
            let e = self.frame.iter().map(|v| v * v).sum::<f32>() / n as f32;
            self.frame.clear();
            let db = 10.0 * (e as f64 + 1e-12).log10();
            self.frames += 1;
            let end_ms = self.frames * FRAME_MS;
            if db >= self.threshold_db {
                self.voiced_run += 1;
                self.quiet_run = 0;
                self.last_voiced_end_ms = end_ms;
                if !self.speaking && self.voiced_run >= 3 {
                    self.speaking = true;
                    let began = end_ms.saturating_sub(self.voiced_run * FRAME_MS);
                    out.push(Edge::Started(began.saturating_sub(self.prefix_ms)));
                }
            } else {
                self.voiced_run = 0;
                self.quiet_run += 1;
                if self.speaking && self.quiet_run * FRAME_MS >= self.silence_ms {
                    self.speaking = false;
                    out.push(Edge::Stopped(self.last_voiced_end_ms));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_voice_is_one_turn_and_silence_is_none() {
        let v = crate::speak("Hello there, I would like to check my order please.", 24000).unwrap();
        let mut audio = vec![0.0f32; 24000];
        audio.extend(&v);
        audio.extend(vec![0.0f32; 24000]);
        let mut d = Detector::new(24000, 0.5, 300, 500);
        let mut edges = Vec::new();
        for chunk in audio.chunks(480) {
            edges.extend(d.feed(chunk));
        }
        assert_eq!(edges.len(), 2, "{edges:?}");
        let Edge::Started(a) = edges[0] else {
            panic!("{edges:?}")
        };
        let Edge::Stopped(b) = edges[1] else {
            panic!("{edges:?}")
        };
        assert!((600..=1000).contains(&a), "{a}");
        let spoken_end = 1000 + (v.len() as u64 * 1000 / 24000);
        assert!(
            b <= spoken_end + 20 && b + 200 >= spoken_end,
            "{b} vs {spoken_end}"
        );
    }
}
