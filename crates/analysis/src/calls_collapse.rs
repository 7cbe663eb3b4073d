//! The wall of a ladder of calls whose first level past the line collapsed: what the
//! collapse itself shows — killed for memory, out of threads, an agent worker refusing
//! calls at its load threshold, one thread or the cap at its limit, or one thread the
//! level that held shows the collapse's calls needed more than a core of — and never what
//! callers heard there, as its calls failed.

use crate::budget::pct;
use crate::throughput::{Wall, CPU_WALL};
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};

/// The wall at `at`, a collapsed level of calls.
pub fn wall(steps: &[StepResult], at: &StepResult) -> Wall {
    let n = at.concurrency;
    let calls = Unit::Call.level(n);
    match at.outcome {
        Outcome::OomKilled => {
            return Wall {
                kind: WallKind::Memory,
                from: Some(n as f64),
                text: format!("memory — the SUT was killed for memory at {calls}"),
                short: format!("memory (killed at {n})"),
            }
        }
        Outcome::ThreadExhaustion => {
            return Wall {
                kind: WallKind::Thread,
                from: Some(n as f64),
                text: format!("threads — the SUT could start no more threads at {calls}"),
                short: format!("threads (none left at {n})"),
            }
        }
        _ => {}
    }
    if let Some(w) = crate::admission::wall(at) {
        return w;
    }
    if let Some(mut w) = crate::threads::of_calls(at) {
        w.text
            .push_str(" — it held the calls until the collapse there");
        return w;
    }
    if let Some(w) = crate::threads::of_calls_before(steps, at) {
        return w;
    }
    if let Some(c) = at.cpu_of_cap.filter(|c| *c >= CPU_WALL) {
        let mut s = crate::reading::sample(at);
        s.call = None;
        let all = crate::reading::samples(steps);
        return Wall {
            kind: WallKind::Cpu,
            from: Some(n as f64),
            text: crate::call_cpu::words(&s, &all) + ", where the calls failed",
            short: format!(
                "CPU ({} cap at {} at {n}, the collapse)",
                crate::budget::cap_size(at.cpu_cores),
                pct(c)
            ),
        };
    }
    Wall {
        kind: WallKind::None,
        from: None,
        text: format!(
            "none full before the collapse at {calls} ({}){}: the calls failed before a resource filled — the failures say why",
            at.outcome.as_str(),
            at.cpu_of_cap
                .map_or(String::new(), |c| format!(", CPU {} of its cap there", pct(c)))
        ),
        short: format!("none before the collapse at {n}"),
    }
}
