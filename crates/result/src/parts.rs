//! The parts of a RESULT that belong together: the harness's own health, the cap and
//! cores, the SUT's log, connections and dependencies, the provider's pushback, a bus's
//! account, shards, replicas. Types only.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A bus step: publishers send stamped messages, subscribers (or a queue's consumers)
/// read them; every delivery is accounted for. Latencies in ms.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Bus {
    /// "fanout" (every subscriber gets every message) or "queue" (each message to one).
    pub mode: String,
    pub transport: String,
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Replicas {
    pub count: usize,
    /// Peak RSS of all of them over `count`.
    pub rss_mb_per_instance: f64,
    /// "all": one cap held every replica together; "none": no cap.
    pub cap_scope: String,
}

/// The SUT's connections to one remote port over a step: a pool's ceiling is a count
/// that stays flat while sessions grow.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Dependency {
    pub name: String,
    /// "service" (Plimsoll started it for the step) or "probe" (found running).
    pub kind: String,
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
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exited: bool,
}

/// The reasoning in a step's replies: how much, and how long the answer waited for it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Scratch {
    pub peak_mb: f64,
    pub peak_files: u64,
    /// The least free space and free inodes on its filesystem during the step.
    pub fs_free_min_mb: Option<f64>,
    pub fs_free_min_inodes: Option<u64>,
}

/// The SUT's own log over a step: lines, warning and error lines, and the kinds of
/// warning and error (what varies masked), most frequent first.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SutLog {
    pub lines: u64,
    pub warnings: u64,
    pub errors: u64,
    pub kinds: Vec<LogKind>,
    /// Kinds seen in all (more than `kinds` holds when the list was cut to the top ones).
    pub kinds_seen: u64,
    /// Warning and error lines printed after Plimsoll asked the SUT to stop (its shutdown:
    /// a job process ended by the signal), counted here and not above. None in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_stopping: Option<u64>,
    /// What an agent worker (LiveKit Agents) said of taking jobs, when it said anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<crate::worker::WorkerLog>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LogKind {
    /// "warning" or "error".
    pub level: String,
    /// The message with digits and ids masked: what makes lines one kind.
    pub message: String,
    pub count: u64,
    /// The first line of the kind, as printed.
    pub example: String,
}

/// Kinds of log line a RESULT carries at most.
pub const LOG_KINDS: usize = 20;

/// One named request's latency over a step: first send to last reply (polls included).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RequestLatency {
    /// Requests that succeeded.
    pub count: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Requests that failed (status, check, timeout, connection).
    pub errors: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Partition {
    /// Core lists as the kernel writes them, e.g. "0" and "1-3".
    pub harness: String,
    pub sut: String,
    /// cpuset (a cgroup holds the SUT to its cores, and its affinity too) or affinity
    pub method: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CapInfo {
    /// cgroup-v2, cgroup-v1, or affinity (memory not capped).
    pub method: String,
    pub cpus: f64,
    pub mem_mb: f64,
    /// How the CPU cap was held: "cpuset" (ceil(cpus) cores of its own, a quota for a
    /// fraction) or "quota" (a quota over every core in `on`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_by: Option<String>,
    /// The cores the SUT could run on under the cap (a kernel core list), when it was held
    /// to some: the cores a quota is spread over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
}

/// The SUT's threads by their CPU over the span of load: the busiest, each with its
/// share of one core and the share it waited for one, and how many were busy. One thread
/// at a core's worth is a wall more cores do not move (an event loop, a lock, an
/// interpreter's global lock).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadCpu {
    /// The busiest threads, at most three, busiest first.
    pub busiest: Vec<BusyThread>,
    /// Threads runnable (on a core or waiting for one) 50 % of the time or more, and
    /// 90 % or more.
    pub busy: u32,
    pub saturated: u32,
    /// The most threads that ran 0.05 % of a core or more in one of the sampler's
    /// intervals over the span: those that did some of the work (a pool of workers counts
    /// each; an event loop's idle helpers do not). None in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<u32>,
    /// The busiest main thread's share of one core (a process's thread whose tid is its
    /// pid): says whether a busy thread is the main one or a worker beside an idle main.
    /// None in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_share: Option<f64>,
    /// Every thread grouped by name, idle ones too (`pool-1-thread-*` × 4): a pool's size
    /// even when its workers only wait. Families of two threads or more, largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<ThreadGroup>,
}

/// Threads that share a name but for a number, over the span of load.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadGroup {
    /// The name with its trailing number as `*`: `pool-1-thread-*`.
    pub name: String,
    /// The most of them alive at once.
    pub threads: u32,
    /// Their CPU together, as a share of one core.
    pub core_share: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BusyThread {
    /// Its name (`comm`: `MainThread`, `tokio-runtime-w`, `uvicorn` …).
    pub name: String,
    pub tid: u32,
    /// Its CPU over the span of load as a share of one core.
    pub core_share: f64,
    /// The share of the span it waited in a run queue, ready to run (a busy machine's
    /// other processes, or more runnable threads than cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_share: Option<f64>,
    /// A process's main thread (its tid is the process's pid): where an interpreter's
    /// event loop runs when the runtime names no thread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub main: bool,
}

impl BusyThread {
    /// The share of the time it was runnable: on a core or waiting for one. A thread
    /// that always wants a core reads near 1 on a machine that gives it less.
    pub fn runnable(&self) -> f64 {
        self.core_share + self.wait_share.unwrap_or(0.0)
    }
}

/// The SUT's tree's memory with each shared page counted once (the sum of its processes'
/// PSS), in MB: when load began and at its highest reading, and what a session added.
/// Summed RSS counts the pages forked processes share once per process; this does not.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PssFigures {
    pub baseline_mb: f64,
    pub peak_mb: f64,
    /// (peak − baseline PSS) / sessions.
    pub kb_per_session: f64,
}

/// What the box lets the SUT have: threads (the kernel's threads-max, its cgroup's
/// pids.max) and open files (its RLIMIT_NOFILE) — where growth per session runs out.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BoxLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
}

/// The mock's refusals in a step: the kinds kept word for word, and a count of the rest.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MockRefusals {
    pub kinds: Vec<MockRefusal>,
    /// Refusals of further kinds, only counted.
    #[serde(default)]
    pub more: u64,
}

impl MockRefusals {
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.more == 0
    }

    /// Every refusal, of every kind.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|k| k.count).sum::<u64>() + self.more
    }

    /// The refusals of requests of one kind ("speech request").
    pub fn of(&self, what: &str) -> u64 {
        self.kinds
            .iter()
            .filter(|k| k.what == what)
            .map(|k| k.count)
            .sum()
    }
}

/// One kind of refusal: what was asked ("speech request", "chat completion"), the
/// status and words of the mock's answer, and how often.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MockRefusal {
    pub what: String,
    pub status: u16,
    pub message: String,
    pub count: u64,
}
