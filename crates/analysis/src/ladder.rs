//! A ladder's verdict from its steps: pure, so a stored run analyses the same again.

use crate::scaling::Point;
use result::StepResult;
use serde_json::json;

/// The analysis of a ladder: its ceiling, collapse, knee, USL fit, harness-bound steps,
/// and the capacity projection onto `host` (GB, cores) for `target` sessions.
pub fn analyse(
    steps: &[StepResult],
    causes: &[Option<String>],
    host: Option<(f64, f64)>,
    target: Option<u64>,
    interrupted: bool,
) -> serde_json::Value {
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome == "ok").collect();
    let ceiling = ok.last();
    let collapse = steps.iter().zip(causes).find(|(s, _)| s.outcome != "ok");
    let points: Vec<Point> = ok
        .iter()
        .filter_map(|s| {
            Some(Point {
                concurrency: s.concurrency as f64,
                inflation: s.latency_inflation?,
                throughput: s.turns as f64 / (s.wall_ms / 1000.0).max(1e-9),
            })
        })
        .collect();
    let knee = crate::scaling::knee(&points);
    let usl = crate::scaling::usl(&points);
    let harness_bound: Vec<usize> = steps
        .iter()
        .filter(|s| s.harness.bound == "harness")
        .map(|s| s.concurrency)
        .collect();
    let capacity = match (ceiling, host) {
        (Some(c), Some((gb, cpus))) => {
            let turns_per_session = c.turns as f64 / c.concurrency as f64;
            let per_s = c
                .p50_session_ms
                .map_or(0.0, |ms| turns_per_session / (ms / 1000.0).max(1e-9));
            Some(crate::scaling::capacity(
                c.rss_kb_per_session.max(0.0),
                c.cpu_ms_per_turn.unwrap_or(0.0),
                per_s,
                gb,
                cpus,
                target,
            ))
        }
        _ => None,
    };
    json!({
        "ceiling": ceiling.map(|c| c.concurrency),
        "ceiling_is_harness_bound": ceiling.is_some_and(|c| c.harness.bound == "harness"),
        "collapse": collapse.map(|(s, cause)| json!({"concurrency": s.concurrency, "outcome": s.outcome, "cause": cause})),
        "no_collapse": collapse.is_none() && !interrupted,
        "knee": knee,
        "usl": match usl { Ok(u) => json!(u), Err(e) => json!({"refused": e}) },
        "capacity": capacity,
        "harness_bound_steps": harness_bound,
    })
}
