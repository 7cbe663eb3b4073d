//! The one-sentence verdict of a ladder, and its parts: how many sessions the system
//! holds within budget, from where it is over budget and why, what it hit (CPU, memory,
//! the harness, a limit inside it, or the provider), and whether it collapsed. Built only from the
//! steps, so the sentence on top says what the charts under it show.

use crate::budget::Budget;
use crate::standing::standings;
pub use crate::standing::{standing, standing_among, step_breaches, turns_per_s};
use crate::throughput::{self, Sample, Wall};
pub use result::ladder::{LevelStanding, Verdict};
use result::wall::WallAlso;
use result::{Outcome, Standing, StepResult, WallKind};

pub use crate::reading::samples;

/// The verdict of a ladder whose steps are sorted by concurrency.
pub fn verdict(steps: &[StepResult], b: &Budget) -> Verdict {
    verdict_with(steps, &[], b)
}

/// The same, with the levels either side of the line run again (`repeats`).
pub fn verdict_with(steps: &[StepResult], repeats: &[StepResult], b: &Budget) -> Verdict {
    // The budget as judged (one call's pace in place of a default it is over), and why.
    let paced = crate::pace::fact(steps.first(), b);
    let b = &crate::pace::of(steps.first(), b);
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
    let unit = result::words::Unit::of(steps);
    let mut wall = match unit.is_calls() {
        // Calls go at speech's pace: judged from what was full where they went over.
        true => crate::calls::wall(steps, &st),
        false => text_wall(steps, &sm, knee.as_ref(), plateau.as_ref(), collapse),
    };
    let cpu_rises = crate::growth::cpu_per_turn_rises(steps);
    if wall.kind == WallKind::Cpu && cpu_rises {
        let threads_per = crate::growth::threads_per_session(steps);
        wall = crate::wall::add(wall, WallAlso::DearerTurns { unit, threads_per });
    }
    let first_over = st.first().is_some_and(|s| s.standing == Standing::Over);
    let first_level_cost = (first_over && holds.is_none())
        .then(|| crate::findings::first_cost(&steps[0], b))
        .flatten();
    // Growth's findings, the limit they reach first named as such.
    let mut growth = crate::growth::said(steps);
    growth.extend(crate::memory::said(steps, &wall));
    let mut findings = crate::binds::ranked(growth, unit);
    findings.extend(crate::findings::of(steps, &st));
    let v = Verdict {
        unit,
        budget: Some(b.clone()),
        paced,
        holds,
        over_from: over.map(|s| s.concurrency),
        over_below,
        collapse,
        top: steps.last().map(|s| s.concurrency),
        standings: st,
        plateau,
        knee,
        wall,
        first_level_cost,
        notes: match cpu_rises {
            // The growth finding names it, with its cause.
            true => Vec::new(),
            false => crate::findings::unstable_cost(steps).into_iter().collect(),
        },
        line: crate::line::line(steps, repeats, b),
        findings,
        growth: crate::growth::fits(steps),
        ..Verdict::default()
    };
    said(v, steps)
}

/// The verdict with the facts its headline stands on beside the ladder's own
/// (`words::headline` says them).
fn said(mut v: Verdict, steps: &[StepResult]) -> Verdict {
    v.machine = crate::headline::machine(&v, steps);
    v.collapse_cause = crate::headline::collapse_cause(&v, steps);
    v
}

/// The wall of a ladder of text sessions: what stopped throughput, read from the knee or
/// the plateau on, then named more closely (a thread, a worker pool, a connection pool,
/// a pool seen by its threads' count), or the provider when it pushed back first.
fn text_wall(
    steps: &[StepResult],
    sm: &[Sample],
    knee: Option<&result::ladder::Knee>,
    plateau: Option<&result::ladder::Plateau>,
    collapse: Option<usize>,
) -> Wall {
    let mut own = throughput::wall(sm, knee, plateau);
    if let (Some(c), WallKind::None, None) = (collapse, own.kind, own.from) {
        own = throughput::before_collapse(sm, c);
    }
    let own = crate::threads::refine(own, steps, plateau);
    let own = crate::workers::refine(own, steps, plateau);
    let own = crate::pool::refine(own, steps, plateau);
    let own = crate::executor::refine(own, steps, plateau);
    let own = crate::threads::at_collapse(own, steps, collapse);
    with_provider(own, crate::provider::wall(steps, plateau))
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The wall in words and in a few, and the headline, as a verdict's outputs say them.
    pub(crate) fn said(v: &Verdict) -> String {
        words::wall::text(&v.wall)
    }

    pub(crate) fn short(v: &Verdict) -> String {
        words::wall::short(&v.wall)
    }

    pub(crate) fn headline(v: &Verdict) -> String {
        words::headline::headline(v)
    }

    /// A step as the verdict reads it: sessions, turns/s, latency inflation, CPU of cap.
    pub(crate) fn step(n: usize, x: f64, infl: f64, cpu: f64) -> StepResult {
        StepResult {
            schema_version: 1,
            concurrency: n,
            sessions_ok: n as u64,
            turns: 3 * n as u64,
            wall_ms: 1000.0,
            p50_session_ms: Some(infl * 1000.0),
            p99_session_ms: Some(infl * 1100.0),
            ideal_session_ms: Some(1000.0),
            latency_inflation: Some(infl),
            peak_rss_mb: 10.0,
            rss_kb_per_session: 100.0,
            baseline_rss_mb: 5.0,
            peak_threads: 3,
            peak_fds: 10,
            cpu_ms_per_turn: Some(40.0),
            cpu_sec: 1.0,
            harness: result::Harness {
                mock_timing_error_p99_ms: 1.0,
                driver_lag_p99_ms: 1.0,
                cpu_share: 0.02,
                bound: result::Bound::Sut,
                parts: None,
            },
            turns_per_s: Some(x),
            cpu_cores: Some(1.0),
            cpu_of_cap: Some(cpu),
            ..StepResult::default()
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
            words::wall::text(&v.wall),
            "none before the collapse at 4 sessions: throughput still grew up to 2 sessions (1 → 2 turns/s from 1)"
        );
        assert!(
            !words::headline::headline(&v).contains("widen"),
            "{}",
            words::headline::headline(&v)
        );
    }

    #[test]
    fn the_provider_takes_the_wall_only_below_the_sut_own() {
        let w = |kind: WallKind, from: Option<f64>| Wall {
            kind,
            from,
            ..Wall::default()
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
        // A headline read in one breath; the facts behind it a line each.
        assert_eq!(
            words::headline::headline(&v),
            "holds 8 sessions · wall: CPU (1-core cap full at 16) · no collapse up to 64"
        );
        assert!(words::headline::headline(&v).chars().count() <= 160);
        let line = |label: &str| {
            words::headline::lines(&v)
                .iter()
                .find(|l| l.label == label)
                .map_or(String::new(), |l| l.text.clone())
        };
        assert_eq!(
            line("budget"),
            "latency inflation ≤ 2, error rate ≤ 0; over from 16 (latency inflation 2.6 > 2)"
        );
        assert!(
            line("wall").starts_with("CPU — throughput bends between 8 and 16 sessions"),
            "{:?}",
            words::headline::lines(&v)
        );
        let lines = words::headline::lines(&v);
        let order: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(order, ["budget", "wall", "plateau"]);
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
            words::headline::headline(&v).starts_with("holds 8 sessions · wall: "),
            "{}",
            words::headline::headline(&v)
        );
        assert_eq!(
            words::headline::lines(&v)[0].text,
            "latency inflation ≤ 2, error rate ≤ 0; over from 16 (latency inflation 2.67 > 2); over at 1, 4 too, below the line"
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
        assert_eq!(
            words::headline::headline(&v),
            "no level within budget · wall: none before the collapse at 4 · collapse at 4"
        );
        let cost = words::headline::lines(&v)
            .into_iter()
            .find(|l| l.label == "cost")
            .unwrap();
        assert!(
            cost.text.starts_with("at 1 session a turn takes 467 ms more than the mock's own time (2.4× in all), 33.3 CPU ms of it under load: the SUT's own time per turn, before any queueing between sessions (to judge how it degrades instead: --budget latency_inflation=off,latency_vs_single=2)"),
            "{}",
            cost.text
        );
        assert!(
            words::headline::headline(&v).ends_with("collapse at 4"),
            "{}",
            words::headline::headline(&v)
        );
    }
}
