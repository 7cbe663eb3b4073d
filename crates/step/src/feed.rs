//! Feeds a live view every second while a step's sessions run: the driver's
//! counters and turn latencies, the SUT's memory, threads and CPU since the level began,
//! and the responsiveness probe's slowest answer.

use drive::Progress;
use probe::Sampler;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the feed reads.
pub(crate) struct Sources {
    pub on_tick: crate::options::OnTick,
    pub progress: Arc<Progress>,
    pub sampler: Arc<Sampler>,
    /// The probe's slowest answer (µs) since it was last taken, and whether the feed
    /// takes it (else a soak's series does, and the feed only reads it).
    pub probe: Option<(Arc<AtomicU64>, bool)>,
}

/// The feed running: stopped when the sessions end, or when the step is dropped (an
/// error, Ctrl-C), never left ticking.
pub(crate) struct Feed(Option<tokio::task::JoinHandle<()>>);

impl Feed {
    /// Stops it and waits until it has let go of the sampler.
    pub(crate) async fn stop(mut self) {
        if let Some(t) = self.0.take() {
            t.abort();
            let _ = t.await;
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        if let Some(t) = &self.0 {
            t.abort();
        }
    }
}

/// Ticks every second until stopped.
pub(crate) fn start(s: Sources) -> Feed {
    Feed(Some(tokio::spawn(async move {
        let t0 = Instant::now();
        let cpu0 = s.sampler.latest_cpu_sec();
        let baseline = s.sampler.summary().baseline_rss_kb * 1024;
        let mut next = tokio::time::Instant::now();
        loop {
            (s.on_tick.0)(tick(&s, t0, cpu0, baseline));
            next += Duration::from_secs(1);
            tokio::time::sleep_until(next).await;
        }
    })))
}

/// One second's figures: counted from `t0`, CPU from `cpu0`, memory over `baseline` bytes.
fn tick(s: &Sources, t0: Instant, cpu0: f64, baseline: u64) -> result::live::Tick {
    let p = &s.progress;
    let (rss_kb, threads) = s.sampler.latest();
    let (turn_le, turn_sum_s) = p.turn_histogram();
    let probe_ms = s.probe.as_ref().map(|(w, take)| {
        let us = match take {
            true => w.swap(0, Relaxed),
            false => w.load(Relaxed),
        };
        us as f64 / 1000.0
    });
    result::live::Tick {
        t_s: t0.elapsed().as_secs_f64(),
        in_flight: p.in_flight.load(Relaxed),
        sessions_ok: p.sessions_ok.load(Relaxed),
        sessions_failed: p.sessions_failed.load(Relaxed),
        turns: p.turns.load(Relaxed),
        rss_bytes: rss_kb * 1024,
        baseline_rss_bytes: baseline,
        threads,
        cpu_sec: (s.sampler.latest_cpu_sec() - cpu0).max(0.0),
        probe_ms,
        turn_le,
        turn_bounds_s: drive::TURN_BUCKETS_S.to_vec(),
        turn_sum_s,
    }
}
