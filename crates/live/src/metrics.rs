//! The board as metrics: the level running now, its sessions, turns and turn latency as
//! counters and a histogram, the SUT's memory, threads and CPU; each finished step's
//! RESULT figures as gauges labelled with its level. Decided once here as [`Family`]s,
//! written as Prometheus's text exposition format (`crate::prometheus`) or as OTLP
//! (`crate::otlp`). Names follow Prometheus's conventions: base units (seconds, bytes),
//! `_total` on counters, a `plimsoll_` prefix. A voice call is a session here: the run's
//! `unit` says which it counts.

use crate::board::{Finished, State, Tick};

pub const FAMILIES: &[&str] = &[
    "plimsoll_info",
    "plimsoll_run_done",
    "plimsoll_sut_cpu_cap_cores",
    "plimsoll_level",
    "plimsoll_sessions_in_flight",
    "plimsoll_sut_resident_memory_bytes",
    "plimsoll_sut_threads",
    "plimsoll_sessions_total",
    "plimsoll_turns_total",
    "plimsoll_sut_cpu_seconds_total",
    "plimsoll_probe_seconds",
    "plimsoll_turn_duration_seconds",
    "plimsoll_step_turns_per_second",
    "plimsoll_step_session_p50_seconds",
    "plimsoll_step_session_p99_seconds",
    "plimsoll_step_peak_resident_memory_bytes",
    "plimsoll_step_peak_threads",
    "plimsoll_step_cpu_cap_ratio",
    "plimsoll_step_sessions_ok",
    "plimsoll_step_standing",
];

/// What a family is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Gauge,
    Counter,
    Histogram,
}

/// A point's value: a number, or a histogram's cumulative buckets.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Histogram {
        bounds: Vec<f64>,
        /// Cumulative, one a bound and the last for every observation.
        cumulative: Vec<u64>,
        sum: f64,
    },
}

/// One family: its name, kind, help and points (labels, value).
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    pub points: Vec<(Vec<(&'static str, String)>, Value)>,
}

fn one(
    name: &'static str,
    kind: Kind,
    help: &'static str,
    labels: Vec<(&'static str, String)>,
    v: f64,
) -> Family {
    Family {
        name,
        kind,
        help,
        points: vec![(labels, Value::Number(v))],
    }
}

/// Every family of the board now.
pub fn families(s: &State) -> Vec<Family> {
    let run = || ("run", s.run.clone());
    let arm = s.arm.clone().unwrap_or_default();
    let mut out = vec![
        one(
            "plimsoll_info",
            Kind::Gauge,
            "The run: its name, what a level counts (sessions or calls) and how many shards drive it.",
            vec![
                run(),
                ("unit", s.unit.many().into()),
                ("shards", s.shard.map_or(1, |(_, n)| n).to_string()),
            ],
            1.0,
        ),
        one(
            "plimsoll_run_done",
            Kind::Gauge,
            "1 once the run has ended.",
            vec![run()],
            s.done.is_some() as u8 as f64,
        ),
    ];
    if let Some(c) = s.cap_cores {
        out.push(one(
            "plimsoll_sut_cpu_cap_cores",
            Kind::Gauge,
            "The cores the SUT may use (its cap).",
            vec![run()],
            c,
        ));
    }
    if let Some((l, t)) = s.level.as_ref().and_then(|l| Some((l, l.ticks.last()?))) {
        let level = l.concurrency.to_string();
        out.push(one(
            "plimsoll_level",
            Kind::Gauge,
            "The level running now: sessions (or calls) at once.",
            vec![run(), ("arm", arm.clone())],
            l.concurrency as f64,
        ));
        let shard = s.shard.map_or(0, |(i, _)| i).to_string();
        let at = vec![run(), ("arm", arm), ("level", level), ("shard", shard)];
        out.extend(running(&at, t));
    }
    out.extend(finished(&s.run, &s.steps));
    out
}

/// The level running now: counters since it began, gauges as of its last second.
fn running(at: &[(&'static str, String)], t: &Tick) -> Vec<Family> {
    let l = || at.to_vec();
    let with = |k: &'static str, v: &str| {
        let mut x = at.to_vec();
        x.push((k, v.to_string()));
        x
    };
    let mut out = vec![
        one(
            "plimsoll_sessions_in_flight",
            Kind::Gauge,
            "Sessions (or calls) in flight now.",
            l(),
            t.in_flight as f64,
        ),
        one(
            "plimsoll_sut_resident_memory_bytes",
            Kind::Gauge,
            "The SUT's process tree's resident memory.",
            l(),
            t.rss_bytes as f64,
        ),
        one(
            "plimsoll_sut_threads",
            Kind::Gauge,
            "The most OS threads the SUT's process tree has had at this level.",
            l(),
            t.threads as f64,
        ),
        Family {
            name: "plimsoll_sessions_total",
            kind: Kind::Counter,
            help: "Sessions (or calls) ended at this level, by outcome.",
            points: vec![
                (with("outcome", "ok"), Value::Number(t.sessions_ok as f64)),
                (
                    with("outcome", "failed"),
                    Value::Number(t.sessions_failed as f64),
                ),
            ],
        },
        one(
            "plimsoll_turns_total",
            Kind::Counter,
            "Turns completed at this level.",
            l(),
            t.turns as f64,
        ),
        one(
            "plimsoll_sut_cpu_seconds_total",
            Kind::Counter,
            "CPU seconds the SUT's process tree used at this level.",
            l(),
            t.cpu_sec,
        ),
    ];
    if t.unsampled {
        // A shard's SUT is not sampled: no figure rather than a zero a panel would plot.
        out.retain(|f| !f.name.starts_with("plimsoll_sut_"));
    }
    if let Some(p) = t.probe_ms {
        out.push(one(
            "plimsoll_probe_seconds",
            Kind::Gauge,
            "The responsiveness probe's slowest answer in the last second.",
            l(),
            p / 1000.0,
        ));
    }
    out.push(turn_latency(at, t));
    out
}

/// Turn latency as a histogram: cumulative buckets by bound, their sum.
fn turn_latency(at: &[(&'static str, String)], t: &Tick) -> Family {
    Family {
        name: "plimsoll_turn_duration_seconds",
        kind: Kind::Histogram,
        help:
            "Time from a turn's request to its reply's end (a call's: its reply heard to the end).",
        points: vec![(
            at.to_vec(),
            Value::Histogram {
                bounds: t.turn_bounds_s.clone(),
                cumulative: t.turn_le.clone(),
                sum: t.turn_sum_s,
            },
        )],
    }
}

/// Each finished step's RESULT figures, labelled with its level and how many times it ran
/// before (`repeat="0"` for its first run, 1 and 2 for the runs that confirm the line).
fn finished(run: &str, steps: &[Finished]) -> Vec<Family> {
    type Get = fn(&result::StepResult) -> Option<f64>;
    let figures: [(&'static str, &'static str, Get); 7] = [
        (
            "plimsoll_step_turns_per_second",
            "The step's throughput, as its RESULT says it.",
            |r| r.turns_per_s,
        ),
        (
            "plimsoll_step_session_p50_seconds",
            "The step's median session time.",
            |r| r.p50_session_ms.map(|m| m / 1000.0),
        ),
        (
            "plimsoll_step_session_p99_seconds",
            "The step's 99th-percentile session time.",
            |r| r.p99_session_ms.map(|m| m / 1000.0),
        ),
        (
            "plimsoll_step_peak_resident_memory_bytes",
            "The SUT's peak resident memory in the step.",
            |r| Some(r.peak_rss_mb * 1048576.0),
        ),
        (
            "plimsoll_step_peak_threads",
            "The SUT's peak OS threads in the step.",
            |r| Some(r.peak_threads as f64),
        ),
        (
            "plimsoll_step_cpu_cap_ratio",
            "The SUT's CPU over its cap in the step (1 is the cap full).",
            |r| r.cpu_of_cap,
        ),
        (
            "plimsoll_step_sessions_ok",
            "Sessions (or calls) that went through in the step.",
            |r| Some(r.sessions_ok as f64),
        ),
    ];
    let mut out: Vec<Family> = figures
        .into_iter()
        .map(|(name, help, get)| Family {
            name,
            kind: Kind::Gauge,
            help,
            points: steps
                .iter()
                .filter_map(|f| Some((step_labels(run, f, None), Value::Number(get(&f.result)?))))
                .collect(),
        })
        .collect();
    out.push(Family {
        name: "plimsoll_step_standing",
        kind: Kind::Gauge,
        help: "1 for the step's standing against the budget (holds, over, collapsed).",
        points: steps
            .iter()
            .map(|f| (step_labels(run, f, Some(&f.standing)), Value::Number(1.0)))
            .collect(),
    });
    out.retain(|f| !f.points.is_empty());
    out
}

fn step_labels(run: &str, f: &Finished, standing: Option<&str>) -> Vec<(&'static str, String)> {
    let mut l = vec![
        ("run", run.to_string()),
        ("arm", f.arm.clone().unwrap_or_default()),
        ("level", f.result.concurrency.to_string()),
        ("repeat", f.repeat.to_string()),
    ];
    if let Some(s) = standing {
        l.push(("standing", s.to_string()));
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use result::words::Unit;

    fn tick(t_s: f64, turns: u64) -> Tick {
        Tick {
            t_s,
            in_flight: 4,
            sessions_ok: turns / 3,
            turns,
            rss_bytes: 50 << 20,
            threads: 7,
            cpu_sec: t_s * 0.5,
            probe_ms: Some(12.5),
            turn_le: vec![1, 5, 9],
            turn_bounds_s: vec![0.1, 1.0],
            turn_sum_s: 4.5,
            ..Tick::default()
        }
    }

    fn board() -> Board {
        let b = Board::new(
            "run \"1\"",
            "plimsoll.toml",
            Unit::Session,
            &Default::default(),
        );
        b.cap(Some(2.0));
        b
    }

    #[test]
    fn a_shard_names_itself_and_pushes_no_sut_figure_it_did_not_sample() {
        let b = board();
        b.shard(2, 4);
        b.level(24, false);
        b.tick(Tick {
            unsampled: true,
            ..tick(1.0, 6)
        });
        let m = crate::prometheus::render(&b.state());
        let at = r#"{run="run \"1\"",arm="",level="24",shard="2"}"#;
        assert!(m.contains(&format!("plimsoll_turns_total{at} 6")), "{m}");
        assert!(m.contains(r#"unit="sessions",shards="4"} 1"#), "{m}");
        assert!(!m.contains("plimsoll_sut_threads{"), "{m}");
        assert!(!m.contains("plimsoll_sut_resident_memory_bytes{"), "{m}");
        assert!(!m.contains("plimsoll_sut_cpu_seconds_total{"), "{m}");
        // Its run over, a shard keeps its last second: no document of its own to show.
        b.done(&[]);
        let m = crate::prometheus::render(&b.state());
        assert!(m.contains(&format!("plimsoll_turns_total{at} 6")), "{m}");
        assert!(
            m.contains("plimsoll_run_done{run=\"run \\\"1\\\"\"} 1"),
            "{m}"
        );
        assert_eq!(b.state().instance(), "run \"1\"-shard-2-of-4");
    }

    #[test]
    fn the_running_level_is_counters_gauges_and_a_cumulative_histogram() {
        let b = board();
        b.level(8, false);
        b.tick(tick(1.0, 3));
        b.tick(tick(2.0, 9));
        let m = crate::prometheus::render(&b.state());
        let at = r#"{run="run \"1\"",arm="",level="8",shard="0"}"#;
        for line in [
            "plimsoll_level{run=\"run \\\"1\\\"\",arm=\"\"} 8".to_string(),
            format!("plimsoll_turns_total{at} 9"),
            format!("plimsoll_sessions_in_flight{at} 4"),
            format!("plimsoll_sut_resident_memory_bytes{at} 52428800"),
            format!("plimsoll_sut_cpu_seconds_total{at} 1"),
            format!("plimsoll_probe_seconds{at} 0.0125"),
            r#"plimsoll_turn_duration_seconds_bucket{run="run \"1\"",arm="",level="8",shard="0",le="0.1"} 1"#.to_string(),
            r#"plimsoll_turn_duration_seconds_bucket{run="run \"1\"",arm="",level="8",shard="0",le="+Inf"} 9"#.to_string(),
            format!("plimsoll_turn_duration_seconds_count{at} 9"),
            format!("plimsoll_turn_duration_seconds_sum{at} 4.5"),
            "plimsoll_sut_cpu_cap_cores{run=\"run \\\"1\\\"\"} 2".to_string(),
        ] {
            assert!(m.contains(&line), "{line}\n{m}");
        }
        assert!(m.contains("# TYPE plimsoll_turn_duration_seconds histogram"));
        // With a finished step beside it, every family is declared, and no other.
        b.step(
            &result::StepResult {
                turns_per_s: Some(1.0),
                p50_session_ms: Some(1.0),
                p99_session_ms: Some(1.0),
                cpu_of_cap: Some(0.1),
                ..Default::default()
            },
            "holds",
        );
        b.level(16, false);
        b.tick(tick(1.0, 3));
        let all = crate::prometheus::render(&b.state());
        let mut declared: Vec<&str> = all
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let mut known = FAMILIES.to_vec();
        declared.sort();
        known.sort();
        assert_eq!(declared, known);
        assert!(m.contains("# TYPE plimsoll_turns_total counter"));
        // Every sample line names a family declared before it.
        for l in m.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split(['{', ' ']).next().unwrap();
            let base = name
                .trim_end_matches("_bucket")
                .trim_end_matches("_sum")
                .trim_end_matches("_count");
            assert!(
                m.contains(&format!("# TYPE {base} ")) || m.contains(&format!("# TYPE {name} ")),
                "{l}"
            );
        }
    }

    #[test]
    fn a_finished_step_is_its_result_figures_by_level() {
        let b = board();
        b.level(4, false);
        let r = result::StepResult {
            concurrency: 4,
            turns_per_s: Some(6.25),
            p99_session_ms: Some(1500.0),
            peak_rss_mb: 10.0,
            cpu_of_cap: Some(0.42),
            sessions_ok: 12,
            ..Default::default()
        };
        b.step(&r, "holds");
        b.level(4, true);
        b.step(
            &result::StepResult {
                turns_per_s: Some(6.0),
                ..r.clone()
            },
            "holds",
        );
        let m = crate::prometheus::render(&b.state());
        let first = r#"{run="run \"1\"",arm="",level="4",repeat="0"}"#;
        assert!(
            m.contains(&format!("plimsoll_step_turns_per_second{first} 6.25")),
            "{m}"
        );
        assert!(
            m.contains(
                r#"plimsoll_step_turns_per_second{run="run \"1\"",arm="",level="4",repeat="1"} 6"#
            ),
            "{m}"
        );
        assert!(m.contains(&format!("plimsoll_step_session_p99_seconds{first} 1.5")));
        assert!(m.contains(&format!(
            "plimsoll_step_peak_resident_memory_bytes{first} 10485760"
        )));
        assert!(m.contains(&format!("plimsoll_step_cpu_cap_ratio{first} 0.42")));
        assert!(m.contains(r#"plimsoll_step_standing{run="run \"1\"",arm="",level="4",repeat="0",standing="holds"} 1"#));
        // No level runs now: no live counters.
        assert!(!m.contains("plimsoll_turns_total"));
        assert!(m.contains("plimsoll_run_done{run=\"run \\\"1\\\"\"} 0"));
    }
}
