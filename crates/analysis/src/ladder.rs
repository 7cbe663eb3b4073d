//! A ladder's verdict from its steps: pure, so a stored run analyses the same again.

use crate::scaling::Point;
use result::cause::StepCause;
use result::ladder::{Collapse, KneeReading, LadderAnalysis, UslNote, UslReading};
use result::{Bound, Confidence, Outcome, StepResult};

/// Where the capacity projection goes: (GB, cores) of a host, and sessions to plan for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Projection {
    pub host: Option<(f64, f64)>,
    pub target: Option<u64>,
}

/// The analysis of a ladder (steps sorted by concurrency): the verdict against `budget`
/// (holds, over budget, wall, collapse), the throughput knee and plateau, the latency
/// knee, a USL fit, harness-bound steps, and the capacity projection.
pub fn analyse(
    steps: &[StepResult],
    repeats: &[StepResult],
    causes: &[Option<StepCause>],
    budget: &crate::Budget,
    projection: Projection,
    interrupted: bool,
) -> LadderAnalysis {
    let (host, target) = (projection.host, projection.target);
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome == Outcome::Ok).collect();
    let ceiling = ok.last();
    let collapse = steps
        .iter()
        .zip(causes)
        .find(|(s, _)| s.outcome != Outcome::Ok);
    let points: Vec<Point> = ok
        .iter()
        .filter_map(|s| {
            Some(Point {
                concurrency: s.concurrency as f64,
                inflation: s.latency_inflation?,
                throughput: crate::verdict::turns_per_s(s),
            })
        })
        .collect();
    let latency_knee = crate::scaling::knee(&points);
    let usl = crate::scaling::usl(&points);
    let verdict = crate::verdict::verdict_with(steps, repeats, budget);
    let harness_bound: Vec<usize> = steps
        .iter()
        .filter(|s| s.harness.bound == Bound::Harness)
        .map(|s| s.concurrency)
        .collect();
    // Project from the last level within budget when there is one: that is the line.
    let basis = verdict
        .holds
        .and_then(|h| ok.iter().find(|s| s.concurrency == h))
        .or(ceiling);
    let capacity = match (basis, host) {
        (Some(c), Some((gb, cpus))) => {
            let turns_per_session = c.turns as f64 / c.concurrency as f64;
            let per_s = c
                .p50_session_ms
                .map_or(0.0, |ms| turns_per_session / (ms / 1000.0).max(1e-9));
            let mut cap = crate::scaling::capacity(
                // A session's memory by PSS where it was read (shared pages once), RSS else.
                (c.memory().1 * 1024.0).max(0.0),
                c.cpu_ms_per_turn.unwrap_or(0.0),
                per_s,
                gb,
                cpus,
                target,
            );
            bill(&mut cap, c.cost.as_ref(), per_s);
            Some(cap)
        }
        _ => None,
    };
    LadderAnalysis {
        ceiling: ceiling.map(|c| c.concurrency),
        ceiling_is_harness_bound: ceiling.is_some_and(|c| c.harness.bound == Bound::Harness),
        collapse: collapse.map(|(s, cause)| Collapse {
            concurrency: s.concurrency,
            outcome: s.outcome,
            cause: cause.as_ref().map(|c| c.cause.clone()),
            last_output: cause.as_ref().and_then(|c| c.last_output.clone()),
            worker: crate::admission::refusal(s),
        }),
        no_collapse: collapse.is_none() && !interrupted,
        knee: knee_reading(&verdict),
        latency_knee: Some(latency_knee),
        usl: usl_reading(usl, verdict.plateau.as_ref(), &points),
        verdict: Some(verdict),
        capacity,
        harness_bound_steps: harness_bound,
        log: Some(crate::logs::findings(steps)),
    }
}

/// The provider's bill per hour beside the hosts: the target's sessions (or one host's)
/// at the cost per turn measured at the line, when its models had prices.
fn bill(cap: &mut result::ladder::Capacity, cost: Option<&result::Cost>, per_s: f64) {
    let Some(c) = cost.filter(|c| !c.by_model.is_empty() && per_s > 0.0) else {
        return;
    };
    let sessions = cap.target.map_or(cap.sessions_per_host, |t| t as f64);
    if !sessions.is_finite() {
        return;
    }
    let hour = crate::cost::bill_per_hour(c.per_turn, per_s, sessions);
    cap.bill = Some(result::ladder::BillBasis {
        currency: c.currency.clone(),
        per_turn: c.per_turn,
        prices_date: c.prices_date.clone(),
    });
    cap.provider_bill_per_hour = Some(hour);
}

/// The knee the reports mark: where throughput stops scaling (the latency knee is kept
/// apart as `latency_knee`).
fn knee_reading(v: &result::ladder::Verdict) -> KneeReading {
    match (&v.knee, v.top) {
        (Some(k), _) => KneeReading::Found(k.clone()),
        (None, None) => KneeReading::Insufficient {
            confidence: Confidence::Insufficient,
        },
        (None, Some(top)) => KneeReading::Scaling {
            confidence: Confidence::None,
            from: top,
            to: top,
        },
    }
}

/// The USL fit, with a warning when its predicted peak lies far beyond a plateau that
/// was measured: then the fit is no prediction to trust.
fn usl_reading(
    usl: Result<crate::scaling::Usl, result::ladder::UslRefusal>,
    plateau: Option<&crate::throughput::Plateau>,
    points: &[Point],
) -> UslReading {
    let mut u = match usl {
        Err(refused) => return UslReading::Refused { refused },
        Ok(u) => u,
    };
    let measured = points.iter().map(|p| p.throughput).fold(0.0, f64::max);
    if let Some(peak) = u.peak_throughput.filter(|t| *t < measured * 0.9) {
        u.note = Some(UslNote::PeakBelowMeasured { peak, measured });
    } else if let (Some(peak), Some(p)) = (u.peak_concurrency, plateau) {
        if peak > p.from * 2.0 {
            u.note = Some(UslNote::PeakBeyondPlateau { peak, from: p.from });
        }
    }
    UslReading::Fitted(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projection_adds_the_providers_bill_at_the_line() {
        let mut s = crate::verdict::tests::step(10, 10.0, 1.1, 0.2);
        s.cost = Some(result::Cost {
            per_turn: 0.002,
            currency: "USD".into(),
            prices_date: "2026-11-24".into(),
            by_model: [("m".to_string(), result::ModelTokens::default())].into(),
            ..Default::default()
        });
        let projection = Projection {
            host: Some((64.0, 16.0)),
            target: Some(1000),
        };
        let a = analyse(
            &[s.clone()],
            &[],
            &[None],
            &crate::Budget::default(),
            projection,
            false,
        );
        let c = a.capacity.expect("a projection");
        // 3 turns a session in a p50 session of 1.1 s; 1,000 sessions at $0.002 a turn.
        let hour = 0.002 * (3.0 / 1.1) * 3600.0 * 1000.0;
        assert!(
            (c.provider_bill_per_hour.unwrap() - hour).abs() < 0.01,
            "{c:?}"
        );
        let line = words::capacity::working(&c).pop().unwrap();
        assert!(line.starts_with("provider's bill: USD 0.00200 per turn × 2.727 turns per session per second × 3600 s × 1000 sessions = USD 19636.36 per hour"), "{line}");
        // Without prices, no bill.
        s.cost = None;
        let a = analyse(
            &[s],
            &[],
            &[None],
            &crate::Budget::default(),
            projection,
            false,
        );
        assert_eq!(a.capacity.unwrap().provider_bill_per_hour, None);
    }
}
