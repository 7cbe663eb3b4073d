//! The provider as the wall: where the mock's quotas refused a material share of the LLM
//! calls, or its generation slots kept them waiting, read from the steps (collapsed ones
//! included: a SUT whose retries gave up collapses exactly there).

use crate::throughput::{Plateau, Wall};
use result::wall::{ProviderPushback, Pushback, PushbackEnded, WallFact};
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};

/// Refused calls above this share of all LLM calls: the provider is pushing back.
pub const REFUSED: f64 = 0.05;
/// Time waited for a slot above this share of the provider's time.
pub const QUEUED: f64 = 0.25;
/// Waiting at least this share of the provider's time, and more than the share refused:
/// the slots, not the quotas, are what held calls back.
pub const QUEUE_LEADS: f64 = 0.10;

/// Whether refusals, rather than the wait for slots, are what held calls back: the one
/// rule for the wall's words and for the RESULT's `binding`.
pub fn refusals_lead(refused_share: f64, queue_share: f64) -> bool {
    refused_share > 0.0 && !(queue_share >= QUEUE_LEADS && queue_share > refused_share)
}

/// Below those, pushback is noticed from these shares: the wall starts where it begins.
const NOTICED_REFUSED: f64 = 0.01;
const NOTICED_QUEUED: f64 = 0.05;

/// Pushback at these shares; a level whose sessions failed (`error_rate`) while the
/// provider refused calls counts at any share: the refusals are what failed there (a SUT
/// that does not retry fails on its first 429).
fn pushback(s: &StepResult, refused: f64, queued: f64) -> bool {
    s.provider.as_ref().is_some_and(|p| {
        p.refused_share >= refused
            || p.queue_share >= queued
            || (s.outcome == Outcome::ErrorRate && p.refused_share > 0.0)
    })
}

/// The provider as the wall when it pushed back materially at some level (steps sorted
/// by concurrency): from the first level where its pushback began, with the figures of
/// the first material one; and that material level, to weigh against the SUT's own
/// walls. `None` when it never did or no limit was set.
pub fn wall(steps: &[StepResult], plateau: Option<&Plateau>) -> Option<(Wall, f64)> {
    let s = steps.iter().find(|s| pushback(s, REFUSED, QUEUED))?;
    let p = s.provider.as_ref()?;
    let refusing = refusals_lead(p.refused_share, p.queue_share);
    let from = steps
        .iter()
        .find(|x| pushback(x, NOTICED_REFUSED, NOTICED_QUEUED))
        .map_or(s.concurrency, |x| x.concurrency.min(s.concurrency));
    let how = match refusing {
        true => Pushback::Refused {
            share: p.refused_share,
            amplification: (p.retried > 0).then_some(p.amplification),
        },
        false => Pushback::Queued {
            share: p.queue_share,
            wait_p99_ms: p.queue_wait_p99_ms,
        },
    };
    let ended = match s.outcome {
        Outcome::Ok => None,
        Outcome::ErrorRate if refusing => Some(PushbackEnded::Failed {
            retried: p.retried > 0,
            failed: s.sessions_failed,
            of: s.sessions_ok + s.sessions_failed,
        }),
        outcome => Some(PushbackEnded::Outcome { outcome }),
    };
    let fact = WallFact::Provider(ProviderPushback {
        unit: Unit::of(steps),
        from,
        binding: p.binding.clone(),
        at: s.concurrency,
        how,
        ended,
        flat: plateau.map(result::wall::Flat::of),
    });
    let wall = crate::wall::of(WallKind::Provider, Some(from as f64), fact);
    Some((wall, s.concurrency as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::tests::step;

    fn pushed(n: usize, refused: f64, queue: f64) -> StepResult {
        let mut s = step(n, n as f64, 1.0, 0.1);
        s.provider = Some(result::Provider {
            limits: "provider: 600 requests/min per key".into(),
            answered: 100,
            refused: Default::default(),
            refused_share: refused,
            retried: (refused * 100.0) as u64,
            amplification: 1.0 / (1.0 - refused),
            queue_wait_p50_ms: 0.0,
            queue_wait_p99_ms: queue * 1000.0,
            queue_share: queue,
            peak_in_flight: 0,
            peak_queued: 0,
            binding: Some("the 600 requests/min quota per key".into()),
        });
        s
    }

    #[test]
    fn the_first_level_with_material_pushback_is_the_wall() {
        let mut steps = vec![
            pushed(1, 0.0, 0.0),
            pushed(2, 0.01, 0.0),
            pushed(4, 0.2, 0.0),
        ];
        steps[2].outcome = Outcome::ErrorRate;
        steps[2].sessions_failed = 1;
        let w = wall(&steps, None).unwrap().0;
        // Pushback began at 2 (1 % refused) and was material at 4.
        assert_eq!((w.kind, w.from), (WallKind::Provider, Some(2.0)));
        assert_eq!(
            words::wall::text(&w),
            "the provider from 2 sessions — the 600 requests/min quota per key refused 20 % of LLM calls at 4 (retry amplification 1.25×); the SUT's retries gave up there (1 of 5 sessions failed)"
        );
        // A SUT that does not retry: no amplification, and the failures are its own choice.
        steps[2].provider.as_mut().unwrap().retried = 0;
        let w = wall(&steps, None).unwrap().0;
        assert!(
            words::wall::text(&w).contains("refused 20 % of LLM calls at 4 (not retried); the SUT did not retry the refused calls (1 of 5 sessions failed)"),
            "{}",
            words::wall::text(&w)
        );
        let mut queued = vec![pushed(1, 0.0, 0.0), pushed(8, 0.02, 0.5)];
        queued[1].provider.as_mut().unwrap().binding = Some("the 6 generation slots".into());
        queued[1].outcome = Outcome::Timeout;
        let (w, material) = wall(&queued, None).unwrap();
        // Waiting outweighs the 2 % refused: the slots are named, and a timeout is not
        // blamed on retries.
        assert_eq!(
            words::wall::text(&w),
            "the provider from 8 sessions — the 6 generation slots kept calls waiting (50 % of the provider's time at 8, p99 wait 500 ms); the step there ended in timeout"
        );
        assert_eq!(material, 8.0);
        assert!(wall(&[pushed(1, 0.01, 0.1)], None).is_none());
        // LiteLLM without retries: one call in 25 refused, and its session failed.
        let mut one = vec![pushed(4, 0.0, 0.0), pushed(8, 0.04, 0.0)];
        one[1].outcome = Outcome::ErrorRate;
        one[1].sessions_failed = 1;
        one[1].provider.as_mut().unwrap().retried = 0;
        let (w, material) = wall(&one, None).unwrap();
        assert_eq!(material, 8.0);
        assert!(
            words::wall::text(&w).ends_with("refused 4 % of LLM calls at 8 (not retried); the SUT did not retry the refused calls (1 of 9 sessions failed)"),
            "{}",
            words::wall::text(&w)
        );
        assert!(wall(&[step(1, 1.0, 1.0, 0.1)], None).is_none());
        // 6 % refused but 15 % of the time waiting: the wait leads, in the words as in
        // the RESULT's binding (one rule for both).
        assert!(!refusals_lead(0.06, 0.15) && refusals_lead(0.06, 0.05));
        let (w, _) = wall(&[pushed(2, 0.06, 0.15)], None).unwrap();
        assert!(
            words::wall::text(&w).contains("kept calls waiting (15 %"),
            "{}",
            words::wall::text(&w)
        );
    }
}
