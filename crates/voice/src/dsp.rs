//! The pieces the synthesizer and the decoder share: the Klatt resonator and the
//! magnitude of a cascade of them, the radiation filter, the Rosenberg glottal pulse and
//! its harmonics, the deterministic noise table, and the gains that bring a voiced sound
//! or a noise to a known level. Everything is a pure function of its arguments.

use std::f64::consts::PI;
use std::sync::OnceLock;

/// A Klatt resonator's coefficients (unity gain at DC): `y = a·x + b·y1 + c·y2`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Res {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl Res {
    pub fn new(f: f64, bw: f64, fs: f64) -> Res {
        let r = (-PI * bw / fs).exp();
        let c = -r * r;
        let b = 2.0 * r * (2.0 * PI * f / fs).cos();
        Res {
            a: 1.0 - b - c,
            b,
            c,
        }
    }

    /// |H| at `freq` Hz.
    pub fn mag(self, freq: f64, fs: f64) -> f64 {
        let w = 2.0 * PI * freq / fs;
        // 1 − b·z⁻¹ − c·z⁻², z = e^{jw}.
        let re = 1.0 - self.b * w.cos() - self.c * (2.0 * w).cos();
        let im = self.b * w.sin() + self.c * (2.0 * w).sin();
        self.a.abs() / (re * re + im * im).sqrt()
    }
}

/// |H| of a cascade of resonators `(F, BW)` at `freq`.
pub fn cascade_mag(formants: &[(f64, f64)], fs: f64, freq: f64) -> f64 {
    formants
        .iter()
        .map(|&(f, bw)| Res::new(f, bw, fs).mag(freq, fs))
        .product()
}

/// The radiation filter's gain (a first difference), 1 at 1 kHz.
pub fn radiation_mag(fs: f64, freq: f64) -> f64 {
    (PI * freq / fs).sin() / (PI * 1000.0 / fs).sin()
}

/// The first difference's normaliser: `1 / (2 sin(π·1000/fs))`.
pub fn radiation_norm(fs: f64) -> f64 {
    1.0 / (2.0 * (PI * 1000.0 / fs).sin())
}

/// Opening and closing phases of the Rosenberg pulse, as shares of the period.
pub const ROS_OPEN: f64 = 0.40;
pub const ROS_CLOSE: f64 = 0.16;

/// The glottal flow at phase `ph` in [0, 1).
pub fn rosenberg(ph: f64) -> f64 {
    if ph < ROS_OPEN {
        0.5 * (1.0 - (PI * ph / ROS_OPEN).cos())
    } else if ph < ROS_OPEN + ROS_CLOSE {
        (0.5 * PI * (ph - ROS_OPEN) / ROS_CLOSE).cos()
    } else {
        0.0
    }
}

/// |G_k| for k = 0..=kmax: the Fourier magnitudes of one period of the pulse.
pub fn glottal_harmonics(kmax: usize) -> Vec<f64> {
    const N: usize = 4096;
    let g: Vec<f64> = (0..N).map(|i| rosenberg(i as f64 / N as f64)).collect();
    (0..=kmax)
        .map(|k| {
            let (mut re, mut im) = (0.0, 0.0);
            for (i, x) in g.iter().enumerate() {
                let w = 2.0 * PI * (k * i) as f64 / N as f64;
                re += x * w.cos();
                im -= x * w.sin();
            }
            (re * re + im * im).sqrt() / N as f64
        })
        .collect()
}

/// The harmonics up to 200, computed once.
pub fn glottal() -> &'static [f64] {
    static G: OnceLock<Vec<f64>> = OnceLock::new();
    G.get_or_init(|| glottal_harmonics(200))
}

/// Length and seed of the deterministic noise table.
pub const NOISE_LEN: usize = 65536;
const NOISE_SEED: u32 = 0x2545_F491;

/// Uniform values in [−1, 1) from xorshift32 (13, 17, 5), the same everywhere.
pub fn noise() -> &'static [f32] {
    static N: OnceLock<Vec<f32>> = OnceLock::new();
    N.get_or_init(|| {
        let mut s = NOISE_SEED;
        (0..NOISE_LEN)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s as f64 / 2_147_483_648.0 - 1.0) as f32
            })
            .collect()
    })
}

/// The f0 the level gains are computed at.
const REF_F0: f64 = 120.0;

/// The gain that makes a steady voiced sound through `formants` (radiated) have RMS 1:
/// Parseval over its harmonics at the reference f0.
pub fn voiced_gain(formants: &[(f64, f64)], fs: f64) -> f64 {
    let g = glottal();
    let mut sum = 0.0;
    for (k, gk) in g.iter().enumerate().skip(1) {
        let f = k as f64 * REF_F0;
        if f >= fs / 2.0 {
            break;
        }
        let m = gk * cascade_mag(formants, fs, f) * radiation_mag(fs, f);
        sum += m * m;
    }
    1.0 / (2.0 * sum).sqrt()
}

/// The gain that makes uniform white noise in [−1, 1) through `formants` (radiated or
/// not) have RMS 1: from the energy of 8,192 samples of the chain's impulse response.
pub fn noise_gain(formants: &[(f64, f64)], fs: f64, radiate: bool) -> f64 {
    const N: usize = 8192;
    let mut x = vec![0.0f64; N];
    x[0] = 1.0;
    for &(f, bw) in formants {
        let r = Res::new(f, bw, fs);
        let (mut y1, mut y2) = (0.0, 0.0);
        for v in x.iter_mut() {
            let y = r.a * *v + r.b * y1 + r.c * y2;
            y2 = y1;
            y1 = y;
            *v = y;
        }
    }
    if radiate {
        let norm = radiation_norm(fs);
        let mut prev = 0.0;
        for v in x.iter_mut() {
            let d = (*v - prev) * norm;
            prev = *v;
            *v = d;
        }
    }
    let e: f64 = x.iter().map(|v| v * v).sum();
    1.0 / (e / 3.0).sqrt()
}

/// Decibels as a linear gain.
pub fn db(x: f64) -> f64 {
    10f64.powf(x / 20.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pulse_harmonics_and_gains_are_the_specs() {
        let g = glottal_harmonics(4);
        for (got, want) in g[1..].iter().zip([0.236902, 0.106393, 0.033223, 0.024578]) {
            assert!((got - want).abs() < 2e-6, "{got} vs {want}");
        }
        // Vowel 0 (300, 850, 2400, 3300) at 16 kHz: 8.3894 (SPEC §4.4).
        let v0 = [
            (300.0, 70.0),
            (850.0, 100.0),
            (2400.0, 150.0),
            (3300.0, 250.0),
        ];
        assert!(
            (voiced_gain(&v0, 16000.0) - 8.3894).abs() < 1e-3,
            "{}",
            voiced_gain(&v0, 16000.0)
        );
        let v0_8k = &v0[..3];
        assert!((voiced_gain(v0_8k, 8000.0) - 8.2272).abs() < 1e-3);
        // The sh noise gain at 24 kHz: 0.3838.
        let sh = [(2600.0, 400.0), (3200.0, 600.0)];
        assert!(
            (noise_gain(&sh, 24000.0, false) - 0.3838).abs() < 1e-3,
            "{}",
            noise_gain(&sh, 24000.0, false)
        );
        assert_eq!(noise().len(), NOISE_LEN);
    }
}
