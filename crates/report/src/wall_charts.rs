//! A chart for the wall the verdict names, where the standard charts do not show it: the
//! busiest thread's share of a core per level when one thread (or a pool of one worker)
//! is the wall — the 100 % line drawn, the main thread beside it; the worker threads by
//! name when a pool of waiting workers is; memory of its cap when memory is; Plimsoll's
//! own lateness when the harness is. CPU, a connection pool, the provider and a limit
//! inside the SUT have theirs among the standard charts (CPU of its cap, Connections,
//! Provider pushback, Throughput).

use crate::svg::{chart, Chart, Marks, Series};
use result::ladder::{LadderAnalysis, LadderDoc};
use result::{StepResult, WallKind};
use std::fmt::Write;

/// The wall's own charts, rendered as sections (empty when the standard ones show it).
pub(crate) fn sections(
    doc: &LadderDoc,
    a: &LadderAnalysis,
    (xs, counts): (&[f64], &[u64]),
    marks: &Marks,
) -> String {
    let Some(wall) = a.verdict.as_ref().map(|v| &v.wall) else {
        return String::new();
    };
    let steps = &doc.steps;
    let mut out = String::new();
    let mut add = |c: Chart| {
        let _ = write!(out, "<section>{}</section>", chart(&c, xs, counts, marks));
    };
    let threads_read = steps.iter().any(|s| s.thread_cpu.is_some());
    if matches!(wall.kind, WallKind::Thread | WallKind::Pool) && threads_read {
        let how = thread_how(steps);
        add(busiest(steps, &how));
    }
    if wall.kind == WallKind::Pool {
        let names = families(steps);
        if !names.is_empty() {
            let series = names
                .iter()
                .enumerate()
                .map(|(i, n)| Series {
                    name: n,
                    color: ["#396", "#c63", "#639", "#099"][i % 4],
                    values: steps.iter().map(|s| family_size(s, n)).collect(),
                })
                .collect();
            add(Chart { title: "Threads by name", unit: "threads", how: "The SUT's threads grouped by name but for a trailing number (pool-1-thread-1 … -4 are pool-1-thread-*), idle ones too. A group that stays at the count of calls in flight while sessions grow is a pool of workers each waiting on a call.", series, curve: None, limit: None });
        }
    }
    if wall.kind == WallKind::Memory && steps.iter().any(|s| s.mem_of_cap.is_some()) {
        let values = steps
            .iter()
            .map(|s| s.mem_of_cap.map(|m| m * 100.0))
            .collect();
        add(Chart { title: "Memory of its cap", unit: "%", how: "The SUT's cgroup memory at its highest over its memory cap; at 100 % the kernel reclaims, then kills.", series: vec![Series { name: "memory", color: "#639", values }], curve: None, limit: Some((100.0, "cap")) });
    }
    if wall.kind == WallKind::Harness {
        let get = |f: fn(&StepResult) -> f64| steps.iter().map(|s| Some(f(s))).collect();
        add(Chart { title: "Plimsoll's own lateness", unit: "ms (p99)", how: "How late the mock's frames left against their deadlines and how late the driver's timers fired, 99th percentile: where they rise, Plimsoll, not the SUT, set the pace.", series: vec![Series { name: "mock", color: "#c33", values: get(|s| s.harness.mock_timing_error_p99_ms) }, Series { name: "driver", color: "#e70", values: get(|s| s.harness.driver_lag_p99_ms) }], curve: None, limit: None });
    }
    out
}

/// The busiest thread's chart: its share of a core (on one, and waiting for one) per
/// level, the main thread's beside it, the 100 % line a core.
fn busiest<'a>(steps: &[StepResult], how: &'a str) -> Chart<'a> {
    let top = |s: &StepResult| {
        s.thread_cpu
            .as_ref()
            .and_then(|t| t.busiest.first().cloned())
    };
    let mut series = vec![Series {
        name: "busiest thread",
        color: "#c63",
        values: steps
            .iter()
            .map(|s| top(s).map(|b| b.runnable() * 100.0))
            .collect(),
    }];
    // The main thread beside a busiest thread that is not it (the same thread twice
    // otherwise).
    let worker = |t: &result::ThreadCpu| {
        t.main_share.is_some() && t.busiest.first().is_some_and(|b| !b.main)
    };
    if steps
        .iter()
        .any(|s| s.thread_cpu.as_ref().is_some_and(worker))
    {
        let main = steps
            .iter()
            .map(|s| {
                let t = s.thread_cpu.as_ref()?;
                match t.busiest.first() {
                    Some(b) if b.main => Some(b.core_share * 100.0),
                    _ => t.main_share.map(|m| m * 100.0),
                }
            })
            .collect();
        series.push(Series {
            name: "main thread",
            color: "#36c",
            values: main,
        });
    }
    Chart {
        title: "Busiest thread",
        unit: "% of a core",
        how,
        series,
        curve: None,
        limit: Some((100.0, "one core")),
    }
}

/// The busiest thread's chart explained with its name, as the top level read it.
fn thread_how(steps: &[StepResult]) -> String {
    let b = steps
        .iter()
        .rev()
        .find_map(|s| s.thread_cpu.as_ref()?.busiest.first().cloned());
    let who = match &b {
        Some(b) if b.main => format!("the main thread of `{}`", b.name),
        Some(b) => format!("`{}`, not the main thread", b.name),
        None => "the busiest thread".into(),
    };
    format!("The SUT's busiest thread ({who}) as a share of one core, on it or waiting for it; the main thread beside it. At the 100 % line that thread is the wall: more cores do not move it, more processes (or a bigger pool) do.")
}

/// The names of the thread groups that had two or more threads, largest first (four).
fn families(steps: &[StepResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let top = steps.iter().rev().find_map(|s| s.thread_cpu.as_ref());
    for g in top.iter().flat_map(|t| &t.groups).take(4) {
        out.push(g.name.clone());
    }
    out
}

fn family_size(s: &StepResult, name: &str) -> Option<f64> {
    let t = s.thread_cpu.as_ref()?;
    Some(
        t.groups
            .iter()
            .find(|g| g.name == name)
            .map_or(0.0, |g| g.threads as f64),
    )
}
