//! The synthesizer: symbols (9 bits a syllable) spoken as a formant voice — a Rosenberg
//! pulse with jitter and shimmer through a cascade of Klatt resonators, consonants of
//! four kinds (`sh`, `f`, `m`, `t`), formant transitions between them, a pitch contour
//! per vowel on a falling phrase line — at 8, 16 or 24 kHz, every filter run at the
//! output rate itself. `tracks` plans the control values per 2 ms block; `render` turns
//! them into samples; `speak` runs the two. The layout (phrase pauses, trailing silence)
//! may be stretched so an utterance lasts as long as its text takes to say.

mod render;
mod speak;
mod tracks;

pub use speak::symbols;

use crate::dsp::{noise_gain, voiced_gain};

/// A syllable: consonant (0 sh, 1 f, 2 m, 3 t), vowel class (0..16), pitch class (0..8).
pub type Symbol = (u8, u8, u8);

/// Every 2 ms the control values change.
pub const BLOCK_MS: u32 = 2;
pub const VOWEL_MS: u32 = 110;
/// Consonant durations, by consonant.
pub const CONS_MS: [u32; 4] = [64, 60, 60, 64];
/// Syllables a phrase holds, and the pause between phrases.
pub const PHRASE_SYL: usize = 10;
pub const PAUSE_MS: u32 = 120;
/// Two syllables of fixed content before the data: what an upstream VAD may cut.
pub const PREAMBLE: [Symbol; 2] = [(1, 13, 6), (2, 5, 1)];
/// The RMS of a steady vowel (full scale 1.0).
pub const LEVEL: f64 = 0.09;

/// The 16 vowel classes: F1..F4 in Hz.
pub const VOWELS: [[f64; 4]; 16] = [
    [300.0, 850.0, 2400.0, 3300.0],
    [300.0, 1250.0, 2450.0, 3300.0],
    [300.0, 1700.0, 2550.0, 3300.0],
    [300.0, 2200.0, 2800.0, 3400.0],
    [430.0, 950.0, 2450.0, 3300.0],
    [430.0, 1300.0, 2450.0, 3300.0],
    [430.0, 1700.0, 2550.0, 3300.0],
    [430.0, 2100.0, 2750.0, 3400.0],
    [580.0, 1000.0, 2450.0, 3300.0],
    [580.0, 1350.0, 2450.0, 3300.0],
    [580.0, 1700.0, 2550.0, 3300.0],
    [580.0, 2000.0, 2700.0, 3400.0],
    [750.0, 1100.0, 2450.0, 3300.0],
    [750.0, 1400.0, 2450.0, 3300.0],
    [750.0, 1700.0, 2550.0, 3300.0],
    [750.0, 1950.0, 2650.0, 3400.0],
];
/// Vowel bandwidths B1..B4.
pub const VOWEL_BW: [f64; 4] = [70.0, 100.0, 150.0, 250.0];

/// Frication resonators (F, BW) of `sh`, `f` and the `t` burst.
pub const SH_RES: [(f64, f64); 2] = [(2600.0, 400.0), (3200.0, 600.0)];
pub const F_RES: [(f64, f64); 2] = [(1200.0, 2400.0), (3000.0, 2400.0)];
pub const T_BURST_RES: [(f64, f64); 2] = [(3000.0, 1200.0), (3000.0, 1200.0)];
/// The nasal murmur's formants.
pub const M_FORMANTS: [(f64, f64); 4] = [
    (250.0, 80.0),
    (1100.0, 250.0),
    (2250.0, 300.0),
    (3300.0, 400.0),
];

/// Pitch: the phrase line falls from `F0_TOP` to `F0_BOTTOM` over its syllables.
pub const F0_TOP: f64 = 122.0;
pub const F0_BOTTOM: f64 = 110.0;
pub const REGISTER_ST: f64 = 2.0;
pub const CONTOUR_ST: f64 = 1.2;

/// The cascade's length: F1-F4, but F1-F3 at 8 kHz (F4 sits too near Nyquist there).
pub fn n_formants(fs: u32) -> usize {
    if fs <= 8000 {
        3
    } else {
        4
    }
}

/// A vowel's formants with their bandwidths, as the cascade at `fs` takes them.
pub fn vowel_formants(v: usize, fs: u32) -> Vec<(f64, f64)> {
    VOWELS[v]
        .iter()
        .zip(VOWEL_BW)
        .map(|(&f, b)| (f, b))
        .take(n_formants(fs))
        .collect()
}

/// The base f0 of syllable `j` of a phrase (the declination line).
pub fn base_f0(j: usize) -> f64 {
    F0_TOP * (F0_BOTTOM / F0_TOP).powf(j as f64 / (PHRASE_SYL - 1) as f64)
}

/// The contour of shape `s` (0 rise, 1 fall, 2 peak, 3 dip) at vowel time `t`, in
/// semitones.
pub fn contour(s: u8, t: f64) -> f64 {
    use std::f64::consts::PI;
    CONTOUR_ST
        * match s {
            0 => -(PI * t).cos(),
            1 => (PI * t).cos(),
            2 => -(2.0 * PI * t).cos(),
            _ => (2.0 * PI * t).cos(),
        }
}

/// f0 in semitones re 100 Hz for pitch class `p` at phrase position `j`, vowel time `t`.
pub fn pitch_st(p: u8, j: usize, t: f64) -> f64 {
    let reg = if p >> 2 == 1 {
        REGISTER_ST
    } else {
        -REGISTER_ST
    };
    12.0 * (base_f0(j) / 100.0).log2() + reg + contour(p & 3, t)
}

/// How an utterance is laid out in time: the pause between phrases and the silence
/// after the last syllable (both stretched to make an utterance last longer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub pause_ms: u32,
    pub tail_ms: u32,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            pause_ms: PAUSE_MS,
            tail_ms: 0,
        }
    }
}

/// One syllable of the plan: its symbol, its place in its phrase, what follows it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Planned {
    pub c: u8,
    pub v: u8,
    pub p: u8,
    pub j: usize,
    pub pause_after: bool,
    pub end: bool,
}

/// The preamble and the symbols, cut into phrases.
pub(crate) fn plan(symbols: &[Symbol]) -> Vec<Planned> {
    let seq: Vec<Symbol> = PREAMBLE.iter().chain(symbols).copied().collect();
    let n = seq.len();
    seq.iter()
        .enumerate()
        .map(|(i, &(c, v, p))| {
            let j = i % PHRASE_SYL;
            let end = i == n - 1;
            Planned {
                c,
                v,
                p,
                j,
                pause_after: end || j == PHRASE_SYL - 1,
                end,
            }
        })
        .collect()
}

/// The length in ms of the symbols spoken with this layout (preamble included).
pub fn duration_ms(symbols: &[Symbol], layout: Layout) -> u32 {
    planned_ms(&plan(symbols), layout)
}

/// The length in ms of planned syllables: each consonant and vowel, the pause after a
/// phrase (none after the last), and the tail.
pub(crate) fn planned_ms(plan: &[Planned], layout: Layout) -> u32 {
    plan.iter()
        .map(|s| {
            let pause = if s.pause_after && !s.end {
                layout.pause_ms
            } else {
                0
            };
            CONS_MS[s.c as usize] + VOWEL_MS + pause
        })
        .sum::<u32>()
        + layout.tail_ms
}

/// The pauses between phrases an utterance of these symbols has.
pub fn pauses(symbols: &[Symbol]) -> usize {
    plan(symbols)
        .iter()
        .filter(|s| s.pause_after && !s.end)
        .count()
}

/// The gains a rate needs, computed once per rate.
pub(crate) struct Gains {
    /// Voiced gain per vowel class, and of the murmur.
    pub vowel: [f64; 16],
    pub murmur: f64,
    /// Aspiration noise gain per vowel (through the cascade, radiated).
    pub aspiration: [f64; 16],
    pub sh: f64,
    pub f: f64,
    pub burst: f64,
}

pub(crate) fn gains(fs: u32) -> &'static Gains {
    use std::sync::OnceLock;
    static G: [OnceLock<Gains>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match fs {
        8000 => 0,
        16000 => 1,
        _ => 2,
    };
    G[slot].get_or_init(|| {
        let r = fs as f64;
        let mut vowel = [0.0; 16];
        let mut aspiration = [0.0; 16];
        for v in 0..16 {
            let f = vowel_formants(v, fs);
            vowel[v] = voiced_gain(&f, r);
            aspiration[v] = noise_gain(&f, r, true);
        }
        Gains {
            vowel,
            murmur: voiced_gain(&M_FORMANTS[..n_formants(fs)], r),
            aspiration,
            sh: noise_gain(&SH_RES, r, false),
            f: noise_gain(&F_RES, r, false),
            burst: noise_gain(&T_BURST_RES, r, false),
        }
    })
}
