//! The rates of a step under full load: turns per second and the SUT's CPU share of the
//! cores it could use.

use crate::measured::Measured;
use probe::Summary;

/// Completed turns per second and SUT CPU cores busy *while every session was in
/// flight*. A closed-model step ends with a tail in which sessions have finished and the
/// SUT idles, so totals over the wall time understate both. The rate is Little's law over
/// the span of full load (see `drive::FullLoad`): sessions / (mean turn + think time);
/// the CPU is the sampler's CPU series over the same span. Sessions that failed are
/// counted out of the sessions in flight (a failure does not end the span; most fail
/// early, and a quick failure's turns are not completed turns). An open model (or a
/// harness, or a step with no such span) uses totals over the wall.
pub(crate) fn loaded_rates(m: &Measured, probe: &Summary, concurrency: usize) -> (f64, f64) {
    let wall_s = (m.wall_ms / 1000.0).max(1e-3);
    match (m.open_model, m.full_load) {
        (None, Some((f, offset_s))) if f.to_ms > f.from_ms && f.mean_turn_ms > 0.0 => {
            let think_ms = m.think_ms_per_turn;
            let going = concurrency
                .saturating_sub(m.sessions_failed as usize)
                .max(1);
            let rate = going as f64 / ((f.mean_turn_ms + think_ms) / 1000.0);
            let span_s = (f.to_ms - f.from_ms) / 1000.0;
            let (a, b) = (offset_s + f.from_ms / 1000.0, offset_s + f.to_ms / 1000.0);
            let cpu = match probe.cpu_between(a, b) {
                Some(c) => c / span_s,
                None => rate * probe.cpu_sec / m.turns.max(1) as f64,
            };
            (rate, cpu)
        }
        _ => (m.turns as f64 / wall_s, probe.cpu_sec / wall_s),
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
    let cap = m.cap.map(|(_, c)| c.cpus);
    match (cap, part) {
        (Some(c), Some(p)) => c.min(p),
        (Some(c), None) => c.min(online),
        (None, Some(p)) => p,
        (None, None) => online,
    }
}
