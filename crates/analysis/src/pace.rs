//! A ladder of calls judged with no response budget of its user's: one call's own pace
//! sets it. A pipeline that waits out its VAD's silence and then runs STT, the LLM and TTS
//! one after another answers a lone caller in about 1.8 s; the default 1.5 s would call
//! that pace load, and no level would hold. So where the first level is over the default
//! by its own pace, [`PACE`] times its response p95 is the budget, and the verdict says so.
//! Where the default holds there, it stands; a budget the user set is judged as set.

use crate::budget::Budget;
use result::words::{int, Unit};
use result::StepResult;

/// What more calls may add to one call's own response time before a level is over.
pub const PACE: f64 = 1.5;

/// The budget a ladder is judged by, given its lowest level: `b`, or where that level's
/// response p95 is over the default, [`PACE`] × it (to 10 ms) in its place.
pub fn of(lowest: Option<&StepResult>, b: &Budget) -> Budget {
    match paced(lowest, b) {
        Some((limit, _)) => Budget {
            response_p95_ms: Some(limit),
            response_p95_default: false,
            ..b.clone()
        },
        None => b.clone(),
    }
}

/// The response budget from one call's pace, and the p95 it came from; None where the
/// user set one, the lowest level is not calls that ended ok, or it is within the default.
fn paced(lowest: Option<&StepResult>, b: &Budget) -> Option<(f64, f64)> {
    let s = lowest.filter(|s| s.outcome.is_ok() && s.voice.is_some())?;
    let p95 = s.voice.as_ref()?.response_p95_ms?;
    let limit = (PACE * p95 / 10.0).ceil() * 10.0;
    let default = b.response_p95_ms.unwrap_or(f64::INFINITY);
    (b.response_p95_default && p95 > default).then_some((limit, p95))
}

/// What the verdict's budget line adds where one call's pace set the response budget:
/// "; response p95 from one call's own pace: 1.5 × 1,786 ms at 1 call (…)".
pub fn words(lowest: Option<&StepResult>, b: &Budget) -> String {
    match (paced(lowest, b), lowest) {
        (Some((_, p95)), Some(s)) => format!(
            " — its response p95 is one call's own pace times {PACE}: {} ms at {}, the pipeline's own time, not load (no response_p95_ms was set)",
            int(p95.round() as u64),
            Unit::Call.level(s.concurrency)
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::tests::call;

    #[test]
    fn one_calls_own_pace_sets_the_response_budget_only_where_none_was_set() {
        let d = Budget::default().for_calls();
        assert!(d.response_p95_default);
        // A VAD-ended pipeline: 1,786 ms at one call.
        let slow = call(1, 0.0, 1786.0, 0.3);
        let b = of(Some(&slow), &d);
        assert_eq!(b.response_p95_ms, Some(2680.0));
        assert_eq!(b.stall_share, d.stall_share);
        assert!(words(Some(&slow), &d).contains(": 1,786 ms at 1 call, the pipeline's own time"));
        // Within the default at one call, the default stands: a verdict right today.
        for p95 in [700.0, 1200.0, 1500.0] {
            let quick = call(1, 0.0, p95, 0.3);
            assert_eq!(of(Some(&quick), &d), d);
            assert_eq!(words(Some(&quick), &d), "");
        }
        // Set by the user, as set.
        let mut set = Budget::default();
        set.apply_flag("response_p95_ms=1500").unwrap();
        let set = set.for_calls();
        assert_eq!(of(Some(&slow), &set), set);
        // Text sessions have no response budget to pace.
        assert_eq!(
            of(Some(&crate::verdict::tests::step(1, 1.0, 1.0, 0.1)), &d),
            d
        );
    }
}
