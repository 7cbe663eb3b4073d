//! The decoder: audio at any rate back to the text it carries, or nothing. The audio is
//! brought to 16 kHz; the vowel nuclei are found and grouped into phrases; each syllable
//! is read as its consonant (the 60 ms before its vowel), its pitch class (register
//! against the phrase line, contour shape) and its vowel class (harmonics against the
//! synthesizer's own templates); the syllables after the preamble are unframed, the CRC
//! deciding. `all` reads several utterances one after another (a call's replies, each
//! sentence its own TTS request) by trying the frame between every pair of preambles.

mod front;
mod pitch;
mod segment;
mod vowel;

use crate::synth::{base_f0, Symbol, CONS_MS, PHRASE_SYL, PREAMBLE, VOWEL_MS};
use front::FS;
use segment::{ConsonantTracks, Nucleus};

/// A syllable as heard: its time (the vowel's onset, seconds) and its symbol (None when
/// it could not be read).
#[derive(Clone, Copy, Debug)]
struct Heard {
    on: f64,
    off: f64,
    symbol: Option<Symbol>,
}

/// A nucleus read: its consonant and its vowel (class, contour, pitch offset).
type Read = (Nucleus, Option<u8>, Option<(u8, u8, f64)>);

/// Every syllable in the audio (16 kHz), in time order, with its phrase position.
fn syllables(y: &[f64]) -> Vec<Vec<Heard>> {
    let nuc = segment::nuclei(y);
    let cons = ConsonantTracks::new(y);
    let ylp = front::lowpass(y);
    let gap = (CONS_MS.iter().max().copied().unwrap_or(64) + 100) as f64 / 1000.0;
    let mut groups: Vec<Vec<Read>> = Vec::new();
    let mut prev_off: Option<f64> = None;
    for n in nuc {
        if prev_off.is_none_or(|o| n.on - o > gap) {
            groups.push(Vec::new());
        }
        let c = cons.classify(&n);
        let v = read_vowel(y, &ylp, n.on * FS);
        if let Some(g) = groups.last_mut() {
            g.push((n, c, v));
        }
        prev_off = Some(n.off);
    }
    let many = groups.len() > 1;
    groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            // The first phrase may have lost syllables at its start (a cut preamble).
            let shift = if gi == 0 && many && g.len() < PHRASE_SYL {
                PHRASE_SYL - g.len()
            } else {
                0
            };
            g.iter()
                .enumerate()
                .map(|(i, (n, c, v))| {
                    let symbol = match (c, v) {
                        (Some(c), Some((vowel, shape, offset))) => {
                            let j = (i + shift).min(PHRASE_SYL - 1);
                            let reg = u8::from(*offset > 12.0 * (base_f0(j) / 100.0).log2());
                            Some((*c, *vowel, reg * 4 + shape))
                        }
                        _ => None,
                    };
                    Heard {
                        on: n.on,
                        off: n.off,
                        symbol,
                    }
                })
                .collect()
        })
        .collect()
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

/// The text in a run of syllables that starts with the preamble (or what is left of it).
fn message(syms: &[Option<Symbol>]) -> Option<String> {
    let mut order = Vec::new();
    if syms.len() > 1 && syms[1] == Some(PREAMBLE[1]) {
        order.push(2);
    }
    if syms.first() == Some(&Some(PREAMBLE[1])) {
        order.push(1);
    }
    for k in [2, 1, 0, 3] {
        if !order.contains(&k) {
            order.push(k);
        }
    }
    order.into_iter().find_map(|k| {
        let data: Option<Vec<Symbol>> = syms.get(k..)?.iter().copied().collect();
        crate::frame::unframe(&data?)
    })
}

/// The audio (mono, at `fs`) brought to the decoder's 16 kHz.
fn at_16k(samples: &[f32], fs: u32) -> Vec<f64> {
    let y: Vec<f32> = match fs {
        16000 => samples.to_vec(),
        _ => crate::pcm::resample(samples, fs, 16000),
    };
    y.into_iter().map(f64::from).collect()
}

/// The text one utterance carries, or None.
pub fn one(samples: &[f32], fs: u32) -> Option<String> {
    let y = at_16k(samples, fs);
    let syms: Vec<Option<Symbol>> = syllables(&y)
        .into_iter()
        .flatten()
        .map(|h| h.symbol)
        .collect();
    message(&syms)
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

/// Every utterance in the audio, in order: the syllables between one preamble and the
/// next (or the end) unframed; a run whose CRC fails is skipped.
pub fn all(samples: &[f32], fs: u32) -> Vec<Utterance> {
    let y = at_16k(samples, fs);
    let heard: Vec<Heard> = syllables(&y).into_iter().flatten().collect();
    // Where a preamble's second syllable is: a message's data follows it.
    let starts: Vec<usize> = (0..heard.len())
        .filter(|&i| heard[i].symbol == Some(PREAMBLE[1]))
        .collect();
    let mut out = Vec::new();
    let mut taken_to = 0;
    for (si, &s) in starts.iter().enumerate() {
        if s + 1 < taken_to {
            continue;
        }
        for e in ends(&starts, si, heard.len()) {
            let syms: Option<Vec<Symbol>> = heard[s + 1..e].iter().map(|h| h.symbol).collect();
            if let Some(text) = syms.and_then(|v| crate::frame::unframe(&v)) {
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
    if out.is_empty() {
        if let Some(text) = message(&heard.iter().map(|h| h.symbol).collect::<Vec<_>>()) {
            let (start_s, end_s) = (
                heard.first().map_or(0.0, |h| h.on),
                heard.last().map_or(0.0, |h| h.off),
            );
            out.push(Utterance {
                text,
                start_s,
                end_s,
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
