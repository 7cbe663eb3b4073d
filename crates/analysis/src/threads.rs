//! One thread as the wall: throughput stops growing while the busiest thread of the SUT
//! sits at a core's worth and the process as a whole is below its cap — an event loop
//! doing work on the loop, a lock one thread holds, an interpreter's global lock. More
//! cores do not move it; more processes do. A process-wide CPU share hides it (one core
//! of a 2-core cap reads 50 %), so it is read from the threads (`StepResult::thread_cpu`).

use crate::budget::num;
use crate::throughput::{flat_words, pct, Plateau, Wall, CPU_WALL};
use result::words::sessions;
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
    let process = s.cpu_of_cap.zip(s.cpu_cores).map(|(c, k)| c * k);
    let core = s
        .thread_cpu
        .as_ref()
        .and_then(|t| t.busiest.first())
        .map_or(0.0, |b| b.core_share);
    share >= SATURATED
        || (share >= ALONE && process.is_some_and(|p| p > 0.0 && core / p >= ALONE_SHARE))
}

/// The busiest thread's runnable share at a step, and how many were saturated.
fn hot(s: &StepResult) -> Option<(f64, u32)> {
    let t = s.thread_cpu.as_ref()?;
    Some((t.busiest.first()?.runnable(), t.saturated))
}

/// A thread as a person knows it: the main thread by that name (an interpreter that
/// names no thread shows only the process's name), others by theirs.
fn named(b: &result::BusyThread) -> String {
    match b.main {
        true => format!("the main thread of `{}`", b.name),
        false => format!("`{}`", b.name),
    }
}

/// The figures a wall's sentence gives in brackets: " (the process at 48 % …)", or when
/// they are a higher level's than the one the wall began at, " (at 64 sessions: …)".
fn figures(higher: Option<usize>, parts: &[&str]) -> String {
    let said: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    match (said.is_empty(), higher) {
        (true, _) => String::new(),
        (false, None) => format!(" ({})", said.join(", ")),
        (false, Some(l)) => format!(" (at {}: {})", sessions(l as f64), said.join(", ")),
    }
}

/// "at 97 % of a core", or when it waited for one: "runnable 96 % of the time (57 % on a
/// core, 39 % waiting for one)".
fn how_busy(b: &result::BusyThread) -> (String, String) {
    match b.wait_share {
        Some(w) if w >= 0.05 => (
            format!(
                "runnable {} of the time ({} on a core, {} waiting for one)",
                pct(b.runnable()),
                pct(b.core_share),
                pct(w)
            ),
            format!("runnable {} of the time", pct(b.runnable())),
        ),
        _ => {
            let at = format!("at {} of a core", pct(b.core_share));
            (at.clone(), at)
        }
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
        s.cpu_of_cap.is_none_or(|c| c < CPU_WALL) && s.cpu_throttled.is_none_or(|t| t < 0.5)
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
    if others_cpu && ok.last().is_none_or(|s| s.contaminated()) {
        return own;
    }
    thread_wall(&ok[first..], plateau).unwrap_or(own)
}

/// A main thread at less than this share of a core beside a saturated worker is idle.
const IDLE_MAIN: f64 = 0.5;

/// The main thread's share when the busiest thread is a worker beside an idle main
/// thread (known only where the probe read the main thread's share).
fn beside_an_idle_main(t: &result::ThreadCpu) -> Option<f64> {
    let top = t.busiest.first()?;
    t.main_share.filter(|m| !top.main && *m < IDLE_MAIN)
}

/// What sets the size of the pool a runtime's worker belongs to, where it is known.
fn pool_size_hint(name: &str) -> &'static str {
    if name == "node" || name.contains("libuv") {
        " (in Node, libuv's thread pool: UV_THREADPOOL_SIZE sets its size, 4 by default; crypto, zlib, fs and dns.lookup run there)"
    } else {
        ""
    }
}

/// The wall in words, from the levels where the thread (or the threads) sat at its limit.
fn thread_wall(on: &[&StepResult], plateau: Option<&Plateau>) -> Option<Wall> {
    let top = on.last()?;
    let t = top.thread_cpu.as_ref()?;
    let n = on
        .iter()
        .filter_map(|s| hot(s).map(|h| h.1))
        .min()
        .unwrap_or(1)
        .max(1);
    let names: Vec<String> = t.busiest.iter().take(n as usize).map(named).collect();
    let from = on[0].concurrency;
    let (busy, busy_short) = how_busy(&t.busiest[0]);
    let process = match (top.cpu_of_cap, top.cpu_cores) {
        (Some(c), Some(k)) => format!("the process at {} of its {}-core cap", pct(c), num(k)),
        _ => String::new(),
    };
    // The figures are the top level's: said with that level when the wall began lower.
    let higher = (top.concurrency != from).then_some(top.concurrency);
    let (one_busy, one_figures) = match higher {
        None => (busy.as_str(), figures(None, &[&process])),
        Some(_) => ("at its limit", figures(higher, &[&busy, &process])),
    };
    let throughput = plateau.map_or(String::new(), |p| format!("; throughput {}", flat_words(p)));
    if n == 1 {
        if let Some(idle) = beside_an_idle_main(t) {
            let name = &t.busiest[0].name;
            return Some(Wall {
                kind: WallKind::Thread,
                from: Some(from as f64),
                text: format!(
                    "one thread — a worker thread of `{name}`, not the main thread (the main thread at {} of a core), {one_busy} from {}{one_figures}: one worker does the work off the main thread — a pool of 1 worker; more cores will not help, a bigger pool will{}{throughput}",
                    pct(idle),
                    sessions(from as f64),
                    pool_size_hint(name)
                ),
                short: format!("one worker thread (`{name}` {busy_short}; the main thread idle)"),
            });
        }
    }
    let (what, why, short) = if n == 1 {
        (
            format!("one thread — {} {one_busy} from {}{one_figures}", names[0], sessions(from as f64)),
            "an event loop or a lock held by one thread; more cores will not help, more processes will",
            format!("one thread ({} {busy_short})", names[0]),
        )
    } else {
        (
            format!("{n} threads at their limit — {} runnable {} of the time or more from {}{}", names.join(", "), pct(SATURATED), sessions(from as f64), figures(higher, &[&process])),
            "a few threads do all the work; more cores will not help until it spreads wider, more processes will",
            format!("{n} threads ({} full)", names.join(", ")),
        )
    };
    Some(Wall {
        kind: WallKind::Thread,
        from: Some(from as f64),
        text: format!("{what}: {why}{throughput}"),
        short,
    })
}

#[cfg(test)]
mod tests {
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
        assert_eq!(v.wall.kind, WallKind::Thread, "{}", v.wall.text);
        assert!(
            v.wall
                .short
                .starts_with("one thread (`MainThread` at 84 % of a core)"),
            "{}",
            v.wall.short
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
        assert_eq!(v.wall.kind, WallKind::Thread, "{}", v.wall.text);
        assert!(
            v.wall.text.starts_with("one thread — `MainThread` at its limit from 5 sessions (at 20 sessions: at 98 % of a core, the process at 50 % of its 2-core cap): an event loop or a lock held by one thread; more cores will not help, more processes will; throughput flat at 9.77 turns/s"),
            "{}",
            v.wall.text
        );
        assert_eq!(v.wall.short, "one thread (`MainThread` at 98 % of a core)");
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
        assert_eq!(v.wall.kind, WallKind::Thread, "{}", v.wall.text);
        assert!(
            v.wall.text.starts_with("one thread — `MainThread` at its limit from 5 sessions (at 10 sessions: runnable 98 % of the time (57 % on a core, 41 % waiting for one), the process at 29 % of its 2-core cap)"),
            "{}",
            v.wall.text
        );
        assert_eq!(
            v.wall.short,
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
        assert_eq!(v.wall.kind, WallKind::Internal, "{}", v.wall.text);
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
        assert_eq!(v.wall.kind, WallKind::Thread, "{}", v.wall.text);
        assert!(
            v.wall.text.starts_with("one thread — the main thread of `python3` at its limit from 32 sessions (at 64 sessions: at 97 % of a core, the process at 48 % of its 2-core cap)"),
            "{}",
            v.wall.text
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
        assert_eq!(v.wall.kind, WallKind::Thread, "{}", v.wall.text);
        assert!(
            v.wall.text.starts_with("one thread — a worker thread of `node`, not the main thread (the main thread at 4 % of a core), at its limit from 4 sessions (at 16 sessions: at 99 % of a core, the process at 52 % of its 2-core cap): one worker does the work off the main thread — a pool of 1 worker; more cores will not help, a bigger pool will (in Node, libuv's thread pool: UV_THREADPOOL_SIZE sets its size, 4 by default;"),
            "{}",
            v.wall.text
        );
        assert_eq!(
            v.wall.short,
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
            v.wall
                .text
                .starts_with("one thread — the main thread of `node` at its limit"),
            "{}",
            v.wall.text
        );
    }
}
