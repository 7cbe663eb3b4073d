//! Counts agree with their nouns: the step's lines (with its provider, MCP, bus,
//! reasoning, slow consumers, residents and cache), `check`'s lines, a merged shard's,
//! a replayed workload's, a soak's and a ladder's verdict (from the analysis itself, on
//! ladders whose levels, connections, failures and turns are the count) rendered with
//! every count at 1 and at 2 — no "1 connections", no "2 thread". And no "(s)" left in
//! any message of the workspace.

#[path = "words/ladders.rs"]
mod ladders;

use ladders::verdicts;
use report::check::{all_well, problems, Sent};
use result::parts::{Dependency, Provider, Reasoning, Replicas, SutLog};
use result::soak::SoakDoc;
use result::{CacheReport, Mcp, McpStdio, McpTool, Outcome, Replayed, StepReport, StepResult};
use std::path::Path;

/// A soak of `n` sessions at a time, `n` of them completed.
fn soak(n: u64) -> String {
    let mut doc = SoakDoc::default();
    doc.plan.concurrency = n as usize;
    doc.result = Some(StepResult {
        sessions_ok: n,
        ..Default::default()
    });
    report::soak::markdown(&doc)
}

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
    "problem",
    "tool call",
    "LLM call",
    "subscriber",
    "publisher",
    "consumer",
    "integrity violation",
    "cache break",
    "MCP session",
    "worker thread",
    "run",
    "kind",
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
            arrival_rate_per_s: Some(1.5),
            sessions: Some(n),
            provider: Some(Provider {
                refused: [("quota".to_string(), n)].into(),
                retried: n,
                ..Default::default()
            }),
            reasoning: Some(Reasoning {
                replies: n,
                ..Default::default()
            }),
            mcp: Some(Mcp {
                calls: n,
                mcp_sessions: n,
                sessions_per_mcp_session: n as f64,
                tools: [(
                    "kv".to_string(),
                    McpTool {
                        calls: n,
                        ..Default::default()
                    },
                )]
                .into(),
                stdio: Some(McpStdio {
                    peak_threads: n,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            cache: Some(CacheReport {
                breaks: n,
                ..Default::default()
            }),
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
    let mut bus = r.result.clone();
    bus.bus = Some(result::Bus {
        publishers: n as usize,
        subscribers: n as usize,
        ..Default::default()
    });
    all.extend(report::step::lines(
        &StepReport {
            result: bus,
            ..Default::default()
        },
        &[],
    ));
    let mut merged = r.result.clone();
    merged.shards = Some(result::Shards {
        count: 2,
        merged: 2,
        ..Default::default()
    });
    merged.integrity_violations = n;
    merged.injected_failures = n;
    all.extend(report::shards::summary_lines(&merged, None, &[]));
    all.extend(report::workload::lines(&Replayed {
        sha256: "0123456789abcdef".into(),
        recorded_sessions: n,
        recorded_turns: n,
        recorded_calls: n,
        sessions: n,
        differences: vec!["s0 (recorded trace:ab): turn 1, call 1: recorded `lookup`, a tool the SUT did not offer (the mock called `search` in its place)".into()],
        ..Default::default()
    }));
    all.extend(soak(n).lines().map(String::from));
    all.extend(verdicts(n));
    all.extend(all_well(&r));
    all.extend(problems(
        &r,
        &Sent {
            file: Path::new("session.toml"),
            json_keys: None,
            shared: Vec::new(),
        },
    ));
    // One conversation id shared by every session: the violations follow from the file.
    let mut shared = r.clone();
    shared.violations =
        vec![serde_json::json!({"detail": "message of session s1 in this conversation"})];
    shared.result.integrity_violations = n;
    all.extend(problems(
        &shared,
        &Sent {
            file: Path::new("session.toml"),
            json_keys: None,
            shared: vec![
                "`session` = \"plimsoll\" in the JSON body of request `turn` (session.toml:3)"
                    .into(),
            ],
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
    assert!(
        one.contains("1 session arriving at 1.5/s (at most 1 in flight) × 1 turn"),
        "{one}"
    );
    assert!(
        one.contains("a client pool of 1 connection to redis"),
        "{one}"
    );
    assert!(one.contains("(1 of 1 session failed)"), "{one}");
    assert!(one.contains("the mock was called 1 time but"), "{one}");
    let two = rendered(2).join("\n");
    assert!(
        two.contains("2 sessions arriving at 1.5/s (at most 2 in flight) × 2 turns"),
        "{two}"
    );
    assert!(
        two.contains("a client pool of 2 connections to redis"),
        "{two}"
    );
    assert!(two.contains("sessions of 2 turns are too short"), "{two}");
    assert!(
        two.contains("2 processes") && two.contains("2 instances"),
        "{two}"
    );
}

#[test]
fn no_message_in_the_workspace_says_s_or_es_in_brackets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in std::fs::read_dir(&root).unwrap().flatten() {
        scan(&krate.path().join("src"), &mut found);
    }
    assert!(
        found.is_empty(),
        "say the count's noun, not \"(s)\": {found:#?}"
    );
}

/// Every `…(s)` or `…(es)` after a letter inside a string literal, by file and line.
fn scan(dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            scan(&p, found);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for (i, line) in text.lines().enumerate() {
                let code = line.trim_start();
                let bracket = ["(s)", "(es)"].iter().any(|b| {
                    line.match_indices(b).any(|(at, _)| {
                        line[..at].ends_with(|c: char| c.is_ascii_alphabetic())
                            && line[..at].matches('"').count() % 2 == 1
                    })
                });
                if bracket && !code.starts_with("//") {
                    found.push(format!("{}:{}: {}", p.display(), i + 1, code));
                }
            }
        }
    }
}
