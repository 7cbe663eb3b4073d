//! The RESULT document of one step: the one JSON line a step prints, its outcome and
//! exit code, and (`schema`) its check against `schemas/result.v1.json`. Types and a
//! check only: nothing here runs, measures or prints.

pub mod schema;

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Harness {
    pub mock_timing_error_p99_ms: f64,
    pub driver_lag_p99_ms: f64,
    /// Plimsoll's own CPU use over the step, as a share of the machine.
    pub cpu_share: f64,
    /// "sut" or "harness": which side saturated.
    pub bound: &'static str,
}

/// Field order and names follow schemas/result.v1.json.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StepResult {
    pub schema_version: u32,
    pub concurrency: usize,
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub p50_session_ms: Option<f64>,
    pub p99_session_ms: Option<f64>,
    pub p50_turn_ms: Option<f64>,
    pub p99_turn_ms: Option<f64>,
    pub p50_ttft_ms: Option<f64>,
    pub p99_ttft_ms: Option<f64>,
    pub ideal_session_ms: Option<f64>,
    pub latency_inflation: Option<f64>,
    pub peak_rss_mb: f64,
    pub rss_kb_per_session: f64,
    /// (peak − baseline RSS) / sessions / turns a session: what a long session's turns
    /// add, when they add up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_kb_per_turn: Option<f64>,
    pub baseline_rss_mb: f64,
    pub peak_threads: u64,
    pub peak_fds: u64,
    pub cpu_ms_per_turn: Option<f64>,
    pub cpu_sec: f64,
    pub llm_calls: u64,
    pub llm_tokens_out: u64,
    pub injected_failures: u64,
    pub integrity_violations: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub files_created: u64,
    pub harness: Harness,
    pub outcome: &'static str,
    /// Open model only: the arrival rate, and how many sessions arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival_rate_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u64>,
    /// When the SUT runs in a cgroup of its own: its memory high-water mark and the
    /// OOM kills the kernel counted there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_mem_peak_mb: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_oom_kills: Option<u64>,
    /// The resource cap the SUT ran under, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<CapInfo>,
    /// Completed turns per second with every session in flight (closed model: Little's
    /// law over the span of full load, sessions / (mean turn + think time); open model
    /// and harness: turns / wall).
    pub turns_per_s: Option<f64>,
    /// The cores the SUT could use: its cap, or its share of a partitioned machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
    /// The SUT's CPU busy at that rate (turns_per_s × CPU per turn) over `cpu_cores`
    /// (1.0 = at its wall).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_of_cap: Option<f64>,
    /// Share of the cgroup's CPU periods in which the kernel throttled the SUT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_throttled: Option<f64>,
    /// The SUT's cgroup memory peak over its memory cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_of_cap: Option<f64>,
    /// Which cores Plimsoll (mock and driver) and the SUT ran on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// Share of the driving time in which some task waited for a CPU (PSI "some"), of the
    /// SUT's own cgroup (v2) or of the whole machine, as `cpu_pressure_scope` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_pressure: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_scope: Option<&'static str>,
    /// Slow consumers (`[step] slow_share`): how many, and the other sessions' latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow: Option<Slow>,
    /// The responsiveness probe (`[step] probe_path`): a small GET every 100 ms beside
    /// the load — the SUT's event loop or scheduler lag seen from outside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_p50_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_p99_ms: Option<f64>,
    /// Probe attempts that timed out, could not connect or got a 5xx (timed in the above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_failed: Option<u64>,
    /// Time the SUT's threads spent runnable but waiting for a CPU (their schedstat), in
    /// ms per second of driving: scheduler delay without touching the SUT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched_delay_ms_per_s: Option<f64>,
    /// Per named request of a `[[setup]]`/`[[turn]]`/`[[teardown]]` session.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, RequestLatency>,
    /// With `--resident`: the sessions held open and memory per resident and per active one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident: Option<Resident>,
    /// The SUT's scratch directory (PLIMSOLL_SCRATCH, TMPDIR) at its fullest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch: Option<Scratch>,
    /// The provider's pushback, when the scenario sets quotas or generation slots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// What the model's reasoning cost, when replies reasoned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// What the SUT itself logged over the step (not in harness mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<SutLog>,
    /// The SUT's established outbound TCP connections, by remote port.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<Connection>,
    /// The SUT's dependencies (`[[service]]`, `[[probe]]`), each sampled beside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Dependency>,
    /// The `[[arm]]` this step ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// More than one instance of the SUT: how many, and the memory of each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Replicas>,
    /// A step driven by several processes (`plimsoll run --shard`) and merged
    /// (`plimsoll merge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,
    /// A bus step (`[[role]]` in session.toml): what was published and delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<Bus>,
}

/// A bus step: publishers send stamped messages, subscribers (or a queue's consumers)
/// read them; every delivery is accounted for. Latencies in ms.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Bus {
    /// "fanout" (every subscriber gets every message) or "queue" (each message to one).
    pub mode: &'static str,
    pub transport: &'static str,
    /// Whether each publisher's messages must arrive in order (then reordering counts).
    pub ordered: bool,
    pub publishers: usize,
    pub subscribers: usize,
    /// Messages the publishers wrote, and deliveries the subscribers should have seen.
    pub published: u64,
    pub expected: u64,
    /// Distinct messages delivered (per subscriber, summed), and the failures of a bus.
    pub delivered: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub out_of_order: u64,
    /// Subscribers that missed at least one message.
    pub subscribers_with_loss: usize,
    pub publish_per_s: f64,
    pub deliver_per_s: f64,
    /// From a message's send to its delivery.
    pub p50_delivery_ms: Option<f64>,
    pub p99_delivery_ms: Option<f64>,
    pub max_delivery_ms: Option<f64>,
    /// Per subscriber: from the first publish to its first delivery.
    pub p50_first_message_ms: Option<f64>,
    pub max_first_message_ms: Option<f64>,
    /// Queue mode: the fewest messages a consumer got over the most (1 = even).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness: Option<f64>,
}

impl Bus {
    /// What breaks a bus's integrity: lost and duplicated messages, and reordered ones
    /// where order was promised.
    pub fn violations(&self) -> u64 {
        self.lost + self.duplicated + if self.ordered { self.out_of_order } else { 0 }
    }
}

/// The shards a merged RESULT came from. The SUT ran elsewhere (a cluster, a service
/// the shards were pointed at), so its process figures (RSS, threads, CPU) are not
/// sampled and read 0.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Shards {
    /// Shards the run was split into, and how many were merged.
    pub count: usize,
    pub merged: usize,
    /// The latest a shard began after the shared start.
    pub late_start_ms_max: f64,
    /// Why the shards do not make one run (outcome "unknown"): one missing, one twice,
    /// one late, one harness-bound, files of different runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// Whether the SUT's processes were sampled.
    pub sut_sampled: bool,
}

/// Replicas of the SUT in one step: sessions spread over them, sticky by session; the
/// figures above (RSS, CPU, threads, connections) are of all of them together, and a cap
/// holds all of them together.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Replicas {
    pub count: usize,
    /// Peak RSS of all of them over `count`.
    pub rss_mb_per_instance: f64,
    /// "all": one cap held every replica together; "none": no cap.
    pub cap_scope: &'static str,
}

/// The SUT's connections to one remote port over a step: a pool's ceiling is a count
/// that stays flat while sessions grow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Connection {
    pub port: u16,
    /// Who listens there, when Plimsoll knows: "mock" or a service's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    pub peak: u32,
    /// The mean count while sessions were driven.
    pub mean: f64,
    /// (seconds since the SUT was ready, connections), at most 60 points.
    pub series: Vec<(f64, u32)>,
}

/// A process the SUT depends on, sampled over the step like the SUT itself.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Dependency {
    pub name: String,
    /// "service" (Plimsoll started it for the step) or "probe" (found running).
    pub kind: &'static str,
    /// The most processes it had (0: a probe that found nothing).
    pub processes: u32,
    pub peak_rss_mb: f64,
    pub peak_threads: u64,
    pub peak_fds: u64,
    pub cpu_sec: f64,
    /// Its CPU per turn the SUT completed.
    pub cpu_ms_per_turn: Option<f64>,
    /// The most connections it had accepted at once (its clients: the SUT's pool).
    pub peak_clients: u32,
    /// A service that exited before Plimsoll stopped it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exited: bool,
}

/// The reasoning in a step's replies: how much, and how long the answer waited for it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reasoning {
    /// Replies that reasoned.
    pub replies: u64,
    pub reasoning_tokens: u64,
    /// Mean scheduled time to a reasoning reply's first token (thinking included).
    pub first_token_ms: f64,
    /// Mean scheduled time to the first token of its answer: what a user waits for.
    pub first_answer_token_ms: f64,
}

/// What the provider's quotas and slots did to a step's LLM calls.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Provider {
    /// The quotas and slots in force, in words.
    pub limits: String,
    /// Calls answered with a reply.
    pub answered: u64,
    /// Calls refused, by reason (only reasons that happened).
    pub refused: BTreeMap<String, u64>,
    /// Refused calls over all LLM calls.
    pub refused_share: f64,
    /// LLM calls that resent a conversation already sent (the SUT's retries).
    pub retried: u64,
    /// LLM calls per distinct call (calls ÷ (calls − retries)): what retries cost, 1.0
    /// when the SUT retried nothing.
    pub amplification: f64,
    pub queue_wait_p50_ms: f64,
    pub queue_wait_p99_ms: f64,
    /// Time waited for a slot over all the provider's time (wait + generation).
    pub queue_share: f64,
    pub peak_in_flight: u64,
    pub peak_queued: u64,
    /// The limit that refused most, in words ("the 600 requests/min quota per key"), or
    /// the slots when the wait for them was what held calls back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
}

/// Slow consumers in a step: a share of the sessions reading replies at `read_bps`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Slow {
    pub share: f64,
    pub read_bps: f64,
    /// Slow sessions that completed.
    pub sessions: u64,
    pub p50_session_ms: Option<f64>,
    /// The other sessions' latency: does one slow reader hurt everyone?
    pub others_p50_session_ms: Option<f64>,
    pub others_p99_session_ms: Option<f64>,
}

/// Resident sessions: N opened (setup run) and held, `active` of them driven at a time.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Resident {
    /// Sessions that opened.
    pub sessions: u64,
    pub active: u64,
    /// The SUT's RSS with every resident open, before any turn.
    pub rss_mb_open: Option<f64>,
    /// (RSS with the residents open − baseline) / residents.
    pub kb_per_resident: Option<f64>,
    /// (peak RSS while driving − RSS with the residents open) / active sessions.
    pub kb_per_active: Option<f64>,
}

/// The SUT's scratch directory over a step, and the room its filesystem had.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Scratch {
    pub peak_mb: f64,
    pub peak_files: u64,
    /// The least free space and free inodes on its filesystem during the step.
    pub fs_free_min_mb: Option<f64>,
    pub fs_free_min_inodes: Option<u64>,
}

/// The SUT's own log over a step: lines, warning and error lines, and the kinds of
/// warning and error (what varies masked), most frequent first.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SutLog {
    pub lines: u64,
    pub warnings: u64,
    pub errors: u64,
    pub kinds: Vec<LogKind>,
    /// Kinds seen in all (more than `kinds` holds when the list was cut to the top ones).
    pub kinds_seen: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LogKind {
    /// "warning" or "error".
    pub level: &'static str,
    /// The message with digits and ids masked: what makes lines one kind.
    pub message: String,
    pub count: u64,
    /// The first line of the kind, as printed.
    pub example: String,
}

/// Kinds of log line a RESULT carries at most.
pub const LOG_KINDS: usize = 20;

/// One named request's latency over a step: first send to last reply (polls included).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RequestLatency {
    /// Requests that succeeded.
    pub count: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Requests that failed (status, check, timeout, connection).
    pub errors: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Partition {
    /// Core lists as the kernel writes them, e.g. "0" and "1-3".
    pub harness: String,
    pub sut: String,
    /// cpuset (a cgroup holds the SUT to its cores, and its affinity too) or affinity
    pub method: &'static str,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CapInfo {
    /// cgroup-v2, cgroup-v1, or affinity (memory not capped).
    pub method: &'static str,
    pub cpus: f64,
    pub mem_mb: f64,
}

/// Exit codes of `plimsoll run`, in order of precedence.
pub mod exit {
    /// No verdict: the shards of a merge do not add up to one run.
    pub const UNKNOWN: u8 = 5;
    /// Sessions failed, integrity violations, or the SUT collapsed.
    pub const FAILED: u8 = 3;
    /// A threshold from the config was crossed (p99, peak RSS).
    pub const THRESHOLD: u8 = 2;
    /// The harness, not the SUT, saturated: the numbers describe Plimsoll.
    pub const HARNESS: u8 = 4;
    pub const OK: u8 = 0;
}

/// Rounds for the printed line (hundredths of a millisecond are plenty).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl StepResult {
    pub fn line(&self) -> String {
        format!(
            "RESULT {}",
            serde_json::to_string(self).expect("a result serializes")
        )
    }

    /// Which thresholds were crossed, as messages.
    pub fn crossed(&self, p99_session_ms: f64, peak_rss_mb: f64) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p99) = self
            .p99_session_ms
            .filter(|p| p99_session_ms > 0.0 && *p > p99_session_ms)
        {
            out.push(format!(
                "p99_session_ms {p99:.1} > threshold {p99_session_ms}"
            ));
        }
        if peak_rss_mb > 0.0 && self.peak_rss_mb > peak_rss_mb {
            out.push(format!(
                "peak_rss_mb {:.1} > threshold {peak_rss_mb}",
                self.peak_rss_mb
            ));
        }
        out
    }

    pub fn exit_code(&self, crossed: &[String]) -> u8 {
        if self.outcome == "unknown" {
            exit::UNKNOWN
        } else if self.outcome != "ok" || self.sessions_failed > 0 || self.integrity_violations > 0
        {
            exit::FAILED
        } else if !crossed.is_empty() {
            exit::THRESHOLD
        } else if self.harness.bound == "harness" {
            exit::HARNESS
        } else {
            exit::OK
        }
    }
}
