//! What makes a step's figures trustworthy, or says why they are not: the rate it is
//! judged by, checked against the CPU it needs and the step's wall time; a cold start
//! (each session's first turn against its others); the step's state (did work keep pace,
//! back up, or fail); and what other processes took of the SUT's cores. Types only.

use serde::{Deserialize, Serialize};

/// The rate a step is judged by (`turns_per_s`), and the evidence it was checked against.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RateCheck {
    /// Every session in flight (Little's law over the span of full load).
    pub full_load_turns_per_s: Option<f64>,
    /// All the step's turns over its wall time.
    pub wall_turns_per_s: f64,
    /// The most turns a second the SUT's CPU per turn allows on its cores.
    pub cpu_allows_turns_per_s: Option<f64>,
    /// Which rate `turns_per_s` is: "full_load" or "wall".
    pub used: String,
    /// Why the full-load rate was not used, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Each session's first turn against its other turns (median times).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ColdStart {
    pub first_turn_p50_ms: f64,
    pub later_turn_p50_ms: f64,
}

/// What other processes (neither the SUT, its services nor Plimsoll) and the hypervisor
/// took of the SUT's cores over the span of load.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Interference {
    /// Their CPU as a share of the cores the SUT could use (its cap, or its cores).
    pub others_share: f64,
    /// Time stolen by the hypervisor, as a share of the SUT's cores.
    pub steal_share: f64,
    /// The cores the share is of.
    pub cores: f64,
    /// A material share went elsewhere: the step measured the machine, not the SUT alone.
    pub contaminated: bool,
    /// The step ran again because its first run was contaminated (the cleaner is kept).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
    /// When Plimsoll ran on cores of its own: other processes' CPU there, as a share of
    /// them (a harness starved by neighbours falls behind through no fault of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_share: Option<f64>,
}

impl Interference {
    /// Other processes' and the hypervisor's share of the SUT's cores together.
    pub fn sut_share(&self) -> f64 {
        self.others_share + self.steal_share
    }
}
