//! A ladder of calls judged with no voice budget of its user's: one call's own pace
//! sets it. A pipeline that waits out its VAD's silence and then runs STT, the LLM and TTS
//! one after another answers a lone caller in about 1.8 s; the default 1.5 s would call
//! that pace load, and no level would hold. So where the first level is over the default
//! by its own pace, [`PACE`] times its response p95 is the budget, and the verdict says so.
//! Its stalls the same way: a reply spoken sentence by sentence waits between its speech
//! requests at one call too (LiveKit's worker: 0.8 % of the replies' time), so the default
//! 1 % is what more calls may add to one call's own share, not the whole of it.
//! Where the default holds there, it stands; a budget the user set is judged as set.

use crate::budget::Budget;
use result::facts::{Paced, PacedResponse, PacedStall};
use result::StepResult;

/// What more calls may add to one call's own response time before a level is over.
pub const PACE: f64 = 1.5;

/// The budget a ladder is judged by, given its lowest level: `b`, with one call's pace in
/// place of a default it sets (see [`paced`] and [`paced_stall`]).
pub fn of(lowest: Option<&StepResult>, b: &Budget) -> Budget {
    let mut out = b.clone();
    if let Some((limit, _)) = paced(lowest, b) {
        out.response_p95_ms = Some(limit);
        out.response_p95_default = false;
    }
    if let Some((limit, _)) = paced_stall(lowest, b) {
        out.stall_share = Some(limit);
        out.stall_share_default = false;
    }
    out
}

/// The lowest level, where it is calls that ended ok: the one call's pace a ladder reads.
fn one_call(lowest: Option<&StepResult>) -> Option<&result::VoiceCalls> {
    lowest
        .filter(|s| s.outcome.is_ok())
        .and_then(|s| s.voice.as_ref())
}

/// The response budget from one call's pace, and the p95 it came from; None where the
/// user set one, the lowest level is not calls that ended ok, or it is within the default.
fn paced(lowest: Option<&StepResult>, b: &Budget) -> Option<(f64, f64)> {
    let p95 = one_call(lowest)?.response_p95_ms?;
    let limit = (PACE * p95 / 10.0).ceil() * 10.0;
    let default = b.response_p95_ms.unwrap_or(f64::INFINITY);
    (b.response_p95_default && p95 > default).then_some((limit, p95))
}

/// Past this many times the default, a lowest level's stalls are broken audio, not a
/// pipeline's gaps between its sentences, and are judged against the default.
const OWN_STALLS_AT_MOST: f64 = 2.0;

/// The stall budget from one call's own stalls: the default's share added to that level's
/// (to a hundredth of a percent), and the share it came from; None where the user set
/// one, the lowest level is not calls that ended ok, or it stalled for none of its time
/// or for more than [`OWN_STALLS_AT_MOST`] times the default.
fn paced_stall(lowest: Option<&StepResult>, b: &Budget) -> Option<(f64, f64)> {
    let own = (one_call(lowest)?.stall_share * 1e4).round() / 1e4;
    let default = b.stall_share.filter(|d| d.is_finite())?;
    let limit = ((own + default) * 1e4).round() / 1e4;
    let gaps = own > 0.0 && own <= OWN_STALLS_AT_MOST * default;
    (b.stall_share_default && gaps).then_some((limit, own))
}

/// Where one call's pace set a voice budget: the fact the verdict's budget line says
/// (`words::verdict::paced`); None where it set neither.
pub fn fact(lowest: Option<&StepResult>, b: &Budget) -> Option<Paced> {
    let s = lowest?;
    let response = paced(lowest, b).map(|(_, own_p95_ms)| PacedResponse {
        factor: PACE,
        own_p95_ms,
    });
    let stall = paced_stall(lowest, b).map(|(limit, own)| PacedStall { limit, own });
    (response.is_some() || stall.is_some()).then_some(Paced {
        level: s.concurrency,
        response,
        stall,
    })
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
        let said = words::verdict::paced(&fact(Some(&slow), &d).unwrap());
        assert!(
            said.contains(": 1,786 ms at 1 call, the pipeline's own time"),
            "{said}"
        );
        // Within the default at one call, the default stands: a verdict right today.
        for p95 in [700.0, 1200.0, 1500.0] {
            let quick = call(1, 0.0, p95, 0.3);
            assert_eq!(of(Some(&quick), &d), d);
            assert_eq!(fact(Some(&quick), &d), None);
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

    #[test]
    fn one_calls_own_stalls_are_not_said_as_load() {
        let d = Budget::default().for_calls();
        assert!(d.stall_share_default);
        // examples/livekit-agent's worker (2026-11-29): its replies' gaps between their
        // sentences' speech requests, 0.81 % of the time they played, at one call.
        let gappy = call(1, 0.0081, 1400.0, 0.3);
        let b = of(Some(&gappy), &d);
        assert_eq!(b.stall_share, Some(0.0181));
        assert_eq!(b.response_p95_ms, d.response_p95_ms);
        assert_eq!(
            words::verdict::paced(&fact(Some(&gappy), &d).unwrap()),
            " — its stall share is the lowest level's own and 1 % more: 0.8 % at 1 call, the pipeline's own gaps, not load (no stall_share was set)"
        );
        // No stalls at one call: the default, as before; stalls past twice the default
        // at one call are broken audio, judged against the default too.
        for share in [0.0, 0.05] {
            let lowest = call(1, share, 1400.0, 0.3);
            assert_eq!(of(Some(&lowest), &d), d, "{share}");
        }
        assert_eq!(
            of(Some(&call(1, 0.02, 1400.0, 0.3)), &d).stall_share,
            Some(0.03)
        );
        // Set by the user (or off), as set.
        for v in ["0.01", "off"] {
            let mut set = Budget::default();
            set.apply_flag(&format!("stall_share={v}")).unwrap();
            let set = set.for_calls();
            assert!(!set.stall_share_default);
            assert_eq!(of(Some(&gappy), &set), set);
            assert_eq!(fact(Some(&gappy), &set), None);
        }
        // A lowest level that failed sets no pace.
        let failed = crate::calls::tests::collapsed(call(1, 0.0081, 1400.0, 0.3));
        assert_eq!(of(Some(&failed), &d), d);
    }
}
