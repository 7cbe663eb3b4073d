//! A CPU wall of voice calls as a fact: where the cap ran full, what callers heard there,
//! and what one call costs of a core — for the calls' wall and for a collapse alike.

use crate::throughput::Sample;
use result::wall::{CallCost, CallCpu};

/// A CPU wall of voice calls: where the cap ran full, what callers heard, what a call
/// costs (a rate of turns says nothing of calls, whose turns go at speech's pace), read
/// from the level below.
pub(crate) fn read(s: &Sample, samples: &[Sample]) -> CallCpu {
    let below = samples
        .iter()
        .rfind(|x| x.concurrency < s.concurrency)
        .unwrap_or(s);
    let per_call =
        |x: &Sample| Some(x.cpu_of_cap? * x.cpu_cores? * 1000.0 / x.concurrency.max(1.0));
    let cost = match (per_call(below), s.cpu_cores) {
        (Some(ms), Some(cores)) if ms > 0.0 => Some(CallCost {
            ms,
            at: below.concurrency as usize,
            cores,
            holds: (cores * 1000.0 / ms).floor(),
        }),
        _ => None,
    };
    CallCpu {
        unit: s.unit,
        at: s.concurrency as usize,
        cores: s.cpu_cores,
        read: s.cpu_of_cap.unwrap_or(0.0),
        heard: s.call,
        cost,
    }
}
