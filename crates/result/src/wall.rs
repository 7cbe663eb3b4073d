//! A wall as facts: what stopped the system, as `analysis` read it, with the figures the
//! reading rests on (`WallFact`), and what it adds to that reading (`WallAlso`).
//! `words::wall` says them; nothing here is a sentence. A run recorded before its wall
//! was a fact keeps only the wall's words (`Wall.text`, `Wall.short`).

use crate::budget::Breach;
use crate::facts::CapHeld;
use crate::kinds::Outcome;
use crate::words::Unit;
use serde::{Deserialize, Serialize};

/// Throughput between two levels: (level, turns/s) at each end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rise {
    pub from: (f64, f64),
    pub to: (f64, f64),
}

/// A plateau as a wall cites it: flat at `turns_per_s` from `from`, with its peak
/// (level, turns/s) where that stands out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flat {
    pub from: f64,
    pub turns_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<(f64, f64)>,
}

/// What throughput did where a resource was at its wall.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reading", rename_all = "snake_case")]
pub enum Throughput {
    Flat(Flat),
    /// Still rising at the top only because each turn got cheaper (CPU ms a turn, from
    /// the first full level to the top) while the cap (`cores`) was full.
    Cheaper {
        rise: Rise,
        cpu_ms: (f64, f64),
        cores: f64,
    },
    /// Still rising at the top of the ladder.
    Rising(Rise),
    /// From the first level to the last.
    Span(Rise),
    /// Not said (fewer than two levels).
    Unsaid,
}

/// How far the SUT's CPU reached its cap, at a level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuReach {
    pub at: f64,
    /// The cap's cores; the machine's when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    /// Its CPU as a share of the cap, over the step.
    pub read: f64,
    /// The share of periods it was throttled in, and how the cap was held, where that is
    /// worth saying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<(f64, CapHeld)>,
    /// The quota was full though the CPU averaged below the wall: spent in bursts.
    #[serde(default)]
    pub burst: bool,
}

/// How the CPU was full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuFull {
    /// The SUT's own CPU at its wall.
    Full,
    /// Full together with what other processes took of its cores.
    Shared,
    /// Throttled by its quota in most periods.
    Throttled,
}

/// What a wall's reading found, with its figures: one variant for each way it is read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reading", rename_all = "snake_case")]
pub enum WallFact {
    /// Plimsoll fell behind from `at`: by its own cost, or because other processes took
    /// this share of its cores (`others`: then the machine is the wall).
    Harness {
        unit: Unit,
        at: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        others: Option<f64>,
    },
    /// The CPU: where throughput bends (`knee`, between two levels), how far the CPU
    /// reached, what other processes took of the same cores when full together, and
    /// throughput's course.
    Cpu {
        unit: Unit,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        knee: Option<(f64, f64)>,
        reach: CpuReach,
        full: CpuFull,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shared: Option<f64>,
        throughput: Throughput,
    },
    /// Memory at this share of its cap from `at`.
    Memory {
        unit: Unit,
        at: f64,
        share: f64,
        throughput: Throughput,
    },
    /// Throughput flat with no resource full: a limit inside the SUT. `cpu` is the most
    /// of its cap the CPU reached, where it was read against one.
    FlatInside {
        unit: Unit,
        flat: Flat,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
    },
    /// Throughput bends from `from` with no resource at its wall; `inside` when the CPU
    /// was quiet too (a limit inside the SUT).
    Bends {
        unit: Unit,
        from: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
        inside: bool,
    },
    /// Throughput still grew up to the level before a collapse.
    BeforeCollapse {
        unit: Unit,
        collapse: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grew: Option<Rise>,
    },
    /// Throughput still grows at the top of the ladder; no rise with fewer than two levels.
    NotReached {
        unit: Unit,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rise: Option<Rise>,
    },
    /// The SUT was killed for memory at a level of calls.
    KilledForMemory { at: usize },
    /// The SUT could start no more threads at a level of calls.
    OutOfThreads { at: usize },
    /// Calls failed at `at` (their outcome) before any resource filled.
    FailedFirst {
        at: usize,
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
    },
    /// Calls over budget where the CPU was full, nearly full or throttled.
    CallsCpu { cpu: CallCpu, state: CallCpuState },
    /// Calls over budget on a cap whose share rose with every level, from one (level,
    /// share) to another, with nothing else near its limit.
    CallsCpuRising {
        cpu: CallCpu,
        from: (usize, f64),
        to: (usize, f64),
    },
    /// Calls failed on a full cap.
    CallsCpuCollapse { cpu: CallCpu },
    /// Calls over budget with memory at this share of its cap.
    CallsMemory { at: usize, share: f64 },
    /// Calls over budget (the budgets broken) with nothing full; the CPU of its cap and
    /// the busiest thread's share of a core, where read.
    NothingFull {
        at: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        breaches: Vec<Breach>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<f64>,
    },
    /// Every level of calls held, up to `top`.
    CallsHeld {
        top: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
    },
    /// An agent worker's own admission refused the calls at `at`: `failed` of them, after
    /// taking `burst` within one load window, where more than one.
    WorkerRefused {
        at: usize,
        refusal: WorkerRefusal,
        failed: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        burst: Option<u64>,
    },
    /// The provider pushed back from `from` (first materially at `at`).
    Provider(ProviderPushback),
    /// A pool held flat: connections to a peer, or the worker threads that hold them.
    Pool(PoolHeld),
    /// A pool of worker threads, each waiting on a provider call.
    WorkerPool {
        unit: Unit,
        name: String,
        count: u32,
        from: usize,
        to: usize,
        cpu: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flat: Option<Flat>,
    },
    /// A pool of about `workers` threads, seen as the process stopped adding threads.
    ThreadsStop(ThreadsStop),
    /// One thread, a worker beside an idle main thread (at `idle` of a core).
    OneWorker {
        at: ThreadsAt,
        name: String,
        idle: f64,
        busy: Busy,
        /// Node's libuv pool: its size is set by UV_THREADPOOL_SIZE.
        #[serde(default)]
        libuv: bool,
    },
    /// One thread at its limit.
    OneThread {
        at: ThreadsAt,
        thread: ThreadName,
        busy: Busy,
    },
    /// A few threads at their limit (`count`, the busiest of them named): runnable
    /// `runnable` of the time or more.
    SomeThreads {
        at: ThreadsAt,
        count: u32,
        threads: Vec<ThreadName>,
        runnable: f64,
    },
    /// One thread doing its process's work at `share` of a core for the level that held,
    /// so the collapse's level needed `needed` of one.
    OneThreadBefore {
        unit: Unit,
        thread: ThreadName,
        share: f64,
        held: usize,
        at: usize,
        needed: f64,
    },
}

/// What a wall's reading adds, said after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "also", rename_all = "snake_case")]
pub enum WallAlso {
    /// Each turn dearer as sessions are added: with the threads that grow per session,
    /// where they do.
    DearerTurns {
        unit: Unit,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threads_per: Option<f64>,
    },
    /// The responsiveness probe's wait, p99, at the collapse.
    ProbeWaited { ms: f64 },
    /// What the wall was held until the collapse there.
    HeldUntilCollapse { unit: Unit },
    /// The cap (of `cores`) full with the one thread: the same wall.
    CapFullWithIt {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cores: Option<f64>,
    },
    /// The responsiveness probe's wait, p99, said in the headline too.
    ProbeLate { ms: f64 },
    /// Connections to a peer stayed at `count` from one level to another: at most that many
    /// calls in flight.
    FlatConnections {
        unit: Unit,
        peer: String,
        count: u32,
        from: usize,
        to: usize,
    },
}

/// A CPU wall of calls: where the cap ran full (`read` of its `cores` at `at`), what callers
/// heard there, what one call costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallCpu {
    /// Calls, or sessions where the step read no voice figures.
    #[serde(default)]
    pub unit: Unit,
    pub at: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    pub read: f64,
    /// The share of the replies' time that stalled, and the response p95 (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heard: Option<(f64, Option<f64>)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CallCost>,
}

/// What one call costs: CPU ms a second at a level (`at`), and how many calls the cap's
/// `cores` hold at that cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    pub ms: f64,
    pub at: usize,
    pub cores: f64,
    pub holds: f64,
}

/// How full the cap of calls over budget was.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CallCpuState {
    Full,
    /// Below the wall (`wall`, a share of the cap), where a call's frames already wait.
    NearlyFull {
        wall: f64,
    },
    /// Its quota throttled it in this share of its periods.
    Throttled {
        share: f64,
    },
}

/// How an agent worker refused calls: it marked itself full (at a load, against its
/// threshold), or took fewer jobs than calls (its CPU then).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum WorkerRefusal {
    Marked {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
    },
    Declined {
        jobs: u64,
        calls: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<f64>,
    },
}

/// The provider's pushback: from a level, the limit that bound (as the mock names it),
/// how it pushed back at its first material level, how that level ended, and throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderPushback {
    pub unit: Unit,
    pub from: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    pub at: usize,
    pub how: Pushback,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<PushbackEnded>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flat: Option<Flat>,
}

/// Refused calls (with the retries' amplification, where the SUT retried), or calls kept
/// waiting (a share of the provider's time, and the p99 wait).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Pushback {
    Refused {
        share: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amplification: Option<f64>,
    },
    Queued {
        share: f64,
        wait_p99_ms: f64,
    },
}

/// How the first material level of pushback ended: sessions failed on refused calls
/// (retried or not), or another outcome.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum PushbackEnded {
    Failed { retried: bool, failed: u64, of: u64 },
    Outcome { outcome: Outcome },
}

/// What throughput did over a pool's levels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "course", rename_all = "snake_case")]
pub enum PoolCourse {
    Flat(Flat),
    /// Calls go at speech's pace: their rate of turns says nothing of a pool.
    CallsOver,
    /// Between the first level and the top.
    Bends(Rise),
    StopsGrowing,
}

/// A pool held flat: connections to `peer` at `count` from one level to another; the
/// threads that hold them where they are a pool of workers; the provider's connections
/// flat too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolHeld {
    pub unit: Unit,
    pub peer: String,
    pub count: u32,
    pub from: usize,
    pub to: usize,
    pub course: PoolCourse,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<u32>,
}

/// A pool of about `workers` threads: the process stops adding threads at `threads`
/// from level `from`, having grown (threads, level) below it; the runtime that sizes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadsStop {
    pub unit: Unit,
    pub workers: u64,
    pub threads: u64,
    pub from: usize,
    pub grew: Vec<(u64, usize)>,
    pub course: PoolCourse,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<PoolRuntime>,
}

/// The runtime whose pool a count of threads is, by the threads' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolRuntime {
    /// Python's default executor, min(32, cores + 4): under 32.
    PythonDefault,
    /// Python's default executor at its 32.
    PythonCapped,
    /// anyio's thread limiter (40).
    Anyio,
    /// A Python pool of another size.
    PythonPool,
    Jvm,
    Tomcat,
    Libuv,
}

/// Where threads were at their limit: from a level, the figures of a higher level where
/// they are its, the process's share of its cap and the cap's cores, and throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadsAt {
    pub unit: Unit,
    pub from: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flat: Option<Flat>,
}

/// A thread as a person knows it: by its name, the main thread of its process or not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadName {
    pub name: String,
    #[serde(default)]
    pub main: bool,
}

/// How busy a thread was: runnable this share of the time, on a core that share, and
/// waiting for one (waiting out a quota where one throttled it) when it waited.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    pub core: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<f64>,
    #[serde(default)]
    pub quota: bool,
}

#[cfg(test)]
#[path = "wall_tests.rs"]
mod tests;
