//! Known answers for the throughput reading: synthetic curves and curves measured here.

use super::*;
use result::{Confidence, WallKind};

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
    assert_eq!(
        (p.from, p.levels, p.confidence),
        (16.0, 3, Confidence::Clear)
    );
    assert!((p.turns_per_s - 16.4).abs() < 0.1);
    let k = knee(&s, &infl, Some(&p)).unwrap();
    assert_eq!((k.from, k.to, k.confidence), (8.0, 16.0, Confidence::Clear));
    let w = wall(&s, Some(&k), Some(&p));
    assert_eq!((w.kind, w.from), (WallKind::Cpu, Some(16.0)));
    assert!(
        words::wall::text(&w).starts_with("CPU — throughput bends between 8 and 16 sessions and the SUT's CPU reaches 98 % of the 1-core cap at 16 sessions; throughput flat at 16.4"),
        "{}",
        words::wall::text(&w)
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
    assert_eq!(w.kind, WallKind::Internal);
    assert!(
        words::wall::text(&w).contains("limit is inside the SUT (queueing): throughput flat at 1 turns/s from 2 sessions while CPU at most 11 % of its cap"),
        "{}",
        words::wall::text(&w)
    );
}

#[test]
fn a_curve_still_growing_says_widen_and_has_no_knee() {
    let s = curve(&[(10.0, 10.0, 0.05), (20.0, 19.8, 0.1), (40.0, 39.0, 0.2)]);
    assert_eq!(plateau(&s), None);
    assert_eq!(knee(&s, &[None; 3], None), None);
    let w = wall(&s, None, None);
    assert_eq!(w.kind, WallKind::None);
    assert!(
        words::wall::text(&w).contains("widen the ladder"),
        "{}",
        words::wall::text(&w)
    );
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
    assert_eq!(w.kind, WallKind::Cpu);
    assert!(
        words::wall::text(&w).contains("(peak 36.2 at 40)"),
        "{}",
        words::wall::text(&w)
    );
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
    assert_eq!((p.from, p.confidence), (2.0, Confidence::Clear));
    // N* = 1.34 / 0.57 ≈ 2.4, but the plateau starts at 2: the knee is 1 to 2.
    let k = knee(&s, &[None; 5], Some(&p)).unwrap();
    assert_eq!((k.from, k.to), (1.0, 2.0));
    let w = wall(&s, Some(&k), Some(&p));
    assert_eq!(w.kind, WallKind::Internal);
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
    assert_eq!(w.kind, WallKind::Cpu);
    assert!(
        words::wall::text(&w)
            .contains("still rising at the top (17.4 → 22.4 turns/s from 32 to 64 sessions)"),
        "{}",
        words::wall::text(&w)
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
    assert_eq!((w.kind, w.from), (WallKind::Harness, Some(8.0)));
}

#[test]
fn a_core_full_with_other_processes_is_still_the_cpu_wall() {
    // examples/cpu-bound under a 1-core cap while other processes took a varying part of
    // its core (read from a real run): the SUT alone never reaches the wall (84 % at most),
    // but with what the others took the core was full from 16 sessions on.
    let points = [
        (2.0, 2.29, 0.14, 0.85),
        (4.0, 3.68, 0.23, 0.76),
        (8.0, 7.32, 0.43, 0.55),
        (16.0, 9.78, 0.58, 0.43),
        (32.0, 13.5, 0.76, 0.23),
        (64.0, 13.2, 0.84, 0.27),
    ];
    // Its turns queued for the core: 250 ms a second in a run queue.
    let s: Vec<Sample> = points
        .iter()
        .map(|&(n, x, c, o)| Sample {
            concurrency: n,
            turns_per_s: x,
            cpu_of_cap: Some(c),
            cpu_cores: Some(1.0),
            others: Some(o),
            run_wait: Some(0.25),
            ..Sample::default()
        })
        .collect();
    let p = plateau(&s);
    let k = knee(&s, &[None; 6], p.as_ref());
    let w = wall(&s, k.as_ref(), p.as_ref());
    assert_eq!(w.kind, WallKind::Cpu, "{w:?}");
    assert!(
        words::wall::short(&w).contains("full with other processes"),
        "{}",
        words::wall::short(&w)
    );
    assert!(
        words::wall::text(&w).contains("other processes took"),
        "{}",
        words::wall::text(&w)
    );
    // The same curve with nobody else on the core: no resource at the wall.
    let alone: Vec<Sample> = s
        .iter()
        .map(|x| Sample {
            others: Some(0.0),
            ..x.clone()
        })
        .collect();
    assert_ne!(wall(&alone, k.as_ref(), p.as_ref()).kind, WallKind::Cpu);
    // Nor when the SUT never queued for the core (it waited on a pool): the pool is the
    // wall, whatever else kept the core busy.
    let idle: Vec<Sample> = s
        .iter()
        .map(|x| Sample {
            run_wait: Some(0.01),
            ..x.clone()
        })
        .collect();
    assert_ne!(wall(&idle, k.as_ref(), p.as_ref()).kind, WallKind::Cpu);
}

#[test]
fn a_harness_starved_by_others_names_the_machine_not_plimsoll() {
    // Flat from 32 where Plimsoll fell behind; in one ladder Plimsoll's own core was
    // half taken by other processes, in the other nobody else was there.
    let s = |h: Option<f64>| -> Vec<Sample> {
        [
            (8.0, 10.0),
            (16.0, 19.0),
            (32.0, 33.0),
            (40.0, 33.5),
            (48.0, 33.2),
        ]
        .iter()
        .map(|&(n, x)| Sample {
            concurrency: n,
            turns_per_s: x,
            cpu_of_cap: Some(0.5),
            cpu_cores: Some(1.0),
            harness_bound: n >= 40.0,
            harness_others: h,
            ..Sample::default()
        })
        .collect()
    };
    let wall_of = |v: &[Sample]| {
        let p = plateau(v);
        let k = knee(v, &[None; 5], p.as_ref());
        wall(v, k.as_ref(), p.as_ref())
    };
    let starved = wall_of(&s(Some(0.5)));
    assert_eq!(starved.kind, WallKind::Harness);
    assert!(
        words::wall::short(&starved).starts_with("busy machine"),
        "{}",
        words::wall::short(&starved)
    );
    assert!(
        words::wall::text(&starved).contains("50 % of Plimsoll's own cores"),
        "{}",
        words::wall::text(&starved)
    );
    let own = wall_of(&s(Some(0.02)));
    assert!(
        words::wall::short(&own).starts_with("Plimsoll itself"),
        "{}",
        words::wall::short(&own)
    );
    assert_eq!(
        words::wall::short(&wall_of(&s(None))),
        words::wall::short(&own)
    );
}

/// The LiteLLM proxy with 3-turn sessions under a 1-core cap (issue 40): 60.5 → 78.9
/// turns/s from 64 to 256 sessions at 100 % of the cap, because each turn got cheaper
/// (27.5 → 12.2 CPU ms: the cold start amortised). A wider ladder cannot find more: the
/// wall says the steady-state ceiling instead of "widen the ladder".
#[test]
fn throughput_rising_on_a_full_cap_names_the_steady_state_ceiling() {
    let s: Vec<Sample> = [
        (16.0, 30.0, 0.78, 31.0),
        (32.0, 45.0, 0.97, 29.0),
        (64.0, 60.5, 1.0, 27.5),
        (128.0, 70.1, 1.0, 17.0),
        (256.0, 78.9, 1.0, 12.2),
    ]
    .iter()
    .map(|&(n, x, c, ms)| Sample {
        concurrency: n,
        turns_per_s: x,
        cpu_of_cap: Some(c),
        cpu_cores: Some(1.0),
        cpu_ms_per_turn: Some(ms),
        ..Sample::default()
    })
    .collect();
    let p = plateau(&s);
    let k = knee(&s, &[None; 5], p.as_ref());
    let w = wall(&s, k.as_ref(), p.as_ref());
    assert_eq!(w.kind, WallKind::Cpu, "{}", words::wall::text(&w));
    assert!(
        !words::wall::text(&w).contains("widen the ladder"),
        "{}",
        words::wall::text(&w)
    );
    assert!(
        words::wall::text(&w).ends_with("; throughput still rose at the top (45 → 78.9 turns/s from 32 to 256 sessions) only because each turn got cheaper (29 → 12.2 CPU ms: a start-up's cost spread over more turns, caches warm) while the cap was full — a wider ladder finds no more: at 12.2 CPU ms a turn the 1-core cap allows about 82 turns/s in a steady state; longer sessions (--set turns=10) will show that ceiling"),
        "{}",
        words::wall::text(&w)
    );
    // With CPU per turn steady, rising throughput at the top is still the ladder's edge.
    let steady: Vec<Sample> = s
        .iter()
        .map(|x| Sample {
            cpu_ms_per_turn: Some(12.0),
            ..x.clone()
        })
        .collect();
    let w = wall(&steady, k.as_ref(), p.as_ref());
    assert!(
        words::wall::text(&w).contains("widen the ladder"),
        "{}",
        words::wall::text(&w)
    );
}
