//! What else a ladder shows besides its line and wall, a sentence each: a cold start
//! (each session's first turn much slower than the rest), the SUT's threads waiting for a
//! CPU they could have had, a rate the step's own evidence did not allow, a busy machine;
//! and what a session costs when even the first level is over budget, and whether the
//! SUT's cost per turn held still across levels.

use crate::budget::{num, Budget};
use result::words::{count, sessions};
use result::StepResult;

/// A first turn this many times slower than the others is a cold start.
pub const COLD: f64 = 2.0;
/// Sessions this short leave the cold start in every step: suggest longer ones.
pub const SHORT_SESSIONS: u64 = 3;
/// Run-queue wait this many ms a second, with the CPU below its cap and no outsider.
pub const RUN_QUEUE_MS: f64 = 200.0;

/// The findings of these steps (sorted by sessions), a sentence each.
pub fn of(steps: &[StepResult]) -> Vec<String> {
    [cold_start(steps), run_queue(steps), rate_fallbacks(steps)]
        .into_iter()
        .flatten()
        .collect()
}

/// Each session's first turn much slower than its others, at the lowest level that shows
/// it; with short sessions, the advice to run longer ones.
fn cold_start(steps: &[StepResult]) -> Option<String> {
    let (s, c) = steps.iter().find_map(|s| {
        let c = s.cold_start.as_ref()?;
        (c.first_turn_p50_ms >= COLD * c.later_turn_p50_ms && c.later_turn_p50_ms > 0.0)
            .then_some((s, c))
    })?;
    let turns = s.turns / (s.sessions_ok + s.sessions_failed).max(1);
    let advice = if turns <= SHORT_SESSIONS {
        format!(
            "; sessions of {} are too short to reach a steady state — run longer ones (--set turns=10)",
            count(turns, "turn")
        )
    } else {
        String::new()
    };
    Some(format!(
        "a cold start: each session's first turn takes {} ms against {} ms for the turns after (median, at {}){advice}",
        num(c.first_turn_p50_ms),
        num(c.later_turn_p50_ms),
        sessions(s.concurrency as f64)
    ))
}

/// Threads runnable and waiting for a CPU while the SUT's CPU was below its cap and no
/// other process took its cores: more runnable threads than cores.
fn run_queue(steps: &[StepResult]) -> Option<String> {
    let s = steps.iter().find(|s| {
        s.sched_delay_ms_per_s.is_some_and(|d| d >= RUN_QUEUE_MS)
            && s.cpu_of_cap
                .is_some_and(|c| c < crate::throughput::CPU_WALL)
            && !s.contaminated()
    })?;
    Some(format!(
        "run-queue wait without a busy machine: at {} the SUT's threads waited {} ms a second for a CPU while its CPU was at {} of its cap and nothing else used its cores — more runnable threads than cores",
        sessions(s.concurrency as f64),
        num(s.sched_delay_ms_per_s.unwrap_or(0.0)),
        crate::throughput::pct(s.cpu_of_cap.unwrap_or(0.0))
    ))
}

/// Levels whose rate is the wall rate because the full-load rate failed its check.
fn rate_fallbacks(steps: &[StepResult]) -> Option<String> {
    let fell: Vec<&StepResult> = steps
        .iter()
        .filter(|s| s.rate_check.as_ref().is_some_and(|r| r.why.is_some()))
        .collect();
    let first = fell.first()?;
    let levels: Vec<String> = fell.iter().map(|s| s.concurrency.to_string()).collect();
    Some(format!(
        "the rate at {} is turns over the wall time: at {}, {}",
        levels.join(", "),
        first.concurrency,
        first.rate_check.as_ref()?.why.as_deref().unwrap_or("")
    ))
}

/// What a session costs at the first level, when even that level is over budget: the
/// SUT's own time per turn beyond the mock's, and how much of it was CPU (over the span of
/// full load, not counting the SUT's start-up).
pub(crate) fn first_cost(s: &StepResult, b: &Budget) -> Option<String> {
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
    // At one or two sessions the time is the SUT's own; above, queueing is in it.
    if s.concurrency > 2 {
        return Some(format!(
            "at {} {own}{cpu}, queueing between sessions included (run a level of 1 or 2 sessions to see what one session costs alone){advice}",
            sessions(s.concurrency as f64)
        ));
    }
    Some(format!(
        "at {} {own}{cpu}: the SUT's own time per turn, before any queueing between sessions{advice}",
        sessions(s.concurrency as f64),
    ))
}

/// The SUT's CPU per turn should not depend much on the level; when it varies by more
/// than 30 % across levels (warm-up, caching, garbage collection, a busy machine), the
/// curves mix more than load and the reading is less certain.
pub(crate) fn unstable_cost(steps: &[StepResult]) -> Option<String> {
    let costs: Vec<(usize, f64)> = steps
        .iter()
        .filter(|s| s.outcome.is_ok() && s.turns >= 20)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(concurrency: usize) -> StepResult {
        StepResult {
            concurrency,
            sessions_ok: concurrency as u64,
            turns: 3 * concurrency as u64,
            latency_inflation: Some(2.4),
            p50_session_ms: Some(2400.0),
            ideal_session_ms: Some(1000.0),
            ..Default::default()
        }
    }

    /// The per-session cost sentence only where one session's time is its own (1 or 2
    /// sessions); at 64 it says the level and that queueing is in it.
    #[test]
    fn the_cost_sentence_names_queueing_above_two_sessions() {
        let b = Budget::default();
        let one = first_cost(&at(1), &b).unwrap();
        assert!(one.starts_with("at 1 session a turn takes"), "{one}");
        assert!(
            one.contains("before any queueing between sessions"),
            "{one}"
        );
        let two = first_cost(&at(2), &b).unwrap();
        assert!(
            two.starts_with("at 2 sessions a turn") && two.contains("before any queueing"),
            "{two}"
        );
        let many = first_cost(&at(64), &b).unwrap();
        assert!(many.starts_with("at 64 sessions a turn takes"), "{many}");
        assert!(
            many.contains("queueing between sessions included"),
            "{many}"
        );
        assert!(!many.contains("before any queueing"), "{many}");
    }
}
