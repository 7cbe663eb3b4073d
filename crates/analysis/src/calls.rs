//! The wall of a ladder of voice calls, judged at the first level over budget from what
//! was full there — one thread, the cap, memory, the provider, a pool, the harness, or an
//! agent worker that refused calls at its load threshold —
//! and never from turns a second: a call's turns go at speech's pace, so more turns a
//! second with more calls says nothing of the headroom left.

use crate::throughput::{Wall, CPU_WALL, MEM_WALL};
use result::ladder::LevelStanding;
use result::wall::{CallCpuState, WallFact};
use result::{Standing, StepResult, WallKind};

/// A call's audio is paced in real time: a cap this full already holds frames back, so
/// the cap is the wall from here where the level is over its budget.
pub const CALL_CPU: f64 = 0.75;

/// The wall of a ladder of calls: judged at the first level over budget (or collapsed)
/// above the highest that held — one below it that was over (a cold start's stalls) is
/// noise near the line, as the verdict says.
pub fn wall(steps: &[StepResult], st: &[LevelStanding]) -> Wall {
    let holds = st
        .iter()
        .filter(|l| l.standing == Standing::Holds)
        .map(|l| l.concurrency)
        .max();
    let first = st.iter().find(|l| {
        matches!(l.standing, Standing::Over | Standing::Collapsed)
            && holds.is_none_or(|h| l.concurrency > h)
    });
    let Some((first, at)) =
        first.and_then(|l| Some((l, steps.iter().find(|s| s.concurrency == l.concurrency)?)))
    else {
        return held(steps);
    };
    if first.standing == Standing::Collapsed {
        return crate::calls_collapse::wall(steps, at);
    }
    let before = steps
        .iter()
        .rfind(|s| s.concurrency < at.concurrency)
        .unwrap_or(at);
    let s = crate::reading::sample(at);
    if s.harness_bound {
        return crate::throughput::harness_wall(&s);
    }
    if let Some(w) = crate::admission::wall(at) {
        return w;
    }
    if let Some((w, material)) = crate::provider::wall(steps, None) {
        if material <= at.concurrency as f64 {
            return w;
        }
    }
    if let Some(w) = crate::threads::of_calls(at) {
        return w;
    }
    let cpu = at.cpu_of_cap.unwrap_or(0.0);
    let throttled = at.cpu_throttled.unwrap_or(0.0);
    if cpu >= CALL_CPU || throttled >= crate::sample::FULL {
        let state = match (cpu >= CPU_WALL, cpu >= CALL_CPU) {
            (true, _) => CallCpuState::Full,
            (false, true) => CallCpuState::NearlyFull { wall: CPU_WALL },
            (false, false) => CallCpuState::Throttled { share: throttled },
        };
        let all = crate::reading::samples(steps);
        let cpu = crate::call_cpu::read(&s, &all);
        let fact = WallFact::CallsCpu { cpu, state };
        return crate::wall::of(WallKind::Cpu, Some(at.concurrency as f64), fact);
    }
    if let Some(share) = at.mem_of_cap.filter(|m| *m >= MEM_WALL) {
        let at = at.concurrency;
        let fact = WallFact::CallsMemory { at, share };
        return crate::wall::of(WallKind::Memory, Some(at as f64), fact);
    }
    pool(steps, before)
        .or_else(|| pool(steps, at))
        .or_else(|| rising(steps, at))
        .unwrap_or_else(|| nothing_full(first, at))
}

/// A cap this full (below [`CALL_CPU`]) is the wall too where its share rose with every
/// level up to the first over and nothing else was near a limit: a call's work comes in
/// bursts (VAD, decoding, encoding), so replies queue for the core before the average
/// fills it.
pub const CALL_CPU_RISING: f64 = 0.6;

/// The CPU as the wall of calls whose cap was [`CALL_CPU_RISING`] full or more and rose
/// with every level (within 2 points) over three levels or more up to `at`.
fn rising(steps: &[StepResult], at: &StepResult) -> Option<Wall> {
    let cpu: Vec<(usize, f64)> = steps
        .iter()
        .filter(|s| s.outcome == result::Outcome::Ok && s.concurrency <= at.concurrency)
        .map(|s| Some((s.concurrency, s.cpu_of_cap?)))
        .collect::<Option<_>>()?;
    let (first, last) = (cpu.first()?, cpu.last()?);
    let rose = cpu.windows(2).all(|w| w[1].1 >= w[0].1 - 0.02);
    if cpu.len() < 3 || !rose || last.1 < CALL_CPU_RISING || last.0 != at.concurrency {
        return None;
    }
    let all = crate::reading::samples(steps);
    let cpu = crate::call_cpu::read(&crate::reading::sample(at), &all);
    let fact = WallFact::CallsCpuRising {
        cpu,
        from: *first,
        to: *last,
    };
    Some(crate::wall::of(
        WallKind::Cpu,
        Some(at.concurrency as f64),
        fact,
    ))
}

/// A pool that held the calls in flight at one count (connections, or worker threads
/// seen by their count), read from level `from` on.
fn pool(steps: &[StepResult], from: &StepResult) -> Option<Wall> {
    let start = from.concurrency as f64;
    crate::pool::named(steps, start, None).or_else(|| crate::executor::named(steps, start, None))
}

/// Over budget with nothing full: what was measured there, and where to look.
fn nothing_full(first: &LevelStanding, at: &StepResult) -> Wall {
    let thread = at.thread_cpu.as_ref().and_then(|t| t.busiest.first());
    let fact = WallFact::NothingFull {
        at: at.concurrency,
        breaches: first.breaches.clone(),
        cpu: at.cpu_of_cap,
        thread: thread.map(|b| b.core_share),
    };
    crate::wall::of(WallKind::Internal, Some(at.concurrency as f64), fact)
}

/// Every level held: the wall lies above the ladder.
fn held(steps: &[StepResult]) -> Wall {
    let fact = WallFact::CallsHeld {
        top: steps.last().map_or(0, |s| s.concurrency),
        cpu: crate::throughput::peak(steps.iter().filter_map(|s| s.cpu_of_cap)),
    };
    crate::wall::of(WallKind::None, None, fact)
}

#[cfg(test)]
#[path = "calls_tests.rs"]
pub(crate) mod tests;
