//! A wall in words: what stopped the system and why, in full for the verdict's lines
//! ("CPU — the SUT's CPU reaches 97 % of the 1-core cap at 32 sessions; …") and in a
//! few words for its headline ("CPU (1-core cap full at 32)").

use crate::findings::throttled;
use crate::pct;
use result::budget::num;
use result::ladder::Wall;
use result::wall::{CpuFull, CpuReach, Rise, Throughput, WallAlso, WallFact};
use result::words::{count, int, Unit};

mod calls;
mod phrases;
mod pools;

pub use calls::worker_refusal;
pub use phrases::{cap_size, cpu_at_most, flat, who};

/// The wall in full: its reading's words and what it adds; a wall recorded before it was
/// a fact, as it was said then.
pub fn text(w: &Wall) -> String {
    match &w.fact {
        Some(f) => {
            let adds: String = w.also.iter().map(also).collect();
            fact(f) + &adds
        }
        None => w.recorded_text.clone(),
    }
}

/// The wall in a few words, for the headline, with what a reading adds there; its full
/// words where it has no short ones.
pub fn short(w: &Wall) -> String {
    match &w.fact {
        Some(f) => {
            let adds: Vec<String> = w.also.iter().filter_map(also_short).collect();
            match adds.is_empty() {
                true => fact_short(f),
                false => format!(
                    "{}; {})",
                    fact_short(f).trim_end_matches(')'),
                    adds.join("; ")
                ),
            }
        }
        None if w.recorded_short.is_empty() => w.recorded_text.clone(),
        None => w.recorded_short.clone(),
    }
}

/// How far the CPU reached its cap: "the SUT's CPU reaches 97 % of the 1-core cap at 32
/// sessions", or a quota full in bursts.
pub fn reach(r: &CpuReach, u: Unit) -> String {
    let throttled = r.throttled.map(|(t, held)| throttled(t, Some(&held)));
    match throttled {
        Some(t) if r.burst => format!(
            "the SUT's {} cap is full at {}: {t} (its CPU averaged {} of the cap over the step: a quota is spent in bursts, then waited out)",
            cap_size(r.cores),
            u.count(r.at),
            pct(r.read)
        ),
        t => format!(
            "the SUT's CPU reaches {} of the {} cap at {}{}",
            pct(r.read),
            cap_size(r.cores),
            u.count(r.at),
            t.map_or(String::new(), |t| format!(", {t}"))
        ),
    }
}

fn throughput(t: &Throughput, u: Unit) -> String {
    match t {
        Throughput::Flat(f) => format!("; throughput {}", flat(f, u)),
        Throughput::Cheaper { rise, cpu_ms, cores } => format!(
            "; throughput still rose at the top ({} → {} turns/s from {} to {}) only because each turn got cheaper ({} → {} CPU ms: a start-up's cost spread over more turns, caches warm) while the cap was full — a wider ladder finds no more: at {} CPU ms a turn the {}-core cap allows about {} turns/s in a steady state; longer {} (--set turns=10) will show that ceiling",
            num(rise.from.1),
            num(rise.to.1),
            num(rise.from.0),
            u.count(rise.to.0),
            num(cpu_ms.0),
            num(cpu_ms.1),
            num(cpu_ms.1),
            num(*cores),
            num(cores * 1000.0 / cpu_ms.1),
            u.many()
        ),
        Throughput::Rising(r) => format!(
            "; throughput still rising at the top ({}): widen the ladder to see where it stops",
            span(r, u)
        ),
        Throughput::Span(r) => format!("; throughput {}", span(r, u)),
        Throughput::Unsaid => String::new(),
    }
}

/// "3 → 5 turns/s from 2 to 4 sessions".
fn span(r: &Rise, u: Unit) -> String {
    format!(
        "{} → {} turns/s from {} to {}",
        num(r.from.1),
        num(r.to.1),
        num(r.from.0),
        u.count(r.to.0)
    )
}

/// "4 sessions (3 → 5 turns/s from 2)": the top level, with how throughput rose to it.
fn grew(r: &Rise, u: Unit) -> String {
    format!(
        "{} ({} → {} turns/s from {})",
        u.count(r.to.0),
        num(r.from.1),
        num(r.to.1),
        num(r.from.0)
    )
}

/// Which module words a reading: the system's own resources here, calls' walls and the
/// provider's (`calls`), pools and threads (`pools`).
enum Family {
    Own,
    Calls,
    Pools,
}

fn family(f: &WallFact) -> Family {
    match f {
        WallFact::CallsCpu { .. }
        | WallFact::CallsCpuRising { .. }
        | WallFact::CallsCpuCollapse { .. }
        | WallFact::CallsMemory { .. }
        | WallFact::NothingFull { .. }
        | WallFact::CallsHeld { .. }
        | WallFact::WorkerRefused { .. }
        | WallFact::Provider(_) => Family::Calls,
        WallFact::Pool(_)
        | WallFact::WorkerPool { .. }
        | WallFact::ThreadsStop(_)
        | WallFact::OneWorker { .. }
        | WallFact::OneThread { .. }
        | WallFact::SomeThreads { .. }
        | WallFact::OneThreadBefore { .. } => Family::Pools,
        _ => Family::Own,
    }
}

fn fact(f: &WallFact) -> String {
    match family(f) {
        Family::Own => own(f),
        Family::Calls => calls::text(f),
        Family::Pools => pools::text(f),
    }
}

fn fact_short(f: &WallFact) -> String {
    match family(f) {
        Family::Own => own_short(f),
        Family::Calls => calls::short(f),
        Family::Pools => pools::short(f),
    }
}

fn own(f: &WallFact) -> String {
    match f {
        WallFact::Harness { unit, at, others: Some(h) } => format!("a busy machine — other processes took {} of Plimsoll's own cores at {} and it fell behind (harness-bound from {}): these levels describe the machine, not the SUT; run again on a quiet machine", pct(*h), unit.count(*at), num(*at)),
        WallFact::Harness { unit, at, others: None } => format!("Plimsoll itself (harness-bound from {}): these levels describe the harness, not the SUT", unit.count(*at)),
        WallFact::Cpu { unit, knee, reach: r, shared, throughput: t, .. } => format!(
            "CPU — {}{}{}{}",
            knee.map_or(String::new(), |(from, to)| format!(
                "throughput bends between {} and {} and ",
                num(from),
                unit.count(to)
            )),
            reach(r, *unit),
            shared.map_or(String::new(), |o| format!(", and other processes took {} of those cores: full together (the line is this busy machine's, not the SUT's)", pct(o))),
            throughput(t, *unit)
        ),
        WallFact::Memory { unit, at, share, throughput: t } => format!(
            "memory — {} of its cap from {}{}",
            pct(*share),
            unit.count(*at),
            throughput(t, *unit)
        ),
        WallFact::FlatInside { unit, flat: f, cpu } => format!(
            "no resource saturated — the limit is inside the SUT (queueing): throughput {} while {}",
            flat(f, *unit),
            cpu_at_most(*cpu)
        ),
        WallFact::Bends { unit, from, cpu, inside } => format!(
            "throughput bends from {} (a {} added there gives less than half of what one gave at first) with no resource at its wall ({}){}",
            unit.count(*from),
            unit.one(),
            cpu_at_most(*cpu),
            if *inside { ": a limit inside the SUT (queueing)" } else { "" }
        ),
        WallFact::BeforeCollapse { unit, collapse, grew: g } => format!(
            "none before the collapse at {}{}",
            unit.level(*collapse),
            g.map_or(String::new(), |r| format!(": throughput still grew up to {}", grew(&r, *unit)))
        ),
        WallFact::NotReached { unit, rise: Some(r) } => format!(
            "none within the ladder: throughput still grows at {} — widen the ladder",
            grew(r, *unit)
        ),
        WallFact::NotReached { rise: None, .. } => "not enough levels to see one (2 needed)".into(),
        WallFact::KilledForMemory { at } => format!("memory — the SUT was killed for memory at {}", Unit::Call.level(*at)),
        WallFact::OutOfThreads { at } => format!("threads — the SUT could start no more threads at {}", Unit::Call.level(*at)),
        WallFact::FailedFirst { at, outcome, cpu } => format!(
            "none full before the collapse at {} ({}){}: the calls failed before a resource filled — the failures say why",
            Unit::Call.level(*at),
            outcome.as_str(),
            cpu.map_or(String::new(), |c| format!(", CPU {} of its cap there", pct(c)))
        ),
        _ => String::new(),
    }
}

fn own_short(f: &WallFact) -> String {
    match f {
        WallFact::Harness {
            at,
            others: Some(_),
            ..
        } => format!("busy machine (Plimsoll's cores, from {})", num(*at)),
        WallFact::Harness {
            at, others: None, ..
        } => format!("Plimsoll itself (harness-bound from {})", num(*at)),
        WallFact::Cpu { reach: r, full, .. } => format!(
            "CPU ({} {} at {})",
            match r.cores {
                Some(c) => format!("{}-core cap", num(c)),
                None => "the machine".into(),
            },
            match full {
                CpuFull::Full => "full",
                CpuFull::Shared => "full with other processes",
                CpuFull::Throttled => "throttled",
            },
            num(r.at)
        ),
        WallFact::Memory { at, share, .. } => {
            format!("memory ({} of its cap at {})", pct(*share), num(*at))
        }
        WallFact::FlatInside { flat: f, .. } => format!(
            "inside the SUT (flat at {} turns/s from {}, no resource full)",
            num(f.turns_per_s),
            num(f.from)
        ),
        WallFact::Bends {
            from, inside: true, ..
        } => format!(
            "inside the SUT (throughput bends from {}, no resource full)",
            num(*from)
        ),
        WallFact::Bends {
            from,
            inside: false,
            ..
        } => format!("throughput bends from {} with no resource full", num(*from)),
        WallFact::BeforeCollapse { collapse, .. } => {
            format!("none before the collapse at {collapse}")
        }
        WallFact::NotReached { rise: Some(r), .. } => {
            format!("none within the ladder (still scaling at {})", num(r.to.0))
        }
        WallFact::NotReached { rise: None, .. } => "none seen (too few levels)".into(),
        WallFact::KilledForMemory { at } => format!("memory (killed at {at})"),
        WallFact::OutOfThreads { at } => format!("threads (none left at {at})"),
        WallFact::FailedFirst { at, .. } => format!("none before the collapse at {at}"),
        _ => String::new(),
    }
}

/// What a reading adds, said after it ("; …" or " — …").
pub fn also(a: &WallAlso) -> String {
    match a {
        WallAlso::DearerTurns { unit, threads_per: Some(k) } => format!(
            "; its CPU per turn rises as its threads grow ({} per {one}): more threads to schedule and switch between, so the wall comes sooner than one {one}'s cost predicts",
            num(*k),
            one = unit.one()
        ),
        WallAlso::DearerTurns { unit, threads_per: None } => format!(
            "; its CPU per turn rises with {}, so the wall comes sooner than one {}'s cost predicts",
            unit.many(),
            unit.one()
        ),
        WallAlso::ProbeWaited { ms } => format!(
            "; the responsiveness probe waited {} ms at p99",
            int(ms.round() as u64)
        ),
        WallAlso::HeldUntilCollapse { unit } => format!(
            " — it held the {} until the collapse there",
            match unit {
                Unit::Call => "calls",
                Unit::Session => "step",
            }
        ),
        WallAlso::CapFullWithIt { cores } => format!(
            "; the {} cap is full with it, the same wall: more processes need cores to run on",
            cap_size(*cores)
        ),
        WallAlso::ProbeLate { ms } => format!(
            "; the responsiveness probe waited {} at p99",
            waited(*ms)
        ),
        WallAlso::FlatConnections { unit, peer, count: n, from, to } => format!(
            "; connections to {} stay at {n} from {from} to {}: at most {} in flight (a client pool of {n}, or a limit of {n} inside the SUT)",
            who(peer),
            unit.level(*to),
            count(*n as u64, "call"),
        ),
    }
}

/// What a reading adds said in the headline too: "the 1-core cap full with it".
fn also_short(a: &WallAlso) -> Option<String> {
    match a {
        WallAlso::CapFullWithIt { cores } => {
            Some(format!("the {} cap full with it", cap_size(*cores)))
        }
        WallAlso::ProbeLate { ms } => Some(format!("the probe waited {} at p99", waited(*ms))),
        _ => None,
    }
}

/// A wait: "1.2 s" from a second on, "340 ms" below.
fn waited(ms: f64) -> String {
    match ms >= 1000.0 {
        true => format!("{} s", num((ms / 100.0).round() / 10.0)),
        false => format!("{} ms", int(ms.round() as u64)),
    }
}

#[cfg(test)]
mod tests;
