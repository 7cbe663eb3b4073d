//! A pool as the wall: when throughput stops growing with no resource at its wall, the
//! SUT's connections to a dependency that stay at one count while sessions grow name the
//! limit — a client pool (to Redis, to PostgreSQL, to the provider) that every turn waits
//! for.
//!
//! Connections are matched across levels by who listens (the mock, a `[[service]]`'s
//! name: their ports change every step) or by the port (a server Plimsoll did not start).
//! A pool to a dependency is the wall when its count is at most the connections to the
//! provider (no more turns ran at once than it has connections); connections to the
//! provider alone flat are the same sign for any limit on turns in flight, so they are
//! named as evidence, not as the cause.

use crate::throughput::{Plateau, Wall};
use result::wall::{PoolCourse, PoolHeld, WallAlso, WallFact};
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};
use std::collections::BTreeMap;

/// Counts within this share of each other are one count (an idle connection dropped
/// and opened again).
const SAME: f64 = 0.10;

/// Connections to one peer that stayed at one count over the levels from the wall on.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    /// "redis", "mock", or ":5432".
    pub peer: String,
    pub count: u32,
    pub from: usize,
    pub to: usize,
}

fn key(c: &result::Connection) -> String {
    c.peer.clone().unwrap_or_else(|| format!(":{}", c.port))
}

/// Peers whose connections stay flat over the levels (at least two, sessions growing
/// past the count) of `steps` from `start` sessions on.
pub fn flats(steps: &[StepResult], start: f64) -> Vec<Flat> {
    let on: Vec<&StepResult> = steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency as f64 >= start)
        .collect();
    let (Some(first), Some(last)) = (on.first(), on.last()) else {
        return Vec::new();
    };
    if on.len() < 2 {
        return Vec::new();
    }
    let mut peaks: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for s in &on {
        for c in &s.connections {
            peaks.entry(key(c)).or_default().push(c.peak);
        }
    }
    peaks
        .into_iter()
        .filter(|(_, v)| v.len() == on.len())
        .filter_map(|(peer, v)| {
            let lo = *v.iter().min()?;
            let hi = *v.iter().max()?;
            let flat = lo > 0 && (hi - lo) as f64 <= (lo as f64 * SAME).max(0.0);
            (flat && (last.concurrency as u32) > hi).then_some(Flat {
                peer,
                count: hi,
                from: first.concurrency,
                to: last.concurrency,
            })
        })
        .collect()
}

/// The wall named by a flat pool, when the SUT's own reading found no resource at its
/// wall (`internal` or `none` from a level): a pool to a dependency becomes the wall;
/// connections to the provider alone are added to the words as evidence.
pub fn refine(own: Wall, steps: &[StepResult], plateau: Option<&Plateau>) -> Wall {
    let Some(start) = crate::throughput::unexplained(&own) else {
        return own;
    };
    let found = found(steps, start, plateau);
    match chosen(&found) {
        (Some(p), mock) => pool_wall(p, mock, steps, plateau),
        (None, Some(m)) => {
            let flat = WallAlso::FlatConnections {
                unit: Unit::of(steps),
                peer: m.peer.clone(),
                count: m.count,
                from: m.from,
                to: m.to,
            };
            crate::wall::add(own, flat)
        }
        (None, None) => own,
    }
}

/// A pool to a dependency that held the turns in flight from `start` on, as the wall.
pub fn named(steps: &[StepResult], start: f64, plateau: Option<&Plateau>) -> Option<Wall> {
    let found = found(steps, start, plateau);
    match chosen(&found) {
        (Some(p), mock) => Some(pool_wall(p, mock, steps, plateau)),
        _ => None,
    }
}

/// The peers flat from `start` on. The knee may lie a level below the plateau (a bend
/// from 2, flat from 4): a pool fills at the plateau, so its connections are flat from
/// there, not from the knee.
fn found(steps: &[StepResult], start: f64, plateau: Option<&Plateau>) -> Vec<Flat> {
    match (flats(steps, start), plateau) {
        (f, Some(p)) if f.is_empty() && p.from > start => flats(steps, p.from),
        (f, _) => f,
    }
}

/// Of the flat peers: the pool to a dependency (at most as many as the calls to the
/// provider, the fewest), and the connections to the provider.
fn chosen(found: &[Flat]) -> (Option<&Flat>, Option<&Flat>) {
    let mock = found.iter().find(|f| f.peer == "mock");
    let pool = found
        .iter()
        .filter(|f| f.peer != "mock" && mock.is_none_or(|m| f.count <= m.count))
        .min_by_key(|f| f.count);
    (pool, mock)
}

fn pool_wall(
    p: &Flat,
    mock: Option<&Flat>,
    steps: &[StepResult],
    plateau: Option<&Plateau>,
) -> Wall {
    let cpu = crate::throughput::peak(
        steps
            .iter()
            .filter(|s| s.outcome == Outcome::Ok && s.concurrency >= p.from)
            .filter_map(|s| s.cpu_of_cap),
    );
    let unit = Unit::of(steps);
    let course = match plateau {
        Some(pl) => PoolCourse::Flat(result::wall::Flat::of(pl)),
        // Calls go at speech's pace: their rate of turns says nothing of the pool.
        None if unit.is_calls() => PoolCourse::CallsOver,
        None => PoolCourse::StopsGrowing,
    };
    // Threads that each hold one connection (as many threads as connections, or a couple
    // more: a loop, a main thread) are a worker pool; connections over the threads are
    // multiplexed, and their own pool is the limit.
    let workers = flat_threads(steps, p.from)
        .filter(|t| *t >= 2 && (p.count as u64..=p.count as u64 + 2).contains(t))
        .filter(|&t| grew_below(steps, p, t))
        .filter(|_| worked(steps, p));
    let fact = WallFact::Pool(PoolHeld {
        unit,
        peer: p.peer.clone(),
        count: p.count,
        from: p.from,
        to: p.to,
        course,
        cpu,
        workers,
        provider: mock.map(|m| m.count),
    });
    crate::wall::of(WallKind::Pool, Some(p.from as f64), fact)
}

/// Whether the threads grew with the connections below the pool: at a level under its
/// count there were fewer threads than at the wall (a pool of workers starts a thread as
/// work comes). Threads at the same count from the first level on are the process's own
/// (an event loop and its helpers) and only happen to equal the connections.
fn grew_below(steps: &[StepResult], p: &Flat, threads: u64) -> bool {
    steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency < p.count as usize)
        .any(|s| s.peak_threads > 0 && s.peak_threads < threads)
}

/// Whether as many threads as the pool's connections did work where it is flat, when
/// the threads' CPU was read: a worker that holds a connection serves turns (some CPU
/// each); an event loop's helper threads (a resolver, a timer) only wait. An async
/// service whose threads merely equal its connections is not a pool of workers.
fn worked(steps: &[StepResult], p: &Flat) -> bool {
    steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency >= p.from)
        .filter_map(|s| s.thread_cpu.as_ref()?.active)
        .all(|active| active >= p.count)
}

/// The SUT's threads over the levels from `from` on, when they stay at one count.
fn flat_threads(steps: &[StepResult], from: usize) -> Option<u64> {
    let t: Vec<u64> = steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency >= from)
        .map(|s| s.peak_threads)
        .collect();
    let (lo, hi) = (*t.iter().min()?, *t.iter().max()?);
    (t.len() >= 2 && lo > 0 && (hi - lo) as f64 <= (lo as f64 * SAME).max(1.0)).then_some(hi)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verdict::tests::step;

    /// A step with these peak connections, by peer ("redis", "mock", or ":5432").
    pub(crate) fn with(mut s: StepResult, conns: &[(&str, u32)]) -> StepResult {
        s.connections = conns
            .iter()
            .enumerate()
            .map(|(i, (peer, peak))| result::Connection {
                // A service's port changes every step; one Plimsoll did not start keeps its own.
                port: peer
                    .strip_prefix(':')
                    .map_or(40000 + i as u16 + s.concurrency as u16 * 10, |p| {
                        p.parse().unwrap()
                    }),
                peer: (!peer.starts_with(':')).then(|| peer.to_string()),
                peak: *peak,
                mean: *peak as f64,
                series: Vec::new(),
            })
            .collect();
        s
    }

    /// The Redis agent holding a pooled connection for a whole turn: throughput flat,
    /// CPU low, connections to redis and to the mock both at 4 from 4 sessions on.
    fn held() -> Vec<StepResult> {
        vec![
            with(step(2, 3.1, 1.05, 0.10), &[("redis", 2), ("mock", 2)]),
            with(step(4, 6.2, 1.10, 0.18), &[("redis", 4), ("mock", 4)]),
            with(step(8, 6.2, 1.81, 0.21), &[("redis", 4), ("mock", 4)]),
            with(step(16, 6.2, 3.55, 0.22), &[("redis", 4), ("mock", 4)]),
        ]
    }

    /// Steps whose threads' CPU was read, `n` of them doing work.
    fn active(mut steps: Vec<StepResult>, n: u32) -> Vec<StepResult> {
        for s in &mut steps {
            s.thread_cpu = Some(result::ThreadCpu {
                active: Some(n),
                ..Default::default()
            });
        }
        steps
    }

    fn threads(mut steps: Vec<StepResult>, t: &[u64]) -> Vec<StepResult> {
        for (s, &n) in steps.iter_mut().zip(t) {
            s.peak_threads = n;
        }
        steps
    }

    #[test]
    fn workers_that_each_hold_a_connection_are_told_from_the_connection_pool() {
        // examples/redis-memory/workers.toml: 4 workers started as work came (3 threads at
        // 2 sessions, 5 from 4 on: 4 workers and the loop), 4 connections to redis.
        let steps = threads(held(), &[3, 5, 5, 5]);
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            v.wall.kind,
            WallKind::Pool,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            words::wall::short(&v.wall)
                .starts_with("a pool of 4 worker threads (5 threads in all)"),
            "{}",
            words::wall::short(&v.wall)
        );
        // The async agent whose 4 threads were there from the first level: they only
        // happen to equal the 4 connections. The connection pool is the wall.
        let steps = threads(held(), &[4, 4, 4, 4]);
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            words::wall::short(&v.wall),
            "a pool of 4 connections to redis",
            "{}",
            words::wall::text(&v.wall)
        );
        // examples/pg-memory: an async service whose 4th thread (asyncio's resolver) came
        // with its 4th connection, yet only its event loop ran: not a pool of workers.
        let steps = threads(held(), &[3, 4, 4, 4]);
        let steps = active(steps, 1);
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            words::wall::short(&v.wall),
            "a pool of 4 connections to redis",
            "{}",
            words::wall::text(&v.wall)
        );
        // The same counts with every worker serving turns: the workers.
        let steps = active(steps, 4);
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert!(
            words::wall::short(&v.wall).starts_with("a pool of 4 worker threads"),
            "{}",
            words::wall::short(&v.wall)
        );
        // 16 workers before 4 connections: the threads grow past them, the pool is the wall.
        let steps = threads(held(), &[3, 5, 9, 17]);
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            words::wall::short(&v.wall),
            "a pool of 4 connections to redis",
            "{}",
            words::wall::text(&v.wall)
        );
    }

    #[test]
    fn a_held_pool_is_the_wall_and_its_sentence_names_it() {
        let steps = held();
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            v.wall.kind,
            WallKind::Pool,
            "{}",
            words::wall::text(&v.wall)
        );
        // The fact, with the figures its words give.
        let Some(result::wall::WallFact::Pool(p)) = &v.wall.fact else {
            panic!("{:?}", v.wall.fact)
        };
        assert_eq!(
            (
                p.peer.as_str(),
                p.count,
                p.from,
                p.to,
                p.workers,
                p.provider
            ),
            ("redis", 4, 4, 16, None, Some(4))
        );
        assert_eq!(
            words::json::verdict(&v)["wall"]["text"],
            words::wall::text(&v.wall)
        );
        let t = &words::wall::text(&v.wall);
        assert!(t.starts_with("a pool — connections to redis stay at 4 from 4 to 16 sessions while throughput flat at 6.2 turns/s from 4 sessions, CPU at most 22 % of its cap: a client pool of 4 connections to redis is the wall"), "{t}");
        assert!(
            t.ends_with("connections to the provider stay at 4 too: no more turns ran at once"),
            "{t}"
        );
        assert!(
            words::headline::headline(&v).contains("wall: a pool of 4 connections to redis"),
            "{}",
            words::headline::headline(&v)
        );
    }

    #[test]
    fn a_pool_is_found_from_the_plateau_when_the_knee_lies_below_it() {
        // CI's run of the held arm: the knee between 2 and 4, the plateau from 4, and the
        // CPU at 52 % at 4 (not quiet): the wall read 'bends from 2 with no resource
        // full', where the connections to redis were 2 and then 4 from 4 on.
        let steps = vec![
            with(step(2, 3.03, 1.11, 0.18), &[("redis", 2), ("mock", 2)]),
            with(step(4, 5.73, 1.17, 0.52), &[("redis", 4), ("mock", 4)]),
            with(step(8, 5.96, 1.91, 0.41), &[("redis", 4), ("mock", 4)]),
            with(step(16, 5.97, 3.68, 0.45), &[("redis", 4), ("mock", 4)]),
        ];
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            v.wall.kind,
            WallKind::Pool,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            words::wall::text(&v.wall).starts_with(
                "a pool — connections to redis stay at 4 from 4 to 16 sessions while throughput flat"
            ),
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            words::wall::text(&v.wall).contains("CPU at most 52 % of its cap"),
            "{}",
            words::wall::text(&v.wall)
        );
    }

    #[test]
    fn a_pool_that_stays_flat_while_throughput_grows_is_no_wall() {
        // The fix: a connection per command; the same 4 connections serve every session
        // and throughput grows with them.
        let steps = vec![
            with(step(4, 6.2, 1.09, 0.19), &[("redis", 4), ("mock", 4)]),
            with(step(8, 11.9, 1.13, 0.43), &[("redis", 4), ("mock", 8)]),
            with(step(16, 23.1, 1.21, 0.67), &[("redis", 4), ("mock", 16)]),
        ];
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_ne!(
            v.wall.kind,
            WallKind::Pool,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            !words::wall::text(&v.wall).contains("pool"),
            "{}",
            words::wall::text(&v.wall)
        );
    }

    #[test]
    fn a_dependency_with_more_connections_than_turns_in_flight_is_not_the_pool() {
        // Turns capped at 2 inside the SUT; the database pool of 10 is never short.
        let steps = vec![
            with(step(2, 3.2, 1.0, 0.05), &[(":5432", 10), ("mock", 2)]),
            with(step(4, 3.2, 2.0, 0.05), &[(":5432", 10), ("mock", 2)]),
            with(step(16, 3.2, 8.0, 0.06), &[(":5432", 10), ("mock", 2)]),
        ];
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            v.wall.kind,
            WallKind::Internal,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            words::wall::text(&v.wall).contains("the limit is inside the SUT (queueing)"),
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(words::wall::text(&v.wall).ends_with("connections to the provider (the mock) stay at 2 from 2 to 16 sessions: at most 2 calls in flight (a client pool of 2, or a limit of 2 inside the SUT)"), "{}", words::wall::text(&v.wall));
    }

    #[test]
    fn a_cpu_wall_is_left_alone_and_a_pool_needs_sessions_past_its_count() {
        let mut steps = held();
        for s in steps.iter_mut() {
            s.cpu_of_cap = Some(0.95);
        }
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(v.wall.kind, WallKind::Cpu, "{}", words::wall::text(&v.wall));
        // Flat at 4 over levels that never had more than 4 sessions: nothing waited.
        let few = vec![
            with(step(3, 6.0, 1.0, 0.1), &[("redis", 4)]),
            with(step(4, 6.1, 1.0, 0.1), &[("redis", 4)]),
        ];
        assert!(flats(&few, 3.0).is_empty());
        // A port Plimsoll did not start is named by its number.
        let ext = vec![
            with(step(8, 6.0, 1.0, 0.1), &[(":5432", 10)]),
            with(step(16, 6.1, 2.0, 0.1), &[(":5432", 10)]),
        ];
        assert_eq!(flats(&ext, 8.0)[0].peer, ":5432");
        assert_eq!(words::wall::who(":5432"), "port 5432");
    }
}
