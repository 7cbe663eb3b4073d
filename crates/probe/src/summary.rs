//! What a step's samples of the SUT's tree add up to: the [`Summary`] (peaks, the
//! baseline, the CPU series, connections by port, the machine's CPU on the SUT's cores),
//! and the figures read off it between two moments. The sampler (`sampler.rs`) fills it.

use crate::tree::{clock_ticks_per_sec, TreeSample};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the samples of one step add up to.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub samples: u64,
    pub baseline_rss_kb: u64,
    pub peak_rss_kb: u64,
    pub last_rss_kb: u64,
    pub peak_threads: u64,
    pub peak_fds: u64,
    pub peak_processes: u32,
    /// Processes in the tree at the baseline (when load began), and at the latest sample.
    pub baseline_processes: u32,
    pub last_processes: u32,
    /// CPU seconds the tree used since the sampler started.
    pub cpu_sec: f64,
    /// The SUT's own cgroup, when it runs in one (see `cgroup`).
    pub cgroup: Option<crate::cgroup::CgroupMemory>,
    /// The tree's PSS, each shared page counted once (see `pss`); None where it could not
    /// be read.
    pub pss: Option<crate::pss::Pss>,
    /// (seconds since the sampler started, CPU seconds so far) at every full sample.
    pub cpu_series: Vec<(f64, f64)>,
    /// RSS when `Sampler::mark` was called (resident sessions open), and the highest
    /// RSS seen since.
    pub mark_rss_kb: Option<u64>,
    pub peak_after_mark_kb: u64,
    /// Established outbound TCP connections by remote port, at every full sample.
    pub connections: BTreeMap<u16, Series>,
    /// The most connections accepted on the ports the tree listens on (its clients).
    pub peak_inbound: u32,
    /// The ports the tree listened on at some sample.
    pub listening: std::collections::BTreeSet<u16>,
    /// The span the step's figures are read over (seconds since the sampler started):
    /// every session in flight when the step knows it, else while sessions were driven;
    /// set by the step before the figures are filled in.
    pub window: Option<(f64, f64)>,
    /// The SUT's busiest threads, read interval by interval (see `threads`).
    pub thread_intervals: Vec<crate::threads::Interval>,
    /// The cores the SUT may run on, and the machine's time on them at every full sample
    /// (see `cpustat`): what else ran there.
    pub sut_cores: Vec<usize>,
    pub harness_cores: Vec<usize>,
    pub machine: Vec<MachinePoint>,
    /// What the box lets the SUT have (read when sampling started).
    pub limits: Option<result::BoxLimits>,
}

/// The machine's CPU on the SUT's cores at one moment, in clock ticks since boot.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct MachinePoint {
    /// Seconds since the sampler started.
    pub t: f64,
    pub busy: u64,
    pub steal: u64,
    /// Plimsoll's own process's CPU, when it may run on those cores too (0 when it is
    /// pinned elsewhere).
    pub own: u64,
    /// When Plimsoll is pinned to cores of its own: the machine's time on them, and
    /// Plimsoll's own CPU (what else ran there starves the harness, not the SUT).
    pub harness_busy: u64,
    pub harness_own: u64,
}

/// The machine's CPU on the SUT's cores over a span, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineCpu {
    pub busy_s: f64,
    pub steal_s: f64,
    pub own_s: f64,
    pub cores: usize,
    /// Other processes' CPU on Plimsoll's own cores (seconds) and how many there are (0
    /// when Plimsoll shares the SUT's cores).
    pub harness_others_s: f64,
    pub harness_cores: usize,
}

/// A count over time: (seconds since the sampler started, count) at every full sample,
/// and its highest value.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Series {
    pub peak: u32,
    pub points: Vec<(f64, u32)>,
}

impl Summary {
    /// The summary of one sample, the baseline.
    pub(crate) fn baseline(
        first: &TreeSample,
        cgroup: Option<crate::cgroup::CgroupMemory>,
        pss: Option<crate::pss::Pss>,
    ) -> Summary {
        Summary {
            samples: 1,
            baseline_rss_kb: first.rss_kb,
            peak_rss_kb: first.rss_kb,
            last_rss_kb: first.rss_kb,
            peak_threads: first.threads,
            peak_fds: first.fds,
            peak_processes: first.processes,
            baseline_processes: first.processes,
            last_processes: first.processes,
            cpu_sec: 0.0,
            cgroup,
            pss,
            cpu_series: vec![(0.0, 0.0)],
            mark_rss_kb: None,
            peak_after_mark_kb: 0,
            connections: BTreeMap::new(),
            peak_inbound: 0,
            listening: Default::default(),
            window: None,
            thread_intervals: Vec::new(),
            sut_cores: Vec::new(),
            harness_cores: Vec::new(),
            machine: Vec::new(),
            limits: None,
        }
    }

    /// One more sample's memory, threads, descriptors and processes.
    pub(crate) fn took(&mut self, s: &TreeSample) {
        self.samples += 1;
        self.peak_rss_kb = self.peak_rss_kb.max(s.rss_kb);
        self.peak_after_mark_kb = self.peak_after_mark_kb.max(s.rss_kb);
        self.last_rss_kb = s.rss_kb;
        self.peak_threads = self.peak_threads.max(s.threads);
        self.peak_fds = self.peak_fds.max(s.fds);
        self.peak_processes = self.peak_processes.max(s.processes);
        self.last_processes = s.processes;
    }
    /// CPU seconds used between two moments (seconds since the sampler started), read
    /// off the series by linear interpolation; None when the series does not span them.
    pub fn cpu_between(&self, from_s: f64, to_s: f64) -> Option<f64> {
        Some(at(&self.cpu_series, to_s)? - at(&self.cpu_series, from_s)?)
    }

    /// The machine's CPU on the SUT's cores between two moments, the same way.
    pub fn machine_between(&self, from_s: f64, to_s: f64) -> Option<MachineCpu> {
        let hz = clock_ticks_per_sec();
        let series = |f: fn(&MachinePoint) -> u64| -> Vec<(f64, f64)> {
            self.machine
                .iter()
                .map(|p| (p.t, f(p) as f64 / hz))
                .collect()
        };
        let over = |s: Vec<(f64, f64)>| Some(at(&s, to_s)? - at(&s, from_s)?);
        Some(MachineCpu {
            busy_s: over(series(|p| p.busy))?,
            steal_s: over(series(|p| p.steal))?,
            own_s: over(series(|p| p.own))?,
            cores: self.sut_cores.len(),
            harness_others_s: (over(series(|p| p.harness_busy))?
                - over(series(|p| p.harness_own))?)
            .max(0.0),
            harness_cores: self.harness_cores.len(),
        })
    }
}

/// A series' value at `t`, linearly between its points; None outside it.
fn at(s: &[(f64, f64)], t: f64) -> Option<f64> {
    if t < 0.0 {
        return None;
    }
    let i = s.iter().position(|&(x, _)| x >= t)?;
    if i == 0 {
        return Some(s[0].1);
    }
    let ((x0, y0), (x1, y1)) = (s[i - 1], s[i]);
    Some(y0 + (y1 - y0) * (t - x0) / (x1 - x0).max(1e-9))
}

impl Summary {
    /// One reading of the connections: every port seen so far gets a point (0 when it
    /// has none now), so a pool that empties shows as a fall, not a gap.
    pub(crate) fn add_connections(&mut self, t: f64, net: &crate::net::Connections) {
        for port in net.by_port.keys() {
            self.connections.entry(*port).or_default();
        }
        for (port, series) in self.connections.iter_mut() {
            let n = net.by_port.get(port).copied().unwrap_or(0);
            series.peak = series.peak.max(n);
            series.points.push((t, n));
        }
        self.peak_inbound = self.peak_inbound.max(net.inbound);
        self.listening.extend(net.listening.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_between_two_moments_is_interpolated() {
        let s = Summary {
            cpu_series: vec![(0.0, 0.0), (1.0, 0.5), (2.0, 1.5)],
            ..Summary::default()
        };
        assert_eq!(s.cpu_between(0.0, 1.0), Some(0.5));
        assert_eq!(s.cpu_between(0.5, 1.5), Some(0.75));
        assert_eq!(s.cpu_between(1.0, 3.0), None, "past the last sample");
        assert_eq!(s.cpu_between(-1.0, 1.0), None);
    }
}
