//! The ladder table: one row a step, as printed while a ramp runs and in report.md.
//! Numbers are rounded for people here; the JSON keeps them whole.

use serde_json::Value;

pub const HEADER: &str = "| sessions | outcome           | budget    | turns/s | sess p50 | sess p99 | inflation | CPU % cap | RSS MB  | KB/sess | threads | CPU ms/turn | bound   |\n|---------:|:------------------|:----------|--------:|---------:|---------:|----------:|----------:|--------:|--------:|--------:|------------:|:--------|";

/// A number rounded for a table cell: 3 significant digits at most, whole above 100.
pub fn cell(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// The turns per second of a stored step (older steps lack the field).
pub fn turns_per_s(r: &Value) -> Option<f64> {
    r["turns_per_s"].as_f64().or_else(|| {
        let (t, w) = (r["turns"].as_f64()?, r["wall_ms"].as_f64()?);
        (w > 0.0).then(|| t / (w / 1000.0))
    })
}

/// One table row from a RESULT object (as stored, so history re-renders the same) and
/// its standing against the budget (holds, over, collapsed; empty when not judged).
pub fn row(r: &Value, standing: &str) -> String {
    let o = |k: &str| cell(r[k].as_f64());
    format!(
        "| {:>8} | {:<17} | {:<9} | {:>7} | {:>8} | {:>8} | {:>9} | {:>9} | {:>7} | {:>7} | {:>7} | {:>11} | {:<7} |",
        r["concurrency"].as_u64().unwrap_or(0),
        r["outcome"].as_str().unwrap_or(""),
        standing,
        cell(turns_per_s(r)),
        o("p50_session_ms"),
        o("p99_session_ms"),
        o("latency_inflation"),
        r["cpu_of_cap"]
            .as_f64()
            .map_or("—".to_string(), |c| format!("{:.0} %", c * 100.0)),
        o("peak_rss_mb"),
        o("rss_kb_per_session"),
        r["peak_threads"].as_u64().unwrap_or(0),
        o("cpu_ms_per_turn"),
        r["harness"]["bound"].as_str().unwrap_or(""),
    )
}

/// Latency per named request (sessions written as `[[setup]]`/`[[turn]]`/`[[teardown]]`),
/// a row per step and request (by name); None when no step has any.
pub fn requests(steps: &[Value]) -> Option<String> {
    let mut out = String::from(
        "| sessions | request | ok | p50 ms | p99 ms | failed |
|---------:|:--------|---:|-------:|-------:|-------:|
",
    );
    let mut any = false;
    for s in steps {
        for (name, q) in s["requests"].as_object().into_iter().flatten() {
            any = true;
            out.push_str(&format!(
                "| {} | {name} | {} | {} | {} | {} |
",
                s["concurrency"].as_u64().unwrap_or(0),
                q["count"].as_u64().unwrap_or(0),
                cell(q["p50_ms"].as_f64()),
                cell(q["p99_ms"].as_f64()),
                q["errors"].as_u64().unwrap_or(0),
            ));
        }
    }
    any.then_some(out)
}

/// The SUT's dependencies (`[[service]]`, `[[probe]]`) at every step, a row each, with
/// the SUT's connections to each: None when no step has any.
pub fn dependencies(steps: &[Value]) -> Option<String> {
    let mut out = String::from(
        "| sessions | dependency | kind | processes | RSS MB | threads | CPU ms/turn | clients | SUT's connections |
|---------:|:-----------|:-----|----------:|-------:|--------:|------------:|--------:|------------------:|
",
    );
    let mut any = false;
    for s in steps {
        for d in s["dependencies"].as_array().into_iter().flatten() {
            any = true;
            let name = d["name"].as_str().unwrap_or("");
            let conns = s["connections"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["peer"].as_str() == Some(name))
                .map_or("—".to_string(), |c| c["peak"].to_string());
            out.push_str(&format!(
                "| {} | {name} | {}{} | {} | {} | {} | {} | {} | {conns} |\n",
                s["concurrency"].as_u64().unwrap_or(0),
                d["kind"].as_str().unwrap_or(""),
                if d["exited"] == true { " (exited)" } else { "" },
                d["processes"].as_u64().unwrap_or(0),
                cell(d["peak_rss_mb"].as_f64()),
                d["peak_threads"].as_u64().unwrap_or(0),
                cell(d["cpu_ms_per_turn"].as_f64()),
                d["peak_clients"].as_u64().unwrap_or(0),
            ));
        }
    }
    any.then_some(out)
}

/// A step's standing as the run's verdict recorded it ("" for runs from before budgets).
pub fn standing_in<'a>(doc: &'a Value, step: &Value) -> &'a str {
    doc["analysis"]["verdict"]["standings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["concurrency"] == step["concurrency"])
        .and_then(|s| s["standing"].as_str())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_get_a_row_per_step_and_name() {
        let steps = vec![
            serde_json::json!({"concurrency": 4, "requests": {"create": {"count": 4, "p50_ms": 2.594, "p99_ms": 8.3, "errors": 0}, "run": {"count": 12, "p50_ms": 449.0, "p99_ms": null, "errors": 1}}}),
            serde_json::json!({"concurrency": 8}),
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
            serde_json::json!({"concurrency": 8, "connections": [{"port": 41000, "peer": "redis", "peak": 4}],
                "dependencies": [{"name": "redis", "kind": "service", "processes": 1, "peak_rss_mb": 11.9,
                "peak_threads": 5, "cpu_ms_per_turn": 0.42, "peak_clients": 5, "exited": true}]}),
            serde_json::json!({"concurrency": 16}),
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
        let r = serde_json::json!({"concurrency": 16, "outcome": "ok", "turns": 30, "wall_ms": 1000.0,
            "p50_session_ms": 1903.62, "p99_session_ms": 1916.93, "latency_inflation": 1.0234,
            "cpu_of_cap": 0.974, "peak_rss_mb": 10.2, "rss_kb_per_session": 117.8,
            "peak_threads": 3, "cpu_ms_per_turn": 0.33, "harness": {"bound": "sut"}});
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
