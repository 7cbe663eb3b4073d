//! A verdict's budget line, what a session costs when even the first level is over
//! budget, and the notes that make a reading less certain, said from their facts.

use crate::pct;
use result::budget::num;
use result::facts::{Binding, Boundary, FirstCost, KneeMethod, Note, Paced};
use result::ladder::{Line, Verdict};
use result::words::{count, int, Unit};
use result::{Breach, Budget};

/// The budgets judged (`fallback` for a run recorded before the verdict kept them), with
/// the pace that set one.
pub fn judged(v: &Verdict, fallback: Option<&Budget>) -> String {
    let mut s = v
        .budget
        .as_ref()
        .or(fallback)
        .map(Budget::describe)
        .unwrap_or_default();
    if let Some(p) = &v.paced {
        s.push_str(&paced(p));
    }
    s
}

/// The budget line: the budgets judged, where the ladder is over them and why, and
/// levels over budget below the line.
pub fn budget(v: &Verdict) -> String {
    let mut s = judged(v, None);
    if let Some(m) = v.over_from {
        let why: Vec<String> = v
            .standings
            .iter()
            .find(|s| s.concurrency == m)
            .map(|s| s.breaches.iter().map(Breach::text).collect())
            .unwrap_or_default();
        s.push_str(&format!("; over from {m} ({})", why.join(", ")));
    }
    if !v.over_below.is_empty() {
        let levels: Vec<String> = v.over_below.iter().map(|l| l.to_string()).collect();
        s.push_str(&format!(
            "; over at {} too, below the line",
            levels.join(", ")
        ));
    }
    s
}

/// What the budget line adds where one call's pace set a voice budget:
/// " — its response p95 is one call's own pace times 1.5: 1,786 ms at 1 call (…)".
pub fn paced(p: &Paced) -> String {
    let at = Unit::Call.level(p.level);
    let mut out = String::new();
    if let Some(r) = &p.response {
        out += &format!(
            " — its response p95 is one call's own pace times {}: {} ms at {at}, the pipeline's own time, not load (no response_p95_ms was set)",
            num(r.factor),
            int(r.own_p95_ms.round() as u64),
        );
    }
    if let Some(st) = &p.stall {
        out += &format!(
            " — its stall share is the lowest level's own and {} more: {:.1} % at {at}, the pipeline's own gaps, not load (no stall_share was set)",
            pct(st.limit - st.own),
            st.own * 100.0,
        );
    }
    out
}

/// What a session costs at the first level, over budget: the time a turn takes beyond
/// the mock's, the CPU of it, and whether queueing between sessions is in it.
pub fn first_cost(c: &FirstCost) -> String {
    let u = c.unit;
    let own = match c.extra_ms_per_turn {
        Some(extra) => format!(
            "a turn takes {} ms more than the mock's own time ({}× in all)",
            num(extra),
            num(c.inflation)
        ),
        None => format!(
            "a {} takes {}× the mock's own time",
            u.one(),
            num(c.inflation)
        ),
    };
    let cpu = match c.cpu_ms_per_turn {
        Some(ms) => format!(", {} CPU ms of it under load", num(ms)),
        None => String::new(),
    };
    let advice = match c.advise_vs_single {
        true => " (to judge how it degrades instead: --budget latency_inflation=off,latency_vs_single=2)",
        false => "",
    };
    // At one or two sessions the time is the SUT's own; above, queueing is in it.
    if c.level > 2 {
        return format!(
            "at {} {own}{cpu}, queueing between {many} included (run a level of 1 or 2 {many} to see what one {} costs alone){advice}",
            u.level(c.level),
            u.one(),
            many = u.many()
        );
    }
    format!(
        "at {} {own}{cpu}: the SUT's own time per turn, before any queueing between {}{advice}",
        u.level(c.level),
        u.many()
    )
}

/// The runs behind a line's range and how the line is crossed: "11 held in 2 of 2 runs,
/// 12 held in 1 of 3 runs; a smooth boundary, bound by latency inflation".
pub fn line(l: &Line) -> String {
    let runs: Vec<String> = l
        .runs
        .iter()
        .map(|r| {
            format!(
                "{} held in {} of {}",
                r.concurrency,
                r.held,
                count(r.of, "run")
            )
        })
        .collect();
    let boundary = |b: &Boundary| match b {
        Boundary::Smooth => "smooth",
        Boundary::Cliff => "cliff",
    };
    let how = match (&l.boundary, &l.binding) {
        (Some(b), Some(by)) => format!("; a {} boundary, bound by {}", boundary(b), binding(by)),
        (Some(b), None) => format!("; a {} boundary", boundary(b)),
        _ => String::new(),
    };
    format!("{}{how}", runs.join(", "))
}

/// How a knee was found, as the report says it beside the knee.
pub fn knee_method(m: KneeMethod) -> &'static str {
    match m {
        KneeMethod::LatencyKneedle => {
            "Kneedle on latency inflation vs log2(concurrency) (normalised, max of x - y)"
        }
        KneeMethod::FirstRateMeetsPlateau => {
            "where the first level's throughput per session, carried on, meets the plateau (never past the plateau's first level)"
        }
        KneeMethod::HalfGain => {
            "the first step where a session adds < 50 % of what one gave at the first level"
        }
    }
}

/// What binds beyond a line: "latency inflation", "collapse (error_rate)".
pub fn binding(b: &Binding) -> String {
    match b {
        Binding::Budget(name) => result::budget::words(name),
        Binding::Collapse(outcome) => format!("collapse ({outcome})"),
    }
}

/// A note that makes the reading less certain.
pub fn note(n: &Note) -> String {
    match n {
        Note::UnstableCost { low, high } => format!(
            "the SUT's CPU per turn varied from {} ms (at {}) to {} ms (at {}) across levels: its cost per turn is not stable (warm-up, caching, garbage collection, or a busy machine), so the curves mix more than load",
            num(low.1),
            low.0,
            num(high.1),
            high.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::facts::{PacedResponse, PacedStall};
    use result::ladder::LevelStanding;
    use result::Standing;

    fn cost(level: usize, extra: Option<f64>, cpu: Option<f64>) -> FirstCost {
        FirstCost {
            level,
            unit: Unit::Session,
            extra_ms_per_turn: extra,
            inflation: 2.4,
            cpu_ms_per_turn: cpu,
            advise_vs_single: true,
        }
    }

    /// The cost at one or two sessions is the SUT's own; above, queueing is named in it.
    #[test]
    fn the_first_levels_cost_names_queueing_above_two_sessions() {
        assert_eq!(
            first_cost(&cost(1, Some(466.7), Some(12.5))),
            "at 1 session a turn takes 467 ms more than the mock's own time (2.4× in all), 12.5 CPU ms of it under load: the SUT's own time per turn, before any queueing between sessions (to judge how it degrades instead: --budget latency_inflation=off,latency_vs_single=2)"
        );
        let many = FirstCost {
            advise_vs_single: false,
            ..cost(64, None, None)
        };
        assert_eq!(
            first_cost(&many),
            "at 64 sessions a session takes 2.4× the mock's own time, queueing between sessions included (run a level of 1 or 2 sessions to see what one session costs alone)"
        );
    }

    #[test]
    fn the_budget_line_says_the_pace_the_breach_and_the_noise_below() {
        let mut b = Budget::default().for_calls();
        b.response_p95_ms = Some(2680.0);
        let v = Verdict {
            budget: Some(b),
            paced: Some(Paced {
                level: 1,
                response: Some(PacedResponse {
                    factor: 1.5,
                    own_p95_ms: 1786.4,
                }),
                stall: Some(PacedStall {
                    limit: 0.0181,
                    own: 0.0081,
                }),
            }),
            over_from: Some(4),
            over_below: vec![2],
            standings: vec![LevelStanding {
                concurrency: 4,
                standing: Standing::Over,
                breaches: vec![Breach {
                    budget: "stall_share".into(),
                    value: 0.0119,
                    limit: 0.01,
                }],
                gain_per_session: None,
                gain_share: None,
            }],
            ..Default::default()
        };
        assert_eq!(
            budget(&v),
            "error rate ≤ 0, response p95 ms ≤ 2680, stall share ≤ 0.01 — its response p95 is one call's own pace times 1.5: 1,786 ms at 1 call, the pipeline's own time, not load (no response_p95_ms was set) — its stall share is the lowest level's own and 1 % more: 0.8 % at 1 call, the pipeline's own gaps, not load (no stall_share was set); over from 4 (stall share 0.0119 > 0.01); over at 2 too, below the line"
        );
        // A run recorded before the verdict kept its budget: the environment's is said.
        let old = Verdict::default();
        assert_eq!(
            judged(&old, Some(&Budget::default())),
            "latency inflation ≤ 2, error rate ≤ 0"
        );
    }

    #[test]
    fn an_unstable_cost_says_both_ends() {
        let n = Note::UnstableCost {
            low: (1, 2.04),
            high: (16, 3.5),
        };
        assert!(note(&n).starts_with(
            "the SUT's CPU per turn varied from 2.04 ms (at 1) to 3.5 ms (at 16) across levels"
        ));
    }
}
