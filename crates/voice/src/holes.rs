//! Holes in speech: silence that begins while a voice is loud. Speech never stops that
//! way (a voice, and any TTS, decays into its pauses); a transport whose queue ran dry
//! does, when it pads the gap with digital silence and plays the rest later (Pipecat's
//! SmallWebRTC output sends 10 ms of zeros each time its queue is empty). Its packets
//! arrive on time, so the playback clock sees no stall: the audio itself shows it.

/// Holes found in a stretch of audio: how many, their length in all and the longest, ms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Holes {
    pub count: u32,
    pub ms: f64,
    pub longest_ms: f64,
}

/// Energy is read in blocks of 2 ms.
const BLOCK_MS: usize = 2;
/// The shortest hole counted, and the longest: a dry queue's padding is 10-60 ms at a
/// time (at most ~300 seen); longer silence is a bot's own doing (a reply cut off at a
/// barge-in, then the next), not a hole.
const SHORTEST_MS: usize = 8;
const LONGEST_MS: usize = 300;
/// Sound before a hole: its louder 2 ms block of the 4 ms before must be louder than
/// −36 dBFS (RMS), and the hole 25 dB below that and below −40 dBFS throughout. A voice's
/// own pauses and closures decay into their silence over tens of ms; a dry queue's
/// padding cuts in at once. A codec smears the cut and fills some of the silence: through
/// aiortc's Opus a third of 20 ms holes still show (tests/grid.rs), and none in the
/// mock's voice at 20 dB less drop or 2 ms less length.
const BEFORE_MS: usize = 4;
const LOUD_DB: f64 = -36.0;
const DROP_DB: f64 = 25.0;
const QUIET_DB: f64 = -40.0;
/// Holes are taken out after quieter sound than they are counted after: a padded reply's
/// quiet syllables are padded too, and a voice decays below this before its pauses (the
/// voice's own tests: none taken out of it at any rate).
const CLOSE_LOUD_DB: f64 = -60.0;

/// The holes in `audio` (mono, at `rate`): silence of 8 to 300 ms that cuts into loud
/// sound (see the constants); silence at the very end is not one. A codec's smearing
/// hides some: the count is at least what a listener heard.
pub fn holes(audio: &[f32], rate: u32) -> Holes {
    let mut out = Holes::default();
    for (start, end) in spans(audio, rate, LOUD_DB) {
        let ms = (end - start) as f64 * 1000.0 / rate as f64;
        out.count += 1;
        out.ms += ms;
        out.longest_ms = out.longest_ms.max(ms);
    }
    out
}

/// `audio` with its holes taken out: the reply as it was before a transport padded it,
/// for reading and comparing; None where it has none.
pub fn closed(audio: &[f32], rate: u32) -> Option<Vec<f32>> {
    let spans = spans(audio, rate, CLOSE_LOUD_DB);
    if spans.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(audio.len());
    let mut from = 0;
    for (start, end) in spans {
        out.extend_from_slice(&audio[from..start]);
        from = end;
    }
    out.extend_from_slice(&audio[from..]);
    Some(out)
}

/// Where the holes are, after sound at least `loud_db`: each one's first sample and the
/// sample after its last.
fn spans(audio: &[f32], rate: u32, loud_db: f64) -> Vec<(usize, usize)> {
    let per = (rate as usize * BLOCK_MS / 1000).max(1);
    let db: Vec<f64> = audio
        .chunks_exact(per)
        .map(|b| {
            let p = b.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / per as f64;
            10.0 * (p + 1e-20).log10()
        })
        .collect();
    let (before, shortest, longest) = (
        BEFORE_MS / BLOCK_MS,
        SHORTEST_MS / BLOCK_MS,
        LONGEST_MS / BLOCK_MS,
    );
    let mut out = Vec::new();
    let mut k = before;
    while k < db.len() {
        let loud = db[k - before..k].iter().copied().fold(f64::MIN, f64::max);
        let quiet = QUIET_DB.min(loud - DROP_DB);
        if loud < loud_db || db[k] > quiet {
            k += 1;
            continue;
        }
        let start = k;
        while k < db.len() && db[k] <= quiet {
            k += 1;
        }
        if k - start >= shortest && k - start <= longest && k < db.len() {
            out.push((start * per, k * per));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_voice_has_no_holes_and_a_stall_makes_one_each_time() {
        let t = "The agent plans a careful answer with tools and memory, so we test again before shipping results to users.";
        for rate in [8000, 16000, 24000, 48000] {
            let s = crate::speak(t, rate).unwrap();
            assert_eq!(holes(&s, rate), Holes::default(), "the voice at {rate} Hz");
            assert_eq!(closed(&s, rate), None);
            // 20 ms of zeros put in every 500 ms, as a dry queue's padding.
            let per = rate as usize / 1000;
            let mut y = Vec::new();
            let mut put = 0;
            for (k, c) in s.chunks(500 * per).enumerate() {
                if k > 0 {
                    y.extend(std::iter::repeat_n(0.0, 20 * per));
                    put += 1;
                }
                y.extend_from_slice(c);
            }
            let h = holes(&y, rate);
            // Those that fell where the voice was loud; a few fall in its own pauses.
            assert!(
                h.count * 10 >= put * 7 && h.count <= put,
                "{h:?} of {put} at {rate} Hz"
            );
            assert!(h.ms >= h.count as f64 * 16.0, "{h:?}");
            // Taken out, the holes leave the voice as long as it was, less what is not one.
            let c = closed(&y, rate).expect("holes to take out");
            let left = c.len() as f64 - s.len() as f64;
            assert_eq!(
                left,
                (y.len() - s.len()) as f64 - h.ms * per as f64,
                "{rate} Hz"
            );
        }
    }

    #[test]
    fn silence_at_the_end_or_after_a_fade_is_no_hole() {
        let rate = 16000;
        let tone: Vec<f32> = (0..1600).map(|i| (i as f32 * 0.1).sin() * 0.3).collect();
        let mut fade = tone.clone();
        fade.extend((0..1600).map(|i| (i as f32 * 0.1).sin() * 0.3 * (1.0 - i as f32 / 1600.0)));
        fade.extend(vec![0.0; 1600]);
        fade.extend(&tone);
        assert_eq!(holes(&fade, rate), Holes::default(), "a fade, then silence");
        let mut end = tone.clone();
        end.extend(vec![0.0; 1600]);
        assert_eq!(holes(&end, rate), Holes::default(), "silence at the end");
        let mut cut_off = tone.clone();
        cut_off.extend(vec![0.0; 8000]);
        cut_off.extend(&tone);
        assert_eq!(
            holes(&cut_off, rate),
            Holes::default(),
            "half a second: a bot's own"
        );
        let mut cut = tone.clone();
        cut.extend(vec![0.0; 480]);
        cut.extend(&tone);
        let h = holes(&cut, rate);
        assert_eq!(h.count, 1, "{h:?}");
        assert!((h.ms - 30.0).abs() <= 2.0, "{h:?}");
    }
}
