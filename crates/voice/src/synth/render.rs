//! The sample loop: the glottal pulse (a new jitter and shimmer each period) and the
//! aspiration noise through the vocal-tract cascade, its first difference as radiation,
//! plus the frication noise through its own two resonators. Each resonator's coefficients
//! are recomputed at every block from that block's formant and bandwidth; its state runs
//! on. Amplitudes are interpolated per sample between block boundaries, f0 between block
//! centres.

use super::tracks::Tracks;
use crate::dsp::{noise, radiation_norm, rosenberg, Res, NOISE_LEN};
use std::sync::OnceLock;

/// The pulse tabulated over one period (linear between points): a cosine per sample is
/// most of the synthesizer's cost otherwise.
const PULSE_N: usize = 4096;

fn pulse() -> &'static [f64] {
    static P: OnceLock<Vec<f64>> = OnceLock::new();
    P.get_or_init(|| {
        (0..=PULSE_N)
            .map(|i| rosenberg(i as f64 / PULSE_N as f64))
            .collect()
    })
}

#[inline]
fn pulse_at(table: &[f64], ph: f64) -> f64 {
    let x = ph * PULSE_N as f64;
    let i = (x as usize).min(PULSE_N - 1);
    let w = x - i as f64;
    table[i] + (table[i + 1] - table[i]) * w
}

/// One resonator's running state.
#[derive(Clone, Copy, Default)]
struct Stage {
    r: Res,
    y1: f64,
    y2: f64,
}

impl Stage {
    #[inline]
    fn step(&mut self, x: f64) -> f64 {
        let y = self.r.a * x + self.r.b * self.y1 + self.r.c * self.y2;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }
}

/// The glottal source's running state.
struct Source {
    ph: f64,
    k: usize,
    jitter: f64,
    shimmer: f64,
}

impl Source {
    fn new() -> Source {
        let mut s = Source {
            ph: 0.0,
            k: 0,
            jitter: 1.0,
            shimmer: 1.0,
        };
        s.draw();
        s
    }

    fn draw(&mut self) {
        let u = noise();
        self.jitter = 1.0 + 0.010 * u[(2 * self.k) % NOISE_LEN] as f64;
        self.shimmer = 1.0 + 0.06 * u[(2 * self.k + 1) % NOISE_LEN] as f64;
    }

    /// The pulse at sample `n` whose phase step (f0 / fs) is `step`.
    #[inline]
    fn next(&mut self, n: usize, step: f64, table: &[f64]) -> f64 {
        if n > 0 {
            self.ph += self.jitter * step;
            if self.ph >= 1.0 {
                self.ph = (self.ph - 1.0).clamp(0.0, 0.999_999);
                self.k += 1;
                self.draw();
            }
        }
        self.shimmer * pulse_at(table, self.ph)
    }
}

pub(crate) fn render(tr: &Tracks, fs: u32) -> Vec<f32> {
    let bl = (fs / 500) as usize;
    let r = fs as f64;
    let nf = super::n_formants(fs);
    let norm = radiation_norm(r);
    let u = noise();
    let table = pulse();
    let mut out = Vec::with_capacity(tr.n * bl);
    let mut cascade = [Stage::default(); 4];
    let mut fric = [Stage::default(); 2];
    let mut src = Source::new();
    let mut prev_y = 0.0;
    let mut steps = vec![0.0; bl];
    for b in 0..tr.n {
        for (q, st) in cascade.iter_mut().enumerate().take(nf) {
            st.r = Res::new(tr.f[b][q], tr.b[b][q], r);
        }
        fric[0].r = Res::new(tr.fr[b][0], tr.fr[b][1], r);
        fric[1].r = Res::new(tr.fr[b][2], tr.fr[b][3], r);
        for (i, s) in steps.iter_mut().enumerate() {
            *s = f0_at(tr, b * bl + i, bl) / r;
        }
        let (av0, av1) = (tr.av[b], tr.av[b + 1]);
        let (ah0, ah1) = (tr.ah[b], tr.ah[b + 1]);
        let (af0, af1) = (tr.af[b], tr.af[b + 1]);
        let frication = af0 != 0.0 || af1 != 0.0 || fric[0].y1 != 0.0 || fric[1].y1 != 0.0;
        let voiced = av0 != 0.0 || av1 != 0.0;
        let inv = 1.0 / bl as f64;
        for (i, &step) in steps.iter().enumerate() {
            let n = b * bl + i;
            let w = i as f64 * inv;
            let nz = u[n & (NOISE_LEN - 1)] as f64;
            // The source runs on through silence (its phase and period count), but its
            // pulse is only read where it is heard.
            let g = src.next(n, step, table);
            let mut y = (ah0 + (ah1 - ah0) * w) * nz;
            if voiced {
                y += (av0 + (av1 - av0) * w) * g;
            }
            for st in cascade.iter_mut().take(nf) {
                y = st.step(y);
            }
            let rad = (y - prev_y) * norm;
            prev_y = y;
            let mut fr = 0.0;
            if frication {
                let x = fric[0].step((af0 + (af1 - af0) * w) * nz);
                fr = fric[1].step(x);
            }
            out.push((rad + fr) as f32);
        }
    }
    out
}

/// f0 at sample `n`: linear between block centres, held before the first and after
/// the last.
#[inline]
fn f0_at(tr: &Tracks, n: usize, bl: usize) -> f64 {
    let x = n as f64 / bl as f64 - 0.5;
    if x <= 0.0 {
        return tr.f0[0];
    }
    let i = x as usize;
    if i + 1 >= tr.n {
        return tr.f0[tr.n - 1];
    }
    let w = x - i as f64;
    tr.f0[i] + (tr.f0[i + 1] - tr.f0[i]) * w
}
