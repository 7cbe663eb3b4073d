//! The one-sentence verdict of a ladder, and its parts: how many sessions the system
//! holds within budget, from where it is over budget and why, what it hit (CPU, memory,
//! the harness, or a limit inside it), and whether it collapsed. Built only from the
//! steps, so the sentence on top says what the charts under it show.

use crate::budget::{breaches, num, Breach, Budget, Figures};
use crate::throughput::{self, Plateau, Sample, ThroughputKnee, Wall};
use result::StepResult;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    pub concurrency: usize,
    /// holds | over | collapsed
    pub standing: &'static str,
    pub breaches: Vec<Breach>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub headline: String,
    /// The budgets in force, in words.
    pub budget: String,
    /// The highest level within budget below the first level that is not.
    pub holds: Option<usize>,
    /// The first level over budget (not collapsed), and what it broke.
    pub over_from: Option<usize>,
    pub over_why: Vec<String>,
    pub collapse: Option<usize>,
    pub top: Option<usize>,
    pub standings: Vec<Standing>,
    pub plateau: Option<Plateau>,
    pub knee: Option<ThroughputKnee>,
    pub wall: Wall,
    /// When even the first level is over budget: what a session costs there, and why.
    pub first_level_cost: Option<String>,
}

/// Completed turns per second of a step.
pub fn turns_per_s(s: &StepResult) -> f64 {
    s.turns as f64 / (s.wall_ms / 1000.0).max(1e-9)
}

fn figures(s: &StepResult) -> Figures {
    let total = (s.sessions_ok + s.sessions_failed).max(1) as f64;
    Figures {
        inflation: s.latency_inflation,
        p50_session_ms: s.p50_session_ms,
        p99_turn_ms: s.p99_turn_ms,
        p99_ttft_ms: s.p99_ttft_ms,
        error_share: s.sessions_failed as f64 / total,
        rss_mb: s.peak_rss_mb,
    }
}

/// One step against the budget: holds, over or collapsed. `single` is the p50 session
/// time at the ladder's first level.
pub fn standing(s: &StepResult, b: &Budget, single: Option<f64>) -> &'static str {
    standing_of(s, b, single).standing
}

fn standing_of(s: &StepResult, b: &Budget, single: Option<f64>) -> Standing {
    let br = if s.outcome == "ok" {
        breaches(b, &figures(s), single)
    } else {
        Vec::new()
    };
    Standing {
        concurrency: s.concurrency,
        standing: if s.outcome != "ok" {
            "collapsed"
        } else if br.is_empty() {
            "holds"
        } else {
            "over"
        },
        breaches: br,
    }
}

fn standings(steps: &[StepResult], b: &Budget) -> Vec<Standing> {
    let single = steps.first().and_then(|s| s.p50_session_ms);
    steps.iter().map(|s| standing_of(s, b, single)).collect()
}

/// The throughput samples of the levels that did not collapse.
pub fn samples(steps: &[StepResult]) -> Vec<Sample> {
    steps
        .iter()
        .filter(|s| s.outcome == "ok")
        .map(|s| Sample {
            concurrency: s.concurrency as f64,
            turns_per_s: s.turns_per_s.unwrap_or_else(|| turns_per_s(s)),
            cpu_of_cap: s.cpu_of_cap,
            cpu_cores: s.cpu_cores,
            throttled: s.cpu_throttled,
            mem_of_cap: s.mem_of_cap,
            harness_bound: s.harness.bound == "harness",
        })
        .collect()
}

/// The verdict of a ladder whose steps are sorted by concurrency.
pub fn verdict(steps: &[StepResult], b: &Budget) -> Verdict {
    let st = standings(steps, b);
    let first_bad = st.iter().position(|s| s.standing != "holds");
    let holds = match first_bad {
        Some(0) => None,
        Some(i) => Some(st[i - 1].concurrency),
        None => st.last().map(|s| s.concurrency),
    };
    let over = st.iter().find(|s| s.standing == "over");
    let collapse = st
        .iter()
        .find(|s| s.standing == "collapsed")
        .map(|s| s.concurrency);
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome == "ok").collect();
    let sm = samples(steps);
    let inflation: Vec<Option<f64>> = ok.iter().map(|s| s.latency_inflation).collect();
    let plateau = throughput::plateau(&sm);
    let knee = throughput::knee(&sm, &inflation, plateau.as_ref());
    let wall = throughput::wall(&sm, knee.as_ref(), plateau.as_ref());
    let first_level_cost = (first_bad == Some(0) && collapse != st.first().map(|s| s.concurrency))
        .then(|| first_cost(&steps[0]))
        .flatten();
    let mut v = Verdict {
        headline: String::new(),
        budget: b.describe(),
        holds,
        over_from: over.map(|s| s.concurrency),
        over_why: over.map_or(Vec::new(), |s| {
            s.breaches.iter().map(Breach::text).collect()
        }),
        collapse,
        top: steps.last().map(|s| s.concurrency),
        standings: st,
        plateau,
        knee,
        wall,
        first_level_cost,
    };
    v.headline = headline(&v);
    v
}

/// What one session costs at the first level, when that level is already over budget.
fn first_cost(s: &StepResult) -> Option<String> {
    let infl = s.latency_inflation?;
    Some(format!(
        "at {} session{} a session takes {}× the mock's own time: that is the SUT's own cost per turn, not queueing (judge how it degrades with --budget latency_vs_single=2)",
        s.concurrency,
        if s.concurrency == 1 { "" } else { "s" },
        num(infl)
    ))
}

fn headline(v: &Verdict) -> String {
    let mut parts = Vec::new();
    parts.push(match (v.holds, &v.first_level_cost) {
        (Some(h), _) => format!("holds {h} sessions within budget"),
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
