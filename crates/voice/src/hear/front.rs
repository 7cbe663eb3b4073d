//! The decoder's front end at 16 kHz: band energies every 2 ms (a Hann window, its FFT,
//! the energy of the bins in each band, in dB), a median filter, a percentile, and the
//! 1 kHz low-pass the pitch is read from.

use realfft::{RealFftPlanner, RealToComplex};
use std::cell::RefCell;
use std::f64::consts::PI;
use std::sync::Arc;

/// The rate the decoder works at.
pub const FS: f64 = 16000.0;
/// The energy frames' hop.
pub const HOP: usize = 32;

/// The forward transform of `n` real samples: half the work of a complex one, planned once
/// a thread (a plan's twiddles cost more than a frame's transform).
pub fn real_fft(n: usize) -> Arc<dyn RealToComplex<f64>> {
    thread_local! {
        static PLANNER: RefCell<RealFftPlanner<f64>> = RefCell::new(RealFftPlanner::new());
    }
    PLANNER.with(|p| p.borrow_mut().plan_fft_forward(n))
}

/// The symmetric Hann window of `n` samples (docs/voice-encoding.md's "Hann(N)").
pub fn hann(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.5 - 0.5 * (2.0 * PI * i as f64 / (n - 1) as f64).cos())
        .collect()
}

/// Band energies (dB) over frames every 2 ms with a Hann window of `win_ms`: the frame
/// times (centres, seconds) and one track per band `(lo, hi)` Hz.
pub fn band_energy_db(y: &[f64], bands: &[(f64, f64)], win_ms: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let win = FS as usize * win_ms / 1000;
    let nfft = win.next_power_of_two();
    let padded;
    let y = if y.len() < win {
        padded = [y, &vec![0.0; win - y.len()]].concat();
        &padded[..]
    } else {
        y
    };
    let n = (y.len() - win) / HOP + 1;
    let hann = hann(win);
    let fft = real_fft(nfft);
    let bins: Vec<(usize, usize)> = bands
        .iter()
        .map(|&(lo, hi)| {
            let first = (0..=nfft / 2)
                .find(|&k| k as f64 * FS / nfft as f64 >= lo)
                .unwrap_or(nfft / 2 + 1);
            let end = (0..=nfft / 2)
                .find(|&k| k as f64 * FS / nfft as f64 >= hi)
                .unwrap_or(nfft / 2 + 1);
            (first, end)
        })
        .collect();
    let mut out = vec![Vec::with_capacity(n); bands.len()];
    let mut buf = fft.make_input_vec();
    let mut spectrum = fft.make_output_vec();
    let mut scratch = fft.make_scratch_vec();
    for i in 0..n {
        for (k, c) in buf.iter_mut().enumerate() {
            *c = if k < win {
                y[i * HOP + k] * hann[k]
            } else {
                0.0
            };
        }
        if fft
            .process_with_scratch(&mut buf, &mut spectrum, &mut scratch)
            .is_err()
        {
            break; // the buffers are the plan's own: it cannot refuse them
        }
        let buf = &spectrum;
        for (b, &(first, end)) in bins.iter().enumerate() {
            let e: f64 = buf[first..end].iter().map(|c| c.norm_sqr()).sum();
            out[b].push(10.0 * (e + 1e-12).log10());
        }
    }
    let times = (0..n)
        .map(|i| (i * HOP) as f64 / FS + win as f64 / 2.0 / FS)
        .collect();
    (times, out)
}

/// A median filter of width `w` (odd), the edges padded with their own values.
pub fn median_filter(x: &[f64], w: usize) -> Vec<f64> {
    let h = w / 2;
    (0..x.len())
        .map(|i| {
            let mut win: Vec<f64> = (0..w)
                .map(|k| x[(i + k).saturating_sub(h).min(x.len() - 1)])
                .collect();
            win.sort_by(f64::total_cmp);
            win[h]
        })
        .collect()
}

/// The `p`th percentile with linear interpolation (numpy's default).
pub fn percentile(x: &[f64], p: f64) -> f64 {
    if x.is_empty() {
        return f64::NEG_INFINITY;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let r = p / 100.0 * (v.len() - 1) as f64;
    let (i, f) = (r.floor() as usize, r - r.floor());
    if i + 1 < v.len() {
        v[i] + (v[i + 1] - v[i]) * f
    } else {
        v[i]
    }
}

/// The 4th-order Butterworth low-pass at 1 kHz (two biquads, direct form II transposed)
/// the pitch is read from.
pub fn lowpass(y: &[f64]) -> Vec<f64> {
    const SOS: [([f64; 3], [f64; 3]); 2] = [
        (
            [
                0.000_933_498_612_954_844_2,
                0.001_866_997_225_909_688_3,
                0.000_933_498_612_954_844_2,
            ],
            [1.0, -1.365_117_237_239_297_5, 0.477_592_250_072_517_1],
        ),
        (
            [1.0, 2.0, 1.0],
            [1.0, -1.611_727_096_457_434_8, 0.744_520_838_205_434_4],
        ),
    ];
    let mut x = y.to_vec();
    for (b, a) in SOS {
        let (mut z1, mut z2) = (0.0, 0.0);
        for v in x.iter_mut() {
            let out = b[0] * *v + z1;
            z1 = b[1] * *v - a[1] * out + z2;
            z2 = b[2] * *v - a[2] * out;
            *v = out;
        }
    }
    x
}
