//! Known answers for growth per session: linear, flat, super-linear and noisy series.

use super::*;

/// The findings in words.
fn findings(steps: &[StepResult]) -> Vec<String> {
    super::findings(steps)
        .iter()
        .map(words::findings::finding)
        .collect()
}

fn step(n: usize, threads: u64, fds: u64, kb: f64, cpu_ms: f64) -> StepResult {
    StepResult {
        concurrency: n,
        sessions_ok: n as u64,
        turns: 3 * n as u64,
        peak_threads: threads,
        peak_fds: fds,
        rss_kb_per_session: kb,
        cpu_ms_per_turn: Some(cpu_ms),
        ..StepResult::default()
    }
}

#[test]
fn fits_know_linear_flat_and_super_linear() {
    let lin: Vec<(f64, f64)> = [5.0, 10.0, 20.0, 40.0, 80.0]
        .iter()
        .map(|&x| (x, 3.0 + 3.0 * x))
        .collect();
    let f = fit(&lin, 0.5).unwrap();
    assert!((f.slope - 3.0).abs() < 1e-9 && (f.intercept - 3.0).abs() < 1e-9);
    assert_eq!(f.shape, Shape::Linear);
    let flat: Vec<(f64, f64)> = [2.0, 4.0, 8.0, 16.0].iter().map(|&x| (x, 7.0)).collect();
    assert_eq!(fit(&flat, 0.5).unwrap().shape, Shape::Flat);
    let sq: Vec<(f64, f64)> = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .iter()
        .map(|&x| (x, x * x / 10.0))
        .collect();
    assert_eq!(fit(&sq, 0.5).unwrap().shape, Shape::SuperLinear);
    // One wild level does not tilt the line.
    let noisy = vec![
        (5.0, 18.0),
        (10.0, 33.0),
        (20.0, 300.0),
        (40.0, 123.0),
        (80.0, 242.0),
    ];
    let f = fit(&noisy, 0.5).unwrap();
    assert!((f.slope - 3.0).abs() < 0.1, "{f:?}");
    assert!(fit(&lin[..2], 0.5).is_none(), "two levels make no fit");
}

#[test]
fn a_thread_per_request_is_named_with_its_slope_and_where_it_runs_out() {
    // The crewAI#2279 shape: 3 threads per session (one per turn) — 18 at 5, 242 at 80.
    let mut steps: Vec<StepResult> = [5, 10, 20, 40, 80]
        .iter()
        .map(|&n| step(n, 3 + 3 * n as u64, 20, 100.0, 13.0))
        .collect();
    for s in &mut steps {
        s.limits = Some(BoxLimits {
            threads: Some(1000),
            open_files: None,
        });
    }
    let f = findings(&steps);
    assert!(
        f[0].starts_with("threads grow 3 per session (243 at 80): a thread per request (turn) that is never released — 10,000 sessions would need 30,003 threads; the box allows 1,000 — they run out near 332 sessions"),
        "{f:?}"
    );
    assert_eq!(f.len(), 1, "{f:?}");
}

#[test]
fn a_clean_service_has_no_growth_findings() {
    let steps: Vec<StepResult> = [2, 4, 8, 16, 32]
        .iter()
        .map(|&n| step(n, 18, 40 + (n as u64 % 3), 120.0 + (n % 2) as f64, 60.0))
        .collect();
    assert!(findings(&steps).is_empty(), "{:?}", findings(&steps));
}

#[test]
fn the_sockets_every_session_holds_are_not_a_finding_until_the_box_runs_out() {
    // A clean HTTP service: each session's client socket and its call to the provider,
    // two descriptors and one connection to the mock per session.
    let mut steps: Vec<StepResult> = [2, 4, 8, 16, 32]
        .iter()
        .map(|&n| {
            let mut s = step(n, 18, 40 + 2 * n as u64, 120.0, 60.0);
            s.connections = vec![result::Connection {
                peer: Some("mock".into()),
                peak: n as u32,
                ..Default::default()
            }];
            s
        })
        .collect();
    assert!(findings(&steps).is_empty(), "{:?}", findings(&steps));
    // The same with ulimit -n 1024: 2 a session runs out near 492 sessions.
    for s in &mut steps {
        s.limits = Some(BoxLimits {
            threads: None,
            open_files: Some(1024),
        });
    }
    let f = findings(&steps);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with("open files grow 2 per session (104 at 32)"),
        "{f:?}"
    );
    assert!(f[0].ends_with("they run out near 492 sessions"), "{f:?}");
    // Five descriptors a session (a file left open per turn besides the sockets) is one.
    let leaky: Vec<StepResult> = [2, 4, 8, 16, 32]
        .iter()
        .map(|&n| step(n, 18, 40 + 5 * n as u64, 120.0, 60.0))
        .collect();
    let f = findings(&leaky);
    assert!(
        f.len() == 1 && f[0].starts_with("open files grow 5 per session"),
        "{f:?}"
    );
}

#[test]
fn threads_that_level_off_are_a_bounded_pool_not_a_thread_per_session() {
    // pydantic-ai's tools on anyio's 40-thread pool (read from a real ramp): 37 → 42 → 47
    // threads at 32/64/128 sessions after the pool filled. No "1 per session" line.
    let steps: Vec<StepResult> = [(4, 6), (8, 10), (16, 20), (32, 37), (64, 42), (128, 47)]
        .iter()
        .map(|&(n, t)| step(n, t, 40, 120.0, 60.0))
        .collect();
    let p: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.concurrency as f64, s.peak_threads as f64))
        .collect();
    assert_eq!(fit(&p, 0.5).unwrap().shape, Shape::LevelsOff);
    assert!(findings(&steps).is_empty(), "{:?}", findings(&steps));
    assert!(fits(&steps)
        .iter()
        .all(|f| f.figure != result::ladder::FitFigure::Threads));
}

#[test]
fn memory_and_cpu_per_session_rising_with_load_are_named() {
    let steps: Vec<StepResult> = [4, 8, 16, 32]
        .iter()
        .map(|&n| step(n, 10, 30, 100.0 * n as f64 / 4.0, 10.0 + n as f64))
        .collect();
    let f = findings(&steps);
    assert!(
        f.iter().any(|x| x
            .starts_with("memory per session rises with sessions (100 KB at 4 → 800 KB at 32)")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|x| x.starts_with("CPU per turn rises with sessions (14 ms at 4 → 42 ms at 32)")),
        "{f:?}"
    );
    assert!(cpu_per_turn_rises(&steps));
}

#[test]
fn threads_that_make_each_turn_dearer_are_named_in_the_cpu_wall() {
    // A thread per turn under a 1-core cap: CPU per turn 13 → 34 ms as threads go 18 → 243.
    let ladder = |threads_per_session: u64| -> Vec<StepResult> {
        [
            (5, 5.0, 13.0, 0.3),
            (10, 9.0, 17.0, 0.6),
            (20, 14.0, 22.0, 1.0),
        ]
        .into_iter()
        .chain([(40, 12.0, 28.0, 1.0), (80, 10.0, 34.0, 1.0)])
        .map(|(n, x, cpu_ms, cap)| {
            let mut s = crate::verdict::tests::step(n, x, 1.5, cap);
            s.peak_threads = 3 + threads_per_session * n as u64;
            s.cpu_ms_per_turn = Some(cpu_ms);
            s
        })
        .collect()
    };
    let v = crate::verdict::verdict(&ladder(3), &crate::Budget::default());
    assert_eq!(
        v.wall.kind,
        result::WallKind::Cpu,
        "{}",
        words::wall::text(&v.wall)
    );
    assert!(
        words::wall::text(&v.wall)
            .contains("; its CPU per turn rises as its threads grow (3 per session): more threads to schedule"),
        "{}",
        words::wall::text(&v.wall)
    );
    let v = crate::verdict::verdict(&ladder(0), &crate::Budget::default());
    assert!(
        words::wall::text(&v.wall)
            .contains("; its CPU per turn rises with sessions, so the wall comes sooner"),
        "{}",
        words::wall::text(&v.wall)
    );
}
