//! Plimsoll's own CPU over a step, by part: the threads are told apart by name (the
//! driver's runtime, the mock's runtime and voice pool, the probe's sampler), the mock's
//! oracle and prompt cache and the probe's thread reads by the CPU clocks they keep;
//! what no named thread took (the step's own task, threads that ended) is orchestration.

use result::harness::{HarnessParts, PartCpu};

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Snapshot {
    process_ns: u64,
    driver_ns: u64,
    mock_ns: u64,
    probe_ns: u64,
    oracle_ns: u64,
    cache_ns: u64,
    thread_reads_ns: u64,
}

impl Snapshot {
    pub fn take(mock: &mock::App) -> Snapshot {
        use std::sync::atomic::Ordering::Relaxed;
        let mut s = Snapshot {
            process_ns: probe::own::process_cpu_ns(),
            oracle_ns: mock.stats.oracle_cpu_ns.load(Relaxed),
            cache_ns: mock.stats.cache_cpu_ns.load(Relaxed),
            thread_reads_ns: probe::own::thread_reads_ns(),
            ..Snapshot::default()
        };
        for (name, ns) in probe::own::threads_cpu_ns() {
            if name.starts_with(drive::THREAD_NAME) {
                s.driver_ns += ns;
            } else if name.starts_with(mock::THREAD_NAME) {
                s.mock_ns += ns;
            } else if name.starts_with(probe::own::THREAD_NAME) {
                s.probe_ns += ns;
            }
        }
        s
    }

    /// Plimsoll's CPU from `self` to `now` into `m`: the total and its parts per turn.
    pub fn charge(&self, now: &Snapshot, m: &mut crate::measured::Measured) {
        m.harness_cpu_sec = now.process_ns.saturating_sub(self.process_ns) as f64 / 1e9;
        m.harness_parts = Some(self.parts(now, m.turns));
    }

    /// The parts from `self` to `now`, per turn over `turns`. A thread that ended between
    /// the two is the rest's (orchestration); a part never goes below zero.
    pub fn parts(&self, now: &Snapshot, turns: u64) -> HarnessParts {
        let d = |a: u64, b: u64| b.saturating_sub(a);
        let total = d(self.process_ns, now.process_ns);
        let driver = d(self.driver_ns, now.driver_ns);
        let mock = d(self.mock_ns, now.mock_ns);
        let probe = d(self.probe_ns, now.probe_ns);
        let oracle = d(self.oracle_ns, now.oracle_ns).min(mock);
        let cache = d(self.cache_ns, now.cache_ns).min(mock - oracle);
        let reads = d(self.thread_reads_ns, now.thread_reads_ns).min(probe);
        let part = |ns: u64| PartCpu {
            cpu_sec: round4(ns as f64 / 1e9),
            ms_per_turn: (turns > 0).then(|| round4(ns as f64 / 1e6 / turns as f64)),
        };
        HarnessParts {
            total: part(total),
            driver: part(driver),
            mock_serving: part(mock - oracle - cache),
            mock_oracle: part(oracle),
            mock_cache: part(cache),
            probe_sampling: part(probe - reads),
            probe_threads: part(reads),
            orchestration: part(total.saturating_sub(driver + mock + probe)),
        }
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_to_the_total_and_the_rest_is_orchestration() {
        let a = Snapshot::default();
        let b = Snapshot {
            process_ns: 1_000_000_000,
            driver_ns: 300_000_000,
            mock_ns: 500_000_000,
            probe_ns: 100_000_000,
            oracle_ns: 80_000_000,
            cache_ns: 20_000_000,
            thread_reads_ns: 40_000_000,
        };
        let p = a.parts(&b, 100);
        assert_eq!(p.total.ms_per_turn, Some(10.0));
        assert_eq!(p.driver.cpu_sec, 0.3);
        assert_eq!(p.mock_serving.cpu_sec, 0.4);
        assert_eq!(p.mock_oracle.ms_per_turn, Some(0.8));
        assert_eq!(p.mock_cache.cpu_sec, 0.02);
        assert_eq!(p.probe_sampling.cpu_sec, 0.06);
        assert_eq!(p.probe_threads.cpu_sec, 0.04);
        assert_eq!(p.orchestration.cpu_sec, 0.1);
        let sum: f64 = p.named().iter().map(|(_, x)| x.cpu_sec).sum();
        assert!((sum - p.total.cpu_sec).abs() < 1e-9, "{sum}");
    }

    #[test]
    fn a_thread_that_ended_leaves_its_time_to_orchestration_not_below_zero() {
        let a = Snapshot {
            driver_ns: 500_000_000,
            ..Snapshot::default()
        };
        let b = Snapshot {
            process_ns: 1_000_000_000,
            driver_ns: 100_000_000,
            ..Snapshot::default()
        };
        let p = a.parts(&b, 0);
        assert_eq!(p.driver.cpu_sec, 0.0);
        assert_eq!(p.driver.ms_per_turn, None);
        assert_eq!(p.orchestration.cpu_sec, 1.0);
    }
}
