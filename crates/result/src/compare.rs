//! A comparison of two builds (`plimsoll compare`): per level and metric, both sides'
//! medians, their ratio with a bootstrap interval and a verdict; both sides' outcomes and
//! ceilings. Types only.

use crate::kinds::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareDoc {
    pub schema_version: u32,
    /// How each side was run, in words (a command, an arm, a git ref).
    pub base: String,
    pub branch: String,
    pub repeat: usize,
    pub ceiling: Sides<Option<usize>>,
    /// The two history runs the sides were recorded as.
    pub history_runs: Option<Sides<i64>>,
    pub levels: Vec<CompareLevel>,
    /// Each side's line as a range, when levels ran more than once (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<CompareLine>,
}

/// Both sides' lines from repeated runs: (the highest level clean in every run, the
/// highest clean in any), and whether the ranges are apart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareLine {
    pub base: (usize, usize),
    pub branch: (usize, usize),
    /// The ranges do not overlap: the lines differ beyond what the repetitions spread.
    pub differ: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sides<T> {
    pub base: T,
    pub branch: T,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareLevel {
    pub concurrency: usize,
    /// Per metric (the fixed ones, then `requests.NAME.p50_ms` per named request).
    pub metrics: BTreeMap<String, MetricVerdict>,
    pub base_outcomes: Vec<Outcome>,
    pub branch_outcomes: Vec<Outcome>,
}

/// Repetitions a side below which no split of the ranks can reach the significance a
/// verdict needs.
pub const MIN_REPEAT: usize = 6;

/// How a metric compares between the two sides (`words::compare` says it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetricCall {
    #[serde(rename = "worse")]
    Worse,
    #[serde(rename = "better")]
    Better,
    #[serde(rename = "no significant change")]
    NoChange,
    /// A side has no value of it.
    #[default]
    #[serde(rename = "no data")]
    NoData,
    /// Fewer than `MIN_REPEAT` repetitions a side: no verdict (the words recorded before
    /// this was a fact read as it).
    #[serde(
        rename = "too few repetitions",
        alias = "too few repetitions for a verdict (6 a side needed: --repeat 6)"
    )]
    TooFew,
}

/// One metric at one level: both medians, their ratio (branch / base), the ratio's 95 %
/// bootstrap interval, the Mann–Whitney p, and the verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricVerdict {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<f64>,
    /// Infinite (null in JSON) where the base median is 0 and the branch's is not.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::infinite_if_null"
    )]
    pub ratio: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::infinite_pair_if_null"
    )]
    pub ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    pub verdict: MetricCall,
}

/// A `--fail-on` gate a comparison breached, as a fact: `report::gates` words it, and the
/// JUnit case of its gate and level finds it by these fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Breach {
    /// At `level` (counted in `unit`), `metric` changed by `change` (0.3: +30 %), past the
    /// gate's `limit` (0.1: +10 %).
    Grew {
        level: usize,
        unit: crate::words::Unit,
        metric: String,
        change: f64,
        limit: f64,
    },
    /// At `level`, `metric` had a base value and none on the branch (every such request
    /// failed there?).
    Vanished {
        level: usize,
        unit: crate::words::Unit,
        metric: String,
    },
    /// No level had `metric`: a gate on a figure no level has cannot pass silently.
    NoFigure { metric: String },
    /// The highest clean level dropped from `base` to `branch`.
    Ceiling { base: usize, branch: usize },
}

impl Breach {
    /// The gate breached: a metric's name, or "ceiling".
    pub fn gate(&self) -> &str {
        match self {
            Breach::Grew { metric, .. }
            | Breach::Vanished { metric, .. }
            | Breach::NoFigure { metric } => metric,
            Breach::Ceiling { .. } => "ceiling",
        }
    }

    /// The level it was breached at, where it was one level's.
    pub fn level(&self) -> Option<usize> {
        match self {
            Breach::Grew { level, .. } | Breach::Vanished { level, .. } => Some(*level),
            Breach::NoFigure { .. } | Breach::Ceiling { .. } => None,
        }
    }
}
