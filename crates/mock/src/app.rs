//! What every request handler may read: the scenario, the seed, the counters, the
//! ledger and the failure rates changed live. Built once when the mock starts.

use crate::failures::Failures;
use crate::ledger::Ledger;
use crate::scenario::{ModelSpec, Scenario};
use crate::stats::Stats;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// Everything a request handler may read. Built once at start.
pub struct App {
    pub scenario: Scenario,
    pub seed: u64,
    pub max_body_bytes: usize,
    /// A fixed `created` timestamp (for byte-identical replays), else the clock.
    pub fixed_created: Option<u64>,
    pub stats: Stats,
    pub ledger: Ledger,
    /// Failure rates changed live (`POST /plimsoll/admin/failures`): by model, or
    /// `*` for every model. They replace the scenario's rates.
    pub failure_overrides: RwLock<BTreeMap<String, Failures>>,
}

impl App {
    /// The failure rates in force for `model` right now.
    pub fn failures_for(&self, model: &str, spec: &ModelSpec) -> Failures {
        if model.ends_with("-stable") {
            return Failures::NONE;
        }
        let o = self
            .failure_overrides
            .read()
            .unwrap_or_else(|p| p.into_inner());
        o.get(model)
            .or_else(|| o.get("*"))
            .copied()
            .unwrap_or(spec.failures)
    }

    pub fn created_unix(&self) -> u64 {
        self.fixed_created
            .or(self.scenario.created)
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0)
            })
    }

    pub fn known_models(&self) -> String {
        if self.scenario.models.is_empty() {
            "none defined; any name is served with the defaults unless unknown_model = \"error\""
                .into()
        } else {
            self.scenario
                .models
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}
