use super::*;
use result::MemoryMeasure;

fn limit(resource: Resource, near: f64) -> Limit {
    Limit { resource, near }
}

/// Issue 62's LiveKit worker: the memory cap reached first, the rest in one line after it.
#[test]
fn the_nearest_limit_is_said_first_and_the_farther_ones_in_one_line() {
    let memory = Finding::Memory(MemoryGrowth {
        unit: Unit::Call,
        mb_per_session: 63.8,
        measure: MemoryMeasure::Pss,
        first: (1, 672.0),
        top: (4, 864.0),
        cap: Some((2048.0, 22.6)),
        at_1000_mb: 64472.0,
        stopped_first: Some((WallKind::Internal, 2.0)),
    });
    assert_eq!(
        finding(&Finding::FirstToRunOut {
            finding: Box::new(memory)
        }),
        "first to run out: memory grows 63.8 MB a call (PSS 672 → 864 MB from 1 to 4 calls): the 2,048 MB cap would hold about 23 calls — a limit inside the SUT stops it first, at 2"
    );
    let farther = Finding::FartherOff {
        unit: Unit::Call,
        limits: vec![
            limit(Resource::OpenFiles, 330.6),
            limit(Resource::Threads, 5162.0),
        ],
    };
    assert_eq!(
        finding(&farther),
        "farther off, as calls are added: open files near 331 calls, threads near 5,162 calls"
    );
}

#[test]
fn a_count_says_what_each_session_holds_and_where_the_box_runs_out() {
    let c = CountGrowth {
        resource: Resource::Connections,
        unit: Unit::Call,
        slope: 4.0,
        at_top: 17.0,
        top_level: 4,
        held: Held::WhileACallLasts,
        at_10k: 40001.0,
        limit: None,
        runs_out_near: None,
    };
    assert_eq!(
        finding(&Finding::Count(c.clone())),
        "connections grow 4 per call (17 at 4): connections each call holds while it lasts — 10,000 calls would need 40,001 connections"
    );
    let threads = CountGrowth {
        resource: Resource::Threads,
        unit: Unit::Session,
        held: Held::OnePerSession,
        limit: Some(4096),
        runs_out_near: Some(4090.2),
        slope: 1.0,
        at_10k: 10005.0,
        ..c
    };
    assert_eq!(
        finding(&Finding::Count(threads)),
        "threads grow 1 per session (17 at 4): a thread per session — 10,000 sessions would need 10,005 threads; the box allows 4,096 — they run out near 4,090 sessions"
    );
}

#[test]
fn a_cap_is_said_as_it_was_held() {
    let held = |cores, on| cap_held(&CapHeld { cores, on });
    assert_eq!(held(1.0, Some(14.0)), "a 1-core quota over 14 cores");
    assert_eq!(
        held(0.5, Some(1.0)),
        "a 0.5-core quota on a cpuset of 1 core"
    );
    assert_eq!(held(1.0, Some(1.0)), "a cpuset of 1 core");
    assert_eq!(held(2.0, None), "a 2-core quota");
    assert_eq!(
        throttled(0.93, None),
        "throttled in 93 % of its periods by its quota"
    );
}

#[test]
fn a_rate_that_fell_back_names_its_levels() {
    let r = RateFellBack {
        levels: vec![32, 64],
        wall_turns_per_s: 9.8,
        full_load_turns_per_s: 16.2,
        cpu_allows: None,
    };
    assert!(finding(&Finding::RateFellBack(r.clone()))
        .starts_with("at 32 and 64 sessions the throughput is the step's turns over its whole time (9.8 turns/s at 32)"));
    let one = RateFellBack {
        levels: vec![8],
        cpu_allows: Some(12.0),
        ..r
    };
    assert!(finding(&Finding::RateFellBack(one)).starts_with(
        "at 8 sessions the throughput is the step's turns over its whole time (9.8 turns/s at 8): the span when every session was in flight read 16.2 turns/s, more than its CPU per turn allows on its cores (12)"
    ));
}
