//! The ladder table: one row a step, as printed while a ramp runs and in report.md.
//! Numbers are rounded for people here; the JSON keeps them whole.

use result::ladder::LadderDoc;
use result::{Standing, StepResult};

pub const HEADER: &str = "| sessions | outcome           | budget    | turns/s | sess p50 | sess p99 | inflation | CPU % cap | RSS MB  | KB/sess | threads | CPU ms/turn | bound   |\n|---------:|:------------------|:----------|--------:|---------:|---------:|----------:|----------:|--------:|--------:|--------:|------------:|:--------|";

/// The header a ramp prints before its first step: the calls table for voice calls.
pub fn live_header(unit: result::words::Unit) -> &'static str {
    match unit.is_calls() {
        true => crate::calls::HEADER,
        false => HEADER_STATE,
    }
}

/// The header with a state column, for runs whose steps have one.
pub const HEADER_STATE: &str = "| sessions | outcome           | state            | budget    | turns/s | sess p50 | sess p99 | inflation | CPU % cap | RSS MB  | KB/sess | threads | CPU ms/turn | bound   |\n|---------:|:------------------|:-----------------|:----------|--------:|---------:|---------:|----------:|----------:|--------:|--------:|--------:|------------:|:--------|";

/// The header for these steps: with the state column when they carry a state.
pub fn header_for(steps: &[StepResult]) -> &'static str {
    if result::words::Unit::of(steps).is_calls() {
        return crate::calls::HEADER;
    }
    match steps.iter().any(|s| s.state.is_some()) {
        true => HEADER_STATE,
        false => HEADER,
    }
}

/// A step's state as its table cell: stable, backlogged or overloaded, and "busy" when
/// other processes took a material share of the CPU it could have used.
fn state_cell(r: &StepResult) -> String {
    match (r.state, analysis::quota::contaminated(r)) {
        (Some(s), true) => format!("{s} busy"),
        (Some(s), false) => s.to_string(),
        (None, true) => "busy".into(),
        (None, false) => "—".into(),
    }
}

pub use crate::num::cell;

/// The turns per second of a stored step (older steps lack the field).
pub fn turns_per_s(r: &StepResult) -> Option<f64> {
    r.turns_per_s
        .or_else(|| (r.wall_ms > 0.0).then(|| r.turns as f64 / (r.wall_ms / 1000.0)))
}

/// A standing as the table shows it ("" when the run was not judged).
pub fn word(standing: Option<Standing>) -> &'static str {
    standing.map_or("", Standing::as_str)
}

/// One table row from a RESULT (as stored, so history re-renders the same) and its
/// standing against the budget (holds, over, collapsed; empty when not judged).
pub fn row(r: &StepResult, standing: &str) -> String {
    if let Some(v) = &r.voice {
        return crate::calls::row(r, v, &state_cell(r), standing);
    }
    let state = match r.state {
        Some(_) => format!(" {:<16} |", state_cell(r)),
        None => String::new(),
    };
    format!(
        "| {:>8} | {:<17} |{state} {:<9} | {:>7} | {:>8} | {:>8} | {:>9} | {:>9} | {:>7} | {:>7} | {:>7} | {:>11} | {:<7} |",
        r.concurrency,
        r.outcome.as_str(),
        standing,
        cell(turns_per_s(r)),
        cell(r.p50_session_ms),
        cell(r.p99_session_ms),
        cell(r.latency_inflation),
        r.cpu_of_cap
            .map_or("—".to_string(), |c| format!("{:.0} %", c * 100.0)),
        cell(Some(r.peak_rss_mb)),
        cell(Some(r.rss_kb_per_session)),
        r.peak_threads,
        cell(r.cpu_ms_per_turn),
        r.harness.bound.as_str(),
    )
}

/// Latency per named request (sessions written as `[[setup]]`/`[[turn]]`/`[[teardown]]`)
/// and per MCP tool the SUT called (`mcp NAME`), a row per step and request (by name);
/// None when no step has any.
pub fn requests(steps: &[StepResult]) -> Option<String> {
    let mut out = String::from(
        "| sessions | request | ok | p50 ms | p99 ms | failed |
|---------:|:--------|---:|-------:|-------:|-------:|
",
    );
    let mut any = false;
    for s in steps {
        for (name, q) in &s.requests {
            any = true;
            out.push_str(&format!(
                "| {} | {name} | {} | {} | {} | {} |
",
                s.concurrency,
                q.count,
                cell(q.p50_ms),
                cell(q.p99_ms),
                q.errors,
            ));
        }
        // The MCP tools the SUT called: the mock's latency for each, per tool.
        for (name, t) in s.mcp.iter().flat_map(|m| &m.tools) {
            any = true;
            out.push_str(&format!(
                "| {} | mcp {name} | {} | {} | {} | {} |\n",
                s.concurrency,
                t.calls - t.errors,
                cell(Some(t.p50_ms)),
                cell(Some(t.p99_ms)),
                t.errors,
            ));
        }
    }
    any.then_some(out)
}

/// The SUT's dependencies (`[[service]]`, `[[probe]]`) at every step, a row each, with
/// the SUT's connections to each: None when no step has any.
pub fn dependencies(steps: &[StepResult]) -> Option<String> {
    let mut out = String::from(
        "| sessions | dependency | kind | processes | RSS MB | threads | CPU ms/turn | clients | SUT's connections |
|---------:|:-----------|:-----|----------:|-------:|--------:|------------:|--------:|------------------:|
",
    );
    let mut any = false;
    for s in steps {
        for d in &s.dependencies {
            any = true;
            let conns = s
                .connections
                .iter()
                .find(|c| c.peer.as_deref() == Some(d.name.as_str()))
                .map_or("—".to_string(), |c| c.peak.to_string());
            out.push_str(&format!(
                "| {} | {} | {}{} | {} | {} | {} | {} | {} | {conns} |\n",
                s.concurrency,
                d.name,
                d.kind,
                if d.exited { " (exited)" } else { "" },
                d.processes,
                cell(Some(d.peak_rss_mb)),
                d.peak_threads,
                cell(d.cpu_ms_per_turn),
                d.peak_clients,
            ));
        }
    }
    any.then_some(out)
}

/// A step's standing as the run's verdict recorded it ("" for runs from before budgets).
pub fn standing_in(doc: &LadderDoc, step: &StepResult) -> &'static str {
    word(doc.standing_of(step))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A step from the fields a test cares about, the rest as a default RESULT has them.
    pub(crate) fn step(fields: serde_json::Value) -> StepResult {
        fn merge(into: &mut serde_json::Value, from: &serde_json::Value) {
            match (into.as_object_mut(), from.as_object()) {
                (Some(a), Some(b)) => {
                    for (k, x) in b {
                        merge(a.entry(k).or_insert(serde_json::Value::Null), x);
                    }
                }
                _ => *into = from.clone(),
            }
        }
        let mut v = serde_json::to_value(StepResult::default()).unwrap();
        merge(&mut v, &fields);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn requests_get_a_row_per_step_and_name() {
        let steps = vec![
            step(
                serde_json::json!({"concurrency": 4, "requests": {"create": {"count": 4, "p50_ms": 2.594, "p99_ms": 8.3, "errors": 0}, "run": {"count": 12, "p50_ms": 449.0, "p99_ms": null, "errors": 1}}}),
            ),
            step(serde_json::json!({"concurrency": 8})),
        ];
        let t = requests(&steps).unwrap();
        assert!(t.contains("| 4 | create | 4 | 2.59 | 8.30 | 0 |"), "{t}");
        assert!(t.contains("| 4 | run | 12 | 449 | — | 1 |"), "{t}");
        assert_eq!(t.lines().count(), 4);
        assert_eq!(requests(&steps[1..]), None);
    }

    #[test]
    fn dependencies_get_a_row_per_step_with_the_sut_connections_to_them() {
        let steps = vec![
            step(
                serde_json::json!({"concurrency": 8, "connections": [{"port": 41000, "peer": "redis", "peak": 4, "mean": 4.0, "series": []}],
                "dependencies": [{"name": "redis", "kind": "service", "processes": 1, "peak_rss_mb": 11.9,
                "peak_threads": 5, "peak_fds": 9, "cpu_sec": 0.1, "cpu_ms_per_turn": 0.42, "peak_clients": 5, "exited": true}]}),
            ),
            step(serde_json::json!({"concurrency": 16})),
        ];
        let t = dependencies(&steps).unwrap();
        assert!(
            t.contains("| 8 | redis | service (exited) | 1 | 11.9 | 5 | 0.42 | 5 | 4 |"),
            "{t}"
        );
        assert_eq!(dependencies(&steps[1..]), None);
    }

    #[test]
    fn rows_line_up_with_the_header_and_round_for_people() {
        let r = step(
            serde_json::json!({"concurrency": 16, "outcome": "ok", "turns": 30, "wall_ms": 1000.0,
            "p50_session_ms": 1903.62, "p99_session_ms": 1916.93, "latency_inflation": 1.0234,
            "cpu_of_cap": 0.974, "peak_rss_mb": 10.2, "rss_kb_per_session": 117.8,
            "peak_threads": 3, "cpu_ms_per_turn": 0.33, "harness": {"bound": "sut"}}),
        );
        let line = row(&r, "holds");
        let widths = |s: &str| s.split('|').map(|c| c.chars().count()).collect::<Vec<_>>();
        assert_eq!(widths(&line), widths(HEADER.lines().next().unwrap()));
        assert!(
            line.contains(" 1.02 ") && line.contains(" 97 % ") && line.contains(" 30.0 "),
            "{line}"
        );
        assert!(line.contains("| holds "), "{line}");
    }
}
