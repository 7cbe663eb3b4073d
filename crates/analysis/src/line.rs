//! The line with its spread: a level run more than once holds in some of its runs, and
//! the line is the range from the highest level that held in most of its runs to the
//! highest that held in any ("holds 11–12 sessions"). How it is crossed is named too: smooth when
//! the budget the level beyond broke grows about as fast as the sessions across it, a
//! cliff when it jumps or the level beyond collapsed.

use crate::budget::{breaches, Budget};
use crate::standing::standing;
use result::facts::{Binding, Boundary};
use result::ladder::{LevelRuns, Line};
use result::{Standing, StepResult};
use std::collections::BTreeMap;

/// The binding figure beyond the line growing more than this many times as fast as the
/// sessions across it: a cliff.
pub const CLIFF: f64 = 2.0;

/// The range of levels that hold from runs at the same levels: (level, whether each run
/// held). Its low end is the highest level that held in most of its runs (the runs agree
/// there), its high end the highest that held in any. None without a level run twice.
pub fn range(levels: &[(usize, Vec<bool>)]) -> Option<(usize, usize)> {
    if !levels.iter().any(|(_, runs)| runs.len() > 1) {
        return None;
    }
    let most = levels
        .iter()
        .filter(|(_, r)| agrees(r))
        .map(|(l, _)| *l)
        .max();
    let any = levels
        .iter()
        .filter(|(_, r)| r.iter().any(|h| *h))
        .map(|(l, _)| *l)
        .max();
    Some((most.or(any)?, any?))
}

/// Whether a level's runs agree that it holds: it held in most of them.
pub fn agrees(runs: &[bool]) -> bool {
    2 * runs.iter().filter(|h| **h).count() > runs.len()
}

/// Whether two lines differ: their ranges do not overlap.
pub fn differ(a: (usize, usize), b: (usize, usize)) -> bool {
    a.1 < b.0 || b.1 < a.0
}

/// The run each level is judged by: its first, unless most of its runs say otherwise —
/// then the first repeat that agrees with them takes its place, and the first run joins
/// the repeats. A level whose first run failed (a flaky start) and that held in both runs
/// after is judged as holding; one whose first run held and that failed in most is not.
/// `causes` follow their steps (a repeat's is not known, so a swapped level has none).
pub fn representatives<C>(
    steps: Vec<StepResult>,
    causes: Vec<Option<C>>,
    repeats: Vec<StepResult>,
    b: &Budget,
) -> (Vec<StepResult>, Vec<Option<C>>, Vec<StepResult>) {
    let (mut steps, mut causes, mut repeats) = (steps, causes, repeats);
    let single = steps.first().and_then(|s| s.p50_session_ms);
    let b = &crate::pace::of(steps.first(), b);
    let held = |s: &StepResult| standing(s, b, single) == Standing::Holds;
    for (i, first) in steps.iter_mut().enumerate() {
        let level = first.concurrency;
        let again: Vec<bool> = repeats
            .iter()
            .filter(|r| r.concurrency == level)
            .map(held)
            .collect();
        let most = agrees(&[vec![held(first)], again.clone()].concat());
        if again.is_empty() || held(first) == most {
            continue;
        }
        if let Some(j) = repeats
            .iter()
            .position(|r| r.concurrency == level && held(r) == most)
        {
            std::mem::swap(first, &mut repeats[j]);
            if let Some(c) = causes.get_mut(i) {
                *c = None;
            }
        }
    }
    (steps, causes, repeats)
}

/// The line of a ladder whose levels either side of it ran again (`repeats`): the runs
/// at each repeated level, the range, the boundary and the budget that binds.
pub fn line(steps: &[StepResult], repeats: &[StepResult], b: &Budget) -> Option<Line> {
    if repeats.is_empty() {
        return None;
    }
    let single = steps.first().and_then(|s| s.p50_session_ms);
    let b = &crate::pace::of(steps.first(), b);
    let mut by_level: BTreeMap<usize, Vec<&StepResult>> = BTreeMap::new();
    for s in steps.iter().chain(repeats) {
        by_level.entry(s.concurrency).or_default().push(s);
    }
    let held = |s: &StepResult| standing(s, b, single) == Standing::Holds;
    let levels: Vec<(usize, Vec<bool>)> = by_level
        .iter()
        .map(|(l, runs)| (*l, runs.iter().map(|s| held(s)).collect()))
        .collect();
    let (low, high) = range(&levels)?;
    let runs = by_level
        .iter()
        .filter(|(_, r)| r.len() > 1)
        .map(|(l, r)| LevelRuns {
            concurrency: *l,
            held: r.iter().filter(|s| held(s)).count() as u32,
            of: r.len() as u32,
        })
        .collect();
    let beyond = by_level
        .range(high + 1..)
        .next()
        .and_then(|(_, r)| r.iter().find(|s| !held(s)).copied());
    let at = by_level.get(&high).and_then(|r| r.first().copied());
    let (boundary, binding) = match (at, beyond) {
        (Some(h), Some(f)) => crossing(h, f, b, single),
        _ => (None, None),
    };
    Some(Line {
        low,
        high,
        runs,
        boundary,
        binding,
    })
}

/// How the line is crossed from `h` (holds) to `f` (does not).
fn crossing(
    h: &StepResult,
    f: &StepResult,
    b: &Budget,
    single: Option<f64>,
) -> (Option<Boundary>, Option<Binding>) {
    if !f.outcome.is_ok() {
        return (Some(Boundary::Cliff), Some(Binding::Collapse(f.outcome)));
    }
    let fig = |s: &StepResult| crate::standing::figures_of(s);
    let over = breaches(b, &fig(f), single);
    let Some(first) = over.first() else {
        return (None, None);
    };
    // The same figure at the level that held, judged against a zero limit to read it.
    let mut probe = Budget {
        latency_inflation: None,
        latency_vs_single: None,
        p99_turn_ms: None,
        p99_ttft_ms: None,
        probe_p99_ms: None,
        error_rate: None,
        rss_mb: None,
        pss_mb: None,
        response_p95_ms: None,
        stall_share: None,
        agent_p99_ms: None,
        response_p95_default: false,
        stall_share_default: false,
    };
    let _ = probe.set(&first.budget, "0");
    let before = breaches(&probe, &fig(h), single)
        .first()
        .map(|x| x.value)
        .unwrap_or(0.0);
    let sessions = f.concurrency as f64 / h.concurrency.max(1) as f64;
    let grew = if before > 0.0 {
        first.value / before
    } else {
        f64::INFINITY
    };
    let kind = if grew > CLIFF * sessions {
        Boundary::Cliff
    } else {
        Boundary::Smooth
    };
    (Some(kind), Some(Binding::Budget(first.budget.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::tests::step;

    #[test]
    fn runs_that_disagree_at_the_line_give_it_a_range() {
        assert_eq!(
            range(&[(11, vec![true, true]), (12, vec![true, false, false])]),
            Some((11, 12))
        );
        assert_eq!(
            range(&[(11, vec![true, true]), (12, vec![false, false])]),
            Some((11, 11))
        );
        assert_eq!(
            range(&[(11, vec![true]), (12, vec![false])]),
            None,
            "nothing repeated"
        );
        // A busy machine's confirmation (trial B): 32 held in 3 of 4 runs, 40 in 2 of 4;
        // 16 ran once. The runs agree at 32: the line is 32–40, not 16–40.
        assert_eq!(
            range(&[
                (16, vec![true]),
                (32, vec![true, true, true, false]),
                (40, vec![false, false, true, true]),
                (64, vec![false])
            ]),
            Some((32, 40))
        );
        assert!(differ((8, 11), (16, 16)) && !differ((8, 12), (12, 16)));
    }

    #[test]
    fn a_line_from_repeated_levels_and_its_boundary() {
        let b = Budget::default();
        // 11 holds twice; 12 holds once in three; 13 is over, inflation a little higher.
        let steps = vec![
            step(8, 8.0, 1.2, 0.5),
            step(11, 11.0, 1.8, 0.7),
            step(12, 12.0, 2.1, 0.8),
            step(13, 12.0, 2.3, 0.9),
        ];
        let repeats = vec![
            step(11, 11.0, 1.9, 0.7),
            step(12, 12.0, 1.9, 0.8),
            step(12, 12.0, 2.2, 0.8),
        ];
        let l = line(&steps, &repeats, &b).unwrap();
        assert_eq!((l.low, l.high), (11, 12));
        assert_eq!(
            l.runs
                .iter()
                .map(|r| (r.concurrency, r.held, r.of))
                .collect::<Vec<_>>(),
            vec![(11, 2, 2), (12, 1, 3)]
        );
        assert_eq!(
            (
                l.boundary,
                words::verdict::line(&l).ends_with("a smooth boundary, bound by latency inflation")
            ),
            (Some(Boundary::Smooth), true)
        );
        // Beyond the line a collapse: a cliff.
        let mut cliff = steps.clone();
        cliff[3].outcome = result::Outcome::ErrorRate;
        let l = line(&cliff, &repeats, &b).unwrap();
        assert_eq!(l.boundary, Some(Boundary::Cliff));
        assert!(
            words::verdict::line(&l).ends_with("a cliff boundary, bound by collapse (error_rate)"),
            "{}",
            words::verdict::line(&l)
        );
        assert!(line(&steps, &[], &b).is_none());
    }

    /// This session's LiveKit worker under `ramp --cpus 1`: 2 calls collapsed in their
    /// first run (the agent lost a turn's words) and held in both runs after. The line is 2
    /// and the ladder is judged so, not "holds 1 call · collapse at 2".
    #[test]
    fn a_level_is_judged_by_most_of_its_runs() {
        let b = Budget::default();
        let mut flaky = step(2, 2.0, 1.2, 0.5);
        flaky.outcome = result::Outcome::ErrorRate;
        flaky.sessions_failed = 2;
        let steps = vec![step(1, 1.0, 1.1, 0.3), flaky.clone()];
        let repeats = vec![
            step(1, 1.0, 1.1, 0.3),
            step(2, 2.0, 1.2, 0.5),
            step(2, 2.0, 1.3, 0.5),
        ];
        let causes = vec![None, Some("2 of 2 sessions failed".to_string())];
        let (s, c, r) = representatives(steps.clone(), causes.clone(), repeats.clone(), &b);
        assert_eq!(s[1].outcome, result::Outcome::Ok);
        assert_eq!(c, vec![None, None]);
        assert_eq!(r.len(), 3);
        assert!(r.iter().any(|x| x.outcome == result::Outcome::ErrorRate));
        let v = crate::verdict::verdict_with(&s, &r, &b);
        assert_eq!(v.holds, Some(2), "{}", words::headline::headline(&v));
        assert!(v.collapse.is_none(), "{}", words::headline::headline(&v));
        // The first run agreeing with most of them stays; a level run once stays.
        let (s2, c2, _) = representatives(
            steps,
            causes.clone(),
            vec![flaky.clone(), repeats[1].clone()],
            &b,
        );
        assert_eq!((s2[1].outcome, &c2), (result::Outcome::ErrorRate, &causes));
        let (s3, _, _) = representatives::<()>(vec![flaky], vec![None], vec![], &b);
        assert_eq!(s3[0].outcome, result::Outcome::ErrorRate);
    }
}
