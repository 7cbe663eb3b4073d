//! The decoder: audio at any rate back to the text it carries, or nothing. The audio is
//! brought to 16 kHz; the vowel nuclei are found and placed on the voice's grid of
//! syllable slots (by their spacing, a pause's or a stall's silence taken out, so a
//! syllable that a gap or a lost packet took leaves its slot empty instead of shifting the
//! rest); each syllable is read as its consonant (the 60 ms before its vowel), its pitch
//! class (register against the phrase line, contour shape) and its vowel class (harmonics
//! against the synthesizer's own templates); the slots after the preamble are unframed,
//! the parity filling the empty ones and the CRC deciding. `all` reads several utterances
//! one after another (a call's replies, each sentence its own TTS request) by trying the
//! frame between every pair of preambles.

pub(crate) mod front;
mod pitch;
mod segment;
mod vowel;

use crate::synth::{base_f0, Symbol, CONS_MS, PHRASE_SYL, PREAMBLE, VOWEL_MS};
use front::FS;
use segment::{ConsonantTracks, Nucleus};

/// What was read of a syllable: its consonant, vowel class, contour shape and pitch
/// offset (semitones re 100 Hz; the register is read against the phrase's line).
#[derive(Clone, Copy, Debug)]
struct Read {
    c: u8,
    vowel: u8,
    shape: u8,
    offset: f64,
}

/// A syllable as heard: its vowel's onset and offset (seconds), its slot on the voice's
/// grid (counted from the first heard: a syllable a gap or a lost packet took leaves its
/// slot empty) and the time that slot was due, whether a pause came before it, and what
/// was read of it.
#[derive(Clone, Copy, Debug)]
struct Heard {
    on: f64,
    off: f64,
    slot: i64,
    grid: f64,
    after_pause: bool,
    read: Option<Read>,
}

impl Heard {
    /// Its symbol as the syllable at position `j` of an utterance (preamble included).
    fn symbol(&self, j: i64) -> Option<Symbol> {
        let r = self.read?;
        let line = base_f0(j.rem_euclid(PHRASE_SYL as i64) as usize);
        let reg = u8::from(r.offset > 12.0 * (line / 100.0).log2());
        Some((r.c, r.vowel, reg * 4 + r.shape))
    }
}

/// A syllable's length on the grid (a consonant's mean and a vowel), seconds.
fn syllable_s() -> f64 {
    (CONS_MS.iter().sum::<u32>() as f64 / CONS_MS.len() as f64 + VOWEL_MS as f64) / 1000.0
}

/// Silence longer than a syllable holds (a stop's closure, 40 ms at most) is a pause or a
/// stall, and takes no slot.
const HELD_S: f64 = 0.05;

/// Silence a pause between phrases holds at least (120-180 ms are spoken).
const PAUSE_S: f64 = 0.09;

/// Where syllable `n` sits on the grid after `p`, with `held` seconds of pauses and stalls
/// and `longest` the longest silence between them: its slot and that slot's time. Slots
/// are counted from where `p`'s slot should be, not from `p`'s own onset, so one onset a
/// gap made late moves no other slot; the second half of a vowel a stall split (both
/// halves within a vowel and the stall) shares its slot.
fn place(p: &Heard, n: &Nucleus, held: f64, longest: f64) -> (i64, f64) {
    let s = syllable_s();
    if n.off - p.on <= VOWEL_MS as f64 / 1000.0 + longest + 0.04 {
        return (p.slot, p.grid);
    }
    let steps = ((n.on - p.grid - held) / s).round().max(1.0);
    let due = p.grid + steps * s + held;
    // The grid follows the voice's own timing, half way at each syllable.
    (p.slot + steps as i64, due + 0.5 * (n.on - due))
}

/// Every syllable in the audio (16 kHz), in time order, on the grid.
fn syllables(y: &[f64]) -> Vec<Heard> {
    let cons = ConsonantTracks::new(y);
    let ylp = front::lowpass(y);
    let mut out: Vec<Heard> = Vec::new();
    for n in segment::nuclei(y) {
        let ((slot, grid), after_pause) = match out.last() {
            None => ((0, n.on), false),
            Some(p) => {
                let (held, longest) = cons.silences(p.off, n.on, HELD_S);
                (place(p, &n, held, longest), longest > PAUSE_S)
            }
        };
        let read = match (cons.classify(&n), read_vowel(y, &ylp, n.on * FS)) {
            (Some(c), Some((vowel, shape, offset))) => Some(Read {
                c,
                vowel,
                shape,
                offset,
            }),
            _ => None,
        };
        out.push(Heard {
            on: n.on,
            off: n.off,
            slot,
            grid,
            after_pause,
            read,
        });
    }
    out
}

/// A vowel at onset sample `v0`: its class, contour shape and pitch offset.
fn read_vowel(y: &[f64], ylp: &[f64], v0: f64) -> Option<(u8, u8, f64)> {
    let ms = FS / 1000.0;
    let (mut pts, mut f0s, mut tt) = (Vec::new(), Vec::new(), Vec::new());
    for m in (22..100).step_by(8) {
        if let Some((f, r)) = pitch::f0_at(ylp, v0 + m as f64 * ms) {
            if r > 0.5 {
                pts.push(v0 + m as f64 * ms);
                f0s.push(f);
                tt.push(m as f64 / VOWEL_MS as f64);
            }
        }
    }
    if f0s.len() < 4 {
        return None;
    }
    let (shape, offset, keep) = pitch::fit(&tt, &f0s);
    let pts: Vec<f64> = pts
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| *p)
        .collect();
    let f0s: Vec<f64> = f0s
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| *p)
        .collect();
    let (a, b) = ((v0 + 38.0 * ms) as usize, (v0 + 102.0 * ms) as usize);
    let (levels, f0m) = vowel::harmonics(y, &pts, &f0s, a, b)?;
    Some((vowel::classify(&levels, f0m), shape, offset))
}

/// The audio (mono, at `fs`) brought to the decoder's 16 kHz.
pub(crate) fn at_16k(samples: &[f32], fs: u32) -> Vec<f64> {
    let y: Vec<f32> = match fs {
        16000 => samples.to_vec(),
        _ => crate::pcm::resample(samples, fs, 16000),
    };
    y.into_iter().map(f64::from).collect()
}

/// The text one utterance carries, or None.
pub fn one(samples: &[f32], fs: u32) -> Option<String> {
    all(samples, fs).into_iter().next().map(|u| u.text)
}

/// An utterance heard in longer audio: its text and where it was (seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct Utterance {
    pub text: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// Where the message begun by preamble `si` may end: before every later preamble, then
/// at the end of the audio (`len` syllables); never before it begins (two replies spoken
/// over each other can put one preamble right after another).
fn ends(starts: &[usize], si: usize, len: usize) -> Vec<usize> {
    let s = starts[si];
    starts[si + 1..]
        .iter()
        .map(|&e| e.saturating_sub(1))
        .chain(std::iter::once(len))
        .filter(|&e| e > s + 1)
        .collect()
}

/// Syllables after the last heard that a message may have lost (a cut or a gap at its
/// end): their slots are tried empty.
const LOST_AT_END: i64 = 2;

/// Syllables of the preamble, before a message's data.
const PRE: i64 = PREAMBLE.len() as i64;

/// The text of the message whose utterance begins at slot `base` (its first preamble
/// syllable) and whose last syllable heard is the last of `heard`: each slot from its
/// first data syllable on, empty where nothing was heard.
fn message(heard: &[Heard], base: i64) -> Option<String> {
    let data = base + PRE;
    let len = (heard.last()?.slot - data + 1).max(0) as usize;
    let mut syms: Vec<Option<Symbol>> = vec![None; len];
    let mut seen = vec![false; len];
    for h in heard.iter().filter(|h| h.slot >= data) {
        let i = (h.slot - data) as usize;
        let read = h.symbol(h.slot - base);
        // A slot two parts of a split vowel share is read only where they agree.
        syms[i] = if seen[i] && syms[i] != read {
            None
        } else {
            read
        };
        seen[i] = true;
    }
    for _ in 0..=LOST_AT_END {
        if let Some(text) = crate::frame::unframe(&syms) {
            return Some(text);
        }
        syms.push(None);
    }
    None
}

/// Where an utterance whose preamble was not heard begins: the phrases after a pause
/// begin on a multiple of [`PHRASE_SYL`] slots, so the slot most of them agree on says
/// how many the start lost; then the preamble's second syllable, if heard first.
fn bases(heard: &[Heard]) -> Vec<i64> {
    let first = heard.first().map_or(0, |h| h.slot);
    let mut votes = [0usize; PHRASE_SYL];
    for h in heard.iter().filter(|h| h.after_pause) {
        votes[(h.slot - first).rem_euclid(PHRASE_SYL as i64) as usize] += 1;
    }
    let mut out = Vec::new();
    if let Some((r, _)) = votes
        .iter()
        .enumerate()
        .filter(|(_, v)| **v > 0)
        .max_by_key(|(_, v)| **v)
    {
        out.push(first + r as i64 - if r > 0 { PHRASE_SYL as i64 } else { 0 });
    }
    for b in [first - 1, first, first - 2] {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out
}

/// Every utterance in the audio, in order: the syllables between one preamble and the
/// next (or the end) unframed; a run the parity cannot mend is skipped. Audio where no
/// utterance was read that way (no preamble heard, or none that began one) is read as
/// one utterance that lost its start.
pub fn all(samples: &[f32], fs: u32) -> Vec<Utterance> {
    let y = at_16k(samples, fs);
    let heard = syllables(&y);
    // Where a preamble's second syllable is: a message's data follows it.
    let starts: Vec<usize> = (0..heard.len())
        .filter(|&i| heard[i].symbol(1) == Some(PREAMBLE[1]))
        .collect();
    let mut out = Vec::new();
    let mut taken_to = 0;
    for (si, &s) in starts.iter().enumerate() {
        if s + 1 < taken_to {
            continue;
        }
        for e in ends(&starts, si, heard.len()) {
            if let Some(text) = message(&heard[s..e], heard[s].slot - (PRE - 1)) {
                out.push(Utterance {
                    text,
                    start_s: heard[s.saturating_sub(1)].on,
                    end_s: heard[e - 1].off,
                });
                taken_to = e;
                break;
            }
        }
    }
    if out.is_empty() && !heard.is_empty() {
        if let Some(text) = bases(&heard).into_iter().find_map(|b| message(&heard, b)) {
            out.push(Utterance {
                text,
                start_s: heard[0].on,
                end_s: heard[heard.len() - 1].off,
            });
        }
    }
    out
}

#[cfg(test)]
mod ends_tests {
    #[test]
    fn a_preamble_right_after_another_gives_no_empty_message() {
        // Preambles' second syllables at 2 and 3 (two replies over each other), 9 heard.
        assert_eq!(super::ends(&[2, 3, 7], 0, 9), [6, 9]);
        assert_eq!(super::ends(&[2, 3, 7], 1, 9), [6, 9]);
        assert_eq!(super::ends(&[2, 3, 7], 2, 9), [9]);
        assert!(super::ends(&[8], 0, 9).is_empty());
    }
}
