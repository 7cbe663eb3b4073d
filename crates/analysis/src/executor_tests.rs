use crate::verdict::tests::step;
use result::{StepResult, ThreadCpu, ThreadGroup, WallKind};

/// Steps with these thread counts, every thread named `name` (as Python names them all).
fn threads(mut steps: Vec<StepResult>, t: &[u64], name: &str) -> Vec<StepResult> {
    for (s, &n) in steps.iter_mut().zip(t) {
        s.peak_threads = n;
        s.thread_cpu = Some(ThreadCpu {
            groups: vec![ThreadGroup {
                name: name.into(),
                threads: n as u32,
                core_share: 0.1,
            }],
            ..Default::default()
        });
    }
    steps
}

/// Issue 50's agent server on PostgreSQL whose sync tools run on Python's default
/// executor, `ramp --cpus 1` on the 2-core box: threads 3 → 5 → 7 → 7 → 7, throughput
/// 1.32 → 7.05 turns/s, CPU 16 → 62 % of the cap, inflation 3.06 at 16.
fn executor() -> Vec<StepResult> {
    threads(
        vec![
            step(2, 1.32, 1.04, 0.16),
            step(4, 2.57, 1.07, 0.27),
            step(8, 4.98, 1.62, 0.45),
            step(16, 6.35, 3.06, 0.58),
            step(32, 7.05, 5.4, 0.62),
        ],
        &[3, 5, 7, 7, 7],
        "python3",
    )
}

#[test]
fn the_default_executor_is_seen_by_its_thread_count() {
    let v = crate::verdict::verdict(&executor(), &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Pool,
        "{}",
        words::wall::text(&v.wall)
    );
    assert_eq!(
        words::wall::short(&v.wall),
        "a pool of about 6 worker threads (threads stop at 7 from 8)"
    );
    let t = &words::wall::text(&v.wall);
    assert!(
        t.starts_with("a pool of about 6 worker threads — the process stops adding threads at 7 from 8 sessions (3 at 2, 5 at 4) while throughput"),
        "{t}"
    );
    assert!(t.contains("CPU is at most 62 % of its cap"), "{t}");
    assert!(
        t.contains("min(32, cores + 4) workers, 6 when Python counts 2 cores"),
        "{t}"
    );
    assert!(
        words::headline::headline(&v).contains("wall: a pool of about 6 worker threads"),
        "{}",
        words::headline::headline(&v)
    );
}

#[test]
fn threads_that_never_grew_or_never_stopped_are_no_pool() {
    // An async server: the same 4 threads from the first level on.
    let steps = threads(executor(), &[4, 4, 4, 4, 4], "python3");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Pool,
        "{}",
        words::wall::text(&v.wall)
    );
    // A thread per session: they grow with every level, no pool stops them.
    let steps = threads(executor(), &[3, 5, 9, 17, 33], "python3");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Pool,
        "{}",
        words::wall::text(&v.wall)
    );
    // Threads stopped, but at more than the sessions ever were: nothing waited for one.
    let steps = threads(executor(), &[3, 5, 40, 40, 40], "python3");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Pool,
        "{}",
        words::wall::text(&v.wall)
    );
}

#[test]
fn the_runtime_that_sizes_the_pool_is_named_where_its_threads_show_it() {
    let steps = threads(executor(), &[3, 5, 7, 7, 7], "pool-1-thread-*");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert!(
        words::wall::text(&v.wall)
            .ends_with("Executors.newFixedThreadPool): its size is the limit"),
        "{}",
        words::wall::text(&v.wall)
    );
    // A Go or C server's threads say nothing of what sized them: the count alone.
    let steps = threads(executor(), &[3, 5, 7, 7, 7], "server");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert!(
        words::wall::text(&v.wall).ends_with("the rest wait for a worker"),
        "{}",
        words::wall::text(&v.wall)
    );
}

#[test]
fn threads_a_runtime_adds_with_load_are_no_pool() {
    // A JVM whose compiler and collector threads start as load grows: 30, 34, 38, 38, 38
    // at 2 … 32 sessions, more threads than sessions from the first level.
    let steps = threads(executor(), &[30, 34, 38, 38, 38], "java");
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Pool,
        "{}",
        words::wall::text(&v.wall)
    );
    // Python's other pools are told by their size: anyio's 40 threads.
    let steps = threads(
        vec![
            step(8, 5.0, 1.0, 0.2),
            step(16, 10.0, 1.0, 0.3),
            step(32, 20.0, 1.1, 0.45),
            step(64, 24.0, 2.2, 0.5),
            step(128, 24.5, 4.4, 0.5),
        ],
        &[9, 17, 33, 41, 41],
        "python3",
    );
    let v = crate::verdict::verdict(&steps, &crate::Budget::default());
    assert!(
        words::wall::short(&v.wall).starts_with("a pool of about 40 worker threads"),
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).contains("anyio's default thread limiter holds 40 threads"),
        "{}",
        words::wall::text(&v.wall)
    );
}
