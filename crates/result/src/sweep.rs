//! A sweep over one or more axes (`--sweep NAME=V,…`): each point of the grid a fresh
//! step, and along each row of the grid where the system stops holding. Types only.

use crate::budget::Budget;
use crate::environment::{Axis, Environment};
use crate::step::StepResult;
use crate::PointStanding;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepDoc {
    pub schema_version: u32,
    pub config: String,
    pub interrupted: bool,
    pub sweep: Sweep,
    pub environment: Environment,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub axes: Vec<Axis>,
    pub budget: Option<Budget>,
    pub cells: Vec<Cell>,
    pub rows: Vec<Row>,
}

/// One point of the grid: its values (an axis each, in order), its label, its standing
/// (skipped: not run) and its step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub values: Vec<f64>,
    pub label: String,
    pub standing: PointStanding,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepResult>,
    /// Why it collapsed or is over, in words (absent for a skipped point).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::present"
    )]
    pub why: Option<Option<String>>,
}

/// The cliff along one row (the last axis moving, the others fixed): the last value
/// that holds before the first that does not, and how that one failed (`words::sweep`
/// says it, with that point's why).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The other axes' values (empty with one axis).
    pub fixed: Vec<f64>,
    pub last_holding: Option<f64>,
    pub first_failing: Option<f64>,
    /// How the first failing point stood (over or collapsed), where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<PointStanding>,
    /// The row's `sentence` as a file held it (`words::json::sweep` writes one beside the
    /// facts). Said only for a row recorded before `failed` was kept, whose facts cannot
    /// say it; any other row is said from its facts.
    #[serde(rename = "sentence", default, skip_serializing_if = "String::is_empty")]
    pub recorded_sentence: String,
}
