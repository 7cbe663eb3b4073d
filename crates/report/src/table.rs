//! The ladder table: one row a step, as printed while a ramp runs and in report.md.
//! Numbers are rounded for people here; the JSON keeps them whole.

use crate::grid::{Cell, Col, Grid};
use result::ladder::LadderDoc;
use result::{Standing, StepResult};

/// The ladder table's columns, with the state column for runs whose steps have one.
fn columns(state: bool) -> Vec<Col> {
    let mut c = vec![
        Col::right("sessions").fixed(8),
        Col::left("outcome").fixed(17),
    ];
    if state {
        c.push(Col::left("state").fixed(16));
    }
    c.extend([
        Col::left("budget").fixed(9),
        Col::right("turns/s").fixed(7),
        Col::right("sess p50").fixed(8),
        Col::right("sess p99").fixed(8),
        Col::right("inflation").fixed(9),
        Col::right("CPU % cap").fixed(9),
        Col::right("RSS MB").fixed(7),
        Col::right("KB/sess").fixed(7),
        Col::right("threads").fixed(7),
        Col::right("CPU ms/turn").fixed(11),
        Col::left("bound").fixed(7),
    ]);
    c
}

/// The calls table's columns: how soon the bot answered (response p50/p95 from the end
/// of the caller's speech to its first audio), how its audio broke (the share that
/// stalled, the longest gap), replies heard on the wrong call, the SUT's responsiveness
/// beside the calls, the harness's own frame timing, and what a call costs.
pub const CALL_COLUMNS: &[Col] = &[
    Col::right("calls").fixed(5),
    Col::left("outcome").fixed(17),
    Col::left("state").fixed(16),
    Col::left("budget").fixed(9),
    Col::right("resp p50").fixed(8),
    Col::right("resp p95").fixed(8),
    Col::right("stall %").fixed(7),
    Col::right("gap ms").fixed(6),
    Col::right("wrong").fixed(5),
    Col::right("probe p99").fixed(9),
    Col::right("frames p99").fixed(10),
    Col::right("CPU % cap").fixed(9),
    Col::right("RSS MB").fixed(7),
    Col::right("MB/call").fixed(7),
    Col::right("threads").fixed(7),
    Col::left("bound").fixed(7),
];

/// One row's cells of a step of calls; `state` is its state cell.
fn call_cells(r: &StepResult, v: &result::VoiceCalls, state: &str, standing: &str) -> Vec<Cell> {
    vec![
        r.concurrency.to_string().into(),
        r.outcome.as_str().into(),
        state.into(),
        standing.into(),
        cell(v.response_p50_ms).into(),
        cell(v.response_p95_ms).into(),
        format!("{:.1}", v.stall_share * 100.0).into(),
        cell(Some(v.longest_gap_ms)).into(),
        v.words_wrong.to_string().into(),
        cell(r.probe_p99_ms).into(),
        cell(Some(v.frame_jitter_p99_ms)).into(),
        r.cpu_of_cap
            .map_or("—".to_string(), |c| format!("{:.0} %", c * 100.0))
            .into(),
        cell(Some(r.peak_rss_mb)).into(),
        // What a call costs by PSS where it was read (result's `memory`), RSS else.
        cell(Some(r.memory().1)).into(),
        r.peak_threads.to_string().into(),
        r.harness.bound.as_str().into(),
    ]
}

/// The header a ramp prints before its first step: the calls table for voice calls.
pub fn live_header(unit: result::words::Unit) -> String {
    match unit.is_calls() {
        true => Grid::new(CALL_COLUMNS).head(),
        false => Grid::new(&columns(true)).head(),
    }
}

/// The columns for these steps: the calls table's for calls; with the state column
/// when any carries a state.
fn columns_for(steps: &[StepResult]) -> Vec<Col> {
    if result::words::Unit::of(steps).is_calls() {
        return CALL_COLUMNS.to_vec();
    }
    columns(any_state(steps))
}

fn any_state(steps: &[StepResult]) -> bool {
    steps.iter().any(|s| s.state.is_some())
}

/// The header for these steps (its two lines, no newline after them).
pub fn header_for(steps: &[StepResult]) -> String {
    Grid::new(&columns_for(steps)).head()
}

/// The steps as one table, each row classed by its standing in the run's verdict.
pub fn grid(doc: &LadderDoc, steps: &[StepResult]) -> Grid {
    let mut g = Grid::new(&columns_for(steps));
    let state = any_state(steps);
    for r in steps {
        let standing = standing_in(doc, r);
        g.row_classed(standing, cells(r, standing, state));
    }
    g
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
    let cols = match &r.voice {
        Some(_) => CALL_COLUMNS.to_vec(),
        None => columns(r.state.is_some()),
    };
    let mut g = Grid::new(&cols);
    g.row(cells(r, standing, r.state.is_some()));
    g.line_at(0)
}

/// A step's cells, in its table's columns: with a state cell where the table has the
/// state column (a step recorded before states were kept shows "—" there).
fn cells(r: &StepResult, standing: &str, state: bool) -> Vec<Cell> {
    if let Some(v) = &r.voice {
        return call_cells(r, v, &state_cell(r), standing);
    }
    let mut c: Vec<Cell> = vec![r.concurrency.to_string().into(), r.outcome.as_str().into()];
    if state {
        c.push(state_cell(r).into());
    }
    c.extend([
        standing.into(),
        cell(turns_per_s(r)).into(),
        cell(r.p50_session_ms).into(),
        cell(r.p99_session_ms).into(),
        cell(r.latency_inflation).into(),
        r.cpu_of_cap
            .map_or("—".to_string(), |c| format!("{:.0} %", c * 100.0))
            .into(),
        cell(Some(r.peak_rss_mb)).into(),
        cell(Some(r.rss_kb_per_session)).into(),
        r.peak_threads.to_string().into(),
        cell(r.cpu_ms_per_turn).into(),
        r.harness.bound.as_str().into(),
    ]);
    c
}

/// Latency per named request (sessions written as `[[setup]]`/`[[turn]]`/`[[teardown]]`)
/// and per MCP tool the SUT called (`mcp NAME`), a row per step and request (by name);
/// None when no step has any.
pub fn requests(steps: &[StepResult]) -> Option<Grid> {
    let mut g = Grid::new(&[
        Col::right("sessions"),
        Col::left("request"),
        Col::right("ok"),
        Col::right("p50 ms"),
        Col::right("p99 ms"),
        Col::right("failed"),
    ]);
    for s in steps {
        let n = || s.concurrency.to_string().into();
        for (name, q) in &s.requests {
            g.row(vec![
                n(),
                name.as_str().into(),
                q.count.to_string().into(),
                cell(q.p50_ms).into(),
                cell(q.p99_ms).into(),
                q.errors.to_string().into(),
            ]);
        }
        // The MCP tools the SUT called: the mock's latency for each, per tool.
        for (name, t) in s.mcp.iter().flat_map(|m| &m.tools) {
            g.row(vec![
                n(),
                format!("mcp {name}").into(),
                (t.calls - t.errors).to_string().into(),
                cell(Some(t.p50_ms)).into(),
                cell(Some(t.p99_ms)).into(),
                t.errors.to_string().into(),
            ]);
        }
    }
    (!g.is_empty()).then_some(g)
}

/// The SUT's dependencies (`[[service]]`, `[[probe]]`) at every step, a row each, with
/// the SUT's connections to each: None when no step has any.
pub fn dependencies(steps: &[StepResult]) -> Option<Grid> {
    let mut g = Grid::new(&[
        Col::right("sessions"),
        Col::left("dependency"),
        Col::left("kind"),
        Col::right("processes"),
        Col::right("RSS MB"),
        Col::right("threads"),
        Col::right("CPU ms/turn"),
        Col::right("clients"),
        Col::right("SUT's connections"),
    ]);
    for s in steps {
        for d in &s.dependencies {
            let conns = s
                .connections
                .iter()
                .find(|c| c.peer.as_deref() == Some(d.name.as_str()))
                .map_or("—".to_string(), |c| c.peak.to_string());
            let exited = if d.exited { " (exited)" } else { "" };
            g.row(vec![
                s.concurrency.to_string().into(),
                d.name.as_str().into(),
                format!("{}{exited}", d.kind).into(),
                d.processes.to_string().into(),
                cell(Some(d.peak_rss_mb)).into(),
                d.peak_threads.to_string().into(),
                cell(d.cpu_ms_per_turn).into(),
                d.peak_clients.to_string().into(),
                conns.into(),
            ]);
        }
    }
    (!g.is_empty()).then_some(g)
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

    /// The calls head the terminal has always printed.
    const CALL_HEADER: &str = "| calls | outcome           | state            | budget    | resp p50 | resp p95 | stall % | gap ms | wrong | probe p99 | frames p99 | CPU % cap | RSS MB  | MB/call | threads | bound   |\n|------:|:------------------|:-----------------|:----------|---------:|---------:|--------:|-------:|------:|----------:|-----------:|----------:|--------:|--------:|--------:|:--------|";

    #[test]
    fn a_call_row_lines_up_with_its_header() {
        let r = step(
            serde_json::json!({"concurrency": 4, "outcome": "ok", "state": "stable",
            "cpu_of_cap": 0.41, "peak_rss_mb": 212.0, "rss_kb_per_session": 30720.0, "peak_threads": 41,
            "harness": {"bound": "sut"},
            "voice": {"protocol": "twilio", "calls": 4, "dropped": 0, "turns": 8, "response_p50_ms": 912.0,
              "response_p95_ms": 1240.5, "response_p99_ms": 1300.0, "stall_ms_per_turn": 3.0, "stall_share": 0.0042,
              "longest_gap_ms": 40.0, "stuttered_share": 0.12, "caller_audio_s": 20.0, "bot_audio_s": 30.0,
              "setup_p50_ms": 12.0, "words_checked": 8, "words_wrong": 1, "words_unheard": 0, "barge_ins": 0,
              "barge_stop_p50_ms": null, "frame_jitter_p99_ms": 0.8}}),
        );
        let line = row(&r, "holds");
        let widths = |s: &str| s.split('|').map(|c| c.chars().count()).collect::<Vec<_>>();
        assert_eq!(widths(&line), widths(CALL_HEADER.lines().next().unwrap()));
        for cell in [
            " 912 ", " 1240 ", " 0.4 ", " 40.0 ", " 1 ", " 0.80 ", " 41 % ", " 30.0 ",
        ] {
            assert!(line.contains(cell), "{cell:?} in {line}");
        }
        assert_eq!(header_for(&[r]), CALL_HEADER);
    }

    /// The heads the terminal has always printed, now written from the columns.
    #[test]
    fn the_heads_are_the_terminal_own() {
        assert_eq!(
            Grid::new(&columns(false)).head(),
            "| sessions | outcome           | budget    | turns/s | sess p50 | sess p99 | inflation | CPU % cap | RSS MB  | KB/sess | threads | CPU ms/turn | bound   |\n|---------:|:------------------|:----------|--------:|---------:|---------:|----------:|----------:|--------:|--------:|--------:|------------:|:--------|"
        );
        assert_eq!(
            Grid::new(&columns(true)).head(),
            "| sessions | outcome           | state            | budget    | turns/s | sess p50 | sess p99 | inflation | CPU % cap | RSS MB  | KB/sess | threads | CPU ms/turn | bound   |\n|---------:|:------------------|:-----------------|:----------|--------:|---------:|---------:|----------:|----------:|--------:|--------:|--------:|------------:|:--------|"
        );
        let r = step(serde_json::json!({"concurrency": 4, "turns_per_s": 2.5}));
        assert_eq!(row(&r, "holds").chars().count(), 154);
    }

    #[test]
    fn requests_get_a_row_per_step_and_name() {
        let steps = vec![
            step(
                serde_json::json!({"concurrency": 4, "requests": {"create": {"count": 4, "p50_ms": 2.594, "p99_ms": 8.3, "errors": 0}, "run": {"count": 12, "p50_ms": 449.0, "p99_ms": null, "errors": 1}}}),
            ),
            step(serde_json::json!({"concurrency": 8})),
        ];
        let t = requests(&steps).unwrap().markdown();
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
        let t = dependencies(&steps).unwrap().markdown();
        assert!(
            t.contains("| 8 | redis | service (exited) | 1 | 11.9 | 5 | 0.42 | 5 | 4 |"),
            "{t}"
        );
        assert_eq!(dependencies(&steps[1..]), None);
    }

    /// A step recorded before states were kept, beside one with a state: its row keeps
    /// every column, "—" for its state, none shifted.
    #[test]
    fn a_step_without_a_state_keeps_its_columns_beside_one_with() {
        let steps = [
            step(serde_json::json!({"concurrency": 1, "harness": {"bound": "sut"}})),
            step(
                serde_json::json!({"concurrency": 2, "state": "stable", "harness": {"bound": "sut"}}),
            ),
        ];
        let md = grid(&LadderDoc::default(), &steps).markdown();
        let bars: Vec<usize> = md.lines().map(|l| l.matches('|').count()).collect();
        assert_eq!(bars, [15, 15, 15, 15], "{md}");
        let first = md.lines().nth(2).unwrap();
        assert!(
            first.contains("| —                |") && first.ends_with("| sut     |"),
            "{first}"
        );
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
        let head = header_for(std::slice::from_ref(&r));
        assert_eq!(widths(&line), widths(head.lines().next().unwrap()));
        assert!(
            line.contains(" 1.02 ") && line.contains(" 97 % ") && line.contains(" 30.0 "),
            "{line}"
        );
        assert!(line.contains("| holds "), "{line}");
    }
}
