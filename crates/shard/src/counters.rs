//! What a shard counted, as it writes it beside its interval log.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of this file's shape; a merge refuses others. 3 added `voice` (a shard of
/// calls): a merge of format 2 would take its calls for sessions, so it refuses 3; format 2
/// files (no calls) still merge here.
pub const FORMAT: u32 = 3;

/// The formats this merge reads.
pub const READS: [u32; 2] = [2, 3];

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Counters {
    pub format: u32,
    /// What every shard of one run shares (by default from the shared start time).
    pub run: String,
    pub index: usize,
    pub count: usize,
    /// The whole run's sessions (every shard's together).
    pub concurrency: usize,
    /// This shard's share of them.
    pub sessions_planned: u64,
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first message of each error kind.
    pub first_errors: BTreeMap<String, String>,
    pub timed_out: bool,
    /// From the shard's start to its last session's end.
    pub wall_ms: f64,
    /// The shared start (ms since the Unix epoch), and how late this shard began after it.
    pub start_at_unix_ms: Option<f64>,
    pub late_start_ms: f64,
    /// Open model: the whole run's arrival rate, and the most of this shard's sessions in
    /// flight at once.
    pub arrival_rate_per_s: Option<f64>,
    pub peak_in_flight: u64,
    /// This shard's completed turns a second under full load (closed model: Little's law
    /// over its span of full load; open model: turns / wall).
    pub turns_per_s: f64,
    pub think_ms_per_session: f64,
    /// The driver's own health: its tick lag p99 and its CPU seconds over the shard.
    pub driver_lag_p99_ms: f64,
    pub harness_cpu_sec: f64,
    pub cores: usize,
    /// "sut" or "harness" (the shard's own driver was the bottleneck).
    pub bound: result::Bound,
    /// Failures of each named request.
    pub request_errors: BTreeMap<String, u64>,
    /// What the shared mock's ledger says of this shard's sessions (none without --mock).
    pub mock: Option<MockCounts>,
    /// The thresholds of the config the shard ran, so a merge judges without it.
    pub error_rate_threshold: f64,
    pub p99_session_ms_threshold: f64,
    pub harness_lag_ms_threshold: f64,
    /// A shard of calls: what its calls counted (their histograms are in the interval
    /// log, tagged `voice.*`). Absent for sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<drive::run::VoiceCounts>,
    /// The config's `[budget]`, judged once over the merged step (absent: the defaults).
    #[serde(default)]
    pub budget: analysis::Budget,
    pub seed: u64,
}

/// The ledger of the one mock every shard shares, for this shard's sessions only: their
/// totals (summed by the ledger's own `Totals::add`), how many sessions' markers reached
/// it, and its lateness.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MockCounts {
    pub totals: mock::ledger::Totals,
    /// Sessions whose marker reached the mock.
    pub marked_sessions: u64,
    /// The mock's own lateness p99 (the whole mock's, the same in every shard).
    pub late_p99_ms: f64,
}
