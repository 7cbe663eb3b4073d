//! Whether a replay kept the recording's shape: the two-sample Kolmogorov–Smirnov test
//! of a replayed distribution (turns per session, calls per turn, tokens per call)
//! against the recorded one — the largest gap between their empirical distribution
//! functions, and the asymptotic p-value of a gap that large if both came from one
//! distribution. On counts (ties) the test is conservative: it errs towards "same".

use serde::{Deserialize, Serialize};

/// The p-value below which the shapes are called different.
pub const ALPHA: f64 = 0.05;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The largest gap between the two empirical distribution functions.
    pub d: f64,
    pub p: f64,
    pub n_recorded: usize,
    pub n_replayed: usize,
    /// p ≥ ALPHA: no evidence the shapes differ.
    pub same: bool,
}

/// The two-sample KS test of `replayed` against `recorded`.
pub fn ks(recorded: &[f64], replayed: &[f64]) -> Fit {
    let (mut a, mut b) = (recorded.to_vec(), replayed.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Fit {
            d: 0.0,
            p: 1.0,
            n_recorded: n,
            n_replayed: m,
            same: true,
        };
    }
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < n && j < m {
        let x = a[i].min(b[j]);
        while i < n && a[i] <= x {
            i += 1;
        }
        while j < m && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / n as f64 - j as f64 / m as f64).abs());
    }
    let ne = (n * m) as f64 / (n + m) as f64;
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    let p = kolmogorov_q(lambda);
    Fit {
        d: (d * 1e4).round() / 1e4,
        p: (p * 1e4).round() / 1e4,
        n_recorded: n,
        n_replayed: m,
        same: p >= ALPHA,
    }
}

/// Q(λ) = 2 Σ (−1)^(k−1) e^(−2k²λ²): the chance of a gap this large by luck.
fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 1e-3 {
        return 1.0;
    }
    let mut sum = 0.0;
    for k in 1..=100 {
        let k = k as f64;
        let term = (-2.0 * k * k * lambda * lambda).exp();
        sum += if k as u64 % 2 == 1 { term } else { -term };
        if term < 1e-12 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_samples_agree_and_shifted_ones_do_not() {
        let a: Vec<f64> = (0..200).map(|i| (i % 20) as f64).collect();
        let same = ks(&a, &a);
        assert_eq!((same.d, same.same), (0.0, true));
        let shifted: Vec<f64> = a.iter().map(|x| x + 8.0).collect();
        let f = ks(&a, &shifted);
        assert!(!f.same && f.d >= 0.4, "{f:?}");
        // A textbook value: D = 0.5 with n = m = 20 gives p ≈ 0.0098.
        let x: Vec<f64> = (0..20).map(f64::from).collect();
        let y: Vec<f64> = (10..30).map(f64::from).collect();
        let f = ks(&x, &y);
        assert_eq!(f.d, 0.5);
        assert!((f.p - 0.0098).abs() < 0.004, "{f:?}");
    }
}
