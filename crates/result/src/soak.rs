//! A soak (`plimsoll soak`): one SUT under steady load for a long time, then a drain; its
//! series of samples and, per resource, whether it leaks. Types only.

use crate::environment::{Environment, SoakPlan};
use crate::step::StepResult;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakDoc {
    pub schema_version: u32,
    pub kind: String,
    pub run: Option<i64>,
    pub started: String,
    pub config: String,
    pub environment: Environment,
    pub status: String,
    pub plan: SoakPlan,
    /// The soak's one step (None when it was interrupted before it ended).
    pub result: Option<StepResult>,
    pub series: Vec<SoakSample>,
    pub analysis: SoakAnalysis,
    /// A soak re-read from the history: its step as the history holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepResult>>,
}

/// One sample of the SUT during a soak.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakSample {
    /// Seconds since the SUT was ready.
    pub t_s: f64,
    /// "load" or "drain".
    pub phase: String,
    pub rss_kb: u64,
    pub threads: u64,
    pub fds: u64,
    pub cpu_s: f64,
    /// The SUT cgroup's memory, when it runs in one.
    pub cgroup_kb: Option<u64>,
    /// The responsiveness probe's slowest answer since the last sample, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_max_ms: Option<f64>,
    pub sessions_done: u64,
    pub turns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakAnalysis {
    pub kind: String,
    pub headline: String,
    /// The rule a leak is judged by, in words.
    pub rule: String,
    pub sessions_per_s: f64,
    pub warmup_s: f64,
    pub leaks: Vec<Leak>,
}

/// What a soak's series of one resource says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Leak {
    pub resource: String,
    /// "leak", "no leak" or "unknown".
    pub verdict: String,
    pub why: String,
    pub samples: usize,
    /// Sen's slope of the block minima, per hour and per 1,000 sessions completed.
    pub sen_per_hour: Option<f64>,
    pub sen_per_1000_sessions: Option<f64>,
    /// OLS slope per hour with its 95 % interval.
    pub ols_per_hour: Option<f64>,
    pub ols_ci95_per_hour: Option<[f64; 2]>,
    pub mann_kendall_p: Option<f64>,
    /// The series' value at the start and end of the load phase (after warm-up) and at
    /// the end of the drain, and the share of the growth the drain gave back.
    pub start: Option<f64>,
    pub end_of_load: Option<f64>,
    pub end_of_drain: Option<f64>,
    pub drain_return: Option<f64>,
}
