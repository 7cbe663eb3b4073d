//! What the sessions' side of a step measured — the built-in driver's, or a harness's
//! own RESULT line — as the judge reads it.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Latencies {
    pub p50_session: Option<f64>,
    pub p99_session: Option<f64>,
    pub p50_turn: Option<f64>,
    pub p99_turn: Option<f64>,
    pub p50_ttft: Option<f64>,
    pub p99_ttft: Option<f64>,
}

/// What the sessions' side of a step measured (the built-in driver, or a harness).
#[derive(Default)]
pub struct Measured {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub lat: Latencies,
    pub think_ms_per_session: f64,
    /// The driver's names of the sessions that failed (left out of the ideal time).
    pub failed_sessions: std::collections::HashSet<String>,
    /// A replay's session times in ms by the driver's names (empty otherwise).
    pub session_ms: BTreeMap<String, f64>,
    /// Think time between two turns of a session.
    pub think_ms_per_turn: f64,
    pub lag_p99_ms: f64,
    pub timed_out: bool,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub first_errors: Vec<(String, String)>,
    /// The SUT's body each first `status_…` failure quoted.
    pub first_bodies: BTreeMap<String, String>,
    /// Sessions that failed in their setup requests.
    pub sessions_failed_in_setup: u64,
    pub harness_cpu_sec: f64,
    /// The same, part by part (driver, mock, probe, orchestration).
    pub harness_parts: Option<result::harness::HarnessParts>,
    /// Open model: (arrival rate per second, most sessions in flight).
    pub open_model: Option<(f64, u64)>,
    /// The cap the SUT ran under: method, size and the cores it held the SUT to (a
    /// kernel core list; empty: any).
    pub cap: Option<(&'static str, cap::CapSpec, String)>,
    /// The cores Plimsoll and the SUT ran on, and how the SUT was held to its own
    /// (cpuset or affinity).
    pub partition: Option<(probe::affinity::Partition, &'static str)>,
    /// Slow consumers and how the others fared.
    pub slow: Option<result::Slow>,
    /// The responsiveness probe: (p50, p99) ms and failed attempts.
    pub probe: Option<(f64, f64, u64)>,
    /// Run-queue wait of the SUT's threads per second of driving, in ms.
    pub sched_delay_ms_per_s: Option<f64>,
    /// Turns a session (from the session file; None in harness mode).
    pub session_turns: Option<u32>,
    /// Resident sessions that opened, with `--resident`.
    pub resident: Option<u64>,
    /// Per named request: latency and failures.
    pub requests: BTreeMap<String, result::RequestLatency>,
    /// Share of the driving time in which a task waited for a CPU (PSI), and whose:
    /// "cgroup" (the SUT's own) or "system".
    pub pressure: Option<(f64, &'static str)>,
    /// Share of the cap's CPU periods the kernel throttled.
    pub throttled: Option<f64>,
    /// The span of full load (closed model), and where it starts on the sampler's clock
    /// (seconds from the sampler's start to the driver's).
    pub full_load: Option<(drive::FullLoad, f64)>,
    /// When sessions were driven: (start, end) in seconds since sampling began.
    pub drive_window: Option<(f64, f64)>,
    /// Each session's first turn and its others, medians in ms (with more than one turn).
    pub cold: Option<(f64, f64)>,
    /// A bus step's account.
    pub bus: Option<result::Bus>,
    /// What the SUT's stdio MCP servers cost, when it ran any.
    pub mcp_stdio: Option<result::McpStdio>,
    /// Fields of the session file that name a conversation and carry one value in every
    /// session (`drive::spec::SharedValue`, said).
    pub shared: Vec<String>,
    /// A step of voice calls: what the calls measured.
    pub voice: Option<result::VoiceCalls>,
}

impl Measured {
    /// The turns the load window holds: those that began in the span of full load, else
    /// every turn.
    pub fn turns_in_window(&self) -> u64 {
        match (self.open_model, self.full_load) {
            (None, Some((f, _))) if f.to_ms > f.from_ms => f.turns,
            _ => self.turns,
        }
    }

    /// The span the step's figures are read over, in seconds since sampling began: every
    /// session in flight (a closed model), else while sessions were driven.
    pub fn load_window(&self) -> Option<(f64, f64)> {
        match (self.open_model, self.full_load) {
            (None, Some((f, offset_s))) if f.to_ms > f.from_ms => {
                Some((offset_s + f.from_ms / 1000.0, offset_s + f.to_ms / 1000.0))
            }
            _ => self.drive_window,
        }
    }
}
