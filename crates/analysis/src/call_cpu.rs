//! A CPU wall of voice calls in words: where the cap ran full, what callers heard there,
//! and what one call costs of a core — for the calls' wall and for a collapse alike.

use crate::budget::pct;
use crate::throughput::Sample;

/// A CPU wall of voice calls: where the cap ran full, what callers heard, what a call
/// costs (a rate of turns says nothing of calls, whose turns go at speech's pace).
pub(crate) fn words(s: &Sample, samples: &[Sample]) -> String {
    let heard = match s.call {
        Some((stall, p95)) => format!(
            ", where {} of the replies' time stalled and replies began in {} at p95",
            pct(stall),
            p95.map_or("?".into(), |p| format!("{} ms", crate::budget::num(p)))
        ),
        None => String::new(),
    };
    let below = samples
        .iter()
        .rfind(|x| x.concurrency < s.concurrency)
        .unwrap_or(s);
    let per_call =
        |x: &Sample| Some(x.cpu_of_cap? * x.cpu_cores? * 1000.0 / x.concurrency.max(1.0));
    let cost = match (per_call(below), s.cpu_cores) {
        (Some(ms), Some(n)) if ms > 0.0 => format!(
            "; each call costs about {} CPU ms a second (at {}), so {} about {} of this work — fewer CPU ms a call (its per-frame work: VAD, resampling, encoding) or more cores moves the line",
            crate::budget::num(ms),
            s.unit.count(below.concurrency),
            result::words::count_f(n, "core") + if n == 1.0 { " holds" } else { " hold" },
            s.unit.count((n * 1000.0 / ms).floor())
        ),
        _ => String::new(),
    };
    format!(
        "CPU — the SUT's CPU reaches {} of the {} cap at {}{heard}{cost}",
        pct(s.cpu_of_cap.unwrap_or(0.0)),
        crate::budget::cap_size(s.cpu_cores),
        s.unit.count(s.concurrency)
    )
}
