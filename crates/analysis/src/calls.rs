//! The wall of a ladder of voice calls, judged at the first level over budget from what
//! was full there — one thread, the cap, memory, the provider, a pool, or the harness —
//! and never from turns a second: a call's turns go at speech's pace, so more turns a
//! second with more calls says nothing of the headroom left.

use crate::budget::{num, pct};
use crate::throughput::{Wall, CPU_WALL, MEM_WALL};
use result::ladder::LevelStanding;
use result::words::{int, sessions};
use result::{Standing, StepResult, WallKind};

/// A call's audio is paced in real time: a cap this full already holds frames back, so
/// the cap is the wall from here where the level is over its budget.
pub const CALL_CPU: f64 = 0.75;

/// A responsiveness probe kept waiting this long (p99, ms) is worth saying beside a
/// thread at its limit: the loop the calls share could not answer for that long.
const PROBE_SAID_MS: f64 = 100.0;

/// The wall of a ladder of calls.
pub fn wall(steps: &[StepResult], st: &[LevelStanding]) -> Wall {
    let first = st
        .iter()
        .find(|l| matches!(l.standing, Standing::Over | Standing::Collapsed));
    let Some((first, at)) =
        first.and_then(|l| Some((l, steps.iter().find(|s| s.concurrency == l.concurrency)?)))
    else {
        return held(steps);
    };
    let before = steps
        .iter()
        .filter(|s| s.concurrency < at.concurrency)
        .last()
        .unwrap_or(at);
    let s = crate::reading::sample(at);
    if s.harness_bound {
        return crate::throughput::harness_wall(&s);
    }
    if let Some((w, material)) = crate::provider::wall(steps, None) {
        if material <= at.concurrency as f64 {
            return w;
        }
    }
    if crate::threads::at_limit(at) || crate::threads::stalled_alone(at) {
        if let Some(w) = thread(at) {
            return w;
        }
    }
    let cpu = at.cpu_of_cap.unwrap_or(0.0);
    let throttled = at.cpu_throttled.unwrap_or(0.0);
    if cpu >= CALL_CPU || throttled >= crate::sample::FULL {
        let all = crate::reading::samples(steps);
        return Wall {
            kind: WallKind::Cpu,
            from: Some(at.concurrency as f64),
            text: crate::throughput::calls_cpu_words(&s, &all) + &headroom(cpu),
            short: format!(
                "CPU ({} cap {} at {})",
                crate::budget::cap_size(at.cpu_cores),
                if cpu >= CPU_WALL {
                    "full"
                } else {
                    "nearly full"
                },
                at.concurrency
            ),
        };
    }
    if let Some(m) = at.mem_of_cap.filter(|m| *m >= MEM_WALL) {
        return Wall {
            kind: WallKind::Memory,
            from: Some(at.concurrency as f64),
            text: format!(
                "memory — {} of its cap at {}, the first level over budget",
                pct(m),
                sessions(at.concurrency as f64)
            ),
            short: format!("memory ({} of its cap at {})", pct(m), at.concurrency),
        };
    }
    pool(steps, before).unwrap_or_else(|| nothing_full(first, at))
}

/// One thread at its limit where the calls went over: said with the cap when the cap
/// is one core and full with it — the same wall either way.
fn thread(at: &StepResult) -> Option<Wall> {
    let mut w = crate::threads::thread_wall(&[at], None)?;
    let mut also = Vec::new();
    let one_core = at.cpu_cores.is_some_and(|c| c <= 1.0);
    if let (true, Some(c)) = (one_core, at.cpu_of_cap.filter(|c| *c >= CPU_WALL)) {
        w.text.push_str(&format!(
            " — on a 1-core cap, the same wall: the cap is full with it ({} of the cap)",
            pct(c)
        ));
        also.push("the 1-core cap full with it".to_string());
    }
    if let Some(p) = at.probe_p99_ms.filter(|p| *p >= PROBE_SAID_MS) {
        let waited = match p >= 1000.0 {
            true => format!("{} s", num((p / 100.0).round() / 10.0)),
            false => format!("{} ms", int(p.round() as u64)),
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

/// A cap not yet at its wall whose calls already went over: real-time audio needs room.
fn headroom(cpu: f64) -> String {
    match cpu < CPU_WALL {
        true => format!(
            " — below {} a cap still has room for text turns, but a call's frames are due every 20 ms: at {} of the cap they already wait",
            pct(CPU_WALL),
            pct(cpu)
        ),
        false => String::new(),
    }
}

/// A pool that held the calls in flight at one count (connections, or worker threads
/// seen by their count), read from the last level that held on.
fn pool(steps: &[StepResult], before: &StepResult) -> Option<Wall> {
    let own = Wall {
        kind: WallKind::None,
        from: Some(before.concurrency as f64),
        text: String::new(),
        short: String::new(),
    };
    let w = crate::pool::refine(own.clone(), steps, None);
    let w = match w.kind {
        WallKind::Pool => w,
        _ => crate::executor::refine(own, steps, None),
    };
    (w.kind == WallKind::Pool).then_some(w)
}

/// Over budget with nothing full: what was measured there, and where to look.
fn nothing_full(first: &LevelStanding, at: &StepResult) -> Wall {
    let why: Vec<String> = first.breaches.iter().map(|b| b.text()).collect();
    let thread = at
        .thread_cpu
        .as_ref()
        .and_then(|t| t.busiest.first())
        .map_or(String::new(), |b| {
            format!(", its busiest thread at {} of a core", pct(b.core_share))
        });
    Wall {
        kind: WallKind::Internal,
        from: Some(at.concurrency as f64),
        text: format!(
            "nothing full at {}, the first level over budget{}: CPU {} of its cap{thread} — a limit inside the bot (a queue, a lock held while it waits, a fixed number of calls it serves at once), or a budget tighter than its pace",
            sessions(at.concurrency as f64),
            match why.is_empty() {
                true => String::new(),
                false => format!(" ({})", why.join("; ")),
            },
            at.cpu_of_cap.map_or("not measured against a cap".into(), pct),
        ),
        short: format!("inside the bot (over at {}, nothing full)", at.concurrency),
    }
}

/// Every level held: the wall lies above the ladder.
fn held(steps: &[StepResult]) -> Wall {
    let top = steps.last().map_or(0, |s| s.concurrency);
    let cpu = steps
        .iter()
        .filter_map(|s| s.cpu_of_cap)
        .fold(0.0, f64::max);
    Wall {
        kind: WallKind::None,
        from: None,
        text: format!(
            "none within the ladder: every level held its budget up to {} (CPU at most {} of its cap) — widen the ladder",
            sessions(top as f64),
            pct(cpu)
        ),
        short: format!("none within the ladder (held at {top})"),
    }
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
