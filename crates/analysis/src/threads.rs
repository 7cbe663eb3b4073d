//! One thread as the wall: throughput stops growing while the busiest thread of the SUT
//! sits at a core's worth and the process as a whole is below its cap — an event loop
//! doing work on the loop, a lock one thread holds, an interpreter's global lock. More
//! cores do not move it; more processes do. A process-wide CPU share hides it (one core
//! of a 2-core cap reads 50 %), so it is read from the threads (`StepResult::thread_cpu`).

use crate::throughput::{Plateau, Wall, CPU_WALL};
use result::wall::{Busy, ThreadName, ThreadsAt, WallAlso, WallFact};
use result::words::Unit;
use result::{StepResult, WallKind};

/// A thread runnable (on a core or waiting for one) this share of the time or more is
/// at its limit: on a busy machine it gets less than a core, yet always wants one.
pub const SATURATED: f64 = 0.9;

/// A thread runnable this share of the time or more that does (nearly) all of its
/// process's work is its limit too: its other time is spent blocked on that same thread
/// (a write, a lock), which no other thread could use.
pub const ALONE: f64 = 0.75;

/// The share of the process's CPU the busiest thread must hold to be judged [`ALONE`].
const ALONE_SHARE: f64 = 0.9;

/// Whether the busiest thread at a step is at its limit: saturated, or alone in doing
/// the process's work and runnable most of the time.
fn at_limit(s: &StepResult) -> bool {
    let Some((share, _)) = hot(s) else {
        return false;
    };
    share >= SATURATED || (share >= ALONE && does_the_work(s))
}

/// Whether the busiest thread did [`ALONE_SHARE`] or more of its process's CPU.
fn does_the_work(s: &StepResult) -> bool {
    work_share(s).is_some_and(|w| w >= ALONE_SHARE)
}

/// The busiest thread's share of its process's CPU at a step.
fn work_share(s: &StepResult) -> Option<f64> {
    let process = s.cpu_of_cap.zip(s.cpu_cores).map(|(c, k)| c * k)?;
    let core = s
        .thread_cpu
        .as_ref()
        .and_then(|t| t.busiest.first())
        .map_or(0.0, |b| b.core_share);
    (process > 0.0).then(|| core / process)
}

/// The busiest thread's runnable share at a step, and how many were saturated.
fn hot(s: &StepResult) -> Option<(f64, u32)> {
    let t = s.thread_cpu.as_ref()?;
    Some((t.busiest.first()?.runnable(), t.saturated))
}

/// A thread as a person knows it: by its name, the main thread of its process or not.
fn named(b: &result::BusyThread) -> ThreadName {
    ThreadName {
        name: b.name.clone(),
        main: b.main,
    }
}

/// A wait for a core under this share of the time is not said.
const WAIT_SAID: f64 = 0.05;

/// How busy a thread was: on a core, and waiting for one (or out its quota, where the
/// quota throttled it) where it waited long enough to say.
fn how_busy(b: &result::BusyThread, quota: bool) -> Busy {
    Busy {
        core: b.core_share,
        wait: b.wait_share.filter(|w| *w >= WAIT_SAID),
        quota,
    }
}

/// The wall named by saturated threads when the SUT's own reading found no resource at
/// its wall (`internal` or `none`, from a level on), or a CPU wall the SUT's own CPU never
/// reached (a core full with other processes on a busy machine): from the first level
/// where the busiest thread was saturated while the process stayed below its CPU cap,
/// every level from there on the same.
pub fn refine(own: Wall, steps: &[StepResult], plateau: Option<&Plateau>) -> Wall {
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome.is_ok()).collect();
    let below_cap = |s: &&StepResult| {
        s.cpu_of_cap.is_none_or(|c| c < CPU_WALL)
            && s.cpu_throttled.is_none_or(|t| t < crate::quota::FULL)
    };
    let others_cpu = own.kind == WallKind::Cpu && ok.iter().all(below_cap);
    let (true, Some(start)) = (
        matches!(own.kind, WallKind::Internal | WallKind::None) || others_cpu,
        plateau.map(|p| p.from).or(own.from),
    ) else {
        return own;
    };
    let saturated = |s: &&StepResult| at_limit(s) && s.cpu_of_cap.is_none_or(|c| c < CPU_WALL);
    // The first saturated level at or below the start of the plateau (or the knee's
    // upper bracket: the level above it), and none after it that is not.
    let above = ok.iter().map(|s| s.concurrency).find(|&c| c as f64 > start);
    let Some(first) = ok
        .iter()
        .position(|s| {
            saturated(s)
                && ok
                    .iter()
                    .skip_while(|x| x.concurrency < s.concurrency)
                    .all(saturated)
        })
        .filter(|&i| ok[i].concurrency as f64 <= start || Some(ok[i].concurrency) == above)
    else {
        return own;
    };
    // Over a CPU wall that others filled, only a thread seen saturated on a clean step:
    // on a busy one its time waiting for a core is the neighbours' doing.
    if others_cpu && ok.last().is_none_or(|s| crate::quota::contaminated(s)) {
        return own;
    }
    thread_wall(&ok[first..], plateau, Unit::of(steps)).unwrap_or(own)
}

/// A collapse with no wall before it, where one thread sat at its limit at the collapse
/// and the process was below its cap: that thread is the wall (an event loop that fell
/// so far behind its calls that they failed), said with the collapse.
pub fn at_collapse(own: Wall, steps: &[StepResult], collapse: Option<usize>) -> Wall {
    let Some(at) = steps.iter().find(|s| Some(s.concurrency) == collapse) else {
        return own;
    };
    let below_cap = at.cpu_of_cap.is_none_or(|c| c < CPU_WALL);
    let stalled = stalled_alone(at);
    if own.kind != WallKind::None || !below_cap || !(at_limit(at) || stalled) {
        return own;
    }
    let Some(mut w) = thread_wall(&[at], None, Unit::of(steps)) else {
        return own;
    };
    if stalled && !at_limit(at) {
        let ms = at.probe_p99_ms.unwrap_or_default();
        w = crate::wall::add(w, WallAlso::ProbeWaited { ms });
    }
    let unit = Unit::Session;
    crate::wall::add(w, WallAlso::HeldUntilCollapse { unit })
}

/// A probe kept waiting this long (p99, ms) while one thread did the process's work:
/// that thread could not answer for a second or more.
const STALLED_MS: f64 = 1000.0;

/// Whether one thread did (nearly) all of the process's work, busy at least half the
/// time, while the responsiveness probe waited [`STALLED_MS`] or more: a loop blocked
/// so long its calls failed, its share read over a span that ran on after they did.
fn stalled_alone(s: &StepResult) -> bool {
    let Some((share, _)) = hot(s) else {
        return false;
    };
    share >= 0.5 && does_the_work(s) && s.probe_p99_ms.is_some_and(|l| l >= STALLED_MS)
}

/// A main thread at less than this share of a core beside a saturated worker is idle.
const IDLE_MAIN: f64 = 0.5;

/// The main thread's share when the busiest thread is a worker beside an idle main
/// thread (known only where the probe read the main thread's share).
fn beside_an_idle_main(t: &result::ThreadCpu) -> Option<f64> {
    let top = t.busiest.first()?;
    t.main_share.filter(|m| !top.main && *m < IDLE_MAIN)
}

/// Whether a worker belongs to libuv's pool (Node's), whose size UV_THREADPOOL_SIZE sets.
fn libuv(name: &str) -> bool {
    name == "node" || name.contains("libuv")
}

/// The wall as a fact, from the levels where the thread (or the threads) sat at its limit.
fn thread_wall(on: &[&StepResult], plateau: Option<&Plateau>, unit: Unit) -> Option<Wall> {
    let top = on.last()?;
    let t = top.thread_cpu.as_ref()?;
    let n = on
        .iter()
        .filter_map(|s| hot(s).map(|h| h.1))
        .min()
        .unwrap_or(1)
        .max(1);
    let from = on[0].concurrency;
    let busy = how_busy(&t.busiest[0], crate::quota::throttled(top).is_some());
    let at = ThreadsAt {
        unit,
        from,
        // The figures are the top level's: said with that level when the wall began lower.
        higher: (top.concurrency != from).then_some(top.concurrency),
        process: top.cpu_of_cap.zip(top.cpu_cores),
        flat: plateau.map(result::wall::Flat::of),
    };
    let fact = match (n, beside_an_idle_main(t)) {
        (1, Some(idle)) => {
            let name = t.busiest[0].name.clone();
            WallFact::OneWorker {
                at,
                libuv: libuv(&name),
                name,
                idle,
                busy,
            }
        }
        (1, None) => WallFact::OneThread {
            at,
            thread: named(&t.busiest[0]),
            busy,
        },
        _ => WallFact::SomeThreads {
            at,
            count: n,
            threads: t.busiest.iter().take(n as usize).map(named).collect(),
            runnable: SATURATED,
        },
    };
    Some(crate::wall::of(WallKind::Thread, Some(from as f64), fact))
}

/// A responsiveness probe kept waiting this long (p99, ms) is worth saying beside a
/// thread at its limit: the loop the calls share could not answer for that long.
const PROBE_SAID_MS: f64 = 100.0;

/// The share of its process's CPU a thread must do for a collapse to be read as its: most
/// of it. A Pipecat SmallWebRTC bot's event loop did 84 % at the level that held, aiortc's
/// and the server's other threads the rest (issue 62); work spread over threads, the
/// busiest a third, is not one thread's.
const MOSTLY: f64 = 0.75;

/// A loop that answers the probe later than one 20 ms audio frame, at p99, is late for
/// the calls it carries: a collapse whose probe waited this long and twice the level
/// before's shows the loop slower there, though a loop full of short chunks of work
/// (4 ms a frame) never keeps the probe waiting the 100 ms that is worth saying alone.
const FRAME_LATE_MS: f64 = 20.0;

/// One thread at its limit where the calls went over (or doing all the work while the
/// probe waited): said with the cap when the cap is one core or less and full with it —
/// the same wall either way. None when no thread was at its limit there.
pub(crate) fn of_calls(at: &StepResult) -> Option<Wall> {
    if !(at_limit(at) || stalled_alone(at)) {
        return None;
    }
    let mut w = thread_wall(&[at], None, Unit::of_step(at))?;
    let one_core = at.cpu_cores.is_some_and(|c| c <= 1.0);
    if one_core && at.cpu_of_cap.is_some_and(|c| c >= CPU_WALL) {
        let cores = at.cpu_cores;
        w = crate::wall::add(w, WallAlso::CapFullWithIt { cores });
    }
    if let Some(ms) = at.probe_p99_ms.filter(|p| *p >= PROBE_SAID_MS) {
        w = crate::wall::add(w, WallAlso::ProbeLate { ms });
    }
    Some(w)
}

/// One thread that did its process's work at the last level of calls that held, at a
/// share of a core that the collapse's level of calls needs more than a core of: a loop
/// the calls fill in proportion (a blocked event loop, over WebRTC as over Twilio). Read
/// from the level that held, as the collapse's own reading ran on after its calls failed;
/// said only where the collapse shows the same thread as busy or the probe kept waiting
/// longer, and the process was below its cap (or the cap was the one core).
pub(crate) fn of_calls_before(steps: &[StepResult], at: &StepResult) -> Option<Wall> {
    let held = steps
        .iter()
        .filter(|s| s.outcome.is_ok() && s.concurrency < at.concurrency)
        .max_by_key(|s| s.concurrency)?;
    let b = held.thread_cpu.as_ref()?.busiest.first()?;
    let needed = b.runnable() * at.concurrency as f64 / held.concurrency.max(1) as f64;
    let busier = hot(at).is_some_and(|(share, _)| share >= b.runnable());
    let waited = match (at.probe_p99_ms, held.probe_p99_ms) {
        (Some(a), Some(h)) => a >= FRAME_LATE_MS && a >= 2.0 * h,
        _ => false,
    };
    let cap_free =
        at.cpu_of_cap.is_none_or(|c| c < CPU_WALL) || at.cpu_cores.is_some_and(|k| k <= 1.0);
    let mostly = work_share(held).is_some_and(|w| w >= MOSTLY);
    if !(mostly && needed >= SATURATED && (busier || waited) && cap_free) {
        return None;
    }
    let fact = WallFact::OneThreadBefore {
        unit: Unit::of_step(at),
        thread: named(b),
        share: b.runnable(),
        held: held.concurrency,
        at: at.concurrency,
        needed,
    };
    Some(crate::wall::of(
        WallKind::Thread,
        Some(at.concurrency as f64),
        fact,
    ))
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod tests;
