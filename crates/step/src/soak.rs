//! A step held for a long time (a soak): the load runs for a set duration with sessions
//! ending and new ones starting, then stops for a drain; all along, the SUT's process
//! tree is sampled into a series handed to the caller sample by sample, so an
//! interrupted soak keeps what it saw.

use drive::Progress;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

pub use result::soak::SoakSample;

/// What a soak step does beyond a step.
#[derive(Clone)]
pub struct SoakPlan {
    pub duration: Duration,
    pub drain: Duration,
    pub every: Duration,
    /// Called with every sample as it is taken (the history stores it at once).
    pub on_sample: Arc<dyn Fn(&SoakSample) + Send + Sync>,
}

impl std::fmt::Debug for SoakPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SoakPlan({:?} load, {:?} drain, every {:?})",
            self.duration, self.drain, self.every
        )
    }
}

/// Sets the flag when dropped: the series stops however the step ends (Ctrl-C drops the
/// step's future; a blocking task left running would hold the runtime open forever).
pub(crate) struct StopOnDrop(pub Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Relaxed);
    }
}

/// Samples `pid`'s tree every `plan.every` until `stop`; the phase is read from
/// `draining`; `probe` is the responsiveness probe's slowest answer since the last sample.
pub(crate) fn series(
    pid: u32,
    plan: &SoakPlan,
    progress: Arc<Progress>,
    probe: Option<Arc<std::sync::atomic::AtomicU64>>,
    (draining, stop): (
        Arc<std::sync::atomic::AtomicBool>,
        Arc<std::sync::atomic::AtomicBool>,
    ),
) -> tokio::task::JoinHandle<()> {
    let plan = plan.clone();
    let started = std::time::Instant::now();
    let hz = probe::tree::clock_ticks_per_sec();
    tokio::task::spawn_blocking(move || {
        while !stop.load(Relaxed) {
            let pids = probe::tree::tree_pids(pid);
            let s = probe::tree::sample_pids(&pids, true, true);
            if s.processes > 0 {
                let sample = SoakSample {
                    t_s: result::round2(started.elapsed().as_secs_f64()),
                    phase: if draining.load(Relaxed) {
                        "drain"
                    } else {
                        "load"
                    }
                    .into(),
                    rss_kb: s.rss_kb,
                    threads: s.threads,
                    fds: s.fds,
                    cpu_s: result::round2(s.cpu_ticks as f64 / hz),
                    cgroup_kb: probe::cgroup::sut_cgroup(pid, &pids).map(|c| c.current_kb),
                    probe_max_ms: probe
                        .as_ref()
                        .map(|w| result::round2(w.swap(0, Relaxed) as f64 / 1000.0)),
                    sessions_done: progress.sessions_ok.load(Relaxed)
                        + progress.sessions_failed.load(Relaxed),
                    turns: progress.turns.load(Relaxed),
                };
                (plan.on_sample)(&sample);
            }
            let until = std::time::Instant::now() + plan.every;
            while !stop.load(Relaxed) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    })
}
