//! Does a resource leak over a soak? From its series (seconds, value) during steady load,
//! after a warm-up is discarded:
//!
//! * the series is cut into 12 equal-time blocks and each block's **minimum** kept — the
//!   floor a resource returns to between bursts, so a sawtooth (allocate, free, allocate)
//!   is flat and only a floor that keeps rising counts;
//! * **Mann–Kendall** on the block minima says whether they trend (two-sided p, normal
//!   approximation with the variance for ties) and **Sen's slope** (the median of pairwise
//!   slopes) how fast;
//! * **OLS** on the same block minima gives a slope with a t-based 95 % interval (on the
//!   minima, not every sample: samples seconds apart are strongly autocorrelated, and an
//!   interval from hundreds of them would be far too narrow).
//!
//! The rule: **leak** when Mann–Kendall's p < 0.01, Sen's slope > 0, the OLS interval is
//! above zero, and the growth the slope makes over the load phase is at least
//! `min_growth` (so allocator noise and a cache settling are not a leak); **no leak** when
//! p ≥ 0.05 or the OLS interval's upper end over the load phase stays under `min_growth`;
//! **unknown** otherwise, or with fewer than 24 samples. Slopes are reported per hour and
//! per 1,000 sessions completed; the drain phase's return (how much of the growth went
//! away with no load) beside them.

use statrs::distribution::{ContinuousCDF, StudentsT};

pub use result::soak::{Leak, LeakReading, LeakRule, LeakVerdict, SoakAnalysis, SoakSample};

const BLOCKS: usize = LeakRule::BLOCKS;
const MIN_SAMPLES: usize = LeakRule::MIN_SAMPLES;

/// How to judge one resource.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Growth over the load phase below this is not a leak, whatever its significance.
    pub min_growth: f64,
}

/// OLS of y on x: (slope, intercept, standard error of the slope).
pub fn ols(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 3 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    Some((slope, intercept, (sse / (n - 2.0) / sxx).sqrt()))
}

/// Mann–Kendall trend test: (S, two-sided p), ties accounted for in the variance.
pub fn mann_kendall(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    let mut s = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            s += (v[j] - v[i]).signum() * ((v[j] - v[i]).abs() > 0.0) as i32 as f64;
        }
    }
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let j = (i..n).take_while(|&k| sorted[k] == sorted[i]).count();
        let t = j as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i += j;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    if var <= 0.0 {
        return (s, 1.0);
    }
    let z = if s > 0.0 {
        (s - 1.0) / var.sqrt()
    } else if s < 0.0 {
        (s + 1.0) / var.sqrt()
    } else {
        0.0
    };
    (s, crate::stats::two_sided_normal_p(z))
}

/// Sen's slope: the median of the slopes between every pair of points.
pub fn sen_slope(points: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            let dx = points[j].0 - points[i].0;
            if dx > 0.0 {
                slopes.push((points[j].1 - points[i].1) / dx);
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let n = slopes.len();
    Some(if n % 2 == 1 {
        slopes[n / 2]
    } else {
        (slopes[n / 2 - 1] + slopes[n / 2]) / 2.0
    })
}

/// The minimum of each of `BLOCKS` equal-time blocks, at the block's middle.
fn block_minima(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let (t0, t1) = (points[0].0, points[points.len() - 1].0);
    let width = (t1 - t0) / BLOCKS as f64;
    (0..BLOCKS)
        .filter_map(|b| {
            let (lo, hi) = (t0 + b as f64 * width, t0 + (b + 1) as f64 * width);
            points
                .iter()
                .filter(|p| p.0 >= lo && (p.0 < hi || b == BLOCKS - 1))
                .map(|p| p.1)
                .min_by(f64::total_cmp)
                .map(|m| ((lo + hi) / 2.0, m))
        })
        .collect()
}

/// The verdict on one resource. `load` is the series during load (seconds, value) with
/// the warm-up already discarded; `drain` the series after load stopped; `sessions_per_s`
/// the rate sessions completed at (for the per-1,000-sessions slope).
pub fn judge(
    resource: &str,
    load: &[(f64, f64)],
    drain: &[(f64, f64)],
    sessions_per_s: f64,
    rule: Rule,
) -> Leak {
    let mut out = Leak {
        resource: resource.to_string(),
        verdict: LeakVerdict::Unknown,
        reading: None,
        recorded_why: String::new(),
        samples: load.len(),
        sen_per_hour: None,
        sen_per_1000_sessions: None,
        ols_per_hour: None,
        ols_ci95_per_hour: None,
        mann_kendall_p: None,
        start: load.first().map(|p| p.1),
        end_of_load: load.last().map(|p| p.1),
        end_of_drain: drain.last().map(|p| p.1),
        drain_return: None,
    };
    if load.len() < MIN_SAMPLES {
        out.reading = Some(LeakReading::TooFewSamples {
            samples: load.len(),
            needed: MIN_SAMPLES,
        });
        return out;
    }
    let minima = block_minima(load);
    let values: Vec<f64> = minima.iter().map(|p| p.1).collect();
    let (_, p) = mann_kendall(&values);
    let sen = sen_slope(&minima).unwrap_or(0.0);
    // On the block minima too: samples seconds apart are far from independent, and an
    // interval from hundreds of them would be much too narrow.
    let Some((slope, _, se)) = ols(&minima) else {
        out.reading = Some(LeakReading::NoSpread);
        return out;
    };
    let df = (minima.len() - 2) as f64;
    let q = 1.0 - (1.0 - LeakRule::INTERVAL) / 2.0;
    let t = StudentsT::new(0.0, 1.0, df).map_or(1.96, |d| d.inverse_cdf(q));
    let (lo, hi) = (slope - t * se, slope + t * se);
    let span = load[load.len() - 1].0 - load[0].0;
    out.mann_kendall_p = Some(p);
    out.sen_per_hour = Some(sen * 3600.0);
    out.sen_per_1000_sessions = (sessions_per_s > 0.0).then(|| sen / sessions_per_s * 1000.0);
    out.ols_per_hour = Some(slope * 3600.0);
    out.ols_ci95_per_hour = Some([lo * 3600.0, hi * 3600.0]);
    if let (Some(start), Some(end), Some(after)) = (out.start, out.end_of_load, out.end_of_drain) {
        let grew = end - start;
        // A share of the growth only means something when there was growth that matters.
        out.drain_return = (grew >= rule.min_growth).then(|| (end - after) / grew);
    }
    let growth = sen * span;
    let floor = rule.min_growth;
    let (verdict, reading) = if p < LeakRule::LEAK_P && sen > 0.0 && lo > 0.0 && growth >= floor {
        (LeakVerdict::Leak, LeakReading::Rises { p, growth, floor })
    } else if p >= LeakRule::NO_LEAK_P {
        (LeakVerdict::NoLeak, LeakReading::NoTrend { p })
    } else if hi * span < floor {
        let upper = hi * span;
        (LeakVerdict::NoLeak, LeakReading::TooSmall { upper, floor })
    } else {
        (
            LeakVerdict::Unknown,
            LeakReading::Unclear { p, growth, floor },
        )
    };
    out.verdict = verdict;
    out.reading = Some(reading);
    out
}

/// How to read a resource of the leak rule (`LeakRule::FLOORS`) from a sample; None
/// for a name with no reader (a test checks every resource of the rule has one).
type Read = fn(&SoakSample) -> Option<f64>;
fn read(resource: &str) -> Option<Read> {
    let r: Read = match resource {
        "RSS" => |s| Some(s.rss_kb as f64),
        "cgroup memory" => |s| s.cgroup_kb.map(|k| k as f64),
        "threads" => |s| Some(s.threads as f64),
        "open files" => |s| Some(s.fds as f64),
        _ => return None,
    };
    Some(r)
}

/// A soak's series judged per resource, the first `warmup_s` seconds of the load phase
/// discarded (`words::soak` sums it up).
pub fn soak(series: &[SoakSample], warmup_s: f64) -> SoakAnalysis {
    let load: Vec<&SoakSample> = series
        .iter()
        .filter(|s| s.phase == "load" && s.t_s >= warmup_s)
        .collect();
    let drain: Vec<&SoakSample> = series.iter().filter(|s| s.phase == "drain").collect();
    let sessions_per_s = match (load.first(), load.last()) {
        (Some(a), Some(b)) if b.t_s > a.t_s => {
            (b.sessions_done as f64 - a.sessions_done as f64) / (b.t_s - a.t_s)
        }
        _ => 0.0,
    };
    let leaks: Vec<Leak> = LeakRule::FLOORS
        .iter()
        .filter_map(|r| {
            let read = read(r.resource)?;
            let pts = |s: &[&SoakSample]| -> Vec<(f64, f64)> {
                s.iter().filter_map(|v| Some((v.t_s, read(v)?))).collect()
            };
            let (l, d) = (pts(&load), pts(&drain));
            if l.is_empty() {
                return None;
            }
            let rule = Rule {
                min_growth: r.floor + r.share * l[0].1,
            };
            Some(judge(r.resource, &l, &d, sessions_per_s, rule))
        })
        .collect();
    SoakAnalysis {
        kind: "soak".into(),
        sessions_per_s,
        warmup_s,
        leaks,
        ..SoakAnalysis::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_of_the_rule_is_read() {
        for r in LeakRule::FLOORS {
            assert!(read(r.resource).is_some(), "{} has no reader", r.resource);
        }
        assert!(read("nothing").is_none());
    }

    /// A seeded wobble in [-1, 1].
    fn noise(i: usize) -> f64 {
        let x = (i as f64 * 12.9898).sin() * 43_758.545_3;
        2.0 * (x - x.floor()) - 1.0
    }

    fn series(n: usize, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| (i as f64 * 2.0, f(i as f64 * 2.0) + noise(i) * 300.0))
            .collect()
    }

    #[test]
    fn a_steady_leak_is_found_with_its_slope() {
        // 50 KB a second = 180 MB an hour, over 10 minutes, 2-s samples, ±300 KB noise.
        let load = series(300, |t| 100_000.0 + 50.0 * t);
        let l = judge("rss_kb", &load, &[], 10.0, Rule { min_growth: 2048.0 });
        assert_eq!(l.verdict, LeakVerdict::Leak, "{l:?}");
        let per_h = l.sen_per_hour.unwrap();
        assert!((per_h - 180_000.0).abs() < 0.05 * 180_000.0, "{per_h}");
        // 10 sessions a second: 5 KB a session, 5,000 KB per 1,000 sessions.
        assert!(
            (l.sen_per_1000_sessions.unwrap() - 5_000.0).abs() < 250.0,
            "{l:?}"
        );
        let [lo, hi] = l.ols_ci95_per_hour.unwrap();
        assert!(
            lo > 0.0 && (lo - 180_000.0).abs() < 9_000.0 && (hi - 180_000.0).abs() < 9_000.0,
            "{lo} {hi}"
        );
    }

    #[test]
    fn flat_and_sawtooth_series_are_not_leaks() {
        let flat = series(300, |_| 100_000.0);
        assert_eq!(
            judge("rss_kb", &flat, &[], 10.0, Rule { min_growth: 2048.0 }).verdict,
            LeakVerdict::NoLeak
        );
        // Allocate 20 MB over 30 s, free it, again: a sawtooth whose floor does not rise.
        let saw = series(300, |t| 100_000.0 + (t % 30.0) / 30.0 * 20_000.0);
        let l = judge("rss_kb", &saw, &[], 10.0, Rule { min_growth: 2048.0 });
        assert_eq!(l.verdict, LeakVerdict::NoLeak, "{l:?}");
    }

    #[test]
    fn a_rise_that_is_too_small_to_matter_is_not_a_leak() {
        // 1 MB over the whole soak against a 2 MB floor for what matters.
        let tiny = series(300, |t| 100_000.0 + t / 600.0 * 1024.0);
        assert_eq!(
            judge("rss_kb", &tiny, &[], 10.0, Rule { min_growth: 2048.0 }).verdict,
            LeakVerdict::NoLeak
        );
    }

    #[test]
    fn too_few_samples_is_unknown_and_the_drain_return_is_a_share() {
        let short = series(10, |t| t);
        assert_eq!(
            judge("threads", &short, &[], 1.0, Rule { min_growth: 2.0 }).verdict,
            LeakVerdict::Unknown
        );
        let load = series(300, |t| 100_000.0 + 50.0 * t);
        let end = load.last().unwrap().1;
        let drain = vec![(700.0, end - 0.75 * (end - load[0].1))];
        let l = judge("rss_kb", &load, &drain, 10.0, Rule { min_growth: 2048.0 });
        assert!((l.drain_return.unwrap() - 0.75).abs() < 1e-9, "{l:?}");
    }

    #[test]
    fn a_soak_series_is_judged_per_resource_after_the_warm_up() {
        // 2 sessions a second, 64 KB each leaked: RSS rises 128 KB a second; threads flat.
        let series: Vec<SoakSample> = (0..200)
            .map(|i| {
                let t = i as f64;
                SoakSample {
                    t_s: t,
                    phase: if i < 150 { "load" } else { "drain" }.into(),
                    rss_kb: (50_000.0 + 128.0 * t.min(150.0) + noise(i) * 100.0) as u64,
                    threads: 9,
                    fds: 20,
                    sessions_done: 2 * i.min(150) as u64,
                    ..SoakSample::default()
                }
            })
            .collect();
        let doc = soak(&series, 15.0);
        let leaks = &doc.leaks;
        assert_eq!(
            leaks.len(),
            3,
            "no cgroup series, no cgroup verdict: {doc:?}"
        );
        assert_eq!(leaks[0].verdict, LeakVerdict::Leak, "{doc:?}");
        let per_1000 = leaks[0].sen_per_1000_sessions.unwrap();
        assert!((per_1000 - 64_000.0).abs() < 0.05 * 64_000.0, "{per_1000}");
        assert_eq!(
            (leaks[1].verdict, leaks[2].verdict),
            (LeakVerdict::NoLeak, LeakVerdict::NoLeak)
        );
        let h = words::soak::headline(&doc);
        assert!(
            h.starts_with("LEAK in RSS: 6")
                && h.contains(" MB per 1,000 sessions, ")
                && h.contains("no leak in threads, open files"),
            "{h}"
        );
    }

    #[test]
    fn the_tests_agree_with_known_values() {
        assert!((crate::stats::two_sided_normal_p(1.959_964) - 0.05).abs() < 1e-6);
        let (s, p) = mann_kendall(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(s, 45.0);
        assert!(p < 1e-4, "{p}");
        // The median pairwise slope shrugs off one wild point.
        let pts = [(0.0, 0.0), (1.0, 2.0), (2.0, 4.0), (3.0, 6.0), (4.0, 100.0)];
        assert_eq!(sen_slope(&pts), Some(2.0));
        let (slope, intercept, _) = ols(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((slope - 2.0).abs() < 1e-12 && (intercept - 1.0).abs() < 1e-12);
    }
}
