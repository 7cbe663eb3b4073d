//! What the live view costs to answer, as `plimsoll bench live` prints it: one page's
//! parts (the report's body over the ladder so far, the verdict of its finished steps)
//! and one scrape of `/metrics`, each timed over a board like a long ramp's.

use crate::board::{Board, Tick};
use result::words::Unit;
use result::StepResult;
use std::time::Instant;

/// The figures of one measurement.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Cost {
    pub steps: usize,
    pub ticks: usize,
    /// CPU-bound time to make the page's parts, and a scrape's text (ms, the median).
    pub parts_ms: f64,
    pub metrics_ms: f64,
    pub parts_bytes: usize,
    pub metrics_bytes: usize,
    /// A page open (parts each second) and a scrape every 5 s, as a share of one core.
    pub share_of_a_core: f64,
}

/// A finished level with the figures a report charts.
fn step(n: usize) -> StepResult {
    let x = n as f64;
    StepResult {
        schema_version: 1,
        concurrency: n,
        sessions_ok: n as u64,
        turns: 3 * n as u64,
        wall_ms: 10_000.0,
        turns_per_s: Some(x * 0.3),
        p50_session_ms: Some(9000.0 + x),
        p99_session_ms: Some(9500.0 + 2.0 * x),
        ideal_session_ms: Some(9000.0),
        latency_inflation: Some(1.0 + x / 1000.0),
        peak_rss_mb: 20.0 + x * 0.4,
        baseline_rss_mb: 20.0,
        rss_kb_per_session: 400.0,
        peak_threads: 4,
        peak_fds: 10 + n as u64,
        cpu_sec: x * 0.02,
        cpu_ms_per_turn: Some(2.0),
        cpu_cores: Some(1.0),
        cpu_of_cap: Some((x / 200.0).min(1.0)),
        ..StepResult::default()
    }
}

/// A board of `steps` finished levels and a running one of `ticks` seconds.
fn board(steps: usize, ticks: usize) -> Board {
    let b = Board::new("bench", "plimsoll.toml", Unit::Session, &Default::default());
    b.cap(Some(1.0));
    for i in 0..steps {
        let n = 4 * (i + 1);
        b.level(n, false);
        b.step(&step(n), "holds");
    }
    b.level(4 * (steps + 1), false);
    for t in 0..ticks {
        b.tick(Tick {
            t_s: t as f64,
            turns: 10 * t as u64,
            cpu_sec: 0.1 * t as f64,
            rss_bytes: 30 << 20,
            turn_le: vec![0, 5, 10 * t as u64],
            turn_bounds_s: vec![0.1, 1.0],
            ..Tick::default()
        });
    }
    b
}

fn median_ms(reps: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut times = Vec::with_capacity(reps);
    let mut bytes = 0;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        bytes = f();
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], bytes)
}

/// Times `reps` answers of each kind over a board of `steps` levels and `ticks` seconds.
pub fn measure(steps: usize, ticks: usize, reps: usize) -> Cost {
    let b = board(steps, ticks);
    let (parts_ms, parts_bytes) =
        median_ms(reps, || crate::page::parts(&b.state()).to_string().len());
    let (metrics_ms, metrics_bytes) =
        median_ms(reps, || crate::prometheus::render(&b.state()).len());
    Cost {
        steps,
        ticks,
        parts_ms,
        metrics_ms,
        parts_bytes,
        metrics_bytes,
        share_of_a_core: (parts_ms + metrics_ms / 5.0) / 1000.0,
    }
}
