//! The RESULT of one step: the one JSON line a step prints (field order and names follow
//! `schemas/result.v1.json`), with its thresholds and exit code. A new measured figure is
//! a field here (with its default), the code that measures it, and the report that shows it.

use crate::kinds::{Bound, Outcome, StepState};
use crate::parts::*;
use crate::trust::{ColdStart, Interference, RateCheck};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version every RESULT carries.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Harness {
    pub mock_timing_error_p99_ms: f64,
    pub driver_lag_p99_ms: f64,
    /// Plimsoll's own CPU use over the step, as a share of the machine.
    pub cpu_share: f64,
    /// "sut" or "harness": which side saturated.
    pub bound: Bound,
    /// Plimsoll's CPU over the step, part by part (absent from shards and older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<crate::harness::HarnessParts>,
}

/// Field order and names follow schemas/result.v1.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
    /// Processes in the SUT's tree when load began and at most: a worker's job processes,
    /// those it keeps warm counted in the first. None in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_processes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_processes: Option<u32>,
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
    pub outcome: Outcome,
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
    /// The cgroup's memory by kind (`memory.stat`), each its highest read: anonymous (the
    /// processes' own, each page once) and file-backed (page cache the kernel reclaims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_anon_peak_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_file_peak_mb: Option<f64>,
    /// The tree's memory with each shared page counted once (PSS), where it could be read:
    /// what a session of a forking server costs, where summed RSS counts shared pages
    /// again for every process. None in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss: Option<PssFigures>,
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
    pub cpu_pressure_scope: Option<String>,
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
    /// The rate `turns_per_s` is, checked against the CPU and the wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_check: Option<RateCheck>,
    /// Each session's first turn against its others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<ColdStart>,
    /// Whether work kept pace through the step, and the turn-time trend behind it (the
    /// last third of the span of load over the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StepState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_trend: Option<f64>,
    /// What other processes took of the SUT's cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<Interference>,
    /// What the box lets the SUT have (threads, open files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<BoxLimits>,
    /// The SUT's busiest threads over the span of load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_cpu: Option<ThreadCpu>,
    /// Per named request of a `[[setup]]`/`[[turn]]`/`[[teardown]]` session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
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
    /// The provider's prompt cache over the step's LLM calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::cost::CacheReport>,
    /// What the step's LLM calls cost at the price table's prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::Cost>,
    /// What the SUT itself logged over the step (not in harness mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<SutLog>,
    /// The SUT's established outbound TCP connections, by remote port.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<Connection>,
    /// The SUT's dependencies (`[[service]]`, `[[probe]]`), each sampled beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
    /// A recorded workload replayed (`[workload]`, `--workload`): its fingerprint and
    /// how faithfully it was followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<crate::workload::Replayed>,
    /// The MCP tools the SUT called at the mock (`[[mcp.tools]]`): calls, latency per
    /// tool, errors, sessions, and the stdio servers it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<crate::mcp::Mcp>,
    /// A step of voice calls: answers, broken audio, words, barge-ins, the harness's frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<crate::voice::VoiceCalls>,
    /// Requests the mock refused (a format it does not produce, a model the scenario
    /// lacks, a body it cannot read), by what was asked and its words.
    #[serde(default, skip_serializing_if = "crate::MockRefusals::is_empty")]
    pub mock_refused: crate::MockRefusals,
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

/// Which measure a memory figure is: PSS (each shared page counted once) where it was
/// read, else summed RSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryMeasure {
    Pss,
    Rss,
}

impl MemoryMeasure {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryMeasure::Pss => "PSS",
            MemoryMeasure::Rss => "RSS",
        }
    }
}

impl StepResult {
    /// The memory a session costs and the tree's peak, in MB, by the honest measure: PSS
    /// where it was read (a forked worker's shared pages counted once), else RSS. The one
    /// place that choice is made.
    pub fn memory(&self) -> (MemoryMeasure, f64, f64) {
        match &self.pss {
            Some(p) => (MemoryMeasure::Pss, p.kb_per_session / 1024.0, p.peak_mb),
            None => (
                MemoryMeasure::Rss,
                self.rss_kb_per_session / 1024.0,
                self.peak_rss_mb,
            ),
        }
    }

    /// The SUT's CPU ms for each second of a call: its CPU time over the calls' seconds
    /// together (concurrency × wall); None where no time passed.
    pub fn cpu_ms_per_call_second(&self) -> Option<f64> {
        let call_s = self.concurrency as f64 * self.wall_ms / 1000.0;
        (call_s > 0.0).then(|| self.cpu_sec * 1000.0 / call_s)
    }

    /// Whether the step was marked contaminated: it measured a busy machine too.
    pub fn contaminated(&self) -> bool {
        self.interference.as_ref().is_some_and(|i| i.contaminated)
    }

    pub fn line(&self) -> String {
        format!(
            "RESULT {}",
            serde_json::to_string(self).expect("a result serializes")
        )
    }

    /// Whether a budget judges the step: it ended ok with no session failed (a step that
    /// failed is judged by its failure, which its exit code says).
    pub fn judged_by_budget(&self) -> bool {
        self.outcome == Outcome::Ok && self.sessions_failed == 0
    }

    /// The exit code of a step judged by `checks` (its list of checks: any over is 2).
    pub fn exit_code(&self, checks: &[crate::Check]) -> u8 {
        if self.outcome == Outcome::Unknown {
            exit::UNKNOWN
        } else if !self.judged_by_budget() || self.integrity_violations > 0 {
            exit::FAILED
        } else if checks.iter().any(|c| c.over) {
            exit::THRESHOLD
        } else if self.harness.bound == Bound::Harness {
            exit::HARNESS
        } else {
            exit::OK
        }
    }
}
