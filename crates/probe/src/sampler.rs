//! Sampling a SUT's tree on an interval while a step runs: a background thread reads
//! memory and threads every sample and CPU time, descriptors, connections and the
//! cgroup every fourth, and PSS at most 0.5 % of a core, adding them up into a [`Summary`]
//! (`summary.rs`). Reading one sample from /proc is `tree`'s business.

use crate::listing::ProcessList;
use crate::net::Connections;
use crate::paced::Paced;
use crate::tree::{clock_ticks_per_sec, sample_each, sample_pids, tree_pids, CpuAccount};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use crate::summary::{MachineCpu, MachinePoint, Series, Summary};

/// Counting connections takes at most 1 / this of a core (0.4 %): it lists the tree's
/// descriptors and asks the kernel for its sockets (when the text table was read whole,
/// 2–9 ms a read on a machine that has run a few ramps, it was half the probe's CPU).
pub const NET_SHARE_INVERSE: u32 = 250;

/// Which processes a sampler reads: asked again at a full sample when the list may have
/// changed (`listing.rs`: a SUT's tree grows and shrinks; a pattern or a cgroup gains
/// members).
pub type Pids = Arc<dyn Fn() -> Vec<u32> + Send + Sync>;

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
            crate::pss::Pss::start(crate::pss::tree_pss_kb(&pids())),
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
        let pss = crate::pss::tree_pss_kb(&(self.pids)());
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        m.baseline_rss_kb = m.last_rss_kb;
        m.baseline_processes = m.last_processes;
        match (m.pss.as_mut(), pss) {
            (Some(p), Some(kb)) => p.rebase(kb),
            (None, kb) => m.pss = crate::pss::Pss::start(kb),
            (Some(_), None) => {}
        }
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
        let pss = crate::pss::tree_pss_kb(&pids);
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
        if let (Some(p), Some(kb)) = (m.pss.as_mut(), pss) {
            p.took(kb);
        }
        m.cgroup = m.cgroup.as_ref().map(crate::cgroup::reread);
        m.clone()
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
        let mut net_clock = Paced::new(NET_SHARE_INVERSE, Duration::ZERO);
        let mut pss_clock = Paced::new(crate::pss::PSS_SHARE_INVERSE, crate::pss::PSS_EVERY);
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
            let net = full
                .then(|| net_clock.run(|| crate::net::connections(pids)))
                .flatten();
            let pss = full
                .then(|| pss_clock.run(|| crate::pss::tree_pss_kb(pids)))
                .flatten()
                .flatten();
            let summary = self.summary.clone();
            let mut m = summary.lock().unwrap_or_else(|p| p.into_inner());
            m.took(&s);
            if let (Some(p), Some(kb)) = (m.pss.as_mut(), pss) {
                p.took(kb);
            }
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
        if let Some(cg) = crate::cgroup::sut_cgroup(self.root, pids) {
            m.cgroup = Some(match &m.cgroup {
                Some(prev) => cg.with_highs_of(prev),
                None => cg,
            });
        }
    }
}
