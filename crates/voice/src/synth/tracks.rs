//! The control tracks of an utterance, per 2 ms block: formants and bandwidths of the
//! cascade, the frication resonators, f0; and at each block boundary the amplitudes of
//! voicing, aspiration and frication (linear within a block). Built syllable by
//! syllable: the consonant (its noise, murmur or closure and burst), the glide into it,
//! the vowel's formant transition, pitch contour and voicing envelope, the phrase pause.

use super::{
    gains, pitch_st, Layout, Planned, BLOCK_MS, CONS_MS, F_RES, LEVEL, M_FORMANTS, SH_RES,
    T_BURST_RES, VOWELS, VOWEL_BW, VOWEL_MS,
};
use crate::dsp::db;
use std::f64::consts::PI;

/// Per block: `f`/`b` the cascade (4 each), `fr` the frication pair (F1, B1, F2, B2),
/// `f0`; per boundary (one more): `av`, `ah`, `af`.
pub(crate) struct Tracks {
    pub n: usize,
    pub f: Vec<[f64; 4]>,
    pub b: Vec<[f64; 4]>,
    pub fr: Vec<[f64; 4]>,
    pub f0: Vec<f64>,
    pub av: Vec<f64>,
    pub ah: Vec<f64>,
    pub af: Vec<f64>,
}

/// Milliseconds as blocks.
fn ms(t: u32) -> usize {
    (t / BLOCK_MS) as usize
}

/// A linear ramp of the boundary values `arr[b0..=b1]` from `v0` to `v1`.
fn ramp(arr: &mut [f64], b0: usize, b1: usize, v0: f64, v1: f64) {
    if b1 <= b0 {
        return;
    }
    for (i, x) in arr[b0..=b1].iter_mut().enumerate() {
        *x = v0 + (v1 - v0) * i as f64 / (b1 - b0) as f64;
    }
}

/// A raised-cosine ramp of `arr[b0..=b1]` from `v0` to `v1`.
fn rc(arr: &mut [f64], b0: usize, b1: usize, v0: f64, v1: f64) {
    if b1 <= b0 {
        return;
    }
    for (i, x) in arr[b0..=b1].iter_mut().enumerate() {
        let w = 0.5 - 0.5 * (PI * i as f64 / (b1 - b0) as f64).cos();
        *x = v0 + (v1 - v0) * w;
    }
}

fn fill(arr: &mut [f64], b0: usize, b1: usize, v: f64) {
    for x in &mut arr[b0..b1] {
        *x = v;
    }
}

fn pair(r: &[(f64, f64); 2]) -> [f64; 4] {
    [r[0].0, r[0].1, r[1].0, r[1].1]
}

/// Where each consonant's formants start from (F1-F3).
const LOCUS: [[f64; 3]; 4] = [
    [300.0, 1900.0, 2600.0],
    [300.0, 1000.0, 2300.0],
    [250.0, 1100.0, 2300.0],
    [300.0, 1800.0, 2700.0],
];

pub(crate) fn build(plan: &[Planned], fs: u32, layout: Layout) -> Tracks {
    let total = super::planned_ms(plan, layout);
    let n = ms(total) + 1;
    let mut tr = Tracks {
        n,
        f: vec![[0.0; 4]; n],
        b: vec![VOWEL_BW; n],
        fr: vec![pair(&SH_RES); n],
        f0: vec![super::F0_TOP; n],
        av: vec![0.0; n + 1],
        ah: vec![0.0; n + 1],
        af: vec![0.0; n + 1],
    };
    let mut t = 0usize;
    for s in plan {
        t = syllable(&mut tr, s, t, fs, layout);
    }
    let last = t.max(1) - 1;
    for i in t..n {
        tr.f[i] = tr.f[last];
        tr.f0[i] = tr.f0[last];
    }
    tr
}

/// One syllable from block `t`; the block after it (and its pause).
fn syllable(tr: &mut Tracks, s: &Planned, t: usize, fs: u32, layout: Layout) -> usize {
    let g = gains(fs);
    let (c, v) = (s.c as usize, s.v as usize);
    let tgt = VOWELS[v];
    let gv = LEVEL * g.vowel[v];
    let gn = LEVEL * g.aspiration[v];
    let mut start = tgt;
    for k in 0..3 {
        start[k] = tgt[k] + 0.5 * (LOCUS[c][k] - tgt[k]);
    }
    let (c0, v0) = (t, t + ms(CONS_MS[c]));
    let vb = ms(VOWEL_MS);
    let f0_v0 = 100.0 * 2f64.powf(pitch_st(s.p, s.j, 0.0) / 12.0);
    for i in c0..v0 {
        tr.f[i] = start;
        tr.f0[i] = f0_v0;
    }
    consonant(tr, c, c0, v0, fs, gn);
    if c0 > 0 {
        // The vowel before glides into the consonant.
        let k = ms([20, 20, 6, 20][c]).min(v0 - c0);
        let (f0_, f1_) = (tr.f[c0 - 1], tr.f[c0 + k - 1]);
        let (b0_, b1_) = (tr.b[c0 - 1], tr.b[c0 + k - 1]);
        for i in 0..k {
            let w = 0.5 - 0.5 * (PI * (i as f64 + 0.5) / k as f64).cos();
            for q in 0..4 {
                tr.f[c0 + i][q] = f0_[q] + (f1_[q] - f0_[q]) * w;
                tr.b[c0 + i][q] = b0_[q] + (b1_[q] - b0_[q]) * w;
            }
        }
    }
    if c != 2 && tr.av[c0] > 0.0 {
        let a = tr.av[c0];
        ramp(&mut tr.av, c0, c0 + ms(6), a, 0.0);
    }
    vowel(tr, s, (v0, vb), (start, tgt), (gv, gn));
    let mut t = v0 + vb;
    if s.pause_after {
        let pb = if s.end {
            ms(layout.tail_ms)
        } else {
            ms(layout.pause_ms)
        };
        for i in t..t + pb {
            tr.f[i] = tgt;
            tr.f0[i] = tr.f0[t - 1];
        }
        t += pb;
    }
    t
}

/// The consonant over blocks `[c0, v0)`.
fn consonant(tr: &mut Tracks, c: usize, c0: usize, v0: usize, fs: u32, gn: f64) {
    let g = gains(fs);
    match c {
        0 | 1 => {
            let (level, gain, res, attack) = match c {
                0 => (db(-10.0), g.sh, &SH_RES, ms(20)),
                _ => (db(-12.0), g.f, &F_RES, ms(16)),
            };
            let a = LEVEL * level * gain;
            rc(&mut tr.af, c0, c0 + attack, 0.0, a);
            fill(&mut tr.af, c0 + attack, v0 - ms(10) + 1, a);
            rc(&mut tr.af, v0 - ms(10), v0, a, 0.0);
            for i in c0..v0 {
                tr.fr[i] = pair(res);
            }
        }
        2 => {
            for i in c0..v0 {
                for (q, (f, b)) in M_FORMANTS.iter().enumerate() {
                    tr.f[i][q] = *f;
                    tr.b[i][q] = *b;
                }
            }
            let a = LEVEL * db(-14.0) * g.murmur;
            fill(&mut tr.av, c0 + ms(6), v0 + 1, a);
            if tr.av[c0] == 0.0 {
                rc(&mut tr.av, c0, c0 + ms(14), 0.0, a);
            } else {
                let from = tr.av[c0];
                ramp(&mut tr.av, c0, c0 + ms(6), from, a);
            }
        }
        _ => {
            let (cl, bb) = (ms(40), ms(6));
            let a = LEVEL * db(-6.0) * g.burst;
            ramp(&mut tr.af, c0 + cl, c0 + cl + bb, a, 0.0);
            for i in c0 + cl..c0 + cl + bb {
                tr.fr[i] = pair(&T_BURST_RES);
            }
            let ah = gn * db(-16.0);
            fill(&mut tr.ah, c0 + cl + bb, v0 + 1, ah);
            ramp(&mut tr.ah, v0, v0 + ms(10), ah, 0.0);
        }
    }
}

/// The vowel over `vb` blocks from `v0`: pitch contour, formant transition, voicing
/// envelope, breathy aspiration.
fn vowel(
    tr: &mut Tracks,
    s: &Planned,
    (v0, vb): (usize, usize),
    (start, tgt): ([f64; 4], [f64; 4]),
    (gv, gn): (f64, f64),
) {
    let tb = ms(40) as f64;
    for i in 0..vb {
        let tt = (i as f64 + 0.5) / vb as f64;
        tr.f0[v0 + i] = 100.0 * 2f64.powf(pitch_st(s.p, s.j, tt) / 12.0);
        let w = 0.5 - 0.5 * (PI * ((i as f64 + 0.5) / tb).min(1.0)).cos();
        for q in 0..4 {
            tr.f[v0 + i][q] = start[q] + (tgt[q] - start[q]) * w;
        }
        tr.b[v0 + i] = VOWEL_BW;
    }
    let av0 = tr.av[v0];
    let attack = ms(16);
    rc(&mut tr.av, v0, v0 + attack, av0, gv);
    let dec = if s.pause_after { ms(40) } else { ms(30) };
    fill(&mut tr.av, v0 + attack, v0 + vb - dec + 1, gv);
    let end = if s.pause_after { 0.0 } else { gv * 0.25 };
    ramp(&mut tr.av, v0 + vb - dec, v0 + vb, gv, end);
    let asp = db(-30.0) * gn / gv;
    for b in v0..=v0 + vb {
        tr.ah[b] = tr.ah[b].max(tr.av[b] * asp);
    }
}
