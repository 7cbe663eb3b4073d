//! The mock's own measurements: how late each frame left against its deadline, and
//! how many requests and streams it served.
//!
//! Lateness goes into HDR histograms sharded by worker thread, so recording on the
//! hot path takes an uncontended lock; a snapshot merges the shards.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

const SHARDS: usize = 8;

pub struct Stats {
    shards: Vec<Mutex<Histogram<u64>>>,
    /// Audio frames' lateness (speech, Realtime deltas), apart from the text frames'.
    audio: Vec<Mutex<Histogram<u64>>>,
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub streams_total: AtomicU64,
    pub streams_open: AtomicI64,
    pub frames: AtomicU64,
    pub output_tokens: AtomicU64,
    pub prompt_tokens: AtomicU64,
    /// CPU time (ns, on the serving thread's own clock) spent in the integrity oracle:
    /// identifying the session, its ledger entry and every check of its conversation.
    pub oracle_cpu_ns: AtomicU64,
    /// CPU time (ns) spent serving the provider's prompt cache.
    pub cache_cpu_ns: AtomicU64,
    /// How long a new connection's first request head took to reach the router after
    /// the connection was accepted: the mock's accept path and read, with whatever the
    /// client took to send the request after connecting (before the mock's clock starts).
    accept_wait: Mutex<Histogram<u64>>,
}

/// This thread's CPU time so far, in ns (`CLOCK_THREAD_CPUTIME_ID`: what the kernel
/// charged this thread, not the wall clock, so a preempted call costs nothing extra).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`, a valid timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Runs `f` and adds the CPU time it took on this thread to `spent`.
pub fn charged<T>(spent: &AtomicU64, f: impl FnOnce() -> T) -> T {
    let t0 = thread_cpu_ns();
    let out = f();
    spent.fetch_add(thread_cpu_ns().saturating_sub(t0), Relaxed);
    out
}

fn new_hist() -> Histogram<u64> {
    // 1 µs .. 1 h at 2 significant figures: about 40 KB per shard.
    Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("static bounds are valid")
}

thread_local! {
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

fn shard_index() -> usize {
    SHARD.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT_SHARD.fetch_add(1, Relaxed) % SHARDS);
        }
        s.get()
    })
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            shards: (0..SHARDS).map(|_| Mutex::new(new_hist())).collect(),
            audio: (0..SHARDS).map(|_| Mutex::new(new_hist())).collect(),
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            streams_total: AtomicU64::new(0),
            streams_open: AtomicI64::new(0),
            frames: AtomicU64::new(0),
            output_tokens: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            oracle_cpu_ns: AtomicU64::new(0),
            cache_cpu_ns: AtomicU64::new(0),
            accept_wait: Mutex::new(new_hist()),
        }
    }
}

/// The timing figures as served on `GET /plimsoll/timing`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct TimingSnapshot {
    /// Frames (and non-streaming bodies) whose lateness was recorded.
    pub frames: u64,
    pub late_p50_ms: f64,
    pub late_p99_ms: f64,
    pub late_max_ms: f64,
    pub requests: u64,
    pub errors: u64,
    pub streams_total: u64,
    pub streams_open: i64,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    /// Audio frames (speech chunks, Realtime audio deltas) and their lateness.
    pub audio_frames: u64,
    pub audio_late_p50_ms: f64,
    pub audio_late_p99_ms: f64,
    pub audio_late_max_ms: f64,
    /// CPU the integrity oracle and the prompt cache took so far, µs.
    pub oracle_cpu_us: f64,
    pub cache_cpu_us: f64,
    /// New connections whose first request came in, and how long it took from accept.
    pub connections: u64,
    pub accept_wait_p99_ms: f64,
    pub accept_wait_max_ms: f64,
}

impl Stats {
    /// Records how late one frame left; the frame counter goes with it.
    pub fn record_late(&self, late: Duration) {
        let us = (late.as_micros() as u64).clamp(1, 3_600_000_000);
        if let Ok(mut h) = self.shards[shard_index()].lock() {
            let _ = h.record(us);
        }
        self.frames.fetch_add(1, Relaxed);
    }

    /// Records how late one audio frame left.
    pub fn record_audio_late(&self, late: Duration) {
        let us = (late.as_micros() as u64).clamp(1, 3_600_000_000);
        if let Ok(mut h) = self.audio[shard_index()].lock() {
            let _ = h.record(us);
        }
    }

    /// Records how long a new connection's first request took to come in after accept.
    pub fn record_accept_wait(&self, wait: Duration) {
        let us = (wait.as_micros() as u64).clamp(1, 3_600_000_000);
        if let Ok(mut h) = self.accept_wait.lock() {
            let _ = h.record(us);
        }
    }

    fn merged(shards: &[Mutex<Histogram<u64>>]) -> Histogram<u64> {
        let mut all = new_hist();
        for s in shards {
            if let Ok(h) = s.lock() {
                let _ = all.add(&*h);
            }
        }
        all
    }

    pub fn snapshot(&self) -> TimingSnapshot {
        let all = Self::merged(&self.shards);
        let audio = Self::merged(&self.audio);
        let ms = |us: u64| us as f64 / 1000.0;
        let accept = self
            .accept_wait
            .lock()
            .map(|h| h.clone())
            .unwrap_or_else(|_| new_hist());
        TimingSnapshot {
            frames: all.len(),
            late_p50_ms: ms(all.value_at_quantile(0.5)),
            late_p99_ms: ms(all.value_at_quantile(0.99)),
            late_max_ms: ms(all.max()),
            requests: self.requests.load(Relaxed),
            errors: self.errors.load(Relaxed),
            streams_total: self.streams_total.load(Relaxed),
            streams_open: self.streams_open.load(Relaxed),
            prompt_tokens: self.prompt_tokens.load(Relaxed),
            output_tokens: self.output_tokens.load(Relaxed),
            audio_frames: audio.len(),
            audio_late_p50_ms: ms(audio.value_at_quantile(0.5)),
            audio_late_p99_ms: ms(audio.value_at_quantile(0.99)),
            audio_late_max_ms: ms(audio.max()),
            oracle_cpu_us: self.oracle_cpu_ns.load(Relaxed) as f64 / 1000.0,
            cache_cpu_us: self.cache_cpu_ns.load(Relaxed) as f64 / 1000.0,
            connections: accept.len(),
            accept_wait_p99_ms: ms(accept.value_at_quantile(0.99)),
            accept_wait_max_ms: ms(accept.max()),
        }
    }

    /// Forgets the lateness recorded so far (e.g. after a warm-up).
    pub fn reset_timing(&self) {
        let all = self.shards.iter().chain(&self.audio);
        for s in all.chain(std::iter::once(&self.accept_wait)) {
            if let Ok(mut h) = s.lock() {
                h.reset();
            }
        }
    }
}
