//! Where the syllables are: vowel nuclei found as peaks of the vowel-band energy (each the
//! run of frames within 8 dB of its peak, at least 60 ms long), grouped into phrases at
//! the pauses; and each nucleus's consonant told from the 60 ms before it — a nasal by
//! its low band, a stop by its silent closure, `sh` by its high band, else `f`.

use super::front::{band_energy_db, median_filter, percentile, FS, HOP};

/// A vowel nucleus: onset and offset (seconds), its peak vowel-band energy (dB).
#[derive(Clone, Copy, Debug)]
pub struct Nucleus {
    pub on: f64,
    pub off: f64,
    pub peak: f64,
}

/// The vowel nuclei in time order.
pub fn nuclei(y: &[f64]) -> Vec<Nucleus> {
    let (t, bands) = band_energy_db(y, &[(200.0, 2200.0)], 20);
    let ev = median_filter(&bands[0], 7);
    let r = percentile(&ev, 98.0);
    let k = 80 / 2; // ±80 ms in 2 ms frames
    let n = ev.len();
    let mut out: Vec<(usize, usize, f64)> = Vec::new();
    for i in 0..n {
        if ev[i] <= r - 16.0 {
            continue;
        }
        let (lo, hi) = (i.saturating_sub(k), (i + k + 1).min(n));
        if ev[lo..hi].iter().any(|&x| x > ev[i]) {
            continue;
        }
        let (mut a, mut b) = (i, i);
        while a > 0 && ev[a - 1] > ev[i] - 8.0 {
            a -= 1;
        }
        while b + 1 < n && ev[b + 1] > ev[i] - 8.0 {
            b += 1;
        }
        if out.last().is_some_and(|p| a <= p.1) {
            continue; // the same run as the peak before
        }
        if (b - a + 1) * 2 < 60 {
            continue;
        }
        out.push((a, b, ev[i]));
    }
    out.iter()
        .map(|&(a, b, p)| Nucleus {
            on: t[a] - 0.009,
            off: t[b],
            peak: p,
        })
        .collect()
}

/// The tracks the consonants are told from: bands LO, MID, HI (20 ms frames), and the
/// whole band with 10 ms frames for the closure, with its noise floor.
pub struct ConsonantTracks {
    t: Vec<f64>,
    lo: Vec<f64>,
    mid: Vec<f64>,
    hi: Vec<f64>,
    tc: Vec<f64>,
    total: Vec<f64>,
    floor: f64,
    quiet: f64,
}

impl ConsonantTracks {
    pub fn new(y: &[f64]) -> ConsonantTracks {
        let (t, b) = band_energy_db(y, &[(100.0, 450.0), (450.0, 2000.0), (2000.0, 3400.0)], 20);
        let (tc, tot) = band_energy_db(y, &[(100.0, 3400.0)], 10);
        let floor = percentile(&tot[0], 2.0);
        let quiet = (floor + 10.0).max(percentile(&tot[0], 98.0) - 40.0);
        let mut b = b.into_iter();
        ConsonantTracks {
            t,
            lo: b.next().unwrap_or_default(),
            mid: b.next().unwrap_or_default(),
            hi: b.next().unwrap_or_default(),
            tc,
            total: tot.into_iter().next().unwrap_or_default(),
            floor,
            quiet,
        }
    }

    /// The silences between `a` and `b` (seconds): frames (10 ms windows every 2 ms) 10 dB or
    /// less above the audio's floor, or 40 dB or more below its loudest. Their length in
    /// all, counting only runs longer than `min_s`, and the longest.
    pub fn silences(&self, a: f64, b: f64, min_s: f64) -> (f64, f64) {
        let frame = HOP as f64 / FS;
        let (mut run, mut sum, mut most) = (0.0f64, 0.0, 0.0f64);
        let (from, to) = (
            self.tc.partition_point(|t| *t < a),
            self.tc.partition_point(|t| *t <= b),
        );
        for e in &self.total[from..to.max(from)] {
            if *e <= self.quiet {
                run += frame;
                continue;
            }
            if run > min_s {
                sum += run;
            }
            most = most.max(run);
            run = 0.0;
        }
        if run > min_s {
            sum += run;
        }
        (sum, most.max(run))
    }

    /// The consonant before a nucleus: 0 sh, 1 f, 2 m, 3 t (None where the audio has
    /// none of the frames it needs).
    pub fn classify(&self, n: &Nucleus) -> Option<u8> {
        let closure = self
            .tc
            .iter()
            .zip(&self.total)
            .filter(|(t, _)| **t >= n.on - 0.046 && **t <= n.on - 0.038)
            .map(|(_, e)| *e)
            .fold(f64::INFINITY, f64::min);
        if !closure.is_finite() {
            return None;
        }
        let clos = closure - n.peak;
        let mean_db = |e: &[f64]| {
            let (sum, k) = self
                .t
                .iter()
                .zip(e)
                .filter(|(t, _)| **t >= n.on - 0.036 && **t <= n.on - 0.014)
                .fold((0.0, 0), |(s, k), (_, e)| (s + 10f64.powf(e / 10.0), k + 1));
            10.0 * (sum / k.max(1) as f64).log10()
        };
        let (l, m, h) = (mean_db(&self.lo), mean_db(&self.mid), mean_db(&self.hi));
        let thr = (-40f64).max(self.floor - n.peak + 6.0);
        Some(if l - m > 4.0 {
            2
        } else if clos < thr {
            3
        } else if h - m > 8.0 {
            0
        } else {
            1
        })
    }
}
