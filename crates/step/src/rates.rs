//! The rates of a step under load, as measured: turns per second over the span of full
//! load and over the wall time, and the SUT's CPU over the same span; which one the step
//! is judged by is `analysis::trust::rate`'s to decide.

use crate::measured::Measured;
use probe::Summary;

/// What the step measured of its rates.
pub(crate) struct Loaded {
    /// Completed turns per second with every session in flight (closed model): Little's
    /// law over the span of full load (see `drive::FullLoad`), sessions / (mean turn +
    /// think time). Sessions that failed are counted out of those in flight (a failure
    /// does not end the span; most fail early, and a quick failure's turns are not
    /// completed turns). None for an open model, a harness, or a step with no such span.
    pub full_load: Option<f64>,
    /// All turns over the wall time.
    pub wall: f64,
    /// The SUT's CPU (cores busy) over the span of full load, else over the wall time.
    pub cpu_busy: f64,
    /// The SUT's CPU while sessions were driven (the wall time's turns), not over its
    /// start: a Python bot's imports before the first call are no call's work.
    pub cpu_wall: f64,
}

impl Loaded {
    /// The SUT's CPU over the span the step's rate was read from (`used`: "full_load" or
    /// "wall"), so that its share of the cap and its rate describe the same turns: slow
    /// first turns left out of the span of full load are in the wall time's CPU and rate.
    pub(crate) fn cpu_for(&self, used: &str) -> f64 {
        match used {
            "full_load" => self.cpu_busy,
            _ => self.cpu_wall,
        }
    }
}

pub(crate) fn loaded(m: &Measured, probe: &Summary, concurrency: usize) -> Loaded {
    let wall_s = (m.wall_ms / 1000.0).max(1e-3);
    let wall = m.turns as f64 / wall_s;
    let cpu_wall = m
        .drive_window
        .and_then(|(a, b)| Some(probe.cpu_between(a, b)? / (b - a).max(1e-3)))
        .unwrap_or(probe.cpu_sec / wall_s);
    match (m.open_model, m.full_load) {
        (None, Some((f, offset_s))) if f.to_ms > f.from_ms && f.mean_turn_ms > 0.0 => {
            let going = concurrency
                .saturating_sub(m.sessions_failed as usize)
                .max(1);
            let rate = going as f64 / ((f.mean_turn_ms + m.think_ms_per_turn) / 1000.0);
            let span_s = (f.to_ms - f.from_ms) / 1000.0;
            let (a, b) = (offset_s + f.from_ms / 1000.0, offset_s + f.to_ms / 1000.0);
            let cpu_busy = match probe.cpu_between(a, b) {
                Some(c) => c / span_s,
                None => rate * probe.cpu_sec / m.turns.max(1) as f64,
            };
            Loaded {
                full_load: Some(rate),
                wall,
                cpu_busy,
                cpu_wall,
            }
        }
        _ => Loaded {
            full_load: None,
            wall,
            cpu_busy: cpu_wall,
            cpu_wall,
        },
    }
}

pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The cores the SUT could use: the smaller of its cap and its partition, else the
/// machine's online cores.
pub(crate) fn sut_cores(m: &Measured) -> f64 {
    let online = probe::machine::online_cores() as f64;
    let part = m.partition.as_ref().map(|(p, _)| p.sut.len() as f64);
    let cap = m.cap.as_ref().map(|(_, c, _)| c.cpus);
    match (cap, part) {
        (Some(c), Some(p)) => c.min(p),
        (Some(c), None) => c.min(online),
        (None, Some(p)) => p,
        (None, None) => online,
    }
}
