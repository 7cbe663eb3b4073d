//! A ladder's findings in words, a sentence each, worded as what happened and what to do:
//! what grows with sessions and which limit it reaches first, a cold start, threads
//! queueing for a core, a rate that needed checking, an agent worker's own reports.

use crate::pct;
use result::budget::num;
use result::facts::{
    Blocked, CapHeld, Cold, CountGrowth, Finding, Held, Limit, MemoryGrowth, RateFellBack,
    Resource, Rising, RisingFigure, RunQueue, WorkerFull,
};
use result::words::{count, count_f, int, many, Unit};
use result::WallKind;

/// One finding, as the verdict's lines say it.
pub fn finding(f: &Finding) -> String {
    match f {
        Finding::Count(c) => count_growth(c),
        Finding::Rising(r) => rising(r),
        Finding::Memory(m) => memory(m),
        Finding::FirstToRunOut { finding: f } => format!("first to run out: {}", finding(f)),
        Finding::FartherOff { unit, limits } => farther_off(*unit, limits),
        Finding::ColdStart(c) => cold(c),
        Finding::RunQueue(r) => run_queue(r),
        Finding::RateFellBack(r) => rate_fell_back(r),
        Finding::WorkerFull(w) => worker_full(w),
        Finding::LoopsBlocked { levels } => loops_blocked(levels),
    }
}

/// A resource as a list of limits names it: "open files", "the 2,048 MB memory cap".
pub fn resource(r: &Resource) -> String {
    match r {
        Resource::Threads => "threads".into(),
        Resource::OpenFiles => "open files".into(),
        Resource::Connections => "connections".into(),
        Resource::MemoryCap { mb } => format!("the {} MB memory cap", int(mb.round() as u64)),
    }
}

fn count_growth(c: &CountGrowth) -> String {
    let u = c.unit;
    let what = match c.resource {
        Resource::OpenFiles => "descriptor",
        Resource::Connections => "connection",
        _ => "thread",
    };
    let held = match c.held {
        Held::WhileACallLasts => format!("{what}s each call holds while it lasts"),
        Held::PerTurnNeverReleased => format!("a {what} per request (turn) that is never released"),
        Held::OnePerSession => format!("a {what} per session"),
        Held::ManyPerSession => format!("{what}s held for every session"),
    };
    let out = match c.runs_out_near {
        Some(n) => format!(
            "; the box allows {} — they run out near {}",
            int(c.limit.unwrap_or(0)),
            many(n.max(0.0).round() as u64, u.one())
        ),
        None => String::new(),
    };
    format!(
        "{} grow {} per {} ({} at {}): {held} — 10,000 {} would need {} {what}s{out}",
        resource(&c.resource),
        num(c.slope),
        u.one(),
        num(c.at_top),
        c.top_level,
        u.many(),
        int(c.at_10k.round().max(0.0) as u64)
    )
}

fn rising(r: &Rising) -> String {
    let u = r.unit;
    let (what, unit, why) = match r.figure {
        RisingFigure::MemoryPerSession => (
            format!("memory per {}", u.one()),
            "KB",
            format!("what a {} holds grows with load (queues, buffers, caches)", u.one()),
        ),
        RisingFigure::CpuPerTurn => (
            "CPU per turn".to_string(),
            "ms",
            format!(
                "each turn costs more as {} are added (more threads to switch, locks, garbage collection)",
                u.many()
            ),
        ),
    };
    format!(
        "{what} rises with {} ({} {unit} at {} → {} {unit} at {}): {why}",
        u.many(),
        num(r.first.1),
        r.first.0,
        num(r.last.1),
        r.last.0
    )
}

/// Two significant digits: "about 320 sessions", not "about 321.4".
fn round_to_two(x: f64) -> f64 {
    if x < 100.0 {
        return x.round();
    }
    let m = 10f64.powf(x.log10().floor() - 1.0);
    (x / m).round() * m
}

/// The wall that stops sessions before memory does, as the memory finding names it.
fn stops_first(kind: WallKind) -> Option<&'static str> {
    match kind {
        WallKind::Cpu => Some("CPU"),
        WallKind::Thread => Some("a thread"),
        WallKind::Pool => Some("a pool"),
        WallKind::Provider => Some("the provider"),
        WallKind::Internal => Some("a limit inside the SUT"),
        WallKind::Memory | WallKind::Harness | WallKind::None => None,
    }
}

fn memory(m: &MemoryGrowth) -> String {
    let u = m.unit;
    let mut out = format!(
        "memory grows {} MB a {} ({} {} → {} MB from {} to {})",
        num(m.mb_per_session),
        u.one(),
        m.measure.as_str(),
        num(m.first.1),
        num(m.top.1),
        m.first.0,
        u.level(m.top.0)
    );
    match m.cap {
        Some((mb, holds)) => out.push_str(&format!(
            ": the {} MB cap would hold about {}",
            int(mb.round() as u64),
            u.count(round_to_two(holds))
        )),
        None => out.push_str(&format!(
            ": 1,000 {} would need about {} MB",
            u.many(),
            int(m.at_1000_mb.round().max(0.0) as u64)
        )),
    }
    if let Some((first, from)) = m
        .stopped_first
        .and_then(|(k, f)| Some((stops_first(k)?, f)))
    {
        out.push_str(&format!(" — {first} stops it first, at {}", num(from)));
    }
    out
}

fn farther_off(u: Unit, limits: &[Limit]) -> String {
    let each: Vec<String> = limits
        .iter()
        .map(|l| {
            let n = l.near.max(0.0).round() as u64;
            format!("{} near {}", resource(&l.resource), many(n, u.one()))
        })
        .collect();
    format!(
        "farther off, as {} are added: {}",
        u.many(),
        each.join(", ")
    )
}

fn cold(c: &Cold) -> String {
    let u = c.unit;
    let advice = match c.short_turns {
        Some(turns) => format!(
            "; {} of {} are too short to reach a steady state — run longer ones (--set turns=10)",
            u.many(),
            count(turns, "turn")
        ),
        None => String::new(),
    };
    let doubt = match c.may_be_queueing {
        true => format!(
            " — with {} starting at once this may be their first turns queueing, not a cold process: a level of 1 or 2 {} tells them apart",
            u.level(c.level),
            u.many()
        ),
        false => String::new(),
    };
    format!(
        "a cold start: each {}'s first turn takes {} ms against {} ms for the turns after (median, at {}){doubt}{advice}",
        u.one(),
        num(c.first_turn_ms),
        num(c.later_turn_ms),
        u.level(c.level)
    )
}

/// How a cap was held: "a 1-core quota over 14 cores", "a cpuset of 1 core", "a 0.5-core
/// quota on a cpuset of 1 core".
pub fn cap_held(h: &CapHeld) -> String {
    let cores = |n: f64| count_f(n, "core");
    let cap = h.cores;
    match h.on {
        Some(m) if m > cap.ceil() => format!("a {}-core quota over {}", num(cap), cores(m)),
        Some(m) if m > cap => format!("a {}-core quota on a cpuset of {}", num(cap), cores(m)),
        Some(m) => format!("a cpuset of {}", cores(m)),
        None => format!("a {}-core quota", num(cap)),
    }
}

/// "throttled in 93 % of its periods by a 1-core quota over 14 cores".
pub fn throttled(share: f64, how: Option<&CapHeld>) -> String {
    let how = how.map_or_else(|| "its quota".to_string(), cap_held);
    format!("throttled in {} of its periods by {how}", pct(share))
}

fn run_queue(r: &RunQueue) -> String {
    let at = r.unit.level(r.level);
    if let Some((share, how)) = &r.throttled {
        return format!(
            "its cap shapes its latency: at {} it was {}, its threads runnable {} ms a second while the quota was spent (about {} ms a turn, of the {} ms a turn took beyond the mock's time) — the cap at work, neither a busy machine nor threads queueing for a core; a bigger cap or less CPU a turn would cut it",
            at,
            throttled(*share, how.as_ref()),
            num(r.waited_ms_per_s),
            num(r.wait_ms_per_turn),
            num(r.beyond_ms),
        );
    }
    format!(
        "its threads queue for the cores it has: at {} they waited {} ms a second for a CPU (about {} ms a turn, of the {} ms a turn took beyond the mock's time) while its CPU was at {} of its cap and nothing else used its cores — more threads runnable at once than cores, so that wait is part of its latency; fewer threads doing the work (a smaller pool) or more cores would cut it",
        at,
        num(r.waited_ms_per_s),
        num(r.wait_ms_per_turn),
        num(r.beyond_ms),
        pct(r.cpu_of_cap)
    )
}

fn rate_fell_back(r: &RateFellBack) -> String {
    let first = r.levels.first().copied().unwrap_or_default();
    let levels: Vec<String> = r.levels.iter().map(|l| l.to_string()).collect();
    let at = match levels.as_slice() {
        [rest @ .., last] if !rest.is_empty() => {
            format!("at {} and {last} sessions", rest.join(", "))
        }
        _ => format!("at {}", Unit::Session.level(first)),
    };
    let full = r.full_load_turns_per_s;
    let why = match r.cpu_allows {
        Some(a) => format!(
            "the span when every session was in flight read {} turns/s, more than its CPU per turn allows on its cores ({}): that span missed CPU the step spent (its start, its first turns)",
            num(full),
            num(a)
        ),
        None => format!(
            "the span when every session was in flight read {} turns/s, but held too little of the step's work to stand for it (its first turns, all begun at once, queued before it)",
            num(full)
        ),
    };
    format!(
        "{at} the throughput is the step's turns over its whole time ({} turns/s at {first}): {why} — sessions of more turns (--set turns=10) measure a steady rate",
        num(r.wall_turns_per_s),
    )
}

/// The load at which an agent worker marked itself full: "at load 0.93 (its
/// load_threshold 0.7)".
pub fn at_load(load: Option<f64>, threshold: Option<f64>) -> String {
    match (load, threshold) {
        (Some(l), Some(t)) => format!("at load {} (its load_threshold {})", num(l), num(t)),
        (Some(l), None) => format!("at load {} (its load_threshold)", num(l)),
        (None, Some(t)) => format!("at its load_threshold {}", num(t)),
        (None, None) => "at its load_threshold".into(),
    }
}

fn worker_full(w: &WorkerFull) -> String {
    format!(
        "the worker marked itself full {} from {}, and no call failed for it: a call placed while it is full gets no agent",
        at_load(w.load, w.threshold),
        Unit::Call.level(w.level)
    )
}

fn loops_blocked(levels: &[Blocked]) -> String {
    let each: Vec<String> = levels
        .iter()
        .map(|b| {
            format!(
                "{} at {} (the longest {} ms)",
                count(b.times, "time"),
                Unit::Call.level(b.level),
                num(b.longest_ms)
            )
        })
        .collect();
    format!(
        "the worker's event loops were blocked past its loop monitor's threshold {}: audio and turns wait meanwhile",
        each.join(", ")
    )
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
