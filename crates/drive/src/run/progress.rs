//! Live counters of a run, read by a progress line while the sessions update them, and
//! the guard that counts a session in flight. Drawing the progress line is the caller's
//! business.

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
