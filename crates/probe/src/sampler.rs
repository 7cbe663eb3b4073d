//! Sampling a SUT's tree on an interval while a step runs.

use crate::tree::{clock_ticks_per_sec, sample_pids, sample_tree, tree_pids};
use serde::Serialize;
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
    /// CPU seconds the tree used since the sampler started.
    pub cpu_sec: f64,
    /// The SUT's own cgroup, when it runs in one (see `cgroup`).
    pub cgroup: Option<crate::cgroup::CgroupMemory>,
}

/// Samples every `interval` on a background thread until stopped.
pub struct Sampler {
    root: u32,
    first_cpu_ticks: u64,
    stop: Arc<std::sync::atomic::AtomicBool>,
    summary: Arc<Mutex<Summary>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `root`; the first sample is the baseline.
    pub fn start(root: u32, interval: Duration) -> Sampler {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let first = sample_tree(root, true);
        let summary = Arc::new(Mutex::new(Summary {
            samples: 1,
            baseline_rss_kb: first.rss_kb,
            peak_rss_kb: first.rss_kb,
            last_rss_kb: first.rss_kb,
            peak_threads: first.threads,
            peak_fds: first.fds,
            peak_processes: first.processes,
            cpu_sec: 0.0,
            cgroup: crate::cgroup::sut_cgroup(root, &tree_pids(root)),
        }));
        let (s2, sum2) = (stop.clone(), summary.clone());
        let hz = clock_ticks_per_sec();
        let thread = std::thread::Builder::new()
            .name("plimsoll-probe".into())
            .spawn(move || {
                let mut n = 0u64;
                let mut pids = tree_pids(root);
                while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(interval);
                    n += 1;
                    // RSS and threads every sample; the costlier figures (the process
                    // list, CPU time summed over threads, descriptor counts) every 4th.
                    let full = n.is_multiple_of(4);
                    if full {
                        pids = tree_pids(root);
                    }
                    let s = sample_pids(&pids, full, full);
                    if s.processes == 0 {
                        continue;
                    }
                    let mut m = sum2.lock().unwrap_or_else(|p| p.into_inner());
                    m.samples += 1;
                    m.peak_rss_kb = m.peak_rss_kb.max(s.rss_kb);
                    m.last_rss_kb = s.rss_kb;
                    m.peak_threads = m.peak_threads.max(s.threads);
                    m.peak_fds = m.peak_fds.max(s.fds);
                    m.peak_processes = m.peak_processes.max(s.processes);
                    if full {
                        m.cpu_sec = s.cpu_ticks.saturating_sub(first.cpu_ticks) as f64 / hz;
                        if let Some(mut cg) = crate::cgroup::sut_cgroup(root, &pids) {
                            if let Some(prev) = &m.cgroup {
                                cg.peak_kb = cg.peak_kb.max(prev.peak_kb);
                            }
                            m.cgroup = Some(cg);
                        }
                    }
                }
            })
            .expect("spawning the probe thread");
        Sampler {
            root,
            first_cpu_ticks: first.cpu_ticks,
            stop,
            summary,
            thread: Some(thread),
        }
    }

    /// Takes the latest sample as the baseline (the SUT has set up; load starts now).
    pub fn rebase(&self) {
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        m.baseline_rss_kb = m.last_rss_kb;
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
        let last = sample_tree(self.root, false);
        let mut m = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        if last.processes > 0 {
            m.cpu_sec =
                last.cpu_ticks.saturating_sub(self.first_cpu_ticks) as f64 / clock_ticks_per_sec();
            m.peak_rss_kb = m.peak_rss_kb.max(last.rss_kb);
            m.peak_threads = m.peak_threads.max(last.threads);
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
