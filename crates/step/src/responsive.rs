//! The responsiveness probe: a small GET to the SUT (its health endpoint, `[step]
//! probe_path`) every 100 ms beside the load, on a connection of its own, timed — the
//! SUT's event-loop or scheduler lag seen from outside, as a serving system's probe
//! requests see it. A failed attempt (timeout, refusal, 5xx) is timed as long as the probe
//! waited and counted; never fatal.

use drive::http::Conn;
use hdrhistogram::Histogram;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Every 100 ms: often enough for a p99 over a step of seconds, rare enough to be no load.
const EVERY: Duration = Duration::from_millis(100);

pub(crate) struct Probe {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Histogram<u64>>,
    /// The slowest answer (µs) since a soak's last sample took it.
    window: Arc<AtomicU64>,
    /// Attempts that timed out, failed to connect or got a 5xx.
    failures: Arc<AtomicU64>,
}

impl Probe {
    pub fn start(addr: SocketAddr, path: String) -> Probe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let window = Arc::new(AtomicU64::new(0));
        let slowest = window.clone();
        let failures = Arc::new(AtomicU64::new(0));
        let failed = failures.clone();
        let task = tokio::spawn(async move {
            let mut h =
                Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("static bounds");
            let mut conn = Conn::new(addr);
            while !flag.load(Relaxed) {
                let sent = tokio::time::Instant::now();
                let got = tokio::time::timeout(
                    Duration::from_secs(10),
                    conn.request("GET", &path, &[], bytes::Bytes::new(), |_, _| true),
                )
                .await;
                // Every attempt counts: a stall, a refusal or a 5xx is the SUT at its
                // least responsive, timed as long as the probe waited for it.
                let answered = matches!(got, Ok(Ok((status, _))) if status < 500);
                if !answered {
                    failed.fetch_add(1, Relaxed);
                    conn = Conn::new(addr); // start afresh after a failure
                }
                let us = (sent.elapsed().as_micros() as u64).max(1);
                let _ = h.record(us);
                slowest.fetch_max(us, Relaxed);
                tokio::time::sleep_until(sent + EVERY).await;
            }
            h
        });
        Probe {
            stop,
            task,
            window,
            failures,
        }
    }

    /// The slowest answer since the last look, shared (a soak's sampler takes and resets it).
    pub fn window(&self) -> Arc<AtomicU64> {
        self.window.clone()
    }

    /// Stops probing: (p50, p99) in ms and the failed attempts; None without an attempt.
    pub async fn finish(self) -> Option<(f64, f64, u64)> {
        self.stop.store(true, Relaxed);
        let h = self.task.await.ok()?;
        let ms = |q: f64| result::round2(h.value_at_quantile(q) as f64 / 1000.0);
        let failed = self.failures.load(Relaxed);
        (!h.is_empty()).then(|| (ms(0.5), ms(0.99), failed))
    }
}
