//! Ladders whose telling counts are `n` — the first level, the connections a pool holds,
//! the sessions that failed, the turns a session ran — analysed by `analysis` and
//! rendered as the terminal shows a verdict.

use analysis::ladder::{analyse, Projection};
use analysis::outcome::{outcome, Evidence};
use analysis::Budget;
use result::cause::StepCause;
use result::ladder::{LadderDoc, RunAnalysis};
use result::parts::{Connection, LogKind, Provider, SutLog};
use result::{Bound, ColdStart, Outcome, StepResult};

/// A step as the verdict reads it: level, turns/s, latency inflation, CPU of the cap.
fn step(c: usize, x: f64, infl: f64, cpu: f64) -> StepResult {
    StepResult {
        schema_version: 1,
        concurrency: c,
        sessions_ok: c as u64,
        turns: 3 * c as u64,
        wall_ms: 1000.0,
        p50_session_ms: Some(infl * 1000.0),
        p99_session_ms: Some(infl * 1100.0),
        ideal_session_ms: Some(1000.0),
        latency_inflation: Some(infl),
        peak_rss_mb: 10.0,
        rss_kb_per_session: 100.0,
        peak_threads: 3,
        cpu_ms_per_turn: Some(40.0),
        harness: result::Harness {
            cpu_share: 0.02,
            bound: Bound::Sut,
            ..Default::default()
        },
        turns_per_s: Some(x),
        cpu_cores: Some(1.0),
        cpu_of_cap: Some(cpu),
        outcome: Outcome::Ok,
        ..StepResult::default()
    }
}

fn lines(steps: Vec<StepResult>, causes: Vec<Option<StepCause>>) -> Vec<String> {
    let a = analyse(
        &steps,
        &[],
        &causes,
        &Budget::default(),
        Projection::default(),
        false,
    );
    let doc = LadderDoc {
        steps,
        analysis: Some(RunAnalysis::Ladder(Box::new(a))),
        ..Default::default()
    };
    report::verdict::verdict_lines(&doc)
}

/// Over budget from the first level `n` with the CPU full there, sessions of `n` turns
/// with a cold start, and a warning that began at `n`.
fn first_level(n: usize) -> Vec<String> {
    let mut first = step(n, 5.0, 2.5, 1.0);
    first.turns = (n * n) as u64;
    first.cold_start = Some(ColdStart {
        first_turn_p50_ms: 1000.0,
        later_turn_p50_ms: 100.0,
    });
    first.log = Some(SutLog {
        kinds: vec![LogKind {
            level: "warning".into(),
            message: "slow".into(),
            count: n as u64,
            example: "slow".into(),
        }],
        ..Default::default()
    });
    let steps = vec![first, step(8, 5.0, 4.0, 1.0), step(16, 5.0, 8.0, 1.0)];
    lines(steps, vec![None; 3])
}

/// Connections to redis flat at `n` while throughput stops growing, the CPU idle.
fn pool(n: u32) -> Vec<String> {
    let steps: Vec<StepResult> = [(4, 4.0), (8, 8.0), (16, 8.1), (32, 8.0)]
        .into_iter()
        .map(|(c, x)| {
            let mut s = step(c, x, if c > 8 { 3.0 } else { 1.1 }, 0.2);
            s.connections = vec![Connection {
                port: 6379,
                peer: Some("redis".into()),
                peak: n,
                mean: n as f64,
                series: Vec::new(),
            }];
            s
        })
        .collect();
    lines(steps, vec![None; 4])
}

/// The provider refused half the calls at level `n`, where every session failed; the
/// cause as the outcome words it, with `n` integrity violations besides.
fn provider(n: usize) -> Vec<String> {
    let mut s = step(n, 1.0, 1.0, 0.1);
    (s.sessions_ok, s.sessions_failed) = (0, n as u64);
    s.outcome = Outcome::ErrorRate;
    s.provider = Some(Provider {
        refused: [("quota".to_string(), n as u64)].into(),
        refused_share: 0.5,
        binding: Some("the quota".into()),
        ..Default::default()
    });
    let failed = Evidence {
        sessions_failed: n as u64,
        ..Default::default()
    };
    let violated = Evidence {
        violations: n as u64,
        ..Default::default()
    };
    let cause = |e: &Evidence| {
        outcome(e).map(|c| StepCause {
            cause: c.1,
            last_output: None,
        })
    };
    let mut out = lines(vec![s], vec![cause(&failed)]);
    out.extend(cause(&violated).map(|c| words::cause::said(&c.cause)));
    out
}

/// Every verdict above at `n`.
pub fn verdicts(n: u64) -> Vec<String> {
    let mut out = first_level(n as usize);
    out.extend(pool(n as u32));
    out.extend(provider(n as usize));
    out
}
