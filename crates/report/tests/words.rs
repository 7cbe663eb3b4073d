//! Counts agree with their nouns: the step's lines, `check`'s lines and words module
//! rendered with every count at 1 and at 2 — no "1 connections", no "2 thread".

use report::check::{all_well, problems, Sent};
use result::parts::{Dependency, Replicas, SutLog};
use result::{Outcome, StepReport, StepResult};
use std::path::Path;

/// Nouns Plimsoll counts.
const NOUNS: &[&str] = &[
    "session",
    "concurrent session",
    "turn",
    "thread",
    "process",
    "client",
    "instance",
    "line",
    "warning",
    "error",
    "time",
    "connection",
    "replica",
    "call",
    "frame",
];

fn step(n: u64) -> StepReport {
    let log = SutLog {
        lines: n,
        warnings: n,
        errors: n,
        ..Default::default()
    };
    let dep = Dependency {
        name: "redis".into(),
        kind: "service".into(),
        processes: n as u32,
        peak_threads: n,
        peak_clients: n as u32,
        ..Default::default()
    };
    StepReport {
        result: StepResult {
            concurrency: n as usize,
            sessions_ok: n,
            turns: n * 3,
            llm_calls: n,
            peak_threads: n,
            log: Some(log),
            dependencies: vec![dep],
            replicas: Some(Replicas {
                count: n as usize,
                ..Default::default()
            }),
            outcome: Outcome::Ok,
            ..Default::default()
        },
        marked_sessions: 0,
        turns_per_session: Some(n as u32),
        ..Default::default()
    }
}

fn rendered(n: u64) -> Vec<String> {
    let r = step(n);
    let mut all = report::step::lines(&r, &[]);
    all.extend(all_well(&r));
    all.extend(problems(
        &r,
        &Sent {
            file: Path::new("session.toml"),
            json_keys: None,
        },
    ));
    all
}

#[test]
fn every_count_agrees_with_its_noun_at_one_and_two() {
    for line in rendered(1) {
        for noun in NOUNS {
            let wrong = format!("1 {}", report::words::plural(noun));
            assert!(
                !line.contains(&format!(" {wrong}")) && !line.starts_with(&wrong),
                "{wrong:?} in {line:?}"
            );
        }
    }
    for line in rendered(2) {
        for noun in NOUNS {
            let one = format!("2 {noun}");
            let wrong = line
                .match_indices(&one)
                .any(|(i, _)| !line[i + one.len()..].starts_with(|c: char| c.is_alphabetic()));
            assert!(!wrong, "{one:?} in {line:?}");
        }
    }
    let one = rendered(1).join("\n");
    assert!(one.contains("1 concurrent session × 1 turn"), "{one}");
    assert!(one.contains("the mock was called 1 time but"), "{one}");
    let two = rendered(2).join("\n");
    assert!(two.contains("2 concurrent sessions × 2 turns"), "{two}");
    assert!(
        two.contains("2 processes") && two.contains("2 instances"),
        "{two}"
    );
}
