//! The throughput curve, read the way a careful engineer reads the chart: where each
//! added session stops adding throughput (the knee), where throughput stops growing at
//! all (the plateau), and what was at its wall there (CPU, memory, the harness, or
//! nothing: a limit inside the system, which queues).

pub use result::ladder::{Knee as ThroughputKnee, Plateau, Wall};
use result::wall::{CpuFull, Flat, Rise, Throughput, WallFact};
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
        peak_said: peak > mean * (1.0 + FLAT),
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

/// Plimsoll fell behind from `s` on: by its own cost, or because other processes took
/// its cores (then the machine is the wall, not the harness).
pub(crate) fn harness_wall(s: &Sample) -> Wall {
    let others = s
        .harness_others
        .filter(|h| *h >= crate::trust::CONTAMINATED);
    let fact = WallFact::Harness {
        unit: s.unit,
        at: s.concurrency,
        others,
    };
    crate::wall::of(WallKind::Harness, Some(s.concurrency), fact)
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
        let full = if s.cpu_of_cap.is_some_and(|c| c >= CPU_WALL) {
            CpuFull::Full
        } else if shared_full(s) {
            CpuFull::Shared
        } else {
            CpuFull::Throttled
        };
        let fact = WallFact::Cpu {
            unit: s.unit,
            knee: knee.map(|k| (k.from, k.to)),
            reach: crate::quota::reach(s, CPU_WALL),
            full,
            shared: s.others.filter(|_| shared_full(s)),
            throughput: course(plateau, samples),
        };
        return crate::wall::of(
            WallKind::Cpu,
            Some(knee.map_or(s.concurrency, |k| k.to)),
            fact,
        );
    }
    if let Some(s) = first_at(&|s| s.mem_of_cap.is_some_and(|m| m >= MEM_WALL)) {
        let fact = WallFact::Memory {
            unit: s.unit,
            at: s.concurrency,
            share: s.mem_of_cap.unwrap_or(0.0),
            throughput: course(plateau, samples),
        };
        return crate::wall::of(WallKind::Memory, Some(s.concurrency), fact);
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

fn internal(from_start: &[&Sample], plateau: Option<&Plateau>, start: f64) -> Wall {
    let unit = from_start.first().map_or(Unit::Session, |s| s.unit);
    let cpu = peak(from_start.iter().filter_map(|s| s.cpu_of_cap));
    let quiet = cpu.is_none_or(|c| c < CPU_IDLE);
    match plateau {
        Some(p) if quiet => {
            let fact = WallFact::FlatInside {
                unit,
                flat: Flat::of(p),
                cpu,
            };
            crate::wall::of(WallKind::Internal, Some(p.from), fact)
        }
        _ => {
            let kind = match quiet {
                true => WallKind::Internal,
                false => WallKind::None,
            };
            let fact = WallFact::Bends {
                unit,
                from: start,
                cpu,
                inside: quiet,
            };
            crate::wall::of(kind, Some(start), fact)
        }
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

/// Throughput between the last two levels, or the first and the last.
fn rise(a: &Sample, b: &Sample) -> Rise {
    Rise {
        from: (a.concurrency, a.turns_per_s),
        to: (b.concurrency, b.turns_per_s),
    }
}

/// What throughput did, cited beside a resource at its wall.
fn course(plateau: Option<&Plateau>, samples: &[Sample]) -> Throughput {
    if let Some(p) = plateau {
        return Throughput::Flat(Flat::of(p));
    }
    match samples {
        [.., a, b] if b.turns_per_s > a.turns_per_s * (1.0 + FLAT) => {
            match crate::sample::cheaper(samples, CPU_WALL) {
                Some(c) => c,
                None => Throughput::Rising(rise(a, b)),
            }
        }
        [a, .., b] => Throughput::Span(rise(a, b)),
        _ => Throughput::Unsaid,
    }
}

/// Throughput still scaled up to the level before a collapse: no wall, and no point in a
/// wider ladder — the system fell over first.
pub fn before_collapse(samples: &[Sample], collapse: usize) -> Wall {
    let fact = WallFact::BeforeCollapse {
        unit: samples.first().map_or(Unit::Session, |s| s.unit),
        collapse,
        grew: match samples {
            [.., a, b] => Some(rise(a, b)),
            _ => None,
        },
    };
    crate::wall::of(WallKind::None, None, fact)
}

/// Throughput still scales at the top of the ladder: the line is beyond it.
fn not_reached(samples: &[Sample]) -> Wall {
    let fact = WallFact::NotReached {
        unit: samples.first().map_or(Unit::Session, |s| s.unit),
        rise: match samples {
            [.., a, b] => Some(rise(a, b)),
            _ => None,
        },
    };
    crate::wall::of(WallKind::None, None, fact)
}

#[cfg(test)]
#[path = "throughput_tests.rs"]
mod tests;
