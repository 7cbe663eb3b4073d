//! One thread as the wall: throughput stops growing while the busiest thread of the SUT
//! sits at a core's worth and the process as a whole is below its cap — an event loop
//! doing work on the loop, a lock one thread holds, an interpreter's global lock. More
//! cores do not move it; more processes do. A process-wide CPU share hides it (one core
//! of a 2-core cap reads 50 %), so it is read from the threads (`StepResult::thread_cpu`).

use crate::budget::num;
use crate::throughput::{flat_words, pct, Plateau, Wall, CPU_WALL};
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
fn figures(higher: Option<usize>, parts: &[&str], u: Unit) -> String {
    let said: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    match (said.is_empty(), higher) {
        (true, _) => String::new(),
        (false, None) => format!(" ({})", said.join(", ")),
        (false, Some(l)) => format!(" (at {}: {})", u.level(l), said.join(", ")),
    }
}

/// "at 97 % of a core", or when it waited for one: "runnable 96 % of the time (57 % on a
/// core, 39 % waiting for one)" — "waiting out its quota" where the quota throttled it.
fn how_busy(b: &result::BusyThread, throttled: bool) -> (String, String) {
    let waiting = match throttled {
        true => "waiting out its quota",
        false => "waiting for one",
    };
    match b.wait_share {
        Some(w) if w >= 0.05 => (
            format!(
                "runnable {} of the time ({} on a core, {} {waiting})",
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
    match thread_wall(&[at], None, Unit::of(steps)) {
        Some(mut w) => {
            if stalled && !at_limit(at) {
                let lag = at.probe_p99_ms.unwrap_or_default();
                w.text.push_str(&format!(
                    "; the responsiveness probe waited {} ms at p99",
                    result::words::int(lag.round() as u64)
                ));
            }
            w.text
                .push_str(" — it held the step until the collapse there");
            w
        }
        None => own,
    }
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

/// What sets the size of the pool a runtime's worker belongs to, where it is known.
fn pool_size_hint(name: &str) -> &'static str {
    if name == "node" || name.contains("libuv") {
        " (in Node, libuv's thread pool: UV_THREADPOOL_SIZE sets its size, 4 by default; crypto, zlib, fs and dns.lookup run there)"
    } else {
        ""
    }
}

/// Why one thread at its limit is the wall, and what moves it.
const ONE_THREAD_WHY: &str =
    "an event loop or a lock held by one thread; more cores will not help, more processes will";

/// The wall in words, from the levels where the thread (or the threads) sat at its limit.
fn thread_wall(on: &[&StepResult], plateau: Option<&Plateau>, u: Unit) -> Option<Wall> {
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
    let (busy, busy_short) = how_busy(&t.busiest[0], crate::quota::throttled(top).is_some());
    let process = match (top.cpu_of_cap, top.cpu_cores) {
        (Some(c), Some(k)) => format!("the process at {} of its {}-core cap", pct(c), num(k)),
        _ => String::new(),
    };
    // The figures are the top level's: said with that level when the wall began lower.
    let higher = (top.concurrency != from).then_some(top.concurrency);
    let (one_busy, one_figures) = match higher {
        None => (busy.as_str(), figures(None, &[&process], u)),
        Some(_) => ("at its limit", figures(higher, &[&busy, &process], u)),
    };
    let throughput = plateau.map_or(String::new(), |p| {
        format!("; throughput {}", flat_words(p, u))
    });
    if n == 1 {
        if let Some(idle) = beside_an_idle_main(t) {
            let name = &t.busiest[0].name;
            return Some(Wall {
                kind: WallKind::Thread,
                from: Some(from as f64),
                text: format!(
                    "one thread — a worker thread of `{name}`, not the main thread (the main thread at {} of a core), {one_busy} from {}{one_figures}: one worker does the work off the main thread — a pool of 1 worker; more cores will not help, a bigger pool will{}{throughput}",
                    pct(idle),
                    u.level(from),
                    pool_size_hint(name)
                ),
                short: format!("one worker thread (`{name}` {busy_short}; the main thread idle)"),
            });
        }
    }
    let (what, why, short) = if n == 1 {
        (
            format!(
                "one thread — {} {one_busy} from {}{one_figures}",
                names[0],
                u.level(from)
            ),
            ONE_THREAD_WHY,
            format!("one thread ({} {busy_short})", names[0]),
        )
    } else {
        (
            format!("{n} threads at their limit — {} runnable {} of the time or more from {}{}", names.join(", "), pct(SATURATED), u.level(from), figures(higher, &[&process], u)),
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
    let mut also = Vec::new();
    let one_core = at.cpu_cores.is_some_and(|c| c <= 1.0);
    if let (true, Some(_)) = (one_core, at.cpu_of_cap.filter(|c| *c >= CPU_WALL)) {
        let cap = format!("the {} cap", crate::budget::cap_size(at.cpu_cores));
        w.text.push_str(&format!(
            "; {cap} is full with it, the same wall: more processes need cores to run on"
        ));
        also.push(format!("{cap} full with it"));
    }
    if let Some(p) = at.probe_p99_ms.filter(|p| *p >= PROBE_SAID_MS) {
        let waited = match p >= 1000.0 {
            true => format!("{} s", num((p / 100.0).round() / 10.0)),
            false => format!("{} ms", result::words::int(p.round() as u64)),
        };
        w.text.push_str(&format!(
            "; the responsiveness probe waited {waited} at p99"
        ));
        also.push(format!("the probe waited {waited} at p99"));
    }
    if !also.is_empty() {
        w.short = format!("{}; {})", w.short.trim_end_matches(')'), also.join("; "));
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
    let u = Unit::of_step(at);
    let (name, share) = (named(b), pct(b.runnable()));
    Some(Wall {
        kind: WallKind::Thread,
        from: Some(at.concurrency as f64),
        text: format!(
            "one thread — {name} at {share} of a core for {} and doing its process's work, so {} needed {} of one; the calls failed there: {ONE_THREAD_WHY}",
            u.level(held.concurrency),
            u.level(at.concurrency),
            pct(needed)
        ),
        short: format!(
            "one thread ({name} at {share} of a core for {}, {} needed at {})",
            u.level(held.concurrency),
            pct(needed),
            at.concurrency
        ),
    })
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod tests;
