//! Known answers for one thread as the wall.

use super::*;
use crate::verdict::tests::step;
use crate::verdict::verdict;
use result::{BusyThread, ThreadCpu};

fn hot_thread(s: StepResult, share: f64, saturated: u32) -> StepResult {
    waiting_thread(s, share, 0.0, saturated)
}

fn waiting_thread(mut s: StepResult, share: f64, wait: f64, saturated: u32) -> StepResult {
    s.thread_cpu = Some(ThreadCpu {
        busiest: vec![
            BusyThread {
                name: "MainThread".into(),
                tid: 7,
                core_share: share,
                wait_share: Some(wait),
                main: false,
            },
            BusyThread {
                name: "asyncio_0".into(),
                tid: 8,
                core_share: 0.05,
                wait_share: None,
                main: false,
            },
        ],
        busy: saturated,
        saturated,
        ..Default::default()
    });
    s.cpu_cores = Some(2.0);
    s
}

#[test]
fn a_thread_alone_doing_the_work_and_runnable_most_of_the_time_is_the_wall() {
    // examples/event-loop read from a real run: `floor-loop` at 84 % of a core is all
    // of the process's CPU (42 % of a 2-core cap), throughput flat from 8 sessions.
    let steps: Vec<StepResult> = [
        (2, 2.6, 0.14, 0.28),
        (4, 5.0, 0.26, 0.52),
        (8, 7.7, 0.38, 0.76),
        (16, 8.1, 0.41, 0.82),
        (24, 8.2, 0.42, 0.84),
    ]
    .iter()
    .map(|&(n, x, cap, core)| {
        let mut s = hot_thread(step(n, x, 1.0 + n as f64 / 10.0, cap), core, 0);
        s.cpu_cores = Some(2.0);
        s
    })
    .collect();
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::short(&v.wall).starts_with("one thread (`MainThread` at 84 % of a core)"),
        "{}",
        words::wall::short(&v.wall)
    );
    // A thread at 84 % beside others doing half the work is not alone: no thread wall.
    let shared: Vec<StepResult> = steps
        .iter()
        .map(|s| StepResult {
            cpu_of_cap: s.cpu_of_cap.map(|c| c * 2.0),
            ..s.clone()
        })
        .collect();
    assert_ne!(
        verdict(&shared, &crate::Budget::default()).wall.kind,
        WallKind::Thread
    );
}

#[test]
fn one_hot_thread_under_a_two_core_cap_is_the_wall() {
    // ~100 CPU ms a turn on the event loop: flat at 9.8 turns/s from 5 sessions, the
    // process at half its 2-core cap.
    let steps = vec![
        hot_thread(step(2, 5.5, 1.1, 0.28), 0.55, 0),
        hot_thread(step(5, 9.7, 1.5, 0.49), 0.97, 1),
        hot_thread(step(10, 9.8, 3.0, 0.50), 0.98, 1),
        hot_thread(step(20, 9.8, 6.0, 0.50), 0.98, 1),
    ];
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).starts_with("one thread — `MainThread` at its limit from 5 sessions (at 20 sessions: at 98 % of a core, the process at 50 % of its 2-core cap): an event loop or a lock held by one thread; more cores will not help, more processes will; throughput flat at 9.77 turns/s"),
        "{}",
        words::wall::text(&v.wall)
    );
    assert_eq!(
        words::wall::short(&v.wall),
        "one thread (`MainThread` at 98 % of a core)"
    );
}

#[test]
fn a_thread_that_waits_for_a_core_on_a_busy_machine_is_still_the_wall() {
    // The same event loop sharing its cores with another process: 57 % on a core
    // and 40 % in the run queue — always runnable, so still the wall.
    let steps = vec![
        waiting_thread(step(2, 3.5, 1.1, 0.20), 0.35, 0.10, 0),
        waiting_thread(step(5, 5.6, 1.5, 0.29), 0.57, 0.40, 1),
        waiting_thread(step(10, 5.7, 3.0, 0.29), 0.57, 0.41, 1),
    ];
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).starts_with("one thread — `MainThread` at its limit from 5 sessions (at 10 sessions: runnable 98 % of the time (57 % on a core, 41 % waiting for one), the process at 29 % of its 2-core cap)"),
        "{}",
        words::wall::text(&v.wall)
    );
    assert_eq!(
        words::wall::short(&v.wall),
        "one thread (`MainThread` runnable 98 % of the time)"
    );
}

#[test]
fn cool_threads_leave_the_wall_inside_the_sut() {
    let steps = vec![
        hot_thread(step(2, 5.5, 1.1, 0.10), 0.3, 0),
        hot_thread(step(5, 9.7, 1.5, 0.12), 0.3, 0),
        hot_thread(step(10, 9.8, 3.0, 0.12), 0.3, 0),
        hot_thread(step(20, 9.8, 6.0, 0.12), 0.3, 0),
    ];
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Internal,
        "{}",
        words::wall::text(&v.wall)
    );
}

#[test]
fn a_core_full_with_other_processes_gives_way_to_a_saturated_main_thread() {
    // agno's AgentOS under a 2-core cap on a machine a build shared (field trial):
    // at 32 others took 57 % of the cores, so the CPU read "full with other
    // processes"; at 64 (clean) its main thread, named only `python3`, sat at 97 % of
    // a core with the process at 48 % of its cap.
    let mut steps = vec![
        hot_thread(step(8, 16.9, 1.1, 0.11), 0.22, 0),
        hot_thread(step(16, 30.5, 1.2, 0.22), 0.45, 0),
        hot_thread(step(32, 45.0, 1.4, 0.40), 0.84, 0),
        hot_thread(step(64, 60.3, 2.1, 0.48), 0.97, 1),
    ];
    for s in &mut steps {
        if let Some(t) = s.thread_cpu.as_mut() {
            (t.busiest[0].name, t.busiest[0].main) = ("python3".into(), true);
        }
        s.cpu_cores = Some(2.0);
    }
    steps[2].interference = Some(result::Interference {
        others_share: 0.57,
        cores: 2.0,
        contaminated: true,
        ..Default::default()
    });
    steps[2].sched_delay_ms_per_s = Some(450.0);
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).starts_with("one thread — the main thread of `python3` at its limit from 32 sessions (at 64 sessions: at 97 % of a core, the process at 48 % of its 2-core cap)"),
        "{}",
        words::wall::text(&v.wall)
    );
    // A top level as busy as the rest: the thread's wait may be the neighbours'.
    let mut busy_top = steps.clone();
    busy_top[3].interference = steps[2].interference.clone();
    assert_eq!(
        verdict(&busy_top, &crate::Budget::default()).wall.kind,
        WallKind::Cpu
    );
    // The same ladder whose CPU did reach its cap at 64 keeps the CPU wall.
    steps[3].cpu_of_cap = Some(0.97);
    assert_eq!(
        verdict(&steps, &crate::Budget::default()).wall.kind,
        WallKind::Cpu
    );
}

/// A Node server with UV_THREADPOOL_SIZE=1 hashing off the event loop (issue 40): the
/// busy thread is the pool's single worker, the main thread idle — said as such, with
/// what sets the pool's size.
#[test]
fn a_saturated_worker_beside_an_idle_main_thread_is_a_pool_of_one() {
    let steps: Vec<StepResult> = [
        (2, 4.0, 0.5),
        (4, 7.6, 0.97),
        (8, 7.7, 0.99),
        (16, 7.7, 0.99),
    ]
    .iter()
    .map(|&(n, x, share)| {
        let mut s = hot_thread(
            step(n, x, 1.0 + n as f64 / 4.0, share / 2.0 + 0.02),
            share,
            u32::from(share > 0.9),
        );
        if let Some(t) = s.thread_cpu.as_mut() {
            t.busiest[0].name = "node".into();
            t.main_share = Some(0.04);
        }
        s
    })
    .collect();
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).starts_with("one thread — a worker thread of `node`, not the main thread (the main thread at 4 % of a core), at its limit from 4 sessions (at 16 sessions: at 99 % of a core, the process at 52 % of its 2-core cap): one worker does the work off the main thread — a pool of 1 worker; more cores will not help, a bigger pool will (in Node, libuv's thread pool: UV_THREADPOOL_SIZE sets its size, 4 by default;"),
        "{}",
        words::wall::text(&v.wall)
    );
    assert_eq!(
        words::wall::short(&v.wall),
        "one worker thread (`node` at 99 % of a core; the main thread idle)"
    );
    // The main thread itself saturated reads as before.
    let main: Vec<StepResult> = steps
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if let Some(t) = s.thread_cpu.as_mut() {
                t.busiest[0].main = true;
                t.main_share = Some(t.busiest[0].core_share);
            }
            s
        })
        .collect();
    let v = verdict(&main, &crate::Budget::default());
    assert!(
        words::wall::text(&v.wall)
            .starts_with("one thread — the main thread of `node` at its limit"),
        "{}",
        words::wall::text(&v.wall)
    );
}

#[test]
fn a_thread_that_holds_a_collapse_is_the_wall_there() {
    // tests/conformance's voice bot blocking its loop 10 ms a frame, read from a run: one
    // call holds, two fail with the main thread at 98 % of a core (the process at 49 %
    // of a 2-core cap), and the step before it showed nothing at its limit.
    let mut steps = vec![
        hot_thread(step(1, 0.2, 1.0, 0.27), 0.55, 0),
        hot_thread(step(2, 0.0, 1.0, 0.49), 0.98, 1),
    ];
    steps[1].outcome = result::Outcome::ErrorRate;
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(v.collapse, Some(2));
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).contains("until the collapse"),
        "{}",
        words::wall::text(&v.wall)
    );
    // The same collapse with the process at its cap is not one thread's doing.
    steps[1].cpu_of_cap = Some(0.99);
    let v = verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    // A run where the calls failed early: the thread's share, read over a span that ran on
    // after they did, is 73 % of a core, all of the process's work (36 % of a 2-core
    // cap), while the probe waited 2,353 ms at p99: the loop is still the wall.
    steps[1].cpu_of_cap = Some(0.363);
    steps[1].thread_cpu.as_mut().unwrap().busiest[0].core_share = 0.726;
    steps[1].thread_cpu.as_mut().unwrap().busiest[1].core_share = 0.0;
    steps[1].thread_cpu.as_mut().unwrap().saturated = 0;
    steps[1].probe_p99_ms = Some(2353.15);
    let v = verdict(&steps, &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall).contains("probe waited 2,353 ms"),
        "{}",
        words::wall::text(&v.wall)
    );
    // Without the probe's wait, 73 % of a core is not a thread at its limit.
    steps[1].probe_p99_ms = Some(30.0);
    let v = verdict(&steps, &crate::Budget::default());
    assert_ne!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
}

/// Issue 62's Pipecat SmallWebRTC bot, built as examples/pipecat-webrtc builds it with 4 ms
/// of CPU burnt on its event loop for every 20 ms audio frame a caller sends, `ramp --cpus 1
/// --ladder 2,4,8,16` (2026-12-05, 2-core Xeon). At 2 calls the loop (uvicorn's main
/// thread) is runnable 70 % of a core doing 84 % of the process's work, aiortc's and the
/// server's other threads the rest; at 4 the calls need 141 % of it and fail, stuttering
/// (36 % of the replies' time), the probe's p99 from 10.6 to 28.6 ms, the cap 65 % full.
/// It read "none before the collapse at 4"; the wall is the loop.
#[test]
fn a_pipecat_webrtc_loop_the_next_level_needs_more_than_a_core_of_is_the_wall() {
    use crate::calls::tests::{call, collapsed};
    let level = |n: usize, main: f64, wait: f64, cpu: f64, probe: f64, stall: f64| {
        let mut s = call(n, stall, 1743.0, cpu);
        s.cpu_cores = Some(1.0);
        s.probe_p99_ms = Some(probe);
        s.thread_cpu = Some(ThreadCpu {
            busiest: vec![BusyThread {
                name: "uvicorn".into(),
                tid: 1,
                core_share: main,
                wait_share: Some(wait),
                main: true,
            }],
            busy: 1,
            ..Default::default()
        });
        s
    };
    let steps = vec![
        level(2, 0.596, 0.107, 0.709, 10.6, 0.0),
        collapsed(level(4, 0.55, 0.094, 0.647, 28.62, 0.358)),
    ];
    let b = crate::calls::tests::pipecat_budget();
    let v = verdict(&steps, &b);
    assert_eq!(v.holds, Some(2));
    assert_eq!(
        v.wall.kind,
        WallKind::Thread,
        "{}",
        words::wall::text(&v.wall)
    );
    assert_eq!(
        words::wall::short(&v.wall),
        "one thread (the main thread of `uvicorn` at 70 % of a core for 2 calls, 141 % needed at 4)"
    );
    // The probe no slower at the collapse: nothing there says the loop was, so none.
    let mut calm = steps.clone();
    calm[1].probe_p99_ms = Some(12.0);
    assert_eq!(verdict(&calm, &b).wall.kind, WallKind::None);
    // The loop at 42 % of its process's work (the same CPU of a 2-core cap): not one
    // thread's collapse.
    let mut shared = steps.clone();
    shared[0].cpu_cores = Some(2.0);
    assert_eq!(verdict(&shared, &b).wall.kind, WallKind::None);
}
