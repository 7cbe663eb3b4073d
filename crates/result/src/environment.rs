//! Where a run happened and what it ran, as every ladder, sweep and soak document keeps
//! it: the machine, its kernel, the cap and its method, the core partition, the SUT's
//! command and git commit, its dependencies; the budget a ladder judged against, the axes
//! a sweep moved, the plan a soak followed.

use crate::budget::Budget;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub machine: String,
    pub memory_gb: f64,
    pub kernel: String,
    /// The cap a step will use (None: no cap was asked for).
    pub cap: Option<EnvCap>,
    pub sut_git_commit: Option<String>,
    pub partition: Option<EnvPartition>,
    pub plimsoll_version: String,
    pub sut_command: Vec<String>,
    #[serde(default)]
    pub sut_env: Vec<(String, String)>,
    pub arm: Option<String>,
    #[serde(default = "one")]
    pub replicas: usize,
    #[serde(default)]
    pub services: Vec<EnvService>,
    #[serde(default)]
    pub probes: Vec<EnvProbe>,
    /// A ladder's or a sweep's budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// A sweep's axes, in order (the last moves fastest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<Axis>>,
    /// "soak" for a soak's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A soak's plan, stored with its start so a killed soak is judged as it was meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<SoakPlan>,
}

fn one() -> usize {
    1
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvCap {
    pub cpus: f64,
    pub mem_bytes: u64,
    pub method: String,
    /// "cpuset" or "quota" (see the step's `cap.cpu_by`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_by: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvPartition {
    pub harness: String,
    pub sut: String,
    /// affinity, or cpuset once a step has run in a cgroup that holds the SUT's cores.
    pub method: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvService {
    pub name: String,
    pub command: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvProbe {
    pub name: String,
    pub target: String,
}

/// One axis of a sweep: its name and the values it takes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
}

/// What a soak was asked to do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakPlan {
    pub concurrency: usize,
    pub rate: Option<f64>,
    pub duration_s: f64,
    pub drain_s: f64,
    pub every_s: f64,
    pub warmup_s: f64,
}
