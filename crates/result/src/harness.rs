//! The harness's CPU by part: what driving the sessions, serving the mock (its replies,
//! its integrity oracle, its prompt cache), sampling the SUT (and reading its threads)
//! and the step's own orchestration cost over one step. Types only.

use serde::{Deserialize, Serialize};

/// One part's CPU over the step.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PartCpu {
    pub cpu_sec: f64,
    /// CPU ms per completed turn (None when no turn completed).
    pub ms_per_turn: Option<f64>,
}

/// Plimsoll's CPU over a step, split so the parts add up to `total`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HarnessParts {
    /// Everything Plimsoll's process spent over the step.
    pub total: PartCpu,
    /// The sessions: requests, streams read, the SUT's replies checked, think times.
    pub driver: PartCpu,
    /// The mock's serving: requests parsed, replies timed and written.
    pub mock_serving: PartCpu,
    /// The mock's integrity oracle (sessions identified, conversations checked).
    pub mock_oracle: PartCpu,
    /// The mock's prompt cache.
    pub mock_cache: PartCpu,
    /// The probe's sampling of the SUT's processes (memory, CPU, descriptors, sockets).
    pub probe_sampling: PartCpu,
    /// The probe's reads of the SUT's threads one by one.
    pub probe_threads: PartCpu,
    /// The rest: the step's own task (starting, watching, judging) and threads that
    /// ended before the step did.
    pub orchestration: PartCpu,
}

impl HarnessParts {
    /// Each part by its name in RESULT, in order.
    pub fn named(&self) -> [(&'static str, PartCpu); 7] {
        [
            ("driver", self.driver),
            ("mock_serving", self.mock_serving),
            ("mock_oracle", self.mock_oracle),
            ("mock_cache", self.mock_cache),
            ("probe_sampling", self.probe_sampling),
            ("probe_threads", self.probe_threads),
            ("orchestration", self.orchestration),
        ]
    }

    /// The part that cost the most, with its name.
    pub fn largest(&self) -> (&'static str, PartCpu) {
        self.named()
            .into_iter()
            .max_by(|a, b| a.1.cpu_sec.total_cmp(&b.1.cpu_sec))
            .expect("parts are never empty")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_part_is_the_one_that_cost_most() {
        let p = HarnessParts {
            driver: PartCpu {
                cpu_sec: 0.3,
                ms_per_turn: None,
            },
            probe_threads: PartCpu {
                cpu_sec: 0.4,
                ms_per_turn: None,
            },
            ..HarnessParts::default()
        };
        assert_eq!(p.largest().0, "probe_threads");
    }
}
