//! Sampling a SUT's tree on an interval while a step runs: a background thread reads
//! memory and threads every sample and CPU time, descriptors, connections and the
//! cgroup every fourth, adding them up into a [`Summary`] (peaks, the baseline, a CPU
//! series, connections by port). Reading one sample from /proc is `tree`'s business.

use crate::listing::ProcessList;
use crate::net::Connections;
use crate::tree::{
    clock_ticks_per_sec, sample_each, sample_pids, tree_pids, CpuAccount, TreeSample,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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

/// Counting connections takes at most 1 / this of a core (0.4 %): it lists the tree's
/// descriptors and asks the kernel for its sockets (when the text table was read whole,
/// 2–9 ms a read on a machine that has run a few ramps, it was half the probe's CPU).
pub const NET_SHARE_INVERSE: u32 = 250;

/// Which processes a sampler reads: asked again at a full sample when the list may have
/// changed (`listing.rs`: a SUT's tree grows and shrinks; a pattern or a cgroup gains
/// members).
pub type Pids = Arc<dyn Fn() -> Vec<u32> + Send + Sync>;

impl Summary {
    /// The summary of one sample, the baseline.
    fn baseline(first: &TreeSample, cgroup: Option<crate::cgroup::CgroupMemory>) -> Summary {
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
    fn took(&mut self, s: &TreeSample) {
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

/// Where the machine's CPU is read: the SUT's cores, and whether Plimsoll's own process
/// runs on them too.
#[derive(Clone)]
struct Cores {
    sut: Vec<usize>,
    own_there: bool,
    /// Plimsoll's cores that are not the SUT's (empty when they share).
    harness: Vec<usize>,
}

impl Cores {
    fn of(root: u32) -> Cores {
        let sut = crate::cpustat::allowed_cores(root);
        let own = crate::cpustat::allowed_cores(std::process::id());
        let own_there = own.iter().any(|c| sut.contains(c));
        Cores {
            harness: match own_there || sut.is_empty() {
                true => Vec::new(),
                false => own,
            },
            own_there,
            sut,
        }
    }

    fn point(&self, t: f64) -> MachinePoint {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let k = crate::cpustat::ticks_in(&stat, &self.sut);
        let own = || crate::tree::process_cpu_ticks(std::process::id());
        let (harness_busy, harness_own) = match self.harness.is_empty() {
            true => (0, 0),
            false => (crate::cpustat::ticks_in(&stat, &self.harness).busy, own()),
        };
        MachinePoint {
            t,
            busy: k.busy,
            steal: k.steal,
            own: match self.own_there {
                true => own(),
                false => 0,
            },
            harness_busy,
            harness_own,
        }
    }
}

/// Samples every `interval` on a background thread until stopped.
pub struct Sampler {
    cores: Cores,
    pids: Pids,
    started: std::time::Instant,
    cpu: Arc<Mutex<CpuAccount>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    summary: Arc<Mutex<Summary>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `root` and its descendants; the first sample is the baseline.
    pub fn start(root: u32, interval: Duration) -> Sampler {
        Sampler::start_on(root, Arc::new(move || tree_pids(root)), interval)
    }

    /// Starts sampling the processes `pids` names (`root` is the one whose cgroup is
    /// read, when the cgroup is theirs alone).
    pub fn start_on(root: u32, pids: Pids, interval: Duration) -> Sampler {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (first, each) = sample_each(&pids(), true, true);
        let cpu = Arc::new(Mutex::new(CpuAccount::start(&each)));
        let summary = Arc::new(Mutex::new(Summary::baseline(
            &first,
            crate::cgroup::sut_cgroup(root, &pids()),
        )));
        let started = std::time::Instant::now();
        let cores = Cores::of(root);
        {
            let mut m = summary.lock().unwrap_or_else(|p| p.into_inner());
            m.add_connections(0.0, &crate::net::connections(&pids()));
            m.sut_cores = cores.sut.clone();
            m.harness_cores = cores.harness.clone();
            m.machine.push(cores.point(0.0));
            let dir = m.cgroup.as_ref().map(|c| c.path.clone());
            m.limits = Some(crate::limits::of(root, dir.as_deref()));
        }
        let watch = Watch {
            cores: cores.clone(),
            threads: crate::threads::ThreadWatch::default(),
            stop: stop.clone(),
            summary: summary.clone(),
            find: pids.clone(),
            root,
            interval,
            started,
            cpu: cpu.clone(),
            hz: clock_ticks_per_sec(),
        };
        let thread = std::thread::Builder::new()
            .name(crate::own::THREAD_NAME.into())
            .spawn(move || watch.run())
            .expect("spawning the probe thread");
        Sampler {
            cores,
            pids,
            started,
            cpu,
            stop,
            summary,
            thread: Some(thread),
        }
    }

    /// When sampling began: the zero of `Summary::cpu_series`.
    pub fn started(&self) -> std::time::Instant {
        self.started
    }

    /// Takes the latest sample as the baseline (the SUT has set up; load starts now).
    pub fn rebase(&self) {
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        m.baseline_rss_kb = m.last_rss_kb;
        m.baseline_processes = m.last_processes;
    }

    /// Notes the RSS now (a fresh sample) as the level before load, and watches the
    /// highest RSS from here on (`Summary::mark_rss_kb`, `peak_after_mark_kb`).
    pub fn mark(&self) {
        let now = sample_pids(&(self.pids)(), false, false).rss_kb;
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        m.mark_rss_kb = Some(now);
        m.peak_after_mark_kb = now;
    }

    /// The latest RSS (KB) and the most threads so far, without copying the CPU series
    /// (for a live progress line).
    pub fn latest(&self) -> (u64, u64) {
        let m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        (m.last_rss_kb, m.peak_threads)
    }

    /// CPU seconds the tree used since sampling began, as of the latest full sample (for
    /// a live view).
    pub fn latest_cpu_sec(&self) -> f64 {
        let m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        m.cpu_series.last().map_or(0.0, |p| p.1)
    }

    /// The figures so far.
    pub fn summary(&self) -> Summary {
        self.summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Stops sampling and returns the figures.
    /// Stops sampling, takes one last full sample (for the exact CPU time) and returns
    /// the figures.
    pub fn finish(mut self) -> Summary {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let pids = (self.pids)();
        let (last, each) = sample_each(&pids, true, false);
        let net = crate::net::connections(&pids);
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        if last.processes > 0 {
            let t = self.started.elapsed().as_secs_f64();
            m.add_connections(t, &net);
        }
        if last.processes > 0 {
            let mut cpu = self.cpu.lock().unwrap_or_else(|p| p.into_inner());
            cpu.update(&each);
            m.cpu_sec = cpu.total() as f64 / clock_ticks_per_sec();
            let t = self.started.elapsed().as_secs_f64();
            let cpu = m.cpu_sec;
            m.cpu_series.push((t, cpu));
            m.machine.push(self.cores.point(t));
            m.peak_rss_kb = m.peak_rss_kb.max(last.rss_kb);
            m.peak_threads = m.peak_threads.max(last.threads);
        }
        m.cgroup = m.cgroup.as_ref().map(crate::cgroup::reread);
        m.clone()
    }
}

impl Summary {
    /// One reading of the connections: every port seen so far gets a point (0 when it
    /// has none now), so a pool that empties shows as a fall, not a gap.
    fn add_connections(&mut self, t: f64, net: &crate::net::Connections) {
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

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The sampler's thread: what it reads, where it adds it up, when it stops.
struct Watch {
    cores: Cores,
    threads: crate::threads::ThreadWatch,
    stop: Arc<std::sync::atomic::AtomicBool>,
    summary: Arc<Mutex<Summary>>,
    find: Pids,
    root: u32,
    interval: Duration,
    started: std::time::Instant,
    cpu: Arc<Mutex<CpuAccount>>,
    hz: f64,
}

impl Watch {
    fn run(mut self) {
        let mut n = 0u64;
        let mut list = ProcessList::read(&*self.find);
        let mut net_due = std::time::Instant::now();
        while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(self.interval);
            n += 1;
            // RSS and threads every sample; the costlier figures (the process
            // list when it may have changed, CPU time summed over threads, descriptor
            // counts) every 4th.
            let full = n.is_multiple_of(4);
            if full {
                list.refresh(&*self.find);
            }
            let (s, each) = sample_each(&list.pids, full, full);
            list.lost = (s.processes as usize) < list.pids.len();
            let pids = &list.pids;
            if s.processes == 0 {
                continue;
            }
            // Counting connections lists every descriptor of the tree and asks the
            // kernel for its sockets (a SUT of thousands of sockets: ms), so they are
            // counted at most 1/NET_SHARE_INVERSE of the time: every full sample while
            // that is cheap, less often when it is not.
            let net = (full && std::time::Instant::now() >= net_due).then(|| {
                let t = std::time::Instant::now();
                let c = crate::net::connections(pids);
                net_due = t + t.elapsed() * NET_SHARE_INVERSE;
                c
            });
            let summary = self.summary.clone();
            let mut m = summary.lock().unwrap_or_else(|p| p.into_inner());
            m.took(&s);
            if full {
                self.cpu
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .update(&each);
                self.full(&mut m, net, pids);
            }
        }
    }

    /// What only a full sample reads: CPU time, connections, the cgroup.
    fn full(&mut self, m: &mut Summary, net: Option<Connections>, pids: &[u32]) {
        m.cpu_sec = self.cpu.lock().unwrap_or_else(|p| p.into_inner()).total() as f64 / self.hz;
        let t = self.started.elapsed().as_secs_f64();
        let read = crate::own::reading_threads(|| self.threads.read(pids, t));
        if let Some(iv) = read {
            crate::threads::push(&mut m.thread_intervals, iv);
        }
        let point = (t, m.cpu_sec);
        m.cpu_series.push(point);
        m.machine.push(self.cores.point(t));
        if let Some(net) = net {
            m.add_connections(t, &net);
        }
        if let Some(mut cg) = crate::cgroup::sut_cgroup(self.root, pids) {
            if let Some(prev) = &m.cgroup {
                cg.peak_kb = cg.peak_kb.max(prev.peak_kb);
            }
            m.cgroup = Some(cg);
        }
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
