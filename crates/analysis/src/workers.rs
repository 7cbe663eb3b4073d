//! A pool of worker threads that wait on the provider as the wall: when connections to
//! the provider stay at one count while sessions grow, threads of one name as many as
//! those calls (`pool-1-thread-*` × 4, a JVM's `Executors.newFixedThreadPool(4)`), each
//! using little CPU, are workers blocked on their LLM call — the pool's size is the limit
//! on turns in flight. Without the threads' names the limit is said as a client pool or
//! a limit inside the SUT (`pool`).

use crate::pool::{flats, Flat};
use crate::throughput::{Plateau, Wall};
use result::wall::WallFact;
use result::words::Unit;
use result::{Outcome, StepResult, WallKind};

/// Threads of one name that wait rather than work: each under this share of a core.
const WAITING: f64 = 0.5;

/// The wall named by a pool of waiting workers, when the SUT's own reading found no
/// resource at its wall and only the connections to the provider stay flat (a flat pool
/// to a dependency is `pool`'s to name).
pub fn refine(own: Wall, steps: &[StepResult], plateau: Option<&Plateau>) -> Wall {
    let Some(start) = crate::throughput::unexplained(&own) else {
        return own;
    };
    let found = flats(steps, start);
    if found.iter().any(|f| f.peer != "mock") {
        return own;
    }
    let Some(m) = found.iter().find(|f| f.peer == "mock") else {
        return own;
    };
    match waiting(steps, m) {
        Some(name) => wall(m, &name, steps, plateau),
        None => own,
    }
}

/// A family of threads as many as the calls in flight to the provider at every level
/// from the flat on, and waiting (little CPU each): its name.
fn waiting(steps: &[StepResult], m: &Flat) -> Option<String> {
    let on: Vec<&StepResult> = steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency >= m.from)
        .collect();
    let first = on.first()?.thread_cpu.as_ref()?;
    first
        .groups
        .iter()
        .filter(|g| g.threads == m.count && m.count >= 2)
        .find(|g| {
            on.iter().all(|s| {
                s.thread_cpu.as_ref().is_some_and(|t| {
                    t.groups.iter().any(|h| {
                        h.name == g.name
                            && h.threads == m.count
                            && h.core_share < WAITING * h.threads as f64
                    })
                })
            })
        })
        .map(|g| g.name.clone())
}

/// The wall of a worker pool whose workers each wait on a provider call.
fn wall(m: &Flat, name: &str, steps: &[StepResult], plateau: Option<&Plateau>) -> Wall {
    let cpu = steps
        .iter()
        .filter(|s| s.outcome == Outcome::Ok && s.concurrency >= m.from)
        .filter_map(|s| s.cpu_of_cap)
        .fold(0.0, f64::max);
    let fact = WallFact::WorkerPool {
        unit: Unit::of(steps),
        name: name.to_string(),
        count: m.count,
        from: m.from,
        to: m.to,
        cpu,
        flat: plateau.map(result::wall::Flat::of),
    };
    crate::wall::of(WallKind::Pool, Some(m.from as f64), fact)
}

#[cfg(test)]
mod tests {
    use crate::verdict::tests::step;
    use result::{StepResult, WallKind};

    fn on_mock(mut s: StepResult, peak: u32) -> StepResult {
        s.connections = vec![result::Connection {
            port: 40000 + s.concurrency as u16,
            peer: Some("mock".into()),
            peak,
            mean: peak as f64,
            series: Vec::new(),
        }];
        s
    }

    /// A Java 17 server on `Executors.newFixedThreadPool(4)` whose turns block on their
    /// LLM call (issue 40): throughput flat at 9.65 turns/s from 4 sessions, 4 connections
    /// to the mock, CPU at most 9 %; its four `pool-1-thread-*` threads wait on the calls.
    #[test]
    fn a_fixed_pool_of_threads_waiting_on_the_provider_is_named_by_its_threads() {
        let group = |threads: u32| result::ThreadGroup {
            name: "pool-1-thread-*".into(),
            threads,
            core_share: 0.02 * threads as f64,
        };
        let gc = result::ThreadGroup {
            name: "GC Thread#*".into(),
            threads: 2,
            core_share: 0.01,
        };
        let levels = [
            (2usize, 4.9, 2u32),
            (4, 9.6, 4),
            (8, 9.65, 4),
            (16, 9.65, 4),
            (32, 9.66, 4),
        ];
        let steps: Vec<StepResult> = levels
            .iter()
            .map(|&(n, x, pool)| {
                let cpu = 0.05 + 0.01 * pool as f64;
                let mut s = on_mock(step(n, x, 1.0 + n as f64 / 4.0, cpu), pool);
                s.peak_threads = 22;
                s.thread_cpu = Some(result::ThreadCpu {
                    groups: vec![group(pool), gc.clone()],
                    ..Default::default()
                });
                s
            })
            .collect();
        let v = crate::verdict::verdict(&steps, &crate::Budget::default());
        assert_eq!(
            v.wall.kind,
            WallKind::Pool,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(
            words::wall::text(&v.wall).starts_with("a pool of worker threads — 4 threads `pool-1-thread-*`, each waiting on a provider call: the same 4 from 4 to 32 sessions, and connections to the provider stay at 4 too, while throughput flat at 9.64 turns/s from 4 sessions, CPU at most 9 % of its cap: a worker pool of 4 is the wall"),
            "{}",
            words::wall::text(&v.wall)
        );
        assert_eq!(
            words::wall::short(&v.wall),
            "a worker pool of 4 threads (`pool-1-thread-*`, each waiting on a provider call)"
        );
        // Without the threads' names the words stay as they were.
        let unnamed: Vec<StepResult> = steps
            .iter()
            .map(|s| StepResult {
                thread_cpu: None,
                ..s.clone()
            })
            .collect();
        let v = crate::verdict::verdict(&unnamed, &crate::Budget::default());
        assert!(
            words::wall::text(&v.wall)
                .contains("(a client pool of 4, or a limit of 4 inside the SUT)"),
            "{}",
            words::wall::text(&v.wall)
        );
    }
}
