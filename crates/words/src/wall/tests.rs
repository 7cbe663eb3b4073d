use super::*;
use result::facts::CapHeld;
use result::wall::Flat;
use result::Outcome;
use result::WallKind;

fn wall(fact: WallFact, also: Vec<WallAlso>) -> Wall {
    Wall {
        kind: WallKind::None,
        fact: Some(fact),
        also,
        ..Wall::default()
    }
}

fn said(fact: WallFact) -> (String, String) {
    let w = wall(fact, Vec::new());
    (text(&w), short(&w))
}

fn reach(at: f64, read: f64) -> CpuReach {
    CpuReach {
        at,
        cores: Some(1.0),
        read,
        throttled: None,
        burst: false,
    }
}

#[test]
fn a_cpu_wall_says_the_bend_the_reach_and_the_plateau() {
    let fact = WallFact::Cpu {
        unit: Unit::Session,
        knee: Some((8.0, 16.0)),
        reach: reach(16.0, 0.97),
        full: CpuFull::Full,
        shared: None,
        throughput: Throughput::Flat(Flat {
            from: 16.0,
            turns_per_s: 31.5,
            peak: Some((24.0, 36.0)),
        }),
    };
    let (t, s) = said(fact);
    assert_eq!(t, "CPU — throughput bends between 8 and 16 sessions and the SUT's CPU reaches 97 % of the 1-core cap at 16 sessions; throughput flat at 31.5 turns/s (peak 36 at 24) from 16 sessions");
    assert_eq!(s, "CPU (1-core cap full at 16)");
}

#[test]
fn a_quota_full_in_bursts_is_said_as_full_though_its_average_is_not() {
    let r = CpuReach {
        throttled: Some((
            0.78,
            CapHeld {
                cores: 1.0,
                on: Some(14.0),
            },
        )),
        burst: true,
        ..reach(16.0, 0.62)
    };
    assert_eq!(reach_said(&r), "the SUT's 1-core cap is full at 16 sessions: throttled in 78 % of its periods by a 1-core quota over 14 cores (its CPU averaged 62 % of the cap over the step: a quota is spent in bursts, then waited out)");
    let r = CpuReach { burst: false, ..r };
    assert_eq!(reach_said(&r), "the SUT's CPU reaches 62 % of the 1-core cap at 16 sessions, throttled in 78 % of its periods by a 1-core quota over 14 cores");
}

fn reach_said(r: &CpuReach) -> String {
    super::reach(r, Unit::Session)
}

#[test]
fn a_cpu_full_with_other_processes_names_the_busy_machine() {
    let fact = WallFact::Cpu {
        unit: Unit::Session,
        knee: None,
        reach: CpuReach {
            cores: None,
            ..reach(4.0, 0.6)
        },
        full: CpuFull::Shared,
        shared: Some(0.35),
        throughput: Throughput::Unsaid,
    };
    let (t, s) = said(fact);
    assert_eq!(t, "CPU — the SUT's CPU reaches 60 % of the machine's cap at 4 sessions, and other processes took 35 % of those cores: full together (the line is this busy machine's, not the SUT's)");
    assert_eq!(s, "CPU (the machine full with other processes at 4)");
}

#[test]
fn throughput_beside_a_wall_is_said_by_its_course() {
    let rise = Rise {
        from: (8.0, 20.0),
        to: (16.0, 30.0),
    };
    let memory = |throughput| WallFact::Memory {
        unit: Unit::Call,
        at: 16.0,
        share: 0.93,
        throughput,
    };
    assert_eq!(said(memory(Throughput::Rising(rise))).0, "memory — 93 % of its cap from 16 calls; throughput still rising at the top (20 → 30 turns/s from 8 to 16 calls): widen the ladder to see where it stops");
    assert_eq!(
        said(memory(Throughput::Span(rise))).0,
        "memory — 93 % of its cap from 16 calls; throughput 20 → 30 turns/s from 8 to 16 calls"
    );
    assert_eq!(
        said(memory(Throughput::Unsaid)),
        (
            "memory — 93 % of its cap from 16 calls".into(),
            "memory (93 % of its cap at 16)".into()
        )
    );
    let cheaper = Throughput::Cheaper {
        rise,
        cpu_ms: (40.0, 30.0),
        cores: 1.0,
    };
    assert!(said(memory(cheaper)).0.ends_with("(40 → 30 CPU ms: a start-up's cost spread over more turns, caches warm) while the cap was full — a wider ladder finds no more: at 30 CPU ms a turn the 1-core cap allows about 33.3 turns/s in a steady state; longer calls (--set turns=10) will show that ceiling"), "{}", said(memory(cheaper)).0);
}

#[test]
fn no_wall_is_said_with_where_throughput_still_grew() {
    let rise = Some(Rise {
        from: (8.0, 20.0),
        to: (16.0, 30.0),
    });
    let unit = Unit::Session;
    assert_eq!(said(WallFact::NotReached { unit, rise }), ("none within the ladder: throughput still grows at 16 sessions (20 → 30 turns/s from 8) — widen the ladder".into(), "none within the ladder (still scaling at 16)".into()));
    assert_eq!(
        said(WallFact::NotReached { unit, rise: None }),
        (
            "not enough levels to see one (2 needed)".into(),
            "none seen (too few levels)".into()
        )
    );
    let before = WallFact::BeforeCollapse {
        unit,
        collapse: 32,
        grew: rise,
    };
    assert_eq!(said(before), ("none before the collapse at 32 sessions: throughput still grew up to 16 sessions (20 → 30 turns/s from 8)".into(), "none before the collapse at 32".into()));
}

#[test]
fn a_limit_inside_the_sut_says_the_cpu_it_left() {
    let flat = Flat {
        from: 4.0,
        turns_per_s: 9.64,
        peak: None,
    };
    let fact = WallFact::FlatInside {
        unit: Unit::Session,
        flat,
        cpu: Some(0.09),
    };
    assert_eq!(said(fact), ("no resource saturated — the limit is inside the SUT (queueing): throughput flat at 9.64 turns/s from 4 sessions while CPU at most 9 % of its cap".into(), "inside the SUT (flat at 9.64 turns/s from 4, no resource full)".into()));
    let bends = |inside| WallFact::Bends {
        unit: Unit::Session,
        from: 8.0,
        cpu: None,
        inside,
    };
    assert_eq!(said(bends(true)), ("throughput bends from 8 sessions (a session added there gives less than half of what one gave at first) with no resource at its wall (CPU not measured against a cap): a limit inside the SUT (queueing)".into(), "inside the SUT (throughput bends from 8, no resource full)".into()));
    assert_eq!(
        said(bends(false)).1,
        "throughput bends from 8 with no resource full"
    );
}

#[test]
fn the_harness_and_a_busy_machine_are_told_apart() {
    let h = |others| WallFact::Harness {
        unit: Unit::Session,
        at: 64.0,
        others,
    };
    assert_eq!(said(h(None)), ("Plimsoll itself (harness-bound from 64 sessions): these levels describe the harness, not the SUT".into(), "Plimsoll itself (harness-bound from 64)".into()));
    assert_eq!(
        said(h(Some(0.4))).1,
        "busy machine (Plimsoll's cores, from 64)"
    );
    assert!(said(h(Some(0.4))).0.starts_with("a busy machine — other processes took 40 % of Plimsoll's own cores at 64 sessions and it fell behind (harness-bound from 64)"));
}

#[test]
fn a_collapse_of_calls_says_what_killed_them() {
    assert_eq!(
        said(WallFact::KilledForMemory { at: 8 }),
        (
            "memory — the SUT was killed for memory at 8 calls".into(),
            "memory (killed at 8)".into()
        )
    );
    assert_eq!(
        said(WallFact::OutOfThreads { at: 1 }),
        (
            "threads — the SUT could start no more threads at 1 call".into(),
            "threads (none left at 1)".into()
        )
    );
    let failed = WallFact::FailedFirst {
        at: 4,
        outcome: Outcome::ErrorRate,
        cpu: Some(0.4),
    };
    assert_eq!(said(failed).0, format!("none full before the collapse at 4 calls ({}), CPU 40 % of its cap there: the calls failed before a resource filled — the failures say why", Outcome::ErrorRate.as_str()));
}

#[test]
fn what_a_reading_adds_is_said_after_it_in_order() {
    let fact = WallFact::OutOfThreads { at: 2 };
    let also = vec![
        WallAlso::ProbeWaited { ms: 1234.4 },
        WallAlso::HeldUntilCollapse { unit: Unit::Call },
        WallAlso::FlatConnections {
            unit: Unit::Session,
            peer: "mock".into(),
            count: 2,
            from: 2,
            to: 16,
        },
        WallAlso::DearerTurns {
            unit: Unit::Session,
            threads_per: Some(1.0),
        },
    ];
    let w = wall(fact, also);
    assert_eq!(text(&w), "threads — the SUT could start no more threads at 2 calls; the responsiveness probe waited 1,234 ms at p99 — it held the calls until the collapse there; connections to the provider (the mock) stay at 2 from 2 to 16 sessions: at most 2 calls in flight (a client pool of 2, or a limit of 2 inside the SUT); its CPU per turn rises as its threads grow (1 per session): more threads to schedule and switch between, so the wall comes sooner than one session's cost predicts");
    assert_eq!(
        short(&w),
        "threads (none left at 2)",
        "what a reading adds stays out of the headline"
    );
}

#[test]
fn a_wall_recorded_as_words_is_read_as_it_was_said() {
    let w = Wall {
        recorded_text: "CPU — as said then".into(),
        recorded_short: String::new(),
        ..Wall::default()
    };
    assert_eq!(text(&w), "CPU — as said then");
    assert_eq!(
        short(&w),
        "CPU — as said then",
        "no short words: the full ones"
    );
    assert_eq!(who(":5432"), "port 5432");
    assert_eq!(who("redis"), "redis");
}

#[test]
fn calls_over_budget_with_nothing_full_say_what_was_measured() {
    use result::Breach;
    let breach = Breach {
        budget: "response_p95_ms".into(),
        value: 2400.0,
        limit: 1500.0,
    };
    let fact = |cpu, thread| WallFact::NothingFull {
        at: 8,
        breaches: vec![breach.clone()],
        cpu,
        thread,
    };
    let (t, s) = said(fact(Some(0.4), Some(0.35)));
    assert!(t.starts_with(&format!("nothing full at 8 calls, the first level over budget ({}): CPU 40 % of its cap, its busiest thread at 35 % of a core — a limit inside the bot", breach.text())), "{t}");
    assert_eq!(s, "inside the bot (over at 8, nothing full)");
    // A CPU read against no cap is said once, not as "not measured against a cap of its cap".
    let (t, _) = said(fact(None, None));
    assert!(
        t.contains("): CPU not measured against a cap — a limit inside the bot"),
        "{t}"
    );
}

#[test]
fn a_worker_that_declined_jobs_is_said_with_its_load_window() {
    use result::wall::WorkerRefusal;
    let refusal = WorkerRefusal::Declined {
        jobs: 3,
        calls: 4,
        cpu: Some(0.86),
    };
    let fact = WallFact::WorkerRefused {
        at: 4,
        refusal,
        failed: 1,
        burst: Some(3),
    };
    let (t, s) = said(fact);
    assert_eq!(t, "the worker's own admission at 4 calls — it took 3 jobs for 4 calls: a worker declines a job offered while its load (its CPU over 2.5 s) is at its load_threshold (0.7 by default in `start` mode), and logs that only when its status changes; its CPU was 86 % of its cap: 1 call failed; it had taken 3 calls within 2.5 s (one load window) before its load showed them (more calls a worker: raise its load_threshold where the CPU has room, or add workers)");
    assert_eq!(
        s,
        "the worker took 3 jobs for 4 calls (CPU 86 % of its cap) at 4"
    );
}

#[test]
fn one_thread_is_said_with_the_level_its_figures_are_from() {
    use result::wall::{Busy, ThreadName, ThreadsAt};
    let at = ThreadsAt {
        unit: Unit::Session,
        from: 8,
        higher: Some(64),
        process: Some((0.48, 2.0)),
        flat: None,
    };
    let thread = ThreadName {
        name: "uvicorn".into(),
        main: true,
    };
    let busy = Busy {
        core: 0.57,
        wait: Some(0.39),
        quota: false,
    };
    let w = wall(
        WallFact::OneThread { at, thread, busy },
        vec![
            WallAlso::CapFullWithIt { cores: Some(1.0) },
            WallAlso::ProbeLate { ms: 1260.0 },
        ],
    );
    assert_eq!(text(&w), "one thread — the main thread of `uvicorn` at its limit from 8 sessions (at 64 sessions: runnable 96 % of the time (57 % on a core, 39 % waiting for one), the process at 48 % of its 2-core cap): an event loop or a lock held by one thread; more cores will not help, more processes will; the 1-core cap is full with it, the same wall: more processes need cores to run on; the responsiveness probe waited 1.3 s at p99");
    assert_eq!(short(&w), "one thread (the main thread of `uvicorn` runnable 96 % of the time; the 1-core cap full with it; the probe waited 1.3 s at p99)");
}

#[test]
fn a_few_threads_are_counted_whole_though_only_the_busiest_are_named() {
    use result::wall::{ThreadName, ThreadsAt};
    let at = ThreadsAt {
        unit: Unit::Session,
        from: 16,
        higher: None,
        process: Some((0.5, 8.0)),
        flat: None,
    };
    let name = |n: &str| ThreadName {
        name: n.into(),
        main: false,
    };
    let threads = vec![name("w-1"), name("w-2"), name("w-3")];
    let fact = WallFact::SomeThreads {
        at,
        count: 4,
        threads,
        runnable: 0.9,
    };
    let (t, s) = said(fact);
    assert_eq!(t, "4 threads at their limit — `w-1`, `w-2`, `w-3` runnable 90 % of the time or more from 16 sessions (the process at 50 % of its 8-core cap): a few threads do all the work; more cores will not help until it spreads wider, more processes will");
    assert_eq!(s, "4 threads (`w-1`, `w-2`, `w-3` full)");
}
