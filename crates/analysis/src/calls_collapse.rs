//! The wall of a ladder of calls whose first level past the line collapsed: what the
//! collapse itself shows — killed for memory, out of threads, an agent worker refusing
//! calls at its load threshold, one thread or the cap at its limit, or one thread the
//! level that held shows the collapse's calls needed more than a core of — and never what
//! callers heard there, as its calls failed.

use crate::throughput::{Wall, CPU_WALL};
use result::wall::{WallAlso, WallFact};
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};

/// The wall at `at`, a collapsed level of calls.
pub fn wall(steps: &[StepResult], at: &StepResult) -> Wall {
    let n = at.concurrency;
    match at.outcome {
        Outcome::OomKilled => {
            let fact = WallFact::KilledForMemory { at: n };
            return crate::wall::of(WallKind::Memory, Some(n as f64), fact);
        }
        Outcome::ThreadExhaustion => {
            let fact = WallFact::OutOfThreads { at: n };
            return crate::wall::of(WallKind::Thread, Some(n as f64), fact);
        }
        _ => {}
    }
    if let Some(w) = crate::admission::wall(at) {
        return w;
    }
    if let Some(w) = crate::threads::of_calls(at) {
        let held = WallAlso::HeldUntilCollapse { unit: Unit::Call };
        return crate::wall::add(w, held);
    }
    if let Some(w) = crate::threads::of_calls_before(steps, at) {
        return w;
    }
    if at.cpu_of_cap.is_some_and(|c| c >= CPU_WALL) {
        let mut s = crate::reading::sample(at);
        s.call = None;
        let all = crate::reading::samples(steps);
        let cpu = crate::call_cpu::read(&s, &all);
        let fact = WallFact::CallsCpuCollapse { cpu };
        return crate::wall::of(WallKind::Cpu, Some(n as f64), fact);
    }
    let fact = WallFact::FailedFirst {
        at: n,
        outcome: at.outcome,
        cpu: at.cpu_of_cap,
    };
    crate::wall::of(WallKind::None, None, fact)
}
