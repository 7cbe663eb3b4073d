//! A step against the budget: the figures a budget judges, the budgets it breaks, and
//! its standing — holds, over, or collapsed — alone or among the steps of its ladder
//! (`latency_vs_single` compares it with the lowest level); a step's one list of checks
//! (its thresholds and budgets), which its exit code, its CI files and `run --budget`'s
//! line (`words::budget`) read; and the rate it is read by.

use crate::budget::{breaches, Breach, Budget, Figures};
use result::ladder::LevelStanding;
use result::{Check, CheckFrom, Outcome, Standing, StepResult, Thresholds};

/// Completed turns per second of a step: as measured under full load, or for a step
/// recorded before that figure existed, its turns over its wall time.
pub fn turns_per_s(s: &StepResult) -> f64 {
    s.turns_per_s
        .unwrap_or_else(|| s.turns as f64 / (s.wall_ms / 1000.0).max(1e-9))
}

pub(crate) fn figures_of(s: &StepResult) -> Figures {
    let total = (s.sessions_ok + s.sessions_failed).max(1) as f64;
    Figures {
        inflation: s.latency_inflation,
        p50_session_ms: s.p50_session_ms,
        p99_turn_ms: s.p99_turn_ms,
        p99_ttft_ms: s.p99_ttft_ms,
        probe_p99_ms: s.probe_p99_ms,
        error_share: s.sessions_failed as f64 / total,
        rss_mb: s.peak_rss_mb,
        pss_mb: s.pss.as_ref().map(|p| p.peak_mb),
        response_p95_ms: s.voice.as_ref().and_then(|v| v.response_p95_ms),
        stall_share: s.voice.as_ref().map(|v| v.stall_share),
        agent_p99_ms: s
            .voice
            .as_ref()
            .and_then(|v| v.network.as_ref())
            .and_then(|n| n.agent_p99_ms),
    }
}

/// The budgets one ok step breaks, judged alone (no first level to compare with, so
/// `latency_vs_single` is not judged); none for a step that did not end ok.
pub fn step_breaches(s: &StepResult, b: &Budget) -> Vec<Breach> {
    standing_of(s, b, None).breaches
}

/// Every budget in force judged at each of a ladder's steps (the first step's p50
/// session time is what `latency_vs_single` divides by), as the verdict judges them.
pub fn checks(steps: &[StepResult], b: &Budget) -> Vec<Vec<Check>> {
    let b = &crate::pace::of(steps.first(), b);
    let single = steps.first().and_then(single_ms);
    steps
        .iter()
        .map(|s| crate::budget::checks(b, &figures_of(s), single))
        .collect()
}

/// One step against the budget: holds, over or collapsed. `single` is the p50 session
/// time at the ladder's first level.
pub fn standing(s: &StepResult, b: &Budget, single: Option<f64>) -> Standing {
    standing_of(s, b, single).standing
}

/// A step against the budget among the steps of its ladder run so far (in any order):
/// `latency_vs_single` compares it with the lowest level's, as the verdict does.
pub fn standing_among(earlier: &[StepResult], s: &StepResult, b: &Budget) -> Standing {
    let lowest = earlier
        .iter()
        .chain(std::iter::once(s))
        .min_by_key(|x| x.concurrency);
    standing(s, &crate::pace::of(lowest, b), lowest.and_then(single_ms))
}

/// The p50 session time of a ladder's lowest level, what `latency_vs_single` divides by.
fn single_ms(lowest: &StepResult) -> Option<f64> {
    lowest.p50_session_ms
}

fn standing_of(s: &StepResult, b: &Budget, single: Option<f64>) -> LevelStanding {
    let br = if s.outcome == Outcome::Ok {
        breaches(b, &figures_of(s), single)
    } else {
        Vec::new()
    };
    LevelStanding {
        concurrency: s.concurrency,
        standing: if s.outcome != Outcome::Ok {
            Standing::Collapsed
        } else if br.is_empty() {
            Standing::Holds
        } else {
            Standing::Over
        },
        breaches: br,
        gain_per_session: None,
        gain_share: None,
    }
}

/// Each step's standing, against the budget as judged (`verdict_with` paces it first).
pub(crate) fn standings(steps: &[StepResult], b: &Budget) -> Vec<LevelStanding> {
    let single = steps.first().and_then(single_ms);
    let rate = turns_per_s;
    let s0 = steps.first().map(|s| rate(s) / s.concurrency.max(1) as f64);
    let mut prev: Option<&StepResult> = None;
    let mut out = Vec::new();
    for s in steps {
        let mut st = standing_of(s, b, single);
        if s.outcome == Outcome::Ok {
            if let Some(p) = prev.filter(|p| p.concurrency < s.concurrency) {
                let g = (rate(s) - rate(p)) / (s.concurrency - p.concurrency) as f64;
                st.gain_per_session = Some(g);
                st.gain_share = s0.filter(|&x| x > 0.0).map(|x| g / x);
            }
            prev = Some(s);
        }
        out.push(st);
    }
    out
}

/// A step's one list of checks: the config's thresholds (checked whatever the outcome),
/// then the budgets it is judged by (`budget`), where it ended ok with no session failed
/// (a step that failed is not judged by them: its failure decides, and
/// `words::budget::alone` says so).
pub fn step_checks(s: &StepResult, t: &Thresholds, budget: Option<&Budget>) -> Vec<Check> {
    let thresholds = [
        ("p99_session_ms", t.p99_session_ms, s.p99_session_ms),
        ("peak_rss_mb", t.peak_rss_mb, Some(s.peak_rss_mb)),
    ];
    let mut out: Vec<Check> = thresholds
        .into_iter()
        .filter(|(_, limit, _)| *limit > 0.0)
        .map(|(name, limit, value)| Check {
            name: name.into(),
            from: CheckFrom::Threshold,
            limit,
            value,
            over: value.is_some_and(|v| v > limit),
        })
        .collect();
    if let Some(b) = budget.filter(|_| s.judged_by_budget()) {
        out.extend(crate::budget::checks(b, &figures_of(s), None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::tests::step;

    /// One list: the thresholds first, checked whatever the outcome, then the budgets,
    /// only where the step ended ok; a threshold of 0 is no check.
    #[test]
    fn a_steps_checks_are_its_thresholds_then_its_budgets() {
        let mut b = Budget::none();
        b.apply_flag("rss_mb=4096").unwrap();
        let mut s = step(8, 1.0, 1.0, 0.5);
        s.peak_rss_mb = 4210.0;
        s.p99_session_ms = Some(2500.0);
        let t = Thresholds {
            p99_session_ms: 2000.0,
            peak_rss_mb: 0.0,
        };
        let c = step_checks(&s, &t, Some(&b));
        let said: Vec<(&str, CheckFrom, bool)> = c
            .iter()
            .map(|c| (c.name.as_str(), c.from, c.over))
            .collect();
        assert_eq!(
            said,
            [
                ("p99_session_ms", CheckFrom::Threshold, true),
                ("rss_mb", CheckFrom::Budget, true)
            ]
        );
        assert_eq!(s.exit_code(&c), result::exit::THRESHOLD);
        assert_eq!(
            c[1].breach().map(|b| b.text()).as_deref(),
            Some("RSS MB 4210 > 4096")
        );
        s.sessions_failed = 1;
        let c = step_checks(&s, &t, Some(&b));
        assert_eq!(
            c.len(),
            1,
            "a failed step is checked by its thresholds alone"
        );
        assert!(step_checks(&s, &Thresholds::default(), None).is_empty());
    }
}
