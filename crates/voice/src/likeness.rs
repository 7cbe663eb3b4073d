//! Whose speech audio is by its sound, where its words could not be read: how much of it
//! each candidate reply (a text in the mock's voice) accounts for. A bot that sends two
//! calls' replies out of one call's output interleaves them piece by piece as its model
//! streams them, and no piece is long enough to read. Each candidate is aligned to the
//! audio in runs that keep the candidate's own order; the audio between its runs is free to
//! be anyone's (the other reply's pieces), while skipping the candidate's own audio costs.
//! Pure functions: text and samples in, shares out.

use crate::hear::front;

/// 10 ms frames (a hop at 16 kHz) of 20 ms Hann windows, 512-point transforms.
const HOP: usize = 160;
/// A candidate's frames come this many to the heard audio's one (every 2.5 ms): a piece of
/// a reply starts anywhere on the heard audio's grid, and a frame 5 ms off the
/// candidate's is another sound in a consonant's transition. Runs keep their phase;
/// a run resumed after another's piece may take any.
const SUB: usize = 4;
const WIN: usize = 320;
const NFFT: usize = 512;
/// Log-spaced bands from 150 to 3400 Hz: the vowel's formants and the consonants' noise,
/// what every codec a voice agent uses keeps.
const BANDS: usize = 16;
/// How many loud frames of its own (1.5 s) the heard audio's mean band levels weigh as
/// much as a candidate's: a reply's whole is taken mostly by its own colour, a 1.5 s
/// stretch of it half by the candidate's.
const PRIOR: f64 = 150.0;
/// A loud frame is within this of the audio's 98th-percentile level (dB).
const LOUD_DB: f64 = 30.0;
/// Two loud frames' spectral shapes (correlation of their mean-removed band levels)
/// alike at least this much count for a run, less against it.
const ALIKE: f64 = 0.93;
/// A run's start costs as much as this many frames perfectly alike: a few frames alike
/// by chance (the same vowel in two replies) make no run.
const OPEN: f64 = 8.0;
/// A run begun where the candidate's last one ended costs this: the other reply's piece
/// between them split a frame or two of this one's.
const RESUME: f64 = 1.0;
/// Skipping a frame of the candidate costs this (a lost packet skips a few; another
/// reply's candidate, chained from chance runs, skips most of itself).
const SKIP: f64 = 0.05;

/// The most heard audio compared (a reply's first 30 s), and the most of a candidate
/// (twice as much: two replies interleaved take twice as long to play): the alignment's
/// cost is their product.
const HEARD_MOST_S: usize = 30;

/// How much of heard audio one candidate accounts for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Likeness {
    /// Of the heard audio's loud 10 ms frames, the share found in runs of this candidate.
    pub share: f64,
    /// Of the candidate's own loud frames, the share found in the heard audio.
    pub found: f64,
    /// The heard audio's loud seconds found in runs of this candidate.
    pub found_s: f64,
}

/// Of a candidate's own sound, the share that must be found in the heard audio to say it
/// was heard there (over three times what another reply's chance likeness reaches, 0.15
/// at most on the voice's tests); or of the heard audio, the share the candidate accounts for (a
/// stretch of a reply: another's chance reaches 0.46 of a second's stretch, where the
/// replies' shared opening is); and either way this many seconds of it (a one-word reply,
/// or a second of chance runs, is no proof).
const FOUND: f64 = 0.5;
const SHARE: f64 = 0.6;
const FOUND_S: f64 = 1.0;
/// A stretch is one reply's: the candidate that accounts for most of it, by this much
/// more than the next (two replies that open with the same words sound the same there).
const MARGIN: f64 = 0.1;

/// Which candidates were heard, of `all` compared with one audio: each one most of whose
/// sound was found (two replies interleaved are both found); where none was, the one that
/// accounts for most of the audio, clear of the next (a stretch of one reply); a second of
/// sound at least either way.
pub fn heard(all: &[Likeness]) -> Vec<bool> {
    let whole = |l: &Likeness| l.found >= FOUND && l.found_s >= FOUND_S;
    if all.iter().any(whole) {
        return all.iter().map(whole).collect();
    }
    let mut shares: Vec<(usize, f64)> = all.iter().map(|l| l.share).enumerate().collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let stretch = match shares.as_slice() {
        [(i, s), rest @ ..] if *s >= SHARE && all[*i].found_s >= FOUND_S => rest
            .first()
            .is_none_or(|(_, next)| s - next >= MARGIN)
            .then_some(*i),
        _ => None,
    };
    (0..all.len()).map(|i| stretch == Some(i)).collect()
}

/// Each candidate (texts spoken one after another, as the mock speaks a reply sentence by
/// sentence) against `heard` (mono at `rate`), in the candidates' order. A text the voice
/// cannot speak adds nothing; a candidate longer than a minute is not compared (found
/// nowhere).
pub fn likeness<S: AsRef<str>>(heard: &[f32], rate: u32, candidates: &[Vec<S>]) -> Vec<Likeness> {
    let most = HEARD_MOST_S * rate as usize;
    let as_heard = |a: &[f32]| frames(&crate::hear::at_16k(&a[..a.len().min(most)], rate), HOP);
    // Also with a transport's padding taken out (a hole every 40 ms leaves no frame
    // whole), where it had any: whichever finds more of the candidate.
    let mut heards = vec![as_heard(heard)];
    heards.extend(crate::holes::closed(heard, rate).map(|c| as_heard(&c)));
    candidates
        .iter()
        .map(|texts| {
            let mut spoken: Vec<f64> = Vec::new();
            for t in texts {
                let said = crate::speak(t.as_ref(), 16000).unwrap_or_default();
                spoken.extend(said.into_iter().map(f64::from));
                spoken.extend([0.0; 3200]); // 200 ms between sentences
            }
            if spoken.len() / 16000 > 2 * HEARD_MOST_S {
                return Likeness::default();
            }
            let c = frames(&spoken, HOP / SUB);
            heards
                .iter_mut()
                .map(|h| compare(h, &c))
                .fold(
                    Likeness::default(),
                    |a, b| if b.found > a.found { b } else { a },
                )
        })
        .collect()
}

/// How much of the candidate `c` the heard frames `h` hold.
fn compare(h: &mut Frames, c: &Frames) -> Likeness {
    let loud_heard = h.loud.iter().filter(|l| **l).count();
    let loud_c = c.loud.iter().filter(|l| **l).count() / SUB;
    // A short stretch's mean is its few syllables' more than the channel's colour: it
    // leans on the candidate's, as much as PRIOR frames of its own would.
    let mut mean = h.mean;
    for (m, q) in mean.iter_mut().zip(&c.mean) {
        *m = (*m * h.count + q * PRIOR) / (h.count + PRIOR);
    }
    h.shaped(&mean);
    let matched = align(h, c) as f64;
    Likeness {
        share: (matched / loud_heard.max(1) as f64).min(1.0),
        found: (matched / loud_c.max(1) as f64).min(1.0),
        found_s: matched * HOP as f64 / front::FS,
    }
}

/// Audio as frames: each loud one's spectral shape (band levels less their mean, unit
/// length), and whether it is loud.
struct Frames {
    shape: Vec<[f32; BANDS]>,
    loud: Vec<bool>,
    bands: Vec<[f64; BANDS]>,
    mean: [f64; BANDS],
    count: f64,
}

impl Frames {
    /// The shapes again with `mean` taken out.
    fn shaped(&mut self, mean: &[f64; BANDS]) {
        self.shape = self
            .bands
            .iter()
            .map(|db| {
                let mut d = *db;
                d.iter_mut().zip(mean).for_each(|(x, m)| *x -= m);
                unit(&d)
            })
            .collect();
    }
}

fn frames(y: &[f64], hop: usize) -> Frames {
    let n = if y.len() < WIN {
        0
    } else {
        (y.len() - WIN) / hop + 1
    };
    let hann = front::hann(WIN);
    let edges: Vec<usize> = (0..=BANDS)
        .map(|b| {
            let f = 150.0 * (3400.0f64 / 150.0).powf(b as f64 / BANDS as f64);
            (f * NFFT as f64 / front::FS).round() as usize
        })
        .collect();
    let fft = front::real_fft(NFFT);
    let (mut buf, mut spec, mut scratch) = (
        fft.make_input_vec(),
        fft.make_output_vec(),
        fft.make_scratch_vec(),
    );
    let mut power = Vec::with_capacity(n);
    for i in 0..n {
        buf.fill(0.0);
        for (k, w) in hann.iter().enumerate() {
            buf[k] = y[i * hop + k] * w;
        }
        if fft
            .process_with_scratch(&mut buf, &mut spec, &mut scratch)
            .is_err()
        {
            break; // the buffers are the plan's own: it cannot refuse them
        }
        let mut e = [0f64; BANDS];
        for (b, d) in e.iter_mut().enumerate() {
            *d = spec[edges[b]..edges[b + 1].max(edges[b] + 1)]
                .iter()
                .map(|c| c.norm_sqr())
                .sum();
        }
        power.push(e);
    }
    let mut levels = Vec::with_capacity(n);
    let mut bands = Vec::with_capacity(n);
    for e in &power {
        let mut db = [0f64; BANDS];
        for (d, p) in db.iter_mut().zip(e) {
            *d = 10.0 * (p + 1e-12).log10();
        }
        let total: f64 = db.iter().map(|d| 10f64.powf(d / 10.0)).sum();
        levels.push(10.0 * (total + 1e-12).log10());
        bands.push(db);
    }
    let top = front::percentile(&levels, 98.0);
    let loud: Vec<bool> = levels.iter().map(|l| *l > top - LOUD_DB).collect();
    // The loud frames' mean levels taken out: the voice's tilt and the channel's colour,
    // which every frame shares, would make every vowel alike.
    let mut mean = [0f64; BANDS];
    let count = loud.iter().filter(|l| **l).count().max(1) as f64;
    for (db, _) in bands.iter().zip(&loud).filter(|(_, l)| **l) {
        for (m, d) in mean.iter_mut().zip(db) {
            *m += d / count;
        }
    }
    let mut f = Frames {
        shape: Vec::new(),
        loud,
        bands,
        mean,
        count,
    };
    f.shaped(&mean);
    f
}

/// Band levels less their mean, scaled to unit length.
fn unit(db: &[f64; BANDS]) -> [f32; BANDS] {
    let mean = db.iter().sum::<f64>() / BANDS as f64;
    let norm = db.iter().map(|d| (d - mean).powi(2)).sum::<f64>().sqrt();
    let mut out = [0f32; BANDS];
    for (o, d) in out.iter_mut().zip(db) {
        *o = if norm > 0.0 {
            ((d - mean) / norm) as f32
        } else {
            0.0
        };
    }
    out
}

/// How much heard frame `a` and candidate frame `b` say they are one sound: 1 for the same
/// shape, 0 at [`ALIKE`], less below; a loud frame against a quiet one, -1; two quiet
/// ones, 0 (a pause neither makes nor breaks a run).
fn alike(h: &Frames, i: usize, c: &Frames, j: usize) -> f64 {
    match (h.loud[i], c.loud[j]) {
        (true, true) => {
            let d: f32 = h.shape[i].iter().zip(&c.shape[j]).map(|(x, y)| x * y).sum();
            ((f64::from(d) - ALIKE) / (1.0 - ALIKE)).max(-2.0)
        }
        (false, false) => 0.0,
        _ => -1.0,
    }
}

/// A path's score and the loud heard frames it matched.
#[derive(Clone, Copy)]
struct Path(f64, u32);

const NONE: Path = Path(f64::NEG_INFINITY, 0);

fn best(a: Path, b: Path) -> Path {
    if b.0 > a.0 {
        b
    } else {
        a
    }
}

/// The loud heard frames the candidate's best alignment matches: heard frames taken in
/// order, each matched to the candidate's next frame (in a run) or skipped for free;
/// the candidate's frames skipped at [`SKIP`] each, but for its end (a reply cut short
/// is free to stop anywhere). A run begun where the candidate's last run ended (its audio
/// went on after another's piece) costs [`RESUME`]; one begun anywhere else, [`OPEN`].
fn align(h: &Frames, c: &Frames) -> u32 {
    let m = c.loud.len();
    // Per candidate position p (its sub-frames taken): the best path that matched heard
    // frame i to sub-frame p-1 (run); that skipped heard frames since its last run
    // (held); that skipped the candidate's sub-frames since (moved).
    let mut run = vec![NONE; m + 1];
    let mut held = vec![NONE; m + 1];
    let step = SKIP / SUB as f64;
    let mut moved: Vec<Path> = (0..=m).map(|p| Path(-step * p as f64, 0)).collect();
    let (mut nrun, mut nheld, mut nmoved) = (vec![NONE; m + 1], vec![NONE; m + 1], moved.clone());
    let mut end = Path(0.0, 0);
    for i in 0..h.loud.len() {
        for (n, (r, h)) in nheld.iter_mut().zip(run.iter().zip(&held)) {
            *n = best(*r, *h);
        }
        nmoved.copy_from_slice(&moved);
        for p in 1..=m {
            let mut from = Path(moved[p - 1].0 - OPEN, moved[p - 1].1);
            if p > SUB {
                from = best(from, run[p - SUB]);
                // Resumed where its last run ended, on any phase of the grid.
                let near = (p - SUB).saturating_sub(SUB / 2).max(1)..=(p - SUB + SUB / 2).min(m);
                for h in &held[near] {
                    from = best(from, Path(h.0 - RESUME, h.1));
                }
            }
            let s = alike(h, i, c, p - 1);
            nrun[p] = Path(from.0 + s, from.1 + u32::from(h.loud[i] && c.loud[p - 1]));
            let skip_own = best(nrun[p - 1], best(nheld[p - 1], nmoved[p - 1]));
            nmoved[p] = best(nmoved[p], Path(skip_own.0 - step, skip_own.1));
        }
        std::mem::swap(&mut run, &mut nrun);
        std::mem::swap(&mut held, &mut nheld);
        std::mem::swap(&mut moved, &mut nmoved);
        end = [&run, &held, &moved]
            .into_iter()
            .flatten()
            .fold(end, |a, b| best(a, *b));
    }
    end.1
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const A: &str = "Your order shipped yesterday and should arrive by Friday afternoon.";
    pub const B: &str = "The agent plans a careful answer with tools and memory, so we test again.";
    pub const C: &str = "Sure, I can help with that, and the rest can wait until tomorrow morning.";

    /// `a` and `b` interleaved `piece` samples at a time, as one output sends two streams.
    pub fn interleave(a: &[f32], b: &[f32], piece: usize) -> Vec<f32> {
        let mut out = Vec::new();
        let (mut x, mut y) = (a.chunks(piece), b.chunks(piece));
        loop {
            match (x.next(), y.next()) {
                (None, None) => return out,
                (p, q) => {
                    out.extend(p.unwrap_or_default());
                    out.extend(q.unwrap_or_default());
                }
            }
        }
    }

    #[test]
    fn a_reply_is_its_own_whole_and_not_anothers() {
        let a = crate::speak(A, 24000).unwrap();
        let l = likeness(&a, 24000, &[vec![A], vec![B], vec![C]]);
        assert!(l[0].share > 0.95 && l[0].found > 0.95, "{l:?}");
        assert!(l[1].found < 0.15 && l[2].found < 0.15, "{l:?}");
        // Stretched as the mock stretches a reply to its pace, and at a phone's rate.
        let slow = crate::speak_for(A, 8000, A.len() as f64 / 12.0).unwrap();
        let l = likeness(&slow, 8000, &[vec![A], vec![B]]);
        assert!(l[0].found > 0.8 && l[1].found < 0.15, "{l:?}");
    }

    /// Pieces of 100 ms (a Realtime delta), 250 ms and 40 ms (a transport's chunk),
    /// split anywhere on the heard audio's 10 ms grid.
    #[test]
    fn two_replies_interleaved_piece_by_piece_are_each_found_and_a_third_is_not() {
        let (a, b) = (
            crate::speak(A, 24000).unwrap(),
            crate::speak(B, 24000).unwrap(),
        );
        let cells = [
            (2400, 0.85, 0.3),
            (2437, 0.85, 0.3),
            (6000, 0.9, 0.3),
            (960, 0.45, 0.15),
        ];
        for (piece, least, share) in cells {
            let heard = interleave(&a, &b, piece);
            let l = likeness(&heard, 24000, &[vec![A], vec![B], vec![C]]);
            assert!(l[0].found > least && l[1].found > least, "{piece}: {l:?}");
            assert!(l[0].share > share && l[1].share > share, "{piece}: {l:?}");
            assert!(l[2].found < 0.15, "{piece}: {l:?}");
        }
    }

    /// Two replies interleaved are both heard; a stretch is the one reply that accounts for
    /// most of it, clear of the next; two that sound alike there (the same opening words),
    /// neither; a second of sound at least either way.
    #[test]
    fn heard_takes_every_whole_reply_and_one_stretch_clear_of_the_next() {
        let l = |share, found, found_s| Likeness {
            share,
            found,
            found_s,
        };
        let both = [l(0.5, 0.9, 4.0), l(0.45, 0.85, 3.5), l(0.1, 0.13, 1.2)];
        assert_eq!(heard(&both), [true, true, false]);
        let stretch = [l(0.1, 0.02, 0.2), l(0.95, 0.14, 1.4), l(0.46, 0.05, 0.5)];
        assert_eq!(heard(&stretch), [false, true, false]);
        let alike = [l(0.95, 0.14, 1.4), l(0.9, 0.2, 1.3)];
        assert_eq!(heard(&alike), [false, false]);
        let short = [l(0.99, 0.1, 0.8), l(0.2, 0.9, 0.6)];
        assert_eq!(heard(&short), [false, false]);
        // A reply heard whole: another sharing a stretch of its words is not heard.
        let own_whole = [l(0.95, 0.9, 4.0), l(0.7, 0.3, 2.0)];
        assert_eq!(heard(&own_whole), [true, false]);
        assert_eq!(heard(&[]), Vec::<bool>::new());
    }

    /// Audio that is not the mock's voice as it was spoken is no candidate's, whole or as a
    /// stretch, even with one candidate only (nothing to be clear of): the reply played at
    /// the wrong rate (a pipeline that mislabels 16 kHz as 24 kHz), and noise.
    #[test]
    fn the_voice_at_the_wrong_rate_and_noise_are_nobodys() {
        let a = crate::speak(A, 16000).unwrap();
        let mut x: u64 = 5;
        let noise: Vec<f32> = (0..64000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.4
            })
            .collect();
        for (what, heard_as) in [("fast", 24000), ("slow", 11025)] {
            let l = likeness(&a, heard_as, &[vec![A]]);
            assert_eq!(heard(&l), [false], "{what}: {l:?}");
        }
        let l = likeness(&noise, 16000, &[vec![A]]);
        assert_eq!(heard(&l), [false], "noise: {l:?}");
    }

    #[test]
    fn no_audio_and_no_speech_are_nobodys() {
        let tone: Vec<f32> = (0..48000).map(|i| (i as f32 * 0.05).sin() * 0.3).collect();
        for heard in [Vec::new(), vec![0.0; 16000], tone] {
            for l in likeness(&heard, 16000, &[vec![A], vec![B]]) {
                assert!(l.found < 0.05, "{l:?}");
            }
        }
        assert_eq!(likeness(&[0.0; 100], 16000, &[vec![""]])[0].found, 0.0);
    }
}
