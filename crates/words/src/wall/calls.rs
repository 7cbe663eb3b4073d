//! The walls of calls in words (the CPU where they went over or failed, memory, nothing
//! full, every level held, an agent worker's own admission), and the provider's pushback.

use super::phrases::{cap_size, cpu_at_most, flat};
use crate::findings::at_load;
use crate::pct;
use result::budget::num;
use result::wall::{
    CallCpu, CallCpuState, ProviderPushback, Pushback, PushbackEnded, WallFact, WorkerRefusal,
};
use result::words::{count, count_f, Unit};
use result::worker::LOAD_WINDOW_S;

const CALL: Unit = Unit::Call;

pub(super) fn text(f: &WallFact) -> String {
    match f {
        WallFact::CallsCpu { cpu, state } => call_cpu(cpu) + &headroom(cpu, state),
        WallFact::CallsCpuRising { cpu, from, to } => format!(
            "{} — its share rose with every level ({} → {} from {} to {}) and nothing else was near its limit: a call's work comes in bursts (VAD, decoding, encoding), so replies queue for the core before the average fills it",
            call_cpu(cpu),
            pct(from.1),
            pct(to.1),
            from.0,
            CALL.level(to.0)
        ),
        WallFact::CallsCpuCollapse { cpu } => call_cpu(cpu) + ", where the calls failed",
        WallFact::CallsMemory { at, share } => format!(
            "memory — {} of its cap at {}, the first level over budget",
            pct(*share),
            CALL.level(*at)
        ),
        WallFact::NothingFull { at, breaches, cpu, thread } => {
            let why: Vec<String> = breaches.iter().map(|b| b.text()).collect();
            format!(
                "nothing full at {}, the first level over budget{}: {}{} — a limit inside the bot (a queue, a lock held while it waits, a fixed number of calls it serves at once), or a budget tighter than its pace",
                CALL.level(*at),
                match why.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", why.join("; ")),
                },
                match cpu {
                    Some(c) => format!("CPU {} of its cap", pct(*c)),
                    None => "CPU not measured against a cap".into(),
                },
                thread.map_or(String::new(), |t| format!(", its busiest thread at {} of a core", pct(t)))
            )
        }
        WallFact::CallsHeld { top, cpu } => format!(
            "none within the ladder: every level held its budget up to {}{} — widen the ladder",
            CALL.level(*top),
            cpu.map_or(String::new(), |c| format!(" ({})", cpu_at_most(Some(c))))
        ),
        WallFact::WorkerRefused { at, refusal, failed, burst } => format!(
            "the worker's own admission at {} — {}: {}{} (more calls a worker: raise its load_threshold where the CPU has room, or add workers)",
            CALL.level(*at),
            refusal_long(refusal),
            match failed {
                0 => "its calls failed".to_string(),
                f => format!("{} failed", count(*f, "call")),
            },
            burst.map_or(String::new(), |b| format!("; {}", crate::worker::burst(b)))
        ),
        WallFact::Provider(p) => provider(p),
        _ => String::new(),
    }
}

pub(super) fn short(f: &WallFact) -> String {
    match f {
        WallFact::CallsCpu { cpu, state } => format!(
            "CPU ({} cap {} at {})",
            cap_size(cpu.cores),
            match state {
                CallCpuState::Full => "full",
                CallCpuState::NearlyFull { .. } => "nearly full",
                CallCpuState::Throttled { .. } => "throttled",
            },
            cpu.at
        ),
        WallFact::CallsCpuRising { cpu, to, .. } => format!(
            "CPU ({} cap at {} at {}, rising with each call)",
            cap_size(cpu.cores),
            pct(to.1),
            cpu.at
        ),
        WallFact::CallsCpuCollapse { cpu } => format!(
            "CPU ({} cap at {} at {}, the collapse)",
            cap_size(cpu.cores),
            pct(cpu.read),
            cpu.at
        ),
        WallFact::CallsMemory { at, share } => {
            format!("memory ({} of its cap at {at})", pct(*share))
        }
        WallFact::NothingFull { at, .. } => format!("inside the bot (over at {at}, nothing full)"),
        WallFact::CallsHeld { top, .. } => format!("none within the ladder (held at {top})"),
        WallFact::WorkerRefused { at, refusal, .. } => {
            format!("{} at {at}", worker_refusal(refusal))
        }
        WallFact::Provider(p) => format!("the provider ({}, from {})", binding(p), p.from),
        _ => String::new(),
    }
}

/// A CPU wall of calls: where the cap ran full, what callers heard, what a call costs (a
/// rate of turns says nothing of calls, whose turns go at speech's pace).
fn call_cpu(c: &CallCpu) -> String {
    let heard = c.heard.map_or(String::new(), |(stall, p95)| {
        format!(
            ", where {} of the replies' time stalled and replies began in {} at p95",
            pct(stall),
            p95.map_or("?".into(), |p| format!("{} ms", num(p)))
        )
    });
    let cost = c.cost.map_or(String::new(), |k| {
        format!(
            "; each call costs about {} CPU ms a second (at {}), so {} about {} of this work — fewer CPU ms a call (its per-frame work: VAD, resampling, encoding) or more cores moves the line",
            num(k.ms),
            c.unit.level(k.at),
            count_f(k.cores, "core") + if k.cores == 1.0 { " holds" } else { " hold" },
            c.unit.count(k.holds)
        )
    });
    format!(
        "CPU — the SUT's CPU reaches {} of the {} cap at {}{heard}{cost}",
        pct(c.read),
        cap_size(c.cores),
        c.unit.level(c.at)
    )
}

/// A cap not yet at its wall whose calls already went over: real-time audio needs room.
fn headroom(c: &CallCpu, state: &CallCpuState) -> String {
    match state {
        CallCpuState::Full => String::new(),
        CallCpuState::NearlyFull { wall } => format!(
            " — below {} a cap still has room for text turns, but a call's frames are due every 20 ms: at {} of the cap they already wait",
            pct(*wall),
            pct(c.read)
        ),
        CallCpuState::Throttled { share } => format!(
            " — its quota throttled it in {} of its periods: a call's frames, due every 20 ms, wait out each one",
            pct(*share)
        ),
    }
}

/// A worker's refusal in a few words: "the worker refused calls at load 0.93 (its
/// load_threshold 0.7)", "the worker took 3 jobs for 4 calls (CPU 86 % of its cap)".
pub fn worker_refusal(r: &WorkerRefusal) -> String {
    match r {
        WorkerRefusal::Marked { load, threshold } => {
            format!("the worker refused calls {}", at_load(*load, *threshold))
        }
        WorkerRefusal::Declined { jobs, calls, cpu } => format!(
            "the worker took {} for {}{}",
            count(*jobs, "job"),
            count(*calls, "call"),
            cpu.map_or(String::new(), |c| format!(" (CPU {} of its cap)", pct(c)))
        ),
    }
}

fn refusal_long(r: &WorkerRefusal) -> String {
    match r {
        WorkerRefusal::Marked { load, threshold } => {
            format!("it marked itself full {}", at_load(*load, *threshold))
        }
        WorkerRefusal::Declined { jobs, calls, cpu } => format!(
            "it took {} for {}: a worker declines a job offered while its load (its CPU over {} s) is at its load_threshold (0.7 by default in `start` mode), and logs that only when its status changes{}",
            count(*jobs, "job"),
            count(*calls, "call"),
            num(LOAD_WINDOW_S),
            cpu.map_or(String::new(), |c| format!("; its CPU was {} of its cap", pct(c)))
        ),
    }
}

fn binding(p: &ProviderPushback) -> &str {
    p.binding.as_deref().unwrap_or("its limits")
}

fn provider(p: &ProviderPushback) -> String {
    let (who, u) = (binding(p), p.unit);
    let mut text = match p.how {
        Pushback::Refused { share, amplification } => format!(
            "the provider from {} — {who} refused {} of LLM calls at {} ({})",
            u.level(p.from),
            pct(share),
            p.at,
            amplification.map_or("not retried".into(), |a| format!("retry amplification {}×", num(a)))
        ),
        Pushback::Queued { share, wait_p99_ms } => format!(
            "the provider from {} — {who} kept calls waiting ({} of the provider's time at {}, p99 wait {} ms)",
            u.level(p.from),
            pct(share),
            p.at,
            num(wait_p99_ms)
        ),
    };
    match p.ended {
        Some(PushbackEnded::Failed {
            retried,
            failed,
            of,
        }) => text.push_str(&format!(
            "; {} ({failed} of {} failed)",
            match retried {
                true => "the SUT's retries gave up there",
                false => "the SUT did not retry the refused calls",
            },
            count(of, u.one())
        )),
        Some(PushbackEnded::Outcome { outcome }) => {
            text.push_str(&format!("; the step there ended in {outcome}"))
        }
        None => {}
    }
    if let Some(f) = &p.flat {
        text.push_str(&format!("; throughput {}", flat(f, u)));
    }
    text
}
