//! A vowel's pitch: f0 at ten points by normalised cross-correlation of the low-passed
//! signal (an octave error guarded against), then the contour shape (rise, fall, peak,
//! dip) and the offset that fit them best, with up to two stray points dropped.

use super::front::FS;
use crate::synth::{contour, VOWEL_MS};

/// f0 (Hz) and the correlation's peak at sample `centre` of the low-passed signal.
pub fn f0_at(y: &[f64], centre: f64) -> Option<(f64, f64)> {
    let w = 320usize;
    let (lmin, lmax) = ((FS / 175.0) as usize, (FS / 75.0) as usize + 1);
    let s = centre as isize - (w / 2) as isize;
    if s < 0 || s as usize + w + lmax + 1 > y.len() {
        return None;
    }
    let s = s as usize;
    let a = &y[s..s + w];
    let ea = dot(a, a) + 1e-12;
    let lags: Vec<usize> = (lmin..lmax + 2).collect();
    // The lagged window's energy slides along with it: one sample in, one out.
    let mut eb = dot(&y[s + lmin..s + lmin + w], &y[s + lmin..s + lmin + w]);
    let r: Vec<f64> = lags
        .iter()
        .map(|&l| {
            if l > lmin {
                let (out, inn) = (y[s + l - 1], y[s + l + w - 1]);
                eb += inn * inn - out * out;
            }
            let ab = dot(a, &y[s + l..s + l + w]);
            ab / (ea * (eb.max(0.0) + 1e-12)).sqrt()
        })
        .collect();
    let mut i = 1;
    for k in 1..r.len() - 1 {
        if r[k] > r[i] {
            i = k;
        }
    }
    // A shorter lag (an octave up) nearly as strong is the true period.
    for div in [2.0, 3.0] {
        let j = (lags[i] as f64 / div).round() as isize - lmin as isize;
        if j >= 1 && (j as usize) < r.len() - 1 {
            let j = j as usize;
            let jj = j - 1 + (0..3).fold(0, |m, k| if r[j - 1 + k] > r[j - 1 + m] { k } else { m });
            if jj >= 1
                && jj < r.len() - 1
                && r[jj] > 0.85 * r[i]
                && r[jj] >= r[jj - 1]
                && r[jj] >= r[jj + 1]
            {
                i = jj;
            }
        }
    }
    let den = r[i - 1] - 2.0 * r[i] + r[i + 1];
    let d = if den < 0.0 {
        0.5 * (r[i - 1] - r[i + 1]) / den
    } else {
        0.0
    };
    Some((FS / (lags[i] as f64 + d), r[i]))
}

/// The dot product of two equal slices, summed in eight lanes (which the compiler keeps in
/// vector registers: a single running sum cannot be reordered, and was most of hearing's
/// time).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            lanes[k] += x[k] * y[k];
        }
    }
    lanes.iter().sum::<f64>() + tail
}

/// Shifts of the contour tried, in ms (the onset's uncertainty).
const SHIFTS: [f64; 5] = [-8.0, -4.0, 0.0, 4.0, 8.0];

/// The best shape for these points (vowel times in [0, 1], f0 in Hz): its residual per
/// shape and the offset (semitones re 100 Hz) of the best.
fn classify(tt: &[f64], f0s: &[f64]) -> (u8, f64) {
    let s: Vec<f64> = f0s.iter().map(|f| 12.0 * (f / 100.0).log2()).collect();
    let mut best = (0u8, f64::INFINITY, 0.0);
    for p in 0..4u8 {
        for sh in SHIFTS {
            let d: Vec<f64> = tt
                .iter()
                .zip(&s)
                .map(|(t, s)| s - contour(p, t + sh / VOWEL_MS as f64))
                .collect();
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            let res: f64 = d.iter().map(|x| (x - mean).powi(2)).sum();
            if res < best.1 {
                best = (p, res, mean);
            }
        }
    }
    (best.0, best.2)
}

/// The contour of a vowel's f0 points: (shape, offset in semitones, which points were
/// kept), at most two strays more than a semitone off dropped.
pub fn fit(tt: &[f64], f0s: &[f64]) -> (u8, f64, Vec<bool>) {
    let mut keep = vec![true; f0s.len()];
    let kept = |keep: &[bool], x: &[f64]| -> Vec<f64> {
        x.iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(v, _)| *v)
            .collect()
    };
    for _ in 0..2 {
        let (k, _) = classify(&kept(&keep, tt), &kept(&keep, f0s));
        let mut best: Option<(f64, Vec<f64>)> = None;
        for sh in SHIFTS {
            let d: Vec<f64> = tt
                .iter()
                .zip(f0s)
                .map(|(t, f)| 12.0 * (f / 100.0).log2() - contour(k, t + sh / VOWEL_MS as f64))
                .collect();
            let dk = kept(&keep, &d);
            let mean = dk.iter().sum::<f64>() / dk.len() as f64;
            let dev: Vec<f64> = d.iter().map(|x| (x - mean).abs()).collect();
            let res: f64 = kept(&keep, &dev).iter().map(|x| x * x).sum();
            if best.as_ref().is_none_or(|b| res < b.0) {
                best = Some((res, dev));
            }
        }
        let dev = best.map(|b| b.1).unwrap_or_default();
        let worst = (0..dev.len())
            .filter(|&i| keep[i])
            .fold(None, |m: Option<usize>, i| match m {
                Some(j) if dev[j] >= dev[i] => Some(j),
                _ => Some(i),
            });
        let n_kept = keep.iter().filter(|k| **k).count();
        match worst {
            Some(w) if dev[w] > 1.0 && n_kept > 6 => keep[w] = false,
            _ => break,
        }
    }
    let (k, off) = classify(&kept(&keep, tt), &kept(&keep, f0s));
    (k, off, keep)
}
