//! The timing model: when each chunk of a reply is due, relative to the moment the
//! request arrived.
//!
//! Deadlines are absolute offsets from the request's start, computed one chunk at a
//! time from a per-request seeded RNG, so a stream never drifts: a late chunk does not
//! push back the ones after it (they catch up, and the mock coalesces frames that
//! are already due into one write).

use crate::provider::scenario::{Jitter, ModelSpec};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// Multiplier drawn for one nominal duration.
pub fn factor(jitter: Jitter, rng: &mut ChaCha8Rng) -> f64 {
    match jitter {
        Jitter::Fixed => 1.0,
        Jitter::Uniform { spread } => 1.0 + rng.gen_range(-spread..=spread),
        // Capped so a single draw cannot stall a stream for minutes.
        Jitter::LogNormal { sigma } => (sigma * standard_normal(rng)).exp().min(20.0),
    }
}

/// A standard normal draw (Box–Muller), deterministic under the RNG.
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x.max(0.0) / 1000.0)
}

/// Walks the deadlines of one reply's chunks.
#[derive(Clone)]
pub struct Schedule {
    due: Duration,
    started: bool,
    tok_ms: f64,
    /// Time per reasoning token.
    think_ms: f64,
    ttft_ms: f64,
    jitter: Jitter,
    /// Chunks scheduled so far.
    count: usize,
    /// An injected stall: before chunk `.0`, wait `.1` ms more.
    stall: Option<(usize, f64)>,
}

impl Schedule {
    /// Stretches the time per token (a busy provider generates slower).
    pub fn slow_tokens(&mut self, factor: f64) {
        self.tok_ms *= factor;
        self.think_ms *= factor;
    }

    pub fn new(spec: &ModelSpec) -> Self {
        Schedule {
            due: Duration::ZERO,
            started: false,
            tok_ms: spec.tok_ms,
            think_ms: spec.reasoning.tok_ms.unwrap_or(spec.tok_ms),
            ttft_ms: spec.ttft_ms,
            jitter: spec.jitter,
            count: 0,
            stall: None,
        }
    }

    /// An injected latency spike: the first token comes `ms` later.
    pub fn spike(&mut self, ms: f64) {
        self.ttft_ms += ms;
    }

    /// Reading `tokens` prompt tokens the cache did not hold, at `ms_per_1k` per 1,000:
    /// the first token comes that much later (jittered with it).
    pub fn prefill(&mut self, tokens: u32, ms_per_1k: f64) {
        self.ttft_ms += tokens as f64 * ms_per_1k / 1000.0;
    }

    /// An injected stall of `ms` before chunk `at` (and so before all after it).
    pub fn stall_before(&mut self, at: usize, ms: f64) {
        self.stall = Some((at, ms));
    }

    /// Deadline of the next chunk, which carries `tokens` output tokens (reasoning
    /// ones when `thinking`, at their own rate). The first chunk is due at the time to
    /// first token; each later one after its tokens' worth of per-token time.
    pub fn next(&mut self, tokens: u32, thinking: bool, rng: &mut ChaCha8Rng) -> Duration {
        let per = if thinking { self.think_ms } else { self.tok_ms };
        let step = if self.started {
            per * tokens as f64
        } else {
            self.started = true;
            // The first chunk's extra tokens (beyond the first) also take their time.
            self.ttft_ms + per * tokens.saturating_sub(1) as f64
        };
        let stall = match self.stall {
            Some((at, extra)) if at == self.count => extra,
            _ => 0.0,
        };
        self.count += 1;
        self.due += ms(step * factor(self.jitter, rng) + stall);
        self.due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fixed_schedule_is_exact() {
        let spec = ModelSpec {
            ttft_ms: 200.0,
            tok_ms: 5.0,
            ..ModelSpec::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = Schedule::new(&spec);
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(200));
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(205));
        assert_eq!(s.next(4, false, &mut rng), Duration::from_millis(225));
        let mut s = Schedule::new(&spec);
        s.spike(100.0);
        s.stall_before(1, 50.0);
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(300));
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(355));
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(360));
        // Prefill: 2,500 uncached tokens at 40 ms per 1,000 add 100 ms before the first.
        let mut s = Schedule::new(&spec);
        s.prefill(2500, 40.0);
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(300));
    }

    #[test]
    fn reasoning_tokens_go_at_their_own_rate() {
        let mut spec = ModelSpec {
            ttft_ms: 100.0,
            tok_ms: 10.0,
            ..ModelSpec::default()
        };
        spec.reasoning.tok_ms = Some(2.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = Schedule::new(&spec);
        // Hidden reasoning: its start at the first token, its 50 tokens at 2 ms each.
        assert_eq!(s.next(0, true, &mut rng), Duration::from_millis(100));
        assert_eq!(s.next(50, true, &mut rng), Duration::from_millis(200));
        assert_eq!(s.next(1, false, &mut rng), Duration::from_millis(210));
    }

    #[test]
    fn jitter_is_seeded_and_centred() {
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..20_000)
                .map(|_| factor(Jitter::LogNormal { sigma: 0.3 }, &mut rng))
                .collect::<Vec<_>>()
        };
        let a = draw(9);
        assert_eq!(a, draw(9));
        let mut sorted = a.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!((median - 1.0).abs() < 0.02, "median {median}");
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..1000 {
            let f = factor(Jitter::Uniform { spread: 0.2 }, &mut rng);
            assert!((0.8..=1.2).contains(&f));
        }
    }
}
