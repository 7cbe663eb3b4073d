//! One level of a throughput curve as the readings of it see it (`Sample`), and what a
//! curve that still rises on a full cap says: each turn got cheaper (a start-up's cost
//! spread over more turns), so the steady-state ceiling is what the top level's CPU per
//! turn allows, not a wider ladder.

use result::wall::{Rise, Throughput};

/// One level of the curve: concurrency, completed turns per second, and the resources.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    pub concurrency: f64,
    pub turns_per_s: f64,
    /// The SUT's CPU over the cores it may use (its cap, its cpuset, or the machine).
    pub cpu_of_cap: Option<f64>,
    /// The cores the SUT may use.
    pub cpu_cores: Option<f64>,
    /// The share of the cgroup's CPU periods in which it was throttled.
    pub throttled: Option<f64>,
    /// The SUT's cgroup memory peak over its memory cap.
    pub mem_of_cap: Option<f64>,
    pub harness_bound: bool,
    /// What other processes and the hypervisor took of the CPU the SUT could have used
    /// (`quota::denied`), when measured.
    pub others: Option<f64>,
    /// How a quota smaller than its cores held it (a 1-core quota over 14 cores), when
    /// it had one: its throttling is then the quota's, said so.
    pub quota_held: Option<result::facts::CapHeld>,
    /// The SUT's time waiting in a run queue for a core, in seconds a second.
    pub run_wait: Option<f64>,
    /// What other processes took of Plimsoll's own cores, when it had cores of its own.
    pub harness_others: Option<f64>,
    /// The SUT's CPU per turn at this level, in ms.
    pub cpu_ms_per_turn: Option<f64>,
    /// A level of voice calls: the share of the replies' playing time that stalled, and its
    /// response p95 (ms).
    pub call: Option<(f64, Option<f64>)>,
    /// What the ladder counts: its levels are said in sessions, or in calls.
    pub unit: result::words::Unit,
}

/// Throttled in this share of its periods or more: the cap is full, whatever share of it
/// the step's average reads (a quota is spent in bursts early in each period).
pub const FULL: f64 = 0.5;

/// Per-turn CPU this much lower at the top than the level below: the turns got cheaper.
const CHEAPER: f64 = 0.85;

/// Throughput still rising at the top with the cap full (`wall`: the share that is full), because each turn got cheaper
/// (the start-up's cost spread over more turns, caches warming): a wider ladder cannot
/// find more, and the steady-state ceiling is what the top level's CPU per turn allows.
pub fn cheaper(samples: &[Sample], wall: f64) -> Option<Throughput> {
    let full = |s: &Sample| {
        s.cpu_of_cap.is_some_and(|c| c >= wall) || s.throttled.is_some_and(|t| t >= FULL)
    };
    // From the first level of the run of full levels that ends the ladder.
    let from = samples.iter().rposition(|s| !full(s)).map_or(0, |i| i + 1);
    let (a, b) = (samples.get(from)?, samples.last()?);
    let (ca, cb) = (a.cpu_ms_per_turn?, b.cpu_ms_per_turn?);
    let cores = b.cpu_cores?;
    (!std::ptr::eq(a, b) && cb > 0.0 && cb < ca * CHEAPER).then_some(Throughput::Cheaper {
        rise: Rise {
            from: (a.concurrency, a.turns_per_s),
            to: (b.concurrency, b.turns_per_s),
        },
        cpu_ms: (ca, cb),
        cores,
    })
}
