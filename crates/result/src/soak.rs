//! A soak (`plimsoll soak`): one SUT under steady load for a long time, then a drain; its
//! series of samples and, per resource, whether it leaks. Types, and the figures of the
//! leak rule (`LeakRule`), which `analysis::leak` applies and `words::soak` says.

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
    /// The headline and the rule (in words) as a soak recorded before its leaks' readings
    /// were facts said them, kept as read; `words::soak` words a soak with readings itself,
    /// and a document written now carries both beside the facts (`words::json`).
    #[serde(rename = "headline", default, skip_serializing_if = "String::is_empty")]
    pub recorded_headline: String,
    #[serde(rename = "rule", default, skip_serializing_if = "String::is_empty")]
    pub recorded_rule: String,
    pub sessions_per_s: f64,
    pub warmup_s: f64,
    pub leaks: Vec<Leak>,
}

/// What a soak's series of one resource says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Leak {
    pub resource: String,
    pub verdict: LeakVerdict,
    /// Why, with its figures (`words::soak::why` says it). None in a soak recorded before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<LeakReading>,
    /// Why, as such a soak recorded it in words, kept as read.
    #[serde(rename = "why", default, skip_serializing_if = "String::is_empty")]
    pub recorded_why: String,
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

/// What a resource's series says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeakVerdict {
    #[serde(rename = "leak")]
    Leak,
    #[serde(rename = "no leak")]
    NoLeak,
    #[default]
    #[serde(rename = "unknown")]
    Unknown,
}

/// Why a resource's series reads as it does: the test that decided and its figures
/// (`floor`: the growth over the load phase below which a trend is not a leak).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reading", rename_all = "snake_case")]
pub enum LeakReading {
    /// Too few samples after the warm-up to judge.
    TooFewSamples { samples: usize, needed: usize },
    /// Every sample at one time.
    NoSpread,
    /// The floor of the series rises: Mann–Kendall's p, the growth over the load phase.
    Rises { p: f64, growth: f64, floor: f64 },
    /// No trend in the floor of the series.
    NoTrend { p: f64 },
    /// A trend, too small to matter: the 95 % upper bound of the growth.
    TooSmall { upper: f64, floor: f64 },
    /// A trend neither clear nor ruled out.
    Unclear { p: f64, growth: f64, floor: f64 },
}

/// The leak rule's figures, set once: `analysis::leak` judges by them and `words::soak`
/// states them.
pub struct LeakRule;

impl LeakRule {
    /// Equal-time blocks the load phase is cut into (each block's minimum is kept).
    pub const BLOCKS: usize = 12;
    /// Fewer samples than two a block: unknown.
    pub const MIN_SAMPLES: usize = 2 * Self::BLOCKS;
    /// Mann–Kendall's p below which the minima trend (a leak, with the rest of the rule).
    pub const LEAK_P: f64 = 0.01;
    /// Mann–Kendall's p at or above which they do not (no leak).
    pub const NO_LEAK_P: f64 = 0.05;
    /// The OLS slope's interval (two-sided): a leak's lies above zero.
    pub const INTERVAL: f64 = 0.95;
    /// Per resource: its name, its unit (KB, or a count), and the growth over the load
    /// phase below which a trend is not a leak: a fixed floor plus a share of its start.
    pub const FLOORS: &'static [ResourceFloor] = &[
        ResourceFloor::kb("RSS", 2048.0, 0.01),
        ResourceFloor::kb("cgroup memory", 2048.0, 0.01),
        ResourceFloor::count("threads", 2.0),
        ResourceFloor::count("open files", 4.0),
    ];
}

/// One resource's floor in the leak rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResourceFloor {
    pub resource: &'static str,
    /// Memory in KB; else a count.
    pub kb: bool,
    pub floor: f64,
    /// The share of the resource's start added to the floor.
    pub share: f64,
}

impl ResourceFloor {
    const fn kb(resource: &'static str, floor: f64, share: f64) -> Self {
        ResourceFloor {
            resource,
            kb: true,
            floor,
            share,
        }
    }

    const fn count(resource: &'static str, floor: f64) -> Self {
        ResourceFloor {
            resource,
            kb: false,
            floor,
            share: 0.0,
        }
    }
}
