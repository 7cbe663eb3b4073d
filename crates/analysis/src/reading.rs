//! What the wall reads of each step: its throughput, its CPU and memory against the cap,
//! what others took of its cores, its run-queue wait, and what callers heard on a level
//! of calls — one `Sample` a step, for the text ladder's wall and the calls' alike.

use crate::standing::turns_per_s;
use crate::throughput::Sample;
use result::{Bound, Outcome, StepResult};

/// The throughput samples of the levels that did not collapse.
pub fn samples(steps: &[StepResult]) -> Vec<Sample> {
    steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok)
        .map(sample)
        .collect()
}

/// What the wall reads of one step.
pub(crate) fn sample(s: &StepResult) -> Sample {
    Sample {
        concurrency: s.concurrency as f64,
        turns_per_s: turns_per_s(s),
        cpu_of_cap: s.cpu_of_cap,
        cpu_cores: s.cpu_cores,
        throttled: s.cpu_throttled,
        mem_of_cap: s.mem_of_cap,
        harness_bound: s.harness.bound == Bound::Harness,
        others: crate::quota::denied(s),
        quota_held: crate::quota::held_below_cores(s),
        run_wait: s.sched_delay_ms_per_s.map(|d| d / 1000.0),
        cpu_ms_per_turn: s.cpu_ms_per_turn,
        harness_others: s.interference.as_ref().and_then(|i| i.harness_share),
        call: s.voice.as_ref().map(|v| (v.stall_share, v.response_p95_ms)),
        unit: result::words::Unit::of_step(s),
    }
}
