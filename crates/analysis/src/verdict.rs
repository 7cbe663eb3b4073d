//! The one-sentence verdict of a ladder, and its parts: how many sessions the system
//! holds within budget, from where it is over budget and why, what it hit (CPU, memory,
//! the harness, a limit inside it, or the provider), and whether it collapsed. Built only from the
//! steps, so the sentence on top says what the charts under it show.

use crate::budget::{breaches, num, Breach, Budget, Figures};
use crate::throughput::{self, Sample, Wall};
pub use result::ladder::{LevelStanding, Verdict};
use result::{Bound, Outcome, Standing, StepResult, WallKind};

/// Completed turns per second of a step: as measured under full load, or for a step
/// recorded before that figure existed, its turns over its wall time.
pub fn turns_per_s(s: &StepResult) -> f64 {
    s.turns_per_s
        .unwrap_or_else(|| s.turns as f64 / (s.wall_ms / 1000.0).max(1e-9))
}

fn figures(s: &StepResult) -> Figures {
    let total = (s.sessions_ok + s.sessions_failed).max(1) as f64;
    Figures {
        inflation: s.latency_inflation,
        p50_session_ms: s.p50_session_ms,
        p99_turn_ms: s.p99_turn_ms,
        p99_ttft_ms: s.p99_ttft_ms,
        probe_p99_ms: s.probe_p99_ms,
        error_share: s.sessions_failed as f64 / total,
        rss_mb: s.peak_rss_mb,
    }
}

/// The budgets one ok step breaks, judged alone (no first level to compare with, so
/// `latency_vs_single` is not judged); none for a step that did not end ok.
pub fn step_breaches(s: &StepResult, b: &Budget) -> Vec<Breach> {
    standing_of(s, b, None).breaches
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
    standing(s, b, lowest.and_then(single_ms))
}

/// The p50 session time of a ladder's lowest level, what `latency_vs_single` divides by.
fn single_ms(lowest: &StepResult) -> Option<f64> {
    lowest.p50_session_ms
}

fn standing_of(s: &StepResult, b: &Budget, single: Option<f64>) -> LevelStanding {
    let br = if s.outcome == Outcome::Ok {
        breaches(b, &figures(s), single)
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

fn standings(steps: &[StepResult], b: &Budget) -> Vec<LevelStanding> {
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

/// The throughput samples of the levels that did not collapse.
pub fn samples(steps: &[StepResult]) -> Vec<Sample> {
    steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok)
        .map(|s| Sample {
            concurrency: s.concurrency as f64,
            turns_per_s: turns_per_s(s),
            cpu_of_cap: s.cpu_of_cap,
            cpu_cores: s.cpu_cores,
            throttled: s.cpu_throttled,
            mem_of_cap: s.mem_of_cap,
            harness_bound: s.harness.bound == Bound::Harness,
        })
        .collect()
}

/// The verdict of a ladder whose steps are sorted by concurrency.
pub fn verdict(steps: &[StepResult], b: &Budget) -> Verdict {
    let st = standings(steps, b);
    // The highest level that holds, and the first above it that does not: levels below it
    // that were over (noise near the line, a cold start) are named, not a verdict.
    let holds = st
        .iter()
        .filter(|s| s.standing == Standing::Holds)
        .map(|s| s.concurrency)
        .max();
    let over = st
        .iter()
        .find(|s| s.standing == Standing::Over && holds.is_none_or(|h| s.concurrency > h));
    let over_below: Vec<usize> = st
        .iter()
        .filter(|s| s.standing == Standing::Over && holds.is_some_and(|h| s.concurrency < h))
        .map(|s| s.concurrency)
        .collect();
    let collapse = st
        .iter()
        .find(|s| s.standing == Standing::Collapsed)
        .map(|s| s.concurrency);
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome == Outcome::Ok).collect();
    let sm = samples(steps);
    let inflation: Vec<Option<f64>> = ok.iter().map(|s| s.latency_inflation).collect();
    let plateau = throughput::plateau(&sm);
    let knee = throughput::knee(&sm, &inflation, plateau.as_ref());
    let mut own = throughput::wall(&sm, knee.as_ref(), plateau.as_ref());
    if let (Some(c), WallKind::None, None) = (collapse, own.kind, own.from) {
        own = throughput::before_collapse(&sm, c);
    }
    let own = crate::pool::refine(own, steps, plateau.as_ref());
    let wall = with_provider(own, crate::provider::wall(steps, plateau.as_ref()));
    let first_over = st.first().is_some_and(|s| s.standing == Standing::Over);
    let first_level_cost = (first_over && holds.is_none())
        .then(|| first_cost(&steps[0], b))
        .flatten();
    let mut v = Verdict {
        headline: String::new(),
        budget: b.describe(),
        holds,
        over_from: over.map(|s| s.concurrency),
        over_why: over.map_or(Vec::new(), |s| {
            s.breaches.iter().map(Breach::text).collect()
        }),
        over_below,
        collapse,
        top: steps.last().map(|s| s.concurrency),
        standings: st,
        plateau,
        knee,
        wall,
        first_level_cost,
        notes: unstable_cost(steps).into_iter().collect(),
    };
    v.headline = headline(&v);
    v
}

/// The provider is the wall when it pushed back materially, unless the harness was the
/// bound or a resource of the SUT's own (CPU, memory) hit its wall at the same level as
/// the provider's material pushback or lower. A plateau with no resource at its wall ("a
/// limit inside the SUT") is the provider's when it pushed back.
fn with_provider(own: Wall, provider: Option<(Wall, f64)>) -> Wall {
    match provider {
        Some((p, material))
            if own.kind != WallKind::Harness
                && (matches!(own.kind, WallKind::None | WallKind::Internal)
                    || own.from.is_none_or(|f| material < f)) =>
        {
            p
        }
        _ => own,
    }
}

/// What a session costs at the first level, when even that level is over budget: the
/// SUT's own time per turn beyond the mock's, and how much of it was CPU (over the span of
/// full load, not counting the SUT's start-up).
fn first_cost(s: &StepResult, b: &Budget) -> Option<String> {
    let infl = s.latency_inflation?;
    let per_session = (s.turns as f64 / (s.sessions_ok + s.sessions_failed).max(1) as f64).max(1.0);
    let own = match (s.p50_session_ms, s.ideal_session_ms) {
        (Some(p), Some(i)) if p > i => format!(
            "a turn takes {} ms more than the mock's own time ({}× in all)",
            num((p - i) / per_session),
            num(infl)
        ),
        _ => format!("a session takes {}× the mock's own time", num(infl)),
    };
    let cpu = match (s.cpu_of_cap, s.cpu_cores, s.turns_per_s) {
        (Some(c), Some(n), Some(x)) if x > 0.0 => {
            format!(", {} CPU ms of it under load", num(c * n * 1000.0 / x))
        }
        _ => String::new(),
    };
    let advice = if b.latency_vs_single.is_some() {
        String::new()
    } else {
        " (to judge how it degrades instead: --budget latency_inflation=off,latency_vs_single=2)"
            .into()
    };
    Some(format!(
        "at {} session{} {own}{cpu}: the SUT's own time per turn, before any queueing between sessions{advice}",
        s.concurrency,
        if s.concurrency == 1 { "" } else { "s" },
    ))
}

/// The SUT's CPU per turn should not depend much on the level; when it varies by more
/// than 30 % across levels (warm-up, caching, garbage collection, a busy machine), the
/// curves mix more than load and the reading is less certain.
fn unstable_cost(steps: &[StepResult]) -> Option<String> {
    let costs: Vec<(usize, f64)> = steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.turns >= 20)
        .filter_map(|s| Some((s.concurrency, s.cpu_ms_per_turn?)))
        .filter(|c| c.1 > 1.0)
        .collect();
    let lo = costs.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let hi = costs.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (hi.1 > lo.1 * 1.3).then(|| {
        format!(
            "the SUT's CPU per turn varied from {} ms (at {}) to {} ms (at {}) across levels: its cost per turn is not stable (warm-up, caching, garbage collection, or a busy machine), so the curves mix more than load",
            num(lo.1),
            lo.0,
            num(hi.1),
            hi.0
        )
    })
}

fn headline(v: &Verdict) -> String {
    let mut parts = Vec::new();
    let noise = if v.over_below.is_empty() {
        String::new()
    } else {
        let levels: Vec<String> = v.over_below.iter().map(|l| l.to_string()).collect();
        format!(" (though over it at {})", levels.join(", "))
    };
    parts.push(match (v.holds, &v.first_level_cost) {
        (Some(h), _) => format!("holds {h} sessions within budget{noise}"),
        (None, Some(cost)) => format!("no level within budget — {cost}"),
        (None, None) => "no level within budget".into(),
    });
    if let Some(m) = v.over_from {
        parts.push(format!("over budget from {m} ({})", v.over_why.join(", ")));
    }
    parts.push(format!("wall: {}", v.wall.text));
    parts.push(match (v.collapse, v.top) {
        (Some(c), _) => format!("collapse at {c} sessions"),
        (None, Some(t)) => format!("collapse: none up to {t}"),
        (None, None) => "no steps".into(),
    });
    parts.join("; ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A step as the verdict reads it: sessions, turns/s, latency inflation, CPU of cap.
    pub(crate) fn step(n: usize, x: f64, infl: f64, cpu: f64) -> StepResult {
        StepResult {
            schema_version: 1,
            concurrency: n,
            sessions_ok: n as u64,
            sessions_failed: 0,
            turns: 3 * n as u64,
            wall_ms: 1000.0,
            p50_session_ms: Some(infl * 1000.0),
            p99_session_ms: Some(infl * 1100.0),
            p50_turn_ms: None,
            p99_turn_ms: None,
            p50_ttft_ms: None,
            p99_ttft_ms: None,
            ideal_session_ms: Some(1000.0),
            latency_inflation: Some(infl),
            peak_rss_mb: 10.0,
            rss_kb_per_session: 100.0,
            rss_kb_per_turn: None,
            baseline_rss_mb: 5.0,
            peak_threads: 3,
            peak_fds: 10,
            cpu_ms_per_turn: Some(40.0),
            cpu_sec: 1.0,
            llm_calls: 0,
            llm_tokens_out: 0,
            injected_failures: 0,
            integrity_violations: 0,
            errors_by_kind: Default::default(),
            files_created: 0,
            harness: result::Harness {
                mock_timing_error_p99_ms: 1.0,
                driver_lag_p99_ms: 1.0,
                cpu_share: 0.02,
                bound: Bound::Sut,
            },
            outcome: Outcome::Ok,
            arrival_rate_per_s: None,
            sessions: None,
            cgroup_mem_peak_mb: None,
            cgroup_oom_kills: None,
            cap: None,
            turns_per_s: Some(x),
            cpu_cores: Some(1.0),
            cpu_of_cap: Some(cpu),
            cpu_throttled: None,
            mem_of_cap: None,
            partition: None,
            cpu_pressure: None,
            cpu_pressure_scope: None,
            requests: Default::default(),
            slow: None,
            probe_p50_ms: None,
            probe_p99_ms: None,
            probe_failed: None,
            sched_delay_ms_per_s: None,
            provider: None,
            reasoning: None,
            log: None,
            scratch: None,
            resident: None,
            connections: Vec::new(),
            dependencies: Vec::new(),
            arm: None,
            replicas: None,
            shards: None,
            bus: None,
            mcp: None,
        }
    }

    #[test]
    fn a_ladder_that_collapses_while_still_scaling_does_not_ask_for_a_wider_one() {
        let mut steps = vec![
            step(1, 1.0, 1.0, 0.1),
            step(2, 2.0, 1.0, 0.1),
            step(4, 4.0, 1.0, 0.1),
        ];
        steps[2].outcome = Outcome::ErrorRate;
        let v = verdict(&steps, &Budget::default());
        assert_eq!(
            v.wall.text,
            "none before the collapse at 4 sessions: throughput still grew up to 2 sessions (1 → 2 turns/s from 1)"
        );
        assert!(!v.headline.contains("widen"), "{}", v.headline);
    }

    #[test]
    fn the_provider_takes_the_wall_only_below_the_sut_own() {
        let w = |kind: WallKind, from: Option<f64>| Wall {
            kind,
            from,
            text: kind.to_string(),
        };
        let provider = |material: f64| Some((w(WallKind::Provider, Some(4.0)), material));
        // CPU hot from 8; the provider's pushback is material only at 32 (a 1 % burst at 4
        // does not count): CPU stays the wall. A tie goes to the SUT's own resource.
        assert_eq!(
            with_provider(w(WallKind::Cpu, Some(8.0)), provider(32.0)).kind,
            WallKind::Cpu
        );
        assert_eq!(
            with_provider(w(WallKind::Cpu, Some(8.0)), provider(8.0)).kind,
            WallKind::Cpu
        );
        assert_eq!(
            with_provider(w(WallKind::Cpu, Some(8.0)), provider(4.0)).kind,
            WallKind::Provider
        );
        // A queue with no resource at its wall is the provider's; the harness never is.
        assert_eq!(
            with_provider(w(WallKind::Internal, Some(2.0)), provider(16.0)).kind,
            WallKind::Provider
        );
        assert_eq!(
            with_provider(w(WallKind::Harness, Some(2.0)), provider(1.0)).kind,
            WallKind::Harness
        );
        assert_eq!(
            with_provider(w(WallKind::None, None), None).kind,
            WallKind::None
        );
    }

    #[test]
    fn the_headline_says_what_the_curves_show() {
        let steps = [
            step(2, 3.2, 1.1, 0.2),
            step(4, 6.4, 1.3, 0.4),
            step(8, 12.5, 1.7, 0.8),
            step(16, 16.4, 2.6, 0.99),
            step(32, 16.6, 5.0, 1.0),
            step(64, 16.5, 10.0, 1.0),
        ];
        let v = verdict(&steps, &Budget::default());
        assert_eq!(
            (v.holds, v.over_from, v.collapse),
            (Some(8), Some(16), None)
        );
        assert_eq!(v.wall.kind, WallKind::Cpu);
        // 8 → 16: 3.9 turns/s more for 8 more sessions, a quarter of what one gave at 2.
        let g = v.standings[3].gain_share.unwrap();
        assert!((g - 0.3047).abs() < 1e-3, "{g}");
        assert_eq!(v.standings[0].gain_per_session, None);
        assert!(
            v.headline.starts_with("holds 8 sessions within budget; over budget from 16 (latency inflation 2.6 > 2); wall: CPU — throughput bends between 8 and 16 sessions")
                && v.headline.ends_with("collapse: none up to 64"),
            "{}",
            v.headline
        );
    }

    #[test]
    fn the_line_is_the_highest_level_that_holds_and_noise_below_it_is_named() {
        // LiteLLM: a cold first level and one more over budget near the line, below 8.
        let steps = [
            step(1, 1.8, 2.1, 0.19),
            step(2, 3.5, 1.6, 0.39),
            step(4, 6.5, 2.02, 0.64),
            step(8, 10.6, 2.0, 0.83),
            step(16, 17.5, 2.67, 0.8),
        ];
        let v = verdict(&steps, &Budget::default());
        assert_eq!((v.holds, v.over_from), (Some(8), Some(16)));
        assert_eq!(v.over_below, vec![1, 4]);
        assert_eq!(v.first_level_cost, None);
        assert!(
            v.headline.starts_with(
                "holds 8 sessions within budget (though over it at 1, 4); over budget from 16"
            ),
            "{}",
            v.headline
        );
    }

    #[test]
    fn a_first_level_over_budget_is_explained_and_a_collapse_is_named() {
        let mut steps = vec![step(1, 0.6, 2.4, 0.02), step(2, 1.3, 2.2, 0.04)];
        let mut dead = step(4, 0.0, 0.0, 0.0);
        dead.outcome = Outcome::OomKilled;
        steps.push(dead);
        let v = verdict(&steps, &Budget::default());
        assert_eq!((v.holds, v.collapse), (None, Some(4)));
        assert!(
            v.headline.starts_with("no level within budget — at 1 session a turn takes 467 ms more than the mock's own time (2.4× in all), 33.3 CPU ms of it under load: the SUT's own time per turn, before any queueing between sessions (to judge how it degrades instead: --budget latency_inflation=off,latency_vs_single=2)"),
            "{}",
            v.headline
        );
        assert!(
            v.headline.ends_with("collapse at 4 sessions"),
            "{}",
            v.headline
        );
    }
}
