//! What a run gives back: sessions and turns counted, latencies as HDR histograms, errors
//! by kind, the span of full load, per-request statistics and, for a bus, its account.
//! Judging it against budgets is the step's business.

use super::load::FullLoad;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashSet};

#[derive(Debug)]
pub struct DriveReport {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub turn_us: Histogram<u64>,
    pub session_us: Histogram<u64>,
    /// With slow consumers: the slow sessions' times, and everyone else's.
    pub session_slow_us: Histogram<u64>,
    pub session_others_us: Histogram<u64>,
    pub ttft_us: Histogram<u64>,
    /// Each session's first turn, and its other turns: a cold start is the gap.
    pub first_turn_us: Histogram<u64>,
    pub later_turn_us: Histogram<u64>,
    pub lag_us: Histogram<u64>,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub timed_out: bool,
    /// Most sessions in flight at once (the concurrency an open model reached).
    pub peak_in_flight: u64,
    /// First error message of each kind, for the terminal.
    pub first_errors: BTreeMap<String, String>,
    /// The SUT's own body that the first failure of each `status_…` kind quotes, for
    /// reading what it refused (`run::Failure::body`).
    pub first_bodies: BTreeMap<String, String>,
    /// Sessions that failed in their `[[setup]]` requests, before any turn.
    pub sessions_failed_in_setup: u64,
    /// The span of full load (see `FullLoad`).
    pub full_load: Option<FullLoad>,
    /// Per named request of a `[[setup]]`/`[[turn]]`/`[[teardown]]` session: its
    /// latency (first send to last reply, polls included) and failures.
    pub requests: BTreeMap<String, RequestStats>,
    /// Resident sessions that opened (with `resident`).
    pub resident: u64,
    /// The names (`sN`) of the sessions that failed: what they asked of the provider is
    /// not what a whole session asks.
    pub failed_sessions: HashSet<String>,
    /// How late driving began after `start_at`, in ms (0 without one).
    pub late_start_ms: f64,
    /// The sessions this driver was given: its shard's share of `concurrency`.
    pub sessions_planned: u64,
    /// A bus step's account (`[[role]]` sessions).
    pub bus: Option<result::Bus>,
    /// A replay's think times: how much later than recorded each pause ended.
    pub think_late_us: Histogram<u64>,
    /// A replay's session times in ms by name (empty otherwise): replayed sessions differ,
    /// so each is measured against its own ideal.
    pub session_ms: BTreeMap<String, f64>,
    /// A step of voice calls: answers, broken audio, words, the harness's frames; and what
    /// they were made from, which a shard writes for a merge to add.
    pub voice: Option<result::VoiceCalls>,
    pub voice_parts: Option<super::VoiceParts>,
}

#[derive(Debug, Clone)]
pub struct RequestStats {
    pub us: Histogram<u64>,
    pub errors: u64,
}
