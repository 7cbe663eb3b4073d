//! Walls inside the process in words: a pool held flat (connections, or the workers that
//! hold them), a pool of workers seen by its threads, and one thread (or a few) at its
//! limit.

use super::phrases::{flat, who};
use crate::pct;
use result::budget::num;
use result::wall::{
    Busy, PoolCourse, PoolHeld, PoolRuntime, ThreadName, ThreadsAt, ThreadsStop, WallFact,
};
use result::words::{count, Unit};

/// Why one thread at its limit is the wall, and what moves it.
const ONE_THREAD_WHY: &str =
    "an event loop or a lock held by one thread; more cores will not help, more processes will";

pub(super) fn text(f: &WallFact) -> String {
    match f {
        WallFact::Pool(p) => pool(p),
        WallFact::WorkerPool { unit, name, count: n, from, to, cpu, flat: fl } => format!(
            "a pool of worker threads — {n} threads `{name}`, each waiting on a provider call: the same {n} from {from} to {}, and connections to the provider stay at {n} too, while {}, CPU at most {} of its cap: a worker pool of {n} is the wall; more workers (or handlers that do not hold a thread while they wait) would run more turns at once",
            unit.level(*to),
            fl.map_or("throughput stops growing".into(), |f| format!("throughput {}", flat(&f, *unit))),
            pct(*cpu),
        ),
        WallFact::ThreadsStop(t) => threads_stop(t),
        WallFact::OneWorker { at, name, idle, busy, libuv } => format!(
            "one thread — a worker thread of `{name}`, not the main thread (the main thread at {} of a core), {}: one worker does the work off the main thread — a pool of 1 worker; more cores will not help, a bigger pool will{}{}",
            pct(*idle),
            one_busy(at, busy),
            match libuv {
                true => " (in Node, libuv's thread pool: UV_THREADPOOL_SIZE sets its size, 4 by default; crypto, zlib, fs and dns.lookup run there)",
                false => "",
            },
            throughput(at)
        ),
        WallFact::OneThread { at, thread, busy } => format!(
            "one thread — {} {}: {ONE_THREAD_WHY}{}",
            named(thread),
            one_busy(at, busy),
            throughput(at)
        ),
        WallFact::SomeThreads { at, count: n, threads, runnable } => format!(
            "{} threads at their limit — {} runnable {} of the time or more from {}{}: a few threads do all the work; more cores will not help until it spreads wider, more processes will{}",
            n,
            names(threads),
            pct(*runnable),
            at.unit.level(at.from),
            figures(at.higher, &[&process(at)], at.unit),
            throughput(at)
        ),
        WallFact::OneThreadBefore { unit, thread, share, held, at, needed } => format!(
            "one thread — {} at {} of a core for {} and doing its process's work, so {} needed {} of one; the calls failed there: {ONE_THREAD_WHY}",
            named(thread),
            pct(*share),
            unit.level(*held),
            unit.level(*at),
            pct(*needed)
        ),
        _ => String::new(),
    }
}

pub(super) fn short(f: &WallFact) -> String {
    match f {
        WallFact::Pool(p) => match p.workers {
            Some(t) => format!(
                "a pool of {} ({t} threads in all), each holding a connection to {}",
                count(p.count as u64, "worker thread"),
                who(&p.peer)
            ),
            None => format!(
                "a pool of {} to {}",
                count(p.count as u64, "connection"),
                who(&p.peer)
            ),
        },
        WallFact::WorkerPool { name, count: n, .. } => format!(
            "a worker pool of {} (`{name}`, each waiting on a provider call)",
            count(*n as u64, "thread")
        ),
        WallFact::ThreadsStop(t) => format!(
            "a pool of about {} (threads stop at {} from {})",
            count(t.workers, "worker thread"),
            t.threads,
            t.from
        ),
        WallFact::OneWorker { name, busy, .. } => format!(
            "one worker thread (`{name}` {}; the main thread idle)",
            busy_short(busy)
        ),
        WallFact::OneThread { thread, busy, .. } => {
            format!("one thread ({} {})", named(thread), busy_short(busy))
        }
        WallFact::SomeThreads {
            count: n, threads, ..
        } => format!("{n} threads ({} full)", names(threads)),
        WallFact::OneThreadBefore {
            unit,
            thread,
            share,
            held,
            at,
            needed,
        } => format!(
            "one thread ({} at {} of a core for {}, {} needed at {at})",
            named(thread),
            pct(*share),
            unit.level(*held),
            pct(*needed)
        ),
        _ => String::new(),
    }
}

/// What throughput did over a pool's levels: "throughput flat at …", "the calls go over
/// their budget".
fn course(c: &PoolCourse, u: Unit) -> String {
    match c {
        PoolCourse::Flat(f) => format!("throughput {}", flat(f, u)),
        PoolCourse::CallsOver => "the calls go over their budget".into(),
        PoolCourse::Bends(r) => format!(
            "throughput bends ({} → {} turns/s from {} to {} sessions)",
            num(r.from.1),
            num(r.to.1),
            num(r.from.0),
            num(r.to.0)
        ),
        PoolCourse::StopsGrowing => "throughput stops growing".into(),
    }
}

fn pool(p: &PoolHeld) -> String {
    let peer = who(&p.peer);
    let cpu = p.cpu.map_or(String::new(), |c| {
        format!(", CPU at most {} of its cap", pct(c))
    });
    let turns = p.provider.map_or(String::new(), |m| {
        format!("; connections to the provider stay at {m} too: no more turns ran at once")
    });
    let course = course(&p.course, p.unit);
    match p.workers {
        Some(t) => format!(
            "a pool of worker threads — the SUT's threads stay at {t} and its connections to {peer} at {} from {} to {} while {course}{cpu}: each worker holds one connection, so the {} the wall, not the connection pool (more workers would open more connections){turns}",
            p.count,
            p.from,
            p.unit.level(p.to),
            match p.count {
                1 => "1 worker is".to_string(),
                n => format!("{n} workers are"),
            },
        ),
        None => format!(
            "a pool — connections to {peer} stay at {} from {} to {} while {course}{cpu}: a client pool of {} to {peer} is the wall{turns}",
            p.count,
            p.from,
            p.unit.level(p.to),
            count(p.count as u64, "connection"),
        ),
    }
}

fn threads_stop(t: &ThreadsStop) -> String {
    let grew: Vec<String> = t
        .grew
        .iter()
        .map(|(n, at)| format!("{n} at {at}"))
        .collect();
    format!(
        "a pool of about {} — the process stops adding threads at {} from {} ({}) while {}{}: about {} turns run at once and the rest wait for a worker{}",
        count(t.workers, "worker thread"),
        t.threads,
        t.unit.level(t.from),
        grew.join(", "),
        course(&t.course, t.unit),
        t.cpu.map_or(String::new(), |c| format!(" and its CPU is at most {} of its cap", pct(c))),
        t.workers,
        t.runtime.map_or(String::new(), |r| runtime(r, t.workers))
    )
}

/// What sizes a pool in the runtime its threads' names show.
fn runtime(r: PoolRuntime, workers: u64) -> String {
    match r {
        PoolRuntime::PythonDefault => format!(
            "; Python's default executor (asyncio's run_in_executor, a ThreadPoolExecutor without max_workers) has min(32, cores + 4) workers, {workers} when Python counts {}: give it more (loop.set_default_executor), or make the blocking calls async",
            count(workers.saturating_sub(4), "core")
        ),
        PoolRuntime::PythonCapped => "; Python's default executor stops at 32 workers (min(32, cores + 4)) however many cores there are: give it more (loop.set_default_executor), or make the blocking calls async".into(),
        PoolRuntime::Anyio => "; anyio's default thread limiter holds 40 threads (FastAPI's and Starlette's sync routes run there): raise its total_tokens, or make the routes async".into(),
        PoolRuntime::PythonPool => "; a Python thread pool of that size (a ThreadPoolExecutor's max_workers): its size is the limit".into(),
        PoolRuntime::Jvm => "; a JVM executor's threads (Executors.newFixedThreadPool): its size is the limit".into(),
        PoolRuntime::Tomcat => "; Tomcat's request threads (server.tomcat.threads.max): its size is the limit".into(),
        PoolRuntime::Libuv => "; libuv's thread pool (UV_THREADPOOL_SIZE, 4 by default): its size is the limit".into(),
    }
}

/// A thread as a person knows it: the main thread by that name (an interpreter that
/// names no thread shows only the process's name), others by theirs.
fn named(t: &ThreadName) -> String {
    match t.main {
        true => format!("the main thread of `{}`", t.name),
        false => format!("`{}`", t.name),
    }
}

fn names(threads: &[ThreadName]) -> String {
    threads.iter().map(named).collect::<Vec<_>>().join(", ")
}

/// "at 97 % of a core", or when it waited for one: "runnable 96 % of the time (57 % on a
/// core, 39 % waiting for one)" — "waiting out its quota" where the quota throttled it.
fn busy_long(b: &Busy) -> String {
    match b.wait {
        Some(w) => format!(
            "runnable {} of the time ({} on a core, {} {})",
            pct(b.core + w),
            pct(b.core),
            pct(w),
            match b.quota {
                true => "waiting out its quota",
                false => "waiting for one",
            }
        ),
        None => format!("at {} of a core", pct(b.core)),
    }
}

fn busy_short(b: &Busy) -> String {
    match b.wait {
        Some(w) => format!("runnable {} of the time", pct(b.core + w)),
        None => format!("at {} of a core", pct(b.core)),
    }
}

/// "at 97 % of a core from 8 sessions (the process at 48 % of its 2-core cap)"; the
/// figures said with their level where they are a higher one's.
fn one_busy(at: &ThreadsAt, b: &Busy) -> String {
    let (busy, figures) = match at.higher {
        None => (busy_long(b), figures(None, &[&process(at)], at.unit)),
        Some(_) => (
            "at its limit".to_string(),
            figures(at.higher, &[&busy_long(b), &process(at)], at.unit),
        ),
    };
    format!("{busy} from {}{figures}", at.unit.level(at.from))
}

fn process(at: &ThreadsAt) -> String {
    at.process.map_or(String::new(), |(c, k)| {
        format!("the process at {} of its {}-core cap", pct(c), num(k))
    })
}

fn throughput(at: &ThreadsAt) -> String {
    at.flat.map_or(String::new(), |f| {
        format!("; throughput {}", flat(&f, at.unit))
    })
}

/// The figures a wall's sentence gives in brackets: " (the process at 48 % …)", or when
/// they are a higher level's than the one the wall began at, " (at 64 sessions: …)".
fn figures(higher: Option<usize>, parts: &[&str], u: Unit) -> String {
    let said: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    match (said.is_empty(), higher) {
        (true, _) => String::new(),
        (false, None) => format!(" ({})", said.join(", ")),
        (false, Some(l)) => format!(" (at {}: {})", u.level(l), said.join(", ")),
    }
}
