//! A/B statistics for `compare`: medians, the Mann–Whitney test, a bootstrap interval
//! of the ratio of medians, and the verdict with its significance level.

use result::compare::{MetricCall, MetricVerdict};
use result::StepResult;

/// The metrics compared; for every one of them lower is better.
pub const METRICS: &[&str] = &[
    "p50_session_ms",
    "p99_session_ms",
    "latency_inflation",
    "peak_rss_mb",
    "rss_kb_per_session",
    "peak_threads",
    "cpu_ms_per_turn",
];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Two-sided p-value of the Mann–Whitney (Wilcoxon rank-sum) test, by exact
/// permutation of the midranks when there are at most 200,000 splits, else by the
/// normal approximation.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let mut pooled: Vec<(f64, usize)> = a
        .iter()
        .map(|&x| (x, 0))
        .chain(b.iter().map(|&x| (x, 1)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = mid;
        }
        i = j + 1;
    }
    let m = b.len();
    let observed: f64 = pooled
        .iter()
        .zip(&ranks)
        .filter(|(p, _)| p.1 == 1)
        .map(|(_, r)| r)
        .sum();
    let expected = m as f64 * (n as f64 + 1.0) / 2.0;
    let dev = (observed - expected).abs() - 1e-9;
    let splits = (0..m).fold(1.0f64, |acc, k| acc * (n - k) as f64 / (k + 1) as f64);
    if splits <= 200_000.0 {
        // Every way to pick which m of the n ranks belong to the branch.
        let (mut extreme, mut total) = (0u64, 0u64);
        let mut pick: Vec<usize> = (0..m).collect();
        loop {
            let sum: f64 = pick.iter().map(|&k| ranks[k]).sum();
            total += 1;
            if (sum - expected).abs() >= dev {
                extreme += 1;
            }
            // Next combination.
            let mut k = m;
            while k > 0 && pick[k - 1] == n - m + k - 1 {
                k -= 1;
            }
            if k == 0 {
                break;
            }
            pick[k - 1] += 1;
            for t in k..m {
                pick[t] = pick[t - 1] + 1;
            }
        }
        extreme as f64 / total as f64
    } else {
        let na = a.len() as f64;
        let sd = (na * m as f64 * (n as f64 + 1.0) / 12.0).sqrt();
        let z = dev.max(0.0) / sd.max(1e-12);
        two_sided_normal_p(z)
    }
}

/// The two-sided tail of the standard normal beyond |z|.
pub fn two_sided_normal_p(z: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let n = Normal::standard();
    2.0 * (1.0 - n.cdf(z.abs()))
}

/// The significance level of one metric's test: 0.05 shared among the metrics compared
/// at a level (Bonferroni), so comparing a build with itself rarely cries wolf.
pub fn alpha() -> f64 {
    alpha_among(METRICS.len())
}

/// The same with `n` metrics compared (the fixed ones and one per named request).
pub fn alpha_among(n: usize) -> f64 {
    0.05 / n.max(1) as f64
}

/// The LLM provider's cost per session: compared when a side's RESULTs carry a cost.
pub const COST_METRIC: &str = "cost_per_session";

/// The compared metric of a named request: `requests.NAME.p50_ms`.
pub fn request_metric(name: &str) -> String {
    format!("requests.{name}.p50_ms")
}

/// A metric's value in a RESULT: one of `METRICS`, `cost_per_session`, or
/// `requests.NAME.p50_ms`.
pub fn metric_of(r: &StepResult, metric: &str) -> Option<f64> {
    if let Some(name) = metric
        .strip_prefix("requests.")
        .and_then(|m| m.strip_suffix(".p50_ms"))
    {
        return r.requests.get(name).and_then(|q| q.p50_ms);
    }
    match metric {
        "p50_session_ms" => r.p50_session_ms,
        "p99_session_ms" => r.p99_session_ms,
        "latency_inflation" => r.latency_inflation,
        "peak_rss_mb" => Some(r.peak_rss_mb),
        "rss_kb_per_session" => Some(r.rss_kb_per_session),
        "peak_threads" => Some(r.peak_threads as f64),
        "cpu_ms_per_turn" => r.cpu_ms_per_turn,
        COST_METRIC => r
            .cost
            .as_ref()
            .filter(|c| !c.by_model.is_empty())
            .map(|c| c.per_session),
        _ => None,
    }
}

/// Repetitions a side below which no split of the ranks can reach `alpha()`.
pub use result::compare::MIN_REPEAT;

/// Ratio of medians (branch / base) with a 95 % bootstrap interval, the Mann–Whitney
/// p-value, and a verdict: "worse"/"better" only when p < `alpha()` and the medians
/// differ by more than 1 %; with fewer than `MIN_REPEAT` values a side the test cannot
/// reach that level, and the verdict says so instead of guessing.
pub fn verdict(base: &[f64], branch: &[f64]) -> MetricVerdict {
    verdict_at(base, branch, alpha())
}

/// [`verdict`] at a given significance level.
pub fn verdict_at(base: &[f64], branch: &[f64], alpha: f64) -> MetricVerdict {
    if base.is_empty() || branch.is_empty() {
        return MetricVerdict {
            verdict: MetricCall::NoData,
            ..MetricVerdict::default()
        };
    }
    let (mut a, mut b) = (base.to_vec(), branch.to_vec());
    let (ma, mb) = (median(&mut a), median(&mut b));
    let ratio = if ma > 0.0 {
        mb / ma
    } else if mb > 0.0 {
        f64::INFINITY
    } else {
        1.0
    };
    if base.len() < MIN_REPEAT || branch.len() < MIN_REPEAT {
        return MetricVerdict {
            base: Some(ma),
            branch: Some(mb),
            ratio: Some(ratio),
            verdict: MetricCall::TooFew,
            ..MetricVerdict::default()
        };
    }
    // Seeded: the same samples always give the same interval.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5EED);
    let mut ratios = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let mut ra: Vec<f64> = (0..a.len()).map(|_| a[rng.gen_range(0..a.len())]).collect();
        let mut rb: Vec<f64> = (0..b.len()).map(|_| b[rng.gen_range(0..b.len())]).collect();
        let (x, y) = (median(&mut ra), median(&mut rb));
        ratios.push(if x > 0.0 {
            y / x
        } else if y > 0.0 {
            f64::INFINITY
        } else {
            1.0
        });
    }
    ratios.sort_by(f64::total_cmp);
    let (lo, hi) = (ratios[50], ratios[1949]);
    let p = mann_whitney_p(base, branch);
    let verdict = if p >= alpha || (ratio - 1.0).abs() <= 0.01 {
        MetricCall::NoChange
    } else if ratio > 1.0 {
        MetricCall::Worse
    } else {
        MetricCall::Better
    };
    MetricVerdict {
        base: Some(ma),
        branch: Some(mb),
        ratio: Some(ratio),
        ci95: Some([lo, hi]),
        p: Some(p),
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_need_significance_and_size() {
        let six = |v: [f64; 6]| v.to_vec();
        let base = six([10.0, 11.0, 10.5, 10.2, 10.8, 10.4]);
        let v = verdict(&base, &six([20.0, 21.0, 19.5, 20.5, 20.2, 20.1]));
        assert_eq!(v.verdict, MetricCall::Worse);
        let v = verdict(&base, &six([10.1, 10.9, 10.4, 10.6, 10.3, 10.7]));
        assert_eq!(v.verdict, MetricCall::NoChange);
        let v = verdict(&six([20.0, 21.0, 19.5, 20.2, 20.4, 20.9]), &base);
        assert_eq!(v.verdict, MetricCall::Better);
        // Separated but tiny: not a change worth reporting.
        let tiny = verdict(
            &six([100.0, 100.1, 100.2, 100.3, 100.1, 100.2]),
            &six([100.5, 100.6, 100.7, 100.8, 100.6, 100.7]),
        );
        assert_eq!(tiny.verdict, MetricCall::NoChange);
        assert_eq!(verdict(&[4.0; 6], &[4.0; 6]).verdict, MetricCall::NoChange);
        let few = verdict(&[1.0, 2.0, 3.0, 4.0, 5.0], &[7.0, 8.0, 9.0, 10.0, 11.0]);
        assert_eq!(few.verdict, MetricCall::TooFew);
    }

    #[test]
    fn mann_whitney_matches_known_values() {
        // Fully separated 4 vs 4: 2 of the 70 splits are as extreme.
        assert!(
            (mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]) - 2.0 / 70.0).abs()
                < 1e-12
        );
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        assert_eq!(mann_whitney_p(&[3.0; 5], &[3.0; 5]), 1.0);
        let big_a: Vec<f64> = (0..20).map(f64::from).collect();
        let big_b: Vec<f64> = (0..20).map(|x| f64::from(x) + 40.0).collect();
        assert!(mann_whitney_p(&big_a, &big_b) < 1e-6);
    }
}
