//! One second of a running level as a live view reads it: the driver's counters, the
//! SUT's memory, threads and CPU so far, the probe's slowest answer, turn latencies by
//! bucket. Written by a step's feed, read by the live view (`live`).

/// One second of a level: the driver's counters and the SUT's figures so far.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tick {
    /// Seconds since the level began.
    pub t_s: f64,
    pub in_flight: u64,
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    /// The level drives a SUT Plimsoll did not start (a shard, `run --target`): its
    /// memory, threads and CPU are not sampled, and read zero below.
    #[serde(default)]
    pub unsampled: bool,
    pub rss_bytes: u64,
    /// The RSS before load began (the sampler's baseline).
    pub baseline_rss_bytes: u64,
    pub threads: u64,
    /// CPU seconds the SUT's process tree used since the level began.
    pub cpu_sec: f64,
    /// The responsiveness probe's slowest answer in the last second (ms), when probed.
    pub probe_ms: Option<f64>,
    /// Timed turns, cumulative by bound (`turn_bounds_s`; the last is all of them), and
    /// their sum in seconds.
    pub turn_le: Vec<u64>,
    pub turn_bounds_s: Vec<f64>,
    pub turn_sum_s: f64,
}
