//! A vowel's class from its harmonics: the vowel warped so every pitch period has 128
//! samples (harmonic k then falls on bin 3k of a 3-period FFT), the harmonic levels'
//! median over the chunks, matched (gain removed, floored 40 dB down) against the
//! synthesizer's own response for each class at each rate it may have been spoken at.

use super::front::FS;
use crate::dsp::{cascade_mag, glottal, radiation_mag};
use crate::synth::vowel_formants;

const P: usize = 128;
const CHUNK: usize = 3;
/// Harmonics read: k = 1..K.
const K: usize = P / 2 - 1;

/// Linear interpolation of (xs, ys) at x, held at the ends (numpy's interp).
fn interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    if x >= xs[xs.len() - 1] {
        return ys[ys.len() - 1];
    }
    let i = xs.partition_point(|v| *v <= x).max(1) - 1;
    let w = (x - xs[i]) / (xs[i + 1] - xs[i]);
    ys[i] + (ys[i + 1] - ys[i]) * w
}

/// The harmonic levels (dB, k = 1..K) of `y[a..b]` and its mean f0, given the f0 track
/// through the points (sample positions, Hz).
pub fn harmonics(
    y: &[f64],
    pts: &[f64],
    f0s: &[f64],
    a: usize,
    b: usize,
) -> Option<(Vec<f64>, f64)> {
    if b > y.len() || b <= a + 2 {
        return None;
    }
    let n: Vec<f64> = (a..b).map(|i| i as f64).collect();
    let mut ph = Vec::with_capacity(n.len());
    let mut acc = 0.0;
    for (i, &x) in n.iter().enumerate() {
        ph.push(acc);
        if i + 1 < n.len() {
            acc += interp(x, pts, f0s) / FS;
        }
    }
    let m = ph[ph.len() - 1].floor() as usize;
    if m < CHUNK {
        return None;
    }
    let pos: Vec<f64> = (0..m * P)
        .map(|k| interp(k as f64 / P as f64, &ph, &n))
        .collect();
    let xw: Vec<f64> = pos
        .iter()
        .map(|&p| {
            let i = (p.max(0.0) as usize).min(y.len() - 2);
            y[i] + (y[i + 1] - y[i]) * (p - i as f64)
        })
        .collect();
    let span = pos[pos.len() - 1] - pos[0];
    let f0m = m as f64 / ((span + span / (pos.len() - 1) as f64) / FS);
    let l = CHUNK * P;
    let hann = super::front::hann(l);
    let fft = super::front::real_fft(l);
    let (mut frame, mut buf) = (fft.make_input_vec(), fft.make_output_vec());
    let mut scratch = fft.make_scratch_vec();
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut st = 0;
    while st + l <= xw.len() {
        for (i, x) in frame.iter_mut().enumerate() {
            *x = xw[st + i] * hann[i];
        }
        fft.process_with_scratch(&mut frame, &mut buf, &mut scratch)
            .ok()?;
        rows.push(
            (1..=K)
                .map(|k| {
                    let e: f64 = buf[CHUNK * k - 1..CHUNK * k + 2]
                        .iter()
                        .map(|c| c.norm_sqr())
                        .sum();
                    10.0 * (e + 1e-20).log10()
                })
                .collect(),
        );
        st += P;
    }
    let levels = (0..K)
        .map(|k| {
            let mut col: Vec<f64> = rows.iter().map(|r| r[k]).collect();
            col.sort_by(f64::total_cmp);
            let h = col.len() / 2;
            if col.len() % 2 == 1 {
                col[h]
            } else {
                (col[h - 1] + col[h]) / 2.0
            }
        })
        .collect();
    Some((levels, f0m))
}

/// The vowel class whose template is nearest the measured levels at f0 `f0`.
pub fn classify(levels: &[f64], f0: f64) -> u8 {
    let used: Vec<usize> = (0..levels.len())
        .filter(|&k| {
            let f = (k + 1) as f64 * f0;
            (150.0..=3300.0).contains(&f)
        })
        .collect();
    if used.is_empty() {
        return 0;
    }
    let m: Vec<f64> = used.iter().map(|&k| levels[k]).collect();
    let mmax = m.iter().copied().fold(f64::MIN, f64::max);
    let m: Vec<f64> = m.iter().map(|v| v.max(mmax - 40.0)).collect();
    let g = glottal();
    let mut dist = [f64::INFINITY; 16];
    for tfs in [8000u32, 16000, 24000] {
        let r = tfs as f64;
        for (v, dv) in dist.iter_mut().enumerate() {
            let form = vowel_formants(v, tfs);
            let t: Vec<f64> = used
                .iter()
                .map(|&k| {
                    let f = ((k + 1) as f64 * f0).min(r / 2.0 - 1.0);
                    20.0 * (g[k + 1] * cascade_mag(&form, r, f) * radiation_mag(r, f) + 1e-20)
                        .log10()
                })
                .collect();
            let tmax = t.iter().copied().fold(f64::MIN, f64::max);
            let d: Vec<f64> = m
                .iter()
                .zip(&t)
                .map(|(a, b)| a - b.max(tmax - 40.0))
                .collect();
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            let dd = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d.len() as f64;
            *dv = dv.min(dd);
        }
    }
    (0..16).fold(0, |b, v| if dist[v] < dist[b] { v } else { b }) as u8
}
