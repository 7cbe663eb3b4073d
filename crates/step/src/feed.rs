//! Feeds a live view every second while a step's sessions run: the driver's
//! counters and turn latencies, the SUT's memory, threads and CPU since the level began,
//! and the responsiveness probe's slowest answer. A shard driving a SUT it did not start
//! has no sampler: its seconds carry the driver's figures alone.

use drive::Progress;
use probe::Sampler;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the feed reads.
pub(crate) struct Sources {
    pub on_tick: crate::options::OnTick,
    pub progress: Arc<Progress>,
    /// None for a shard (`run --target`): nothing of the SUT is sampled.
    pub sampler: Option<Arc<Sampler>>,
    /// The probe's slowest answer (µs) since it was last taken, and whether the feed
    /// takes it (else a soak's series does, and the feed only reads it).
    pub probe: Option<(Arc<AtomicU64>, bool)>,
}

/// Where the level's seconds count from: its start, the SUT's CPU then, its memory before load.
struct Origin {
    t0: Instant,
    cpu0: f64,
    baseline: u64,
}

/// The feed running: stopped when the sessions end, or when the step is dropped (an
/// error, Ctrl-C), never left ticking.
pub(crate) struct Feed {
    task: Option<tokio::task::JoinHandle<()>>,
    sources: Arc<(Sources, Origin)>,
}

impl Feed {
    /// Stops it, gives one last second with every session counted, and lets go of the
    /// sampler.
    pub(crate) async fn stop(mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
        let (s, o) = &*self.sources;
        (s.on_tick.0)(tick(s, o));
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// Ticks every second until stopped.
pub(crate) fn start(s: Sources) -> Feed {
    let origin = Origin {
        t0: Instant::now(),
        cpu0: s.sampler.as_ref().map_or(0.0, |x| x.latest_cpu_sec()),
        baseline: s
            .sampler
            .as_ref()
            .map_or(0, |x| x.summary().baseline_rss_kb * 1024),
    };
    let sources = Arc::new((s, origin));
    let shared = sources.clone();
    let task = tokio::spawn(async move {
        let mut next = tokio::time::Instant::now();
        loop {
            let (s, o) = &*shared;
            (s.on_tick.0)(tick(s, o));
            next += Duration::from_secs(1);
            tokio::time::sleep_until(next).await;
        }
    });
    Feed {
        task: Some(task),
        sources,
    }
}

/// One second's figures, counted from the level's origin.
fn tick(s: &Sources, o: &Origin) -> result::live::Tick {
    let p = &s.progress;
    let (rss_kb, threads, cpu) = s.sampler.as_ref().map_or((0, 0, 0.0), |x| {
        let (rss_kb, threads) = x.latest();
        (rss_kb, threads, x.latest_cpu_sec())
    });
    let (turn_le, turn_sum_s) = p.turn_histogram();
    let probe_ms = s.probe.as_ref().map(|(w, take)| {
        let us = match take {
            true => w.swap(0, Relaxed),
            false => w.load(Relaxed),
        };
        us as f64 / 1000.0
    });
    result::live::Tick {
        t_s: o.t0.elapsed().as_secs_f64(),
        in_flight: p.in_flight.load(Relaxed),
        sessions_ok: p.sessions_ok.load(Relaxed),
        sessions_failed: p.sessions_failed.load(Relaxed),
        turns: p.turns.load(Relaxed),
        unsampled: s.sampler.is_none(),
        rss_bytes: rss_kb * 1024,
        baseline_rss_bytes: o.baseline,
        threads,
        cpu_sec: (cpu - o.cpu0).max(0.0),
        probe_ms,
        turn_le,
        turn_bounds_s: drive::TURN_BUCKETS_S.to_vec(),
        turn_sum_s,
    }
}
