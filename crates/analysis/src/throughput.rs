//! The throughput curve, read the way a careful engineer reads the chart: where each
//! added session stops adding throughput (the knee), where throughput stops growing at
//! all (the plateau), and what was at its wall there (CPU, memory, the harness, or
//! nothing: a limit inside the system, which queues).

use crate::budget::num;
use serde::Serialize;

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

/// One level of the curve: concurrency, completed turns per second, and the resources.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    pub concurrency: f64,
    pub turns_per_s: f64,
    /// The SUT's CPU over the cores it may use (its cap, its cpuset, or the machine).
    pub cpu_of_cap: Option<f64>,
    /// The cores the SUT may use.
    pub cpu_cores: Option<f64>,
    /// The share of the cgroup's CPU periods in which it was throttled.
    pub throttled: Option<f64>,
    /// The SUT's cgroup memory peak over its memory cap.
    pub mem_of_cap: Option<f64>,
    pub harness_bound: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plateau {
    /// The first level of the plateau.
    pub from: f64,
    pub turns_per_s: f64,
    /// Levels on the plateau (2: flat over one step; 3 or more: clear).
    pub levels: usize,
    pub confidence: &'static str,
    /// Throughput falls after its peak (more sessions, less work done).
    pub retrograde: bool,
    /// The highest level of the plateau: (sessions, turns/s).
    pub peak: (f64, f64),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThroughputKnee {
    pub from: f64,
    pub to: f64,
    /// clear (latency agrees) | weak (latency does not turn there) | none
    pub confidence: &'static str,
    pub method: &'static str,
}

/// What hit its wall first, and from which level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Wall {
    /// cpu | memory | harness | internal | none
    pub kind: &'static str,
    pub from: Option<f64>,
    pub text: String,
}

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
        confidence: if on.len() >= 3 { "clear" } else { "weak" },
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
        confidence: if latency_turns { "clear" } else { "weak" },
        method: if plateau.is_some() {
            "where the first level's throughput per session, carried on, meets the plateau"
        } else {
            "the first step where a session adds < 50 % of what one gave at the first level"
        },
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

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

fn cores(c: Option<f64>) -> String {
    match c {
        Some(c) if (c - 1.0).abs() < 1e-9 => "1-core".into(),
        Some(c) => format!("{}-core", num(c)),
        None => "machine's".into(),
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
        return Wall {
            kind: "harness",
            from: Some(s.concurrency),
            text: format!("Plimsoll itself (harness-bound from {} sessions): these levels describe the harness, not the SUT", num(s.concurrency)),
        };
    }
    let cpu_hot = |s: &Sample| {
        s.cpu_of_cap.is_some_and(|c| c >= CPU_WALL) || s.throttled.is_some_and(|t| t >= 0.5)
    };
    // The wall is hit where the resource first runs hot anywhere on the ladder, as long as
    // it is still hot where throughput stops growing.
    if let Some(s) = first_at(&cpu_hot) {
        return Wall {
            kind: "cpu",
            from: Some(knee.map_or(s.concurrency, |k| k.to)),
            text: format!(
                "CPU — {}the SUT's CPU reaches {} of the {} cap at {} sessions{}",
                knee.map_or(String::new(), |k| format!(
                    "throughput stops scaling between {} and {} sessions and ",
                    num(k.from),
                    num(k.to)
                )),
                pct(s.cpu_of_cap.unwrap_or(0.0)),
                cores(s.cpu_cores),
                num(s.concurrency),
                throughput_words(plateau, samples)
            ),
        };
    }
    if let Some(s) = first_at(&|s| s.mem_of_cap.is_some_and(|m| m >= MEM_WALL)) {
        return Wall {
            kind: "memory",
            from: Some(s.concurrency),
            text: format!(
                "memory — {} of its cap from {} sessions{}",
                pct(s.mem_of_cap.unwrap_or(0.0)),
                num(s.concurrency),
                throughput_words(plateau, samples)
            ),
        };
    }
    internal(&from_start, plateau, start)
}

fn internal(from_start: &[&Sample], plateau: Option<&Plateau>, start: f64) -> Wall {
    let cpu_max = from_start
        .iter()
        .filter_map(|s| s.cpu_of_cap)
        .fold(None, |a: Option<f64>, c| Some(a.map_or(c, |a| a.max(c))));
    let cpu_words = match cpu_max {
        Some(c) => format!("CPU at most {} of its cap", pct(c)),
        None => "CPU not measured against a cap".into(),
    };
    let quiet = cpu_max.is_none_or(|c| c < CPU_IDLE);
    match plateau {
        Some(p) if quiet => Wall {
            kind: "internal",
            from: Some(p.from),
            text: format!(
                "no resource saturated — the limit is inside the SUT (queueing): throughput {} while {cpu_words}",
                flat_words(p)
            ),
        },
        _ => Wall {
            kind: if quiet { "internal" } else { "none" },
            from: Some(start),
            text: format!(
                "throughput stops scaling from {} sessions with no resource at its wall ({cpu_words}){}",
                num(start),
                if quiet { ": a limit inside the SUT (queueing)" } else { "" }
            ),
        },
    }
}

/// "flat at 32 turns/s from 40 sessions", with the peak when it stands out.
pub fn flat_words(p: &Plateau) -> String {
    let peak = if p.peak.1 > p.turns_per_s * (1.0 + FLAT) {
        format!(" (peak {} at {})", num(p.peak.1), num(p.peak.0))
    } else {
        String::new()
    };
    format!(
        "flat at {} turns/s{peak} from {} sessions",
        num(p.turns_per_s),
        num(p.from)
    )
}

fn throughput_words(plateau: Option<&Plateau>, samples: &[Sample]) -> String {
    match plateau {
        Some(p) => format!("; throughput {}", flat_words(p)),
        None => match samples {
            [.., a, b] if b.turns_per_s > a.turns_per_s * (1.0 + FLAT) => format!(
                "; throughput still rising at the top ({} → {} turns/s from {} to {} sessions): widen the ladder to see where it stops",
                num(a.turns_per_s),
                num(b.turns_per_s),
                num(a.concurrency),
                num(b.concurrency)
            ),
            [a, .., b] => format!(
                "; throughput {} → {} turns/s from {} to {} sessions",
                num(a.turns_per_s),
                num(b.turns_per_s),
                num(a.concurrency),
                num(b.concurrency)
            ),
            _ => String::new(),
        },
    }
}

/// Throughput still scales at the top of the ladder: the line is beyond it.
fn not_reached(samples: &[Sample]) -> Wall {
    let text = match samples {
        [.., a, b] => format!(
            "none within the ladder: throughput still grows at {} sessions ({} → {} turns/s from {}) — widen the ladder",
            num(b.concurrency),
            num(a.turns_per_s),
            num(b.turns_per_s),
            num(a.concurrency)
        ),
        _ => "not enough levels to see one (2 needed)".into(),
    };
    Wall {
        kind: "none",
        from: None,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve: (sessions, turns/s, CPU share of the cap).
    fn curve(points: &[(f64, f64, f64)]) -> Vec<Sample> {
        points
            .iter()
            .map(|&(n, x, c)| Sample {
                concurrency: n,
                turns_per_s: x,
                cpu_of_cap: Some(c),
                cpu_cores: Some(1.0),
                ..Sample::default()
            })
            .collect()
    }

    #[test]
    fn a_cpu_bound_curve_hits_the_cpu_wall_where_its_cost_predicts() {
        // 60 CPU ms a turn under 1 core: at most 16.7 turns/s; a turn takes 0.62 s idle.
        let s = curve(&[
            (2.0, 3.2, 0.19),
            (4.0, 6.4, 0.38),
            (8.0, 12.6, 0.76),
            (16.0, 16.3, 0.98),
            (32.0, 16.5, 0.99),
            (64.0, 16.4, 0.99),
        ]);
        let infl = [
            Some(1.0),
            Some(1.0),
            Some(1.05),
            Some(1.6),
            Some(3.1),
            Some(6.2),
        ];
        let p = plateau(&s).unwrap();
        assert_eq!((p.from, p.levels, p.confidence), (16.0, 3, "clear"));
        assert!((p.turns_per_s - 16.4).abs() < 0.1);
        let k = knee(&s, &infl, Some(&p)).unwrap();
        assert_eq!((k.from, k.to, k.confidence), (8.0, 16.0, "clear"));
        let w = wall(&s, Some(&k), Some(&p));
        assert_eq!((w.kind, w.from), ("cpu", Some(16.0)));
        assert!(
            w.text.starts_with("CPU — throughput stops scaling between 8 and 16 sessions and the SUT's CPU reaches 98 % of the 1-core cap at 16 sessions; throughput flat at 16.4"),
            "{}",
            w.text
        );
    }

    #[test]
    fn a_flat_curve_with_idle_cpu_is_a_limit_inside_the_sut() {
        // LangGraph's stock server: one run at a time, CPU at 10 % of its cap.
        let s = curve(&[
            (2.0, 0.91, 0.10),
            (4.0, 0.98, 0.10),
            (8.0, 0.99, 0.11),
            (16.0, 1.06, 0.10),
            (32.0, 1.06, 0.10),
        ]);
        let p = plateau(&s).unwrap();
        assert_eq!(p.from, 2.0);
        // Flat from the first level: the knee is the first step.
        let k = knee(&s, &[None; 5], Some(&p));
        assert_eq!(k.as_ref().map(|k| (k.from, k.to)), Some((2.0, 4.0)));
        let w = wall(&s, k.as_ref(), Some(&p));
        assert_eq!(w.kind, "internal");
        assert!(
            w.text.contains("limit is inside the SUT (queueing): throughput flat at 1 turns/s from 2 sessions while CPU at most 11 % of its cap"),
            "{}",
            w.text
        );
    }

    #[test]
    fn a_curve_still_growing_says_widen_and_has_no_knee() {
        let s = curve(&[(10.0, 10.0, 0.05), (20.0, 19.8, 0.1), (40.0, 39.0, 0.2)]);
        assert_eq!(plateau(&s), None);
        assert_eq!(knee(&s, &[None; 3], None), None);
        let w = wall(&s, None, None);
        assert_eq!(w.kind, "none");
        assert!(w.text.contains("widen the ladder"), "{}", w.text);
    }

    #[test]
    fn a_knee_is_never_placed_where_throughput_still_grows_linearly() {
        let s = curve(&[
            (1.0, 1.0, 0.1),
            (2.0, 2.0, 0.2),
            (4.0, 4.0, 0.4),
            (8.0, 7.9, 0.8),
            (16.0, 9.0, 0.9),
        ]);
        let k = knee(&s, &[None; 5], plateau(&s).as_ref()).unwrap();
        assert_eq!((k.from, k.to), (8.0, 16.0));
        assert_eq!(plateau(&s), None, "one step above 10 % is not flat");
    }

    #[test]
    fn bisection_levels_do_not_move_the_knee() {
        // Doubling 2..32 with a wall near 10, then bisecting 8..16 with noisy points.
        let s = curve(&[
            (2.0, 3.2, 0.2),
            (4.0, 6.4, 0.4),
            (8.0, 12.4, 0.75),
            (10.0, 14.9, 0.9),
            (11.0, 14.5, 0.95),
            (12.0, 16.0, 0.97),
            (16.0, 16.4, 0.99),
            (32.0, 16.6, 0.99),
        ]);
        // From 10 on throughput stays within 10 % of the best so far.
        let p = plateau(&s);
        assert_eq!(p.as_ref().map(|p| p.from), Some(10.0));
        // N* = 15.7 / 1.6 ≈ 9.8: between the measured 8 and 10.
        let k = knee(&s, &[None; 8], p.as_ref()).unwrap();
        assert_eq!((k.from, k.to), (8.0, 10.0));
    }

    #[test]
    fn the_openai_agents_app_measured_here_hits_cpu_where_its_slope_halves() {
        // `plimsoll ramp --cpus 1` on a FastAPI app on the OpenAI Agents SDK (auto ladder,
        // sorted): linear to 16, the slope halved by 32, flat from 40 with the CPU at 89 %+.
        let s = curve(&[
            (2.0, 3.0, 0.11),
            (4.0, 5.96, 0.18),
            (8.0, 11.9, 0.32),
            (16.0, 21.6, 0.61),
            (32.0, 29.2, 0.84),
            (40.0, 36.2, 0.89),
            (44.0, 33.2, 0.91),
            (48.0, 33.0, 0.91),
            (64.0, 28.0, 0.97),
            (128.0, 30.6, 1.0),
        ]);
        // Flat from 40 (the dips after it are not a fresh start).
        let p = plateau(&s).unwrap();
        assert_eq!(p.from, 40.0);
        // N* = 32.2 / 1.5 ≈ 21: between 16 and 32.
        let k = knee(&s, &[None; 10], Some(&p)).unwrap();
        assert_eq!((k.from, k.to), (16.0, 32.0));
        let w = wall(&s, Some(&k), Some(&p));
        assert_eq!(w.kind, "cpu");
        assert!(w.text.contains("(peak 36.2 at 40)"), "{}", w.text);
    }

    #[test]
    fn langgraph_measured_here_is_an_internal_limit() {
        // `langgraph dev` (one run at a time), 1..16 sessions under 1 core: flat from 2.
        let s = curve(&[
            (1.0, 0.57, 0.02),
            (2.0, 1.36, 0.04),
            (4.0, 1.33, 0.04),
            (8.0, 1.33, 0.04),
            (16.0, 1.36, 0.04),
        ]);
        let p = plateau(&s).unwrap();
        assert_eq!((p.from, p.confidence), (2.0, "clear"));
        // N* = 1.34 / 0.57 ≈ 2.4, but the plateau starts at 2: the knee is 1 to 2.
        let k = knee(&s, &[None; 5], Some(&p)).unwrap();
        assert_eq!((k.from, k.to), (1.0, 2.0));
        let w = wall(&s, Some(&k), Some(&p));
        assert_eq!(w.kind, "internal");
    }

    #[test]
    fn a_dip_does_not_restart_the_plateau() {
        // The OpenAI Agents SDK app again, with the auto ladder's levels 24, 28, 30: a dip
        // at 32 and a rise back at 64 are one plateau from 24.
        let s = curve(&[
            (2.0, 2.99, 0.11),
            (4.0, 5.87, 0.24),
            (8.0, 11.4, 0.37),
            (16.0, 21.3, 0.74),
            (24.0, 23.9, 0.8),
            (28.0, 25.5, 0.98),
            (30.0, 26.5, 0.87),
            (32.0, 24.7, 0.93),
            (64.0, 27.4, 0.9),
            (128.0, 26.4, 0.99),
        ]);
        let p = plateau(&s).unwrap();
        assert_eq!(p.from, 24.0);
        let k = knee(&s, &[None; 10], Some(&p)).unwrap();
        assert_eq!((k.from, k.to), (16.0, 24.0));
    }

    #[test]
    fn a_curve_rising_at_the_top_says_so() {
        // LiteLLM: the slope halves by 16, then throughput climbs again at 100 % CPU.
        let s = curve(&[
            (1.0, 1.8, 0.19),
            (2.0, 3.51, 0.39),
            (4.0, 6.52, 0.64),
            (8.0, 10.6, 0.83),
            (16.0, 17.5, 0.8),
            (32.0, 17.4, 1.0),
            (64.0, 22.4, 1.0),
        ]);
        assert_eq!(plateau(&s), None);
        let k = knee(&s, &[None; 7], None);
        let w = wall(&s, k.as_ref(), None);
        assert_eq!(w.kind, "cpu");
        assert!(
            w.text
                .contains("still rising at the top (17.4 → 22.4 turns/s from 32 to 64 sessions)"),
            "{}",
            w.text
        );
    }

    #[test]
    fn a_fall_after_the_peak_is_retrograde() {
        let s = curve(&[
            (2.0, 4.0, 0.5),
            (4.0, 8.0, 0.9),
            (8.0, 8.2, 0.95),
            (16.0, 5.0, 0.95),
        ]);
        let p = plateau(&s).unwrap();
        assert_eq!(p.from, 4.0);
        assert!(p.retrograde);
    }

    #[test]
    fn the_harness_is_named_when_it_was_the_bottleneck() {
        let mut s = curve(&[
            (2.0, 4.0, 0.2),
            (4.0, 8.0, 0.3),
            (8.0, 8.1, 0.3),
            (16.0, 8.0, 0.3),
        ]);
        s[2].harness_bound = true;
        let p = plateau(&s);
        let w = wall(&s, None, p.as_ref());
        assert_eq!((w.kind, w.from), ("harness", Some(8.0)));
    }
}
