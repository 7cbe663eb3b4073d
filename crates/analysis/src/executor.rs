//! A pool seen by its count: when throughput bends with no resource at its wall and no
//! connection count explains it, a process whose threads grew with the sessions and then
//! stopped at one count from the level where throughput bends has a pool of about that
//! many workers (less the threads it had besides). Every Python thread is named `python`,
//! so the count is what shows it, whatever the threads are called; what sizes the pool is
//! said for the runtimes Plimsoll can tell by their threads' names.

use crate::throughput::{Plateau, Wall};
use result::wall::{PoolCourse, PoolRuntime, Rise, ThreadsStop, WallFact};
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};

/// Thread counts within this share of each other (or one thread) are one count.
const SAME: f64 = 0.10;

/// The levels read: those that ended well and counted the SUT's threads.
fn read(steps: &[StepResult]) -> Vec<&StepResult> {
    steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.peak_threads > 0)
        .collect()
}

/// A pool that stopped growing: its threads from `from` on, the workers among them, and
/// the levels below where the threads grew.
struct Stopped<'a> {
    threads: u64,
    workers: u64,
    below: Vec<&'a StepResult>,
    on: Vec<&'a StepResult>,
}

fn stopped<'a>(ok: &[&'a StepResult], start: f64) -> Option<Stopped<'a>> {
    let (below, on): (Vec<&StepResult>, Vec<&StepResult>) =
        ok.iter().partition(|s| (s.concurrency as f64) < start);
    let t: Vec<u64> = on.iter().map(|s| s.peak_threads).collect();
    let (lo, hi) = (*t.iter().min()?, *t.iter().max()?);
    let flat = on.len() >= 2 && (hi - lo) as f64 <= (lo as f64 * SAME).max(1.0);
    // The threads grew with the sessions right up to where throughput bends: the level
    // just below it had fewer, and so did the first.
    let grew = below.last().is_some_and(|s| s.peak_threads < lo)
        && below.first().is_some_and(|s| s.peak_threads + 1 < lo);
    let past = on.last().is_some_and(|s| s.concurrency as u64 > hi);
    if !(flat && grew && past) {
        return None;
    }
    // The threads a process has besides its workers: what it had over its sessions
    // where every session had a worker of its own (never below none).
    let besides = below
        .iter()
        .map(|s| s.peak_threads.saturating_sub(s.concurrency as u64))
        .min()
        .unwrap_or(0);
    let workers = hi.saturating_sub(besides);
    // A pool of workers: a thread a session below it (the same threads besides at every
    // level, give or take one), and every worker busy where the count stopped. Threads a
    // runtime adds as load grows (a JIT's, a collector's) do not go one a session.
    let one_a_session = below.iter().all(|s| {
        s.peak_threads.saturating_sub(s.concurrency as u64) <= besides + 1
            && s.peak_threads + 1 >= s.concurrency as u64 + besides
    });
    let full = on[0].concurrency as u64 >= workers;
    (workers >= 2 && one_a_session && full).then_some(Stopped {
        threads: hi,
        workers,
        below,
        on,
    })
}

/// The wall named by a pool of worker threads seen by their count, when the SUT's own
/// reading found no resource at its wall.
pub fn refine(own: Wall, steps: &[StepResult], plateau: Option<&Plateau>) -> Wall {
    let Some(start) = crate::throughput::unexplained(&own) else {
        return own;
    };
    named(steps, start, plateau).unwrap_or(own)
}

/// A pool of workers whose threads stopped at one count from `start` (or from the
/// plateau) on, as the wall.
pub fn named(steps: &[StepResult], start: f64, plateau: Option<&Plateau>) -> Option<Wall> {
    let ok = read(steps);
    let starts = [Some(start), plateau.map(|p| p.from)];
    let (from, p) = starts
        .into_iter()
        .flatten()
        .find_map(|s| stopped(&ok, s).map(|p| (s, p)))?;
    Some(wall(&p, from, plateau, Unit::of(steps)))
}

fn wall(p: &Stopped, from: f64, plateau: Option<&Plateau>, u: Unit) -> Wall {
    let (first, top) = (p.on[0], p.on[p.on.len() - 1]);
    let course = match plateau {
        Some(pl) => PoolCourse::Flat(result::wall::Flat::of(pl)),
        // Calls go at speech's pace: their rate of turns says nothing of the pool.
        None if u.is_calls() => PoolCourse::CallsOver,
        None => PoolCourse::Bends(Rise {
            from: (first.concurrency as f64, first.turns_per_s.unwrap_or(0.0)),
            to: (top.concurrency as f64, top.turns_per_s.unwrap_or(0.0)),
        }),
    };
    let fact = WallFact::ThreadsStop(ThreadsStop {
        unit: u,
        workers: p.workers,
        threads: p.threads,
        from: first.concurrency,
        grew: p
            .below
            .iter()
            .map(|s| (s.peak_threads, s.concurrency))
            .collect(),
        course,
        cpu: crate::throughput::peak(p.on.iter().filter_map(|s| s.cpu_of_cap)),
        runtime: sized_by(top, p.workers),
    });
    crate::wall::of(WallKind::Pool, Some(from), fact)
}

/// What sizes such a pool in the runtime the threads' names show, when they show one.
fn sized_by(s: &StepResult, workers: u64) -> Option<PoolRuntime> {
    let names: Vec<&str> = s
        .thread_cpu
        .iter()
        .flat_map(|t| t.groups.iter().map(|g| g.name.as_str()))
        .collect();
    let has = |f: &dyn Fn(&str) -> bool| names.iter().any(|n| f(n));
    if has(&|n| n.starts_with("python")) {
        return Some(python(workers));
    }
    if has(&|n| n.starts_with("pool-") && n.contains("-thread")) {
        return Some(PoolRuntime::Jvm);
    }
    // Linux keeps 15 characters of a name: `http-nio-8080-exec-1` reads `http-nio-8080-e`.
    if has(&|n| n.starts_with("http-nio-") || n.starts_with("http-bio-")) {
        return Some(PoolRuntime::Tomcat);
    }
    has(&|n| n.starts_with("libuv-worker")).then_some(PoolRuntime::Libuv)
}

/// The Python pools a count can be: the default executor (min(32, cores + 4)), anyio's
/// thread limiter (40: FastAPI's and Starlette's sync routes), or one sized in the code.
fn python(workers: u64) -> PoolRuntime {
    match workers {
        5..=31 => PoolRuntime::PythonDefault,
        32 => PoolRuntime::PythonCapped,
        40 => PoolRuntime::Anyio,
        _ => PoolRuntime::PythonPool,
    }
}

#[cfg(test)]
#[path = "executor_tests.rs"]
mod tests;
