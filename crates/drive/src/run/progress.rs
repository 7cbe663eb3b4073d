//! Live counters of a run, read by a progress line or a live view while the sessions
//! update them (turns timed into fixed buckets as they end), and the guard that counts a
//! session in flight. Drawing them is the caller's business.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters for a progress line.
#[derive(Default, Debug)]
pub struct Progress {
    pub sessions_ok: AtomicU64,
    pub sessions_failed: AtomicU64,
    pub turns: AtomicU64,
    pub in_flight: AtomicU64,
    pub peak_in_flight: AtomicU64,
    /// Resident sessions open (setup done), with `--resident`.
    pub resident: AtomicU64,
    /// Timed turns by how long they took: turns at most `TURN_BUCKETS_S[i]` seconds in
    /// `turn_le[i]` (not cumulative), longer ones in the last; their sum in µs.
    pub turn_le: [AtomicU64; TURN_BUCKETS_S.len() + 1],
    pub turn_sum_us: AtomicU64,
}

/// The bounds (seconds) a live view's turn-latency histogram counts turns in: from a
/// fast tool turn to a slow multi-call one.
pub const TURN_BUCKETS_S: [f64; 12] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0,
];

impl Progress {
    /// A timed turn that took `took`.
    pub fn turn_timed(&self, took: std::time::Duration) {
        let s = took.as_secs_f64();
        let i = TURN_BUCKETS_S
            .iter()
            .position(|b| s <= *b)
            .unwrap_or(TURN_BUCKETS_S.len());
        self.turn_le[i].fetch_add(1, Relaxed);
        self.turn_sum_us.fetch_add(took.as_micros() as u64, Relaxed);
    }

    /// The timed turns so far, cumulative by bound as Prometheus counts them (the last is
    /// every timed turn), and their sum in seconds.
    pub fn turn_histogram(&self) -> (Vec<u64>, f64) {
        let mut total = 0;
        let cumulative = self
            .turn_le
            .iter()
            .map(|c| {
                total += c.load(Relaxed);
                total
            })
            .collect();
        (cumulative, self.turn_sum_us.load(Relaxed) as f64 / 1e6)
    }
}

/// Counts a session in flight for as long as it runs.
pub(crate) struct InFlight<'a>(&'a Progress);

impl<'a> InFlight<'a> {
    pub(crate) fn new(p: &'a Progress) -> Self {
        let now = p.in_flight.fetch_add(1, Relaxed) + 1;
        p.peak_in_flight.fetch_max(now, Relaxed);
        InFlight(p)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn turns_fall_in_their_bucket_and_add_up_cumulatively() {
        let p = Progress::default();
        for ms in [10, 50, 51, 900, 200_000] {
            p.turn_timed(Duration::from_millis(ms));
        }
        let (le, sum) = p.turn_histogram();
        assert_eq!(le.len(), TURN_BUCKETS_S.len() + 1);
        // ≤ 0.05 s: 10 and 50 ms; ≤ 0.1 s: and 51 ms; ≤ 1 s: and 900 ms; all: 5.
        assert_eq!((le[0], le[1], le[4], le[11], le[12]), (2, 3, 4, 4, 5));
        assert!((sum - 201.011).abs() < 1e-9, "{sum}");
    }
}
