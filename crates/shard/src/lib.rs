//! One step driven from several processes (shards), put back together: each shard's
//! files — its latencies as an HdrHistogram interval log (`.hlog`), its counters as JSON —
//! and their merge into one RESULT, histograms added exactly, counters summed, the
//! outcome judged once; "unknown" when the shards do not add up to one run (a shard
//! missing, one twice, one started late, one harness-bound).
//!
//! `counters` is the JSON a shard writes, `files` reads and writes a shard's two files,
//! `merge` is a pure function from the shards read to the one RESULT.

pub mod counters;
pub mod files;
pub mod merge;

pub use counters::{Counters, MockCounts};
pub use files::{read_dirs, write, Shard};
pub use merge::{merge, Merged};

/// The histograms a shard writes, by tag: per turn, per session, first token, the
/// driver's own lag, and the provider's unloaded time per session (the ideal); a named
/// request of a `[[setup]]`/`[[turn]]` session adds `request.NAME`.
pub const TURN: &str = "turn";
pub const SESSION: &str = "session";
pub const TTFT: &str = "ttft";
pub const LAG: &str = "lag";
pub const IDEAL: &str = "ideal";
pub const REQUEST: &str = "request.";

/// Histograms in microseconds, the driver's bounds (1 µs to a day, 3 significant digits).
pub fn hist() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("static bounds")
}
