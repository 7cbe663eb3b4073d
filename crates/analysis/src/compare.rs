//! A comparison's document from its samples: verdicts per level and metric, ceilings,
//! and the `--fail-on` gates that were breached.

use crate::stats::{alpha_among, metric_of, request_metric, verdict_at, COST_METRIC, METRICS};
use result::compare::{Breach, CompareLevel, CompareLine};
use result::{Outcome, StepResult};
use std::collections::BTreeMap;

/// A comparison summed up.
pub struct Summary {
    /// Per level: every metric's verdict and both sides' outcomes.
    pub levels: Vec<CompareLevel>,
    /// (base, branch): the highest level where every repetition was clean.
    pub ceiling: (Option<usize>, Option<usize>),
    /// The `--fail-on` gates breached.
    pub breaches: Vec<Breach>,
    /// Both sides' lines as ranges, with repetitions.
    pub line: Option<CompareLine>,
}

/// Both sides' lines as ranges over the repetitions (a level holds when its run was
/// clean), and whether they are apart: the one place a compare's line is read.
pub fn lines(levels_run: &[usize], samples: &[[Vec<StepResult>; 2]]) -> Option<CompareLine> {
    let side = |k: usize| {
        let runs: Vec<(usize, Vec<bool>)> = levels_run
            .iter()
            .zip(samples)
            .map(|(&l, s)| (l, s[k].iter().map(|r| r.outcome.is_ok()).collect()))
            .collect();
        crate::line::range(&runs)
    };
    let (base, branch) = (side(0)?, side(1)?);
    Some(CompareLine {
        base,
        branch,
        differ: crate::line::differ(base, branch),
    })
}

/// The metrics compared at a level: the fixed ones, the cost per session when either
/// side's RESULTs carry one, then the median latency of each named request they carry.
fn metric_names(samples: &[Vec<StepResult>; 2]) -> Vec<String> {
    let mut names: Vec<String> = METRICS.iter().map(|m| m.to_string()).collect();
    if samples
        .iter()
        .flatten()
        .any(|r| metric_of(r, COST_METRIC).is_some())
    {
        names.push(COST_METRIC.to_string());
    }
    let mut requests: Vec<String> = samples
        .iter()
        .flatten()
        .flat_map(|r| r.requests.keys())
        .map(|name| request_metric(name))
        .collect();
    requests.sort();
    requests.dedup();
    names.extend(requests);
    names
}

/// Per level: every metric's verdict, the outcomes of both sides; the ceiling of each
/// side (the highest level where every repetition was clean); and the gates breached.
pub fn summarise(
    levels_run: &[usize],
    samples: &[[Vec<StepResult>; 2]],
    fail_on: &[(String, f64)],
) -> Summary {
    let mut levels = Vec::new();
    let mut breaches = Vec::new();
    let mut gated: Vec<String> = Vec::new();
    for (li, &level) in levels_run.iter().enumerate() {
        let mut metrics = BTreeMap::new();
        let names = metric_names(&samples[li]);
        let alpha = alpha_among(names.len());
        let unit = result::words::Unit::of(&samples[li][0]);
        for m in &names {
            let vals = |side: usize| -> Vec<f64> {
                samples[li][side]
                    .iter()
                    .filter_map(|r| metric_of(r, m))
                    .collect()
            };
            let v = verdict_at(&vals(0), &vals(1), alpha);
            if let Some((_, limit)) = fail_on.iter().find(|(g, _)| g == m) {
                gated.push(m.clone());
                if !vals(0).is_empty() && vals(1).is_empty() {
                    // The worst regression: the branch never produced the figure at all.
                    breaches.push(Breach::Vanished {
                        level,
                        unit,
                        metric: m.clone(),
                    });
                }
                if let Some(r) = v.ratio.filter(|r| r.is_finite()) {
                    if r > 1.0 + limit + 1e-12 {
                        breaches.push(Breach::Grew {
                            level,
                            unit,
                            metric: m.clone(),
                            change: r - 1.0,
                            limit: *limit,
                        });
                    }
                }
            }
            metrics.insert(m.to_string(), v);
        }
        let outcomes =
            |side: usize| -> Vec<Outcome> { samples[li][side].iter().map(|r| r.outcome).collect() };
        levels.push(CompareLevel {
            concurrency: level,
            metrics,
            base_outcomes: outcomes(0),
            branch_outcomes: outcomes(1),
        });
    }
    // A gate on a figure no level had cannot pass silently (a misspelled request name).
    for (g, _) in fail_on.iter().filter(|(g, _)| g != "ceiling") {
        if !gated.contains(g) {
            breaches.push(Breach::NoFigure { metric: g.clone() });
        }
    }
    // Ceiling per side: the highest level where every repetition was clean.
    let ceiling = |side: usize| {
        levels_run
            .iter()
            .enumerate()
            .filter(|(li, _)| samples[*li][side].iter().all(|r| r.outcome.is_ok()))
            .map(|(_, &l)| l)
            .max()
    };
    let (cb, cr) = (ceiling(0), ceiling(1));
    let line = lines(levels_run, samples);
    if let (Some((_, limit)), Some(b), Some(r)) =
        (fail_on.iter().find(|(g, _)| g == "ceiling"), cb, cr)
    {
        // A lower ceiling is worse: the gate reads "may drop by at most"; with repetitions,
        // only when the two lines' ranges are apart (else it is within their spread).
        let apart = line.as_ref().is_none_or(|l| l.differ);
        if (r as f64) < b as f64 * (1.0 - limit) && apart {
            breaches.push(Breach::Ceiling { base: b, branch: r });
        }
    }
    Summary {
        levels,
        ceiling: (cb, cr),
        breaches,
        line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A RESULT whose `wait` request takes `wait_ms` at the median.
    fn sample(wait_ms: f64) -> StepResult {
        wait(3, Some(wait_ms), 0, Some(100.0))
    }

    fn wait(count: u64, ms: Option<f64>, errors: u64, session: Option<f64>) -> StepResult {
        let q = result::RequestLatency {
            count,
            p50_ms: ms,
            p99_ms: ms,
            errors,
        };
        StepResult {
            p50_session_ms: session,
            requests: [("wait".to_string(), q)].into(),
            ..StepResult::default()
        }
    }

    #[test]
    fn the_lines_of_both_sides_are_ranges_and_a_ceiling_gate_waits_for_them_to_part() {
        let ok = StepResult::default();
        let bad = StepResult {
            outcome: Outcome::Timeout,
            ..StepResult::default()
        };
        // Base: 8 clean twice, 16 once of two; branch: 8 clean once of two, 16 never.
        let samples = vec![
            [vec![ok.clone(), ok.clone()], vec![ok.clone(), ok.clone()]],
            [vec![ok.clone(), ok.clone()], vec![ok.clone(), bad.clone()]],
            [
                vec![ok.clone(), bad.clone()],
                vec![bad.clone(), bad.clone()],
            ],
        ];
        let levels = [4, 8, 16];
        let l = lines(&levels, &samples).unwrap();
        assert_eq!((l.base, l.branch, l.differ), ((8, 16), (4, 8), false));
        // Ceilings 8 and 4 would breach a 10 % gate, but the ranges overlap at 8.
        let gate = [("ceiling".to_string(), 0.1)];
        let s = summarise(&levels, &samples, &gate);
        assert_eq!(s.ceiling, (Some(8), Some(4)));
        assert!(s.breaches.is_empty(), "{:?}", s.breaches);
        // Branch failing at 8 every time: 4–4 against 8–16, apart, and the gate breaches.
        let mut worse = samples.clone();
        worse[1][1] = vec![bad.clone(), bad.clone()];
        let s = summarise(&levels, &worse, &gate);
        assert!(s.line.as_ref().unwrap().differ);
        assert_eq!(s.breaches, vec![Breach::Ceiling { base: 8, branch: 4 }]);
        // One run a level: no range, the ceiling gate as before.
        let once: Vec<[Vec<StepResult>; 2]> = samples
            .iter()
            .map(|[a, b]| [vec![a[0].clone()], vec![b[1].clone()]])
            .collect();
        assert!(lines(&levels, &once).is_none());
    }

    #[test]
    fn cost_per_session_is_compared_and_gated() {
        let priced = |per_session: f64| StepResult {
            cost: Some(result::Cost {
                per_session,
                by_model: [("m".to_string(), result::ModelTokens::default())].into(),
                ..Default::default()
            }),
            ..sample(100.0)
        };
        let base: Vec<StepResult> = (0..6).map(|_| priced(0.010)).collect();
        let branch: Vec<StepResult> = (0..6).map(|_| priced(0.012)).collect();
        let gate = vec![(COST_METRIC.to_string(), 0.10)];
        let s = summarise(&[4], &[[base.clone(), branch]], &gate);
        assert!((s.levels[0].metrics[COST_METRIC].ratio.unwrap() - 1.2).abs() < 1e-9);
        assert_eq!(s.breaches.len(), 1, "{:?}", s.breaches);
        assert!(
            matches!(&s.breaches[0], Breach::Grew { level: 4, metric, change, limit, .. }
                if metric == COST_METRIC && (change - 0.2).abs() < 1e-9 && *limit == 0.1),
            "{:?}",
            s.breaches
        );
        // Without prices there is nothing to gate, and the gate says so.
        let s = summarise(&[4], &[[vec![sample(1.0)], vec![sample(1.0)]]], &gate);
        assert_eq!(
            s.breaches,
            vec![Breach::NoFigure {
                metric: COST_METRIC.to_string()
            }]
        );
        assert!(summarise(&[4], &[[base.clone(), base]], &gate)
            .breaches
            .is_empty());
    }

    #[test]
    fn named_requests_are_compared_and_gated() {
        let base: Vec<StepResult> = (0..6).map(|i| sample(100.0 + i as f64)).collect();
        let branch: Vec<StepResult> = (0..6).map(|i| sample(150.0 + i as f64)).collect();
        let gate = vec![("requests.wait.p50_ms".to_string(), 0.10)];
        let s = summarise(&[4], &[[base.clone(), branch]], &gate);
        let m = &s.levels[0].metrics["requests.wait.p50_ms"];
        assert_eq!(m.verdict, result::compare::MetricCall::Worse, "{m:?}");
        assert!((m.ratio.unwrap() - 152.5 / 102.5).abs() < 1e-9);
        assert_eq!(s.breaches.len(), 1, "{:?}", s.breaches);
        assert!(
            matches!(&s.breaches[0], Breach::Grew { level: 4, metric, change, .. }
                if metric == "requests.wait.p50_ms" && (change - 0.488).abs() < 1e-3),
            "{:?}",
            s.breaches
        );
        // The same build against itself: no change, no breach.
        let same = summarise(&[4], &[[base.clone(), base.clone()]], &gate);
        assert_eq!(
            same.levels[0].metrics["requests.wait.p50_ms"].verdict,
            result::compare::MetricCall::NoChange
        );
        assert!(same.breaches.is_empty());
        // A branch on which the request never succeeded, and a misspelled gate: both breach.
        let broken: Vec<StepResult> = (0..6).map(|_| wait(0, None, 3, None)).collect();
        let s = summarise(&[4], &[[base.clone(), broken]], &gate);
        assert!(
            s.breaches
                .iter()
                .any(|b| matches!(b, Breach::Vanished { level: 4, .. })),
            "{:?}",
            s.breaches
        );
        let typo = vec![("requests.wiat.p50_ms".to_string(), 0.10)];
        let s = summarise(&[4], &[[base.clone(), base]], &typo);
        assert!(
            s.breaches.iter().any(
                |b| matches!(b, Breach::NoFigure { metric } if metric == "requests.wiat.p50_ms")
            ),
            "{:?}",
            s.breaches
        );
    }
}
