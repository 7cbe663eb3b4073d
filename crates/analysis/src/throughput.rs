//! The throughput curve, read the way a careful engineer reads the chart: where each
//! added session stops adding throughput (the knee), where throughput stops growing at
//! all (the plateau), and what was at its wall there (CPU, memory, the harness, or
//! nothing: a limit inside the system, which queues).

use crate::budget::num;
pub use result::ladder::{Knee as ThroughputKnee, Plateau, Wall};
use result::words::Unit;
use result::{Confidence, WallKind};

/// A knee is where one more session adds less than this share of what one session
/// added at the first level.
pub const KNEE_FRACTION: f64 = 0.5;
/// A plateau: throughput grows by less than this from one level to the next …
pub const FLAT: f64 = 0.10;
/// … and by less than this over the rest of the ladder.
pub const FLAT_TOTAL: f64 = 0.25;
/// A resource at this share of its cap is at its wall.
pub const CPU_WALL: f64 = 0.85;
pub const MEM_WALL: f64 = 0.90;
/// A SUT whose CPU stays under this share of its cap on a plateau is not CPU-bound.
const CPU_IDLE: f64 = 0.5;

pub use crate::sample::Sample;

/// Per added session, throughput gained over what one session gave at the first level.
pub fn marginal(samples: &[Sample]) -> Vec<f64> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    let s0 = first.turns_per_s / first.concurrency.max(1e-9);
    samples
        .windows(2)
        .map(|w| {
            let dn = (w[1].concurrency - w[0].concurrency).max(1e-9);
            (w[1].turns_per_s - w[0].turns_per_s) / dn / s0.max(1e-12)
        })
        .collect()
}

/// The first level from which throughput grows by less than `FLAT` a step (against the
/// best level since) and less than `FLAT_TOTAL` to the end of the ladder, when at least
/// one more level follows it.
pub fn plateau(samples: &[Sample]) -> Option<Plateau> {
    let n = samples.len();
    let i = (0..n.saturating_sub(1)).find(|&i| {
        // Each level against the best seen since i: a dip is not a fresh start.
        let mut best = samples[i].turns_per_s;
        let steps_flat = samples[i + 1..].iter().all(|x| {
            let ok = x.turns_per_s <= best * (1.0 + FLAT);
            best = best.max(x.turns_per_s);
            ok
        });
        let later = samples[i + 1..]
            .iter()
            .map(|s| s.turns_per_s)
            .fold(0.0, f64::max);
        steps_flat && later <= samples[i].turns_per_s * (1.0 + FLAT_TOTAL)
    })?;
    let on = &samples[i..];
    let top = on
        .iter()
        .max_by(|a, b| a.turns_per_s.total_cmp(&b.turns_per_s))
        .map_or((0.0, 0.0), |s| (s.concurrency, s.turns_per_s));
    let peak = top.1;
    let last = on.last().map_or(0.0, |s| s.turns_per_s);
    let mean = on.iter().map(|s| s.turns_per_s).sum::<f64>() / on.len() as f64;
    Some(Plateau {
        from: samples[i].concurrency,
        turns_per_s: mean,
        levels: on.len(),
        confidence: if on.len() >= 3 {
            Confidence::Clear
        } else {
            Confidence::Weak
        },
        retrograde: last < peak * (1.0 - 2.0 * FLAT),
        peak: top,
    })
}

/// Where throughput stops scaling. With a plateau: where the first level's throughput per
/// session, carried on in a straight line, meets the plateau (the asymptotic bounds of
/// operational analysis: N* = plateau / per-session throughput), bracketed by the measured
/// levels either side and never past the plateau's first level — robust to the noise of
/// any one step. Without one: the first step where one
/// more session adds less than `KNEE_FRACTION` of what one session gave at the first
/// level. Latency (inflation rising by 30 % or more across it) is the second witness.
pub fn knee(
    samples: &[Sample],
    inflation: &[Option<f64>],
    plateau: Option<&Plateau>,
) -> Option<ThroughputKnee> {
    // Levels close together (a bisection's) differ by less than their noise: bracket and
    // read slopes on the doubling grid.
    let kept = spread(samples);
    let first = samples.first()?;
    let s0 = first.turns_per_s / first.concurrency.max(1e-9);
    let (ia, ib) = match plateau {
        Some(p) if s0 > 0.0 && samples.len() >= 2 => {
            // The measured levels either side of N*; never past the plateau's start.
            let n_star = p.turns_per_s / s0;
            let start = samples.iter().position(|s| s.concurrency == p.from)?;
            let ib = samples
                .iter()
                .position(|s| s.concurrency > n_star)
                .unwrap_or(samples.len() - 1)
                .min(start)
                .max(1);
            (ib - 1, ib)
        }
        _ => {
            let thin: Vec<Sample> = kept.iter().map(|&i| samples[i].clone()).collect();
            let k = marginal(&thin).iter().position(|&e| e < KNEE_FRACTION)?;
            (kept[k], kept[k + 1])
        }
    };
    let (a, b) = (&samples[ia], &samples[ib]);
    let latency_turns = match (
        inflation.get(ia).copied().flatten(),
        inflation.get(ib).copied().flatten(),
    ) {
        (Some(x), Some(y)) => y >= x * 1.3,
        _ => false,
    };
    Some(ThroughputKnee {
        from: a.concurrency,
        to: b.concurrency,
        confidence: if latency_turns {
            Confidence::Clear
        } else {
            Confidence::Weak
        },
        method: Some(if plateau.is_some() {
            result::facts::KneeMethod::FirstRateMeetsPlateau
        } else {
            result::facts::KneeMethod::HalfGain
        }),
    })
}

/// The levels to read slopes between: the doubling grid from the first level (what an
/// auto ladder and most fixed ladders run) when it has three levels or more, else the
/// levels at least 1.5× apart, greedily from the first. Bisection levels in between are
/// closer together than their noise.
fn spread(samples: &[Sample]) -> Vec<usize> {
    let Some(first) = samples.first().map(|s| s.concurrency) else {
        return Vec::new();
    };
    let grid: Vec<usize> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let k = (s.concurrency / first).log2();
            (k - k.round()).abs() < 1e-9
        })
        .map(|(i, _)| i)
        .collect();
    if grid.len() >= 3 {
        return grid;
    }
    let mut kept: Vec<usize> = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        if kept
            .last()
            .is_none_or(|&j| s.concurrency >= samples[j].concurrency * 1.5)
        {
            kept.push(i);
        }
    }
    kept
}

pub(crate) use crate::budget::pct;

/// "1-core cap", "2-core cap", "the machine".
fn cores_short(c: Option<f64>) -> String {
    match c {
        Some(c) => format!("{}-core cap", num(c)),
        None => "the machine".into(),
    }
}

/// Plimsoll fell behind from `s` on: by its own cost, or because other processes took
/// its cores (then the machine is the wall, not the harness).
pub(crate) fn harness_wall(s: &Sample) -> Wall {
    let n = num(s.concurrency);
    let at = s.unit.count(s.concurrency);
    match s.harness_others.filter(|h| *h >= crate::trust::CONTAMINATED) {
        Some(h) => Wall {
            kind: WallKind::Harness,
            from: Some(s.concurrency),
            text: format!("a busy machine — other processes took {} of Plimsoll's own cores at {at} and it fell behind (harness-bound from {n}): these levels describe the machine, not the SUT; run again on a quiet machine", pct(h)),
            short: format!("busy machine (Plimsoll's cores, from {n})"),
        },
        None => Wall {
            kind: WallKind::Harness,
            from: Some(s.concurrency),
            text: format!("Plimsoll itself (harness-bound from {at}): these levels describe the harness, not the SUT"),
            short: format!("Plimsoll itself (harness-bound from {n})"),
        },
    }
}

/// What stopped throughput: looked for from the knee (or plateau) on.
pub fn wall(samples: &[Sample], knee: Option<&ThroughputKnee>, plateau: Option<&Plateau>) -> Wall {
    let start = plateau
        .map(|p| p.from)
        .into_iter()
        .chain(knee.map(|k| k.from))
        .fold(f64::INFINITY, f64::min);
    if !start.is_finite() {
        return not_reached(samples);
    }
    let from_start: Vec<&Sample> = samples.iter().filter(|s| s.concurrency >= start).collect();
    let first_at = |pred: &dyn Fn(&Sample) -> bool| from_start.iter().find(|s| pred(s)).copied();
    if let Some(s) = first_at(&|s| s.harness_bound) {
        return harness_wall(s);
    }
    let cpu_hot = |s: &Sample| {
        s.cpu_of_cap.is_some_and(|c| c >= CPU_WALL)
            || s.throttled.is_some_and(|t| t >= crate::quota::FULL)
            || shared_full(s)
    };
    // The wall is hit where the resource first runs hot anywhere on the ladder, as long as
    // it is still hot where throughput stops growing.
    if let Some(s) = first_at(&cpu_hot) {
        let text = format!(
            "CPU — {}{}{}{}",
            knee.map_or(String::new(), |k| format!(
                "throughput bends between {} and {} and ",
                num(k.from),
                s.unit.count(k.to)
            )),
            crate::quota::reach_words(s, CPU_WALL),
            shared_words(s),
            throughput_words(plateau, samples, s.unit)
        );
        return Wall {
            kind: WallKind::Cpu,
            from: Some(knee.map_or(s.concurrency, |k| k.to)),
            text,
            short: format!(
                "CPU ({} {} at {})",
                cores_short(s.cpu_cores),
                if s.cpu_of_cap.is_some_and(|c| c >= CPU_WALL) {
                    "full".to_string()
                } else if shared_full(s) {
                    "full with other processes".to_string()
                } else {
                    "throttled".to_string()
                },
                num(s.concurrency)
            ),
        };
    }
    if let Some(s) = first_at(&|s| s.mem_of_cap.is_some_and(|m| m >= MEM_WALL)) {
        return Wall {
            kind: WallKind::Memory,
            from: Some(s.concurrency),
            text: format!(
                "memory — {} of its cap from {}{}",
                pct(s.mem_of_cap.unwrap_or(0.0)),
                s.unit.count(s.concurrency),
                throughput_words(plateau, samples, s.unit)
            ),
            short: format!(
                "memory ({} of its cap at {})",
                pct(s.mem_of_cap.unwrap_or(0.0)),
                num(s.concurrency)
            ),
        };
    }
    internal(&from_start, plateau, start)
}

/// Run-queue wait (seconds a second) from which the SUT was waiting for its cores.
const WAITED: f64 = 0.1;

/// The SUT's cores full only with what other processes took of them, and the SUT waiting
/// for them: under the wall itself, but its turns queued for a busy machine's cores (a
/// SUT that waited on something else — a pool — does not queue for a core).
fn shared_full(s: &Sample) -> bool {
    match (s.cpu_of_cap, s.others, s.run_wait) {
        (Some(c), Some(o), Some(w)) => {
            c < CPU_WALL && o >= crate::trust::CONTAMINATED && c + o >= CPU_WALL && w >= WAITED
        }
        _ => false,
    }
}

fn shared_words(s: &Sample) -> String {
    match (shared_full(s), s.others) {
        (true, Some(o)) => format!(
            ", and other processes took {} of those cores: full together (the line is this busy machine's, not the SUT's)",
            pct(o)
        ),
        _ => String::new(),
    }
}

fn internal(from_start: &[&Sample], plateau: Option<&Plateau>, start: f64) -> Wall {
    let u = from_start.first().map_or(Unit::Session, |s| s.unit);
    let cpu_max = peak(from_start.iter().filter_map(|s| s.cpu_of_cap));
    let cpu_words = match cpu_max {
        Some(c) => format!("CPU at most {} of its cap", pct(c)),
        None => "CPU not measured against a cap".into(),
    };
    let quiet = cpu_max.is_none_or(|c| c < CPU_IDLE);
    match plateau {
        Some(p) if quiet => Wall {
            kind: WallKind::Internal,
            from: Some(p.from),
            text: format!(
                "no resource saturated — the limit is inside the SUT (queueing): throughput {} while {cpu_words}",
                flat_words(p, u)
            ),
            short: format!(
                "inside the SUT (flat at {} turns/s from {}, no resource full)",
                num(p.turns_per_s),
                num(p.from)
            ),
        },
        _ => Wall {
            kind: if quiet {
                WallKind::Internal
            } else {
                WallKind::None
            },
            from: Some(start),
            text: format!(
                "throughput bends from {} (a {} added there gives less than half of what one gave at first) with no resource at its wall ({cpu_words}){}",
                u.count(start),
                u.one(),
                if quiet { ": a limit inside the SUT (queueing)" } else { "" }
            ),
            short: match quiet {
                true => format!(
                    "inside the SUT (throughput bends from {}, no resource full)",
                    num(start)
                ),
                false => format!(
                    "throughput bends from {} with no resource full",
                    num(start)
                ),
            },
        },
    }
}

/// The highest of some figures, None when there are none (a CPU never read against a cap).
pub(crate) fn peak(figures: impl Iterator<Item = f64>) -> Option<f64> {
    figures.fold(None, |a: Option<f64>, c| Some(a.map_or(c, |a| a.max(c))))
}

/// Where a wall that names no resource (a limit inside the SUT, or none, from a level)
/// begins: the level a closer reading (a pool, a pool of workers, one counted by its
/// threads) looks from. None when the wall already names what was full.
pub(crate) fn unexplained(own: &Wall) -> Option<f64> {
    match own.kind {
        WallKind::Internal | WallKind::None => own.from,
        _ => None,
    }
}

/// "flat at 32 turns/s from 40 sessions", with the peak when it stands out.
pub fn flat_words(p: &Plateau, u: Unit) -> String {
    let peak = if p.peak.1 > p.turns_per_s * (1.0 + FLAT) {
        format!(" (peak {} at {})", num(p.peak.1), num(p.peak.0))
    } else {
        String::new()
    };
    format!(
        "flat at {} turns/s{peak} from {}",
        num(p.turns_per_s),
        u.count(p.from)
    )
}

fn throughput_words(plateau: Option<&Plateau>, samples: &[Sample], u: Unit) -> String {
    match plateau {
        Some(p) => format!("; throughput {}", flat_words(p, u)),
        None => match samples {
            [.., a, b] if b.turns_per_s > a.turns_per_s * (1.0 + FLAT) && crate::sample::cheaper(samples, CPU_WALL).is_some() => {
                crate::sample::cheaper(samples, CPU_WALL).unwrap_or_default()
            }
            [.., a, b] if b.turns_per_s > a.turns_per_s * (1.0 + FLAT) => format!(
                "; throughput still rising at the top ({} → {} turns/s from {} to {}): widen the ladder to see where it stops",
                num(a.turns_per_s),
                num(b.turns_per_s),
                num(a.concurrency),
                u.count(b.concurrency)
            ),
            [a, .., b] => format!(
                "; throughput {} → {} turns/s from {} to {}",
                num(a.turns_per_s),
                num(b.turns_per_s),
                num(a.concurrency),
                u.count(b.concurrency)
            ),
            _ => String::new(),
        },
    }
}

/// Throughput still scaled up to the level before a collapse: no wall, and no point in a
/// wider ladder — the system fell over first.
pub fn before_collapse(samples: &[Sample], collapse: usize) -> Wall {
    let grew = match samples {
        [.., a, b] => format!(
            ": throughput still grew up to {} ({} → {} turns/s from {})",
            b.unit.count(b.concurrency),
            num(a.turns_per_s),
            num(b.turns_per_s),
            num(a.concurrency)
        ),
        _ => String::new(),
    };
    Wall {
        kind: WallKind::None,
        from: None,
        text: format!(
            "none before the collapse at {}{grew}",
            samples
                .first()
                .map_or(Unit::Session, |s| s.unit)
                .level(collapse)
        ),
        short: format!("none before the collapse at {collapse}"),
    }
}

/// Throughput still scales at the top of the ladder: the line is beyond it.
fn not_reached(samples: &[Sample]) -> Wall {
    let text = match samples {
        [.., a, b] => format!(
            "none within the ladder: throughput still grows at {} ({} → {} turns/s from {}) — widen the ladder",
            b.unit.count(b.concurrency),
            num(a.turns_per_s),
            num(b.turns_per_s),
            num(a.concurrency)
        ),
        _ => "not enough levels to see one (2 needed)".into(),
    };
    let short = match samples {
        [.., b] if samples.len() >= 2 => {
            format!(
                "none within the ladder (still scaling at {})",
                num(b.concurrency)
            )
        }
        _ => "none seen (too few levels)".into(),
    };
    Wall {
        kind: WallKind::None,
        from: None,
        text,
        short,
    }
}

#[cfg(test)]
#[path = "throughput_tests.rs"]
mod tests;
