//! The harness's CPU by part as one line: the total, the part that cost the most, then
//! the others in the order of their cost. It reads a RESULT's `harness.parts` only.

use crate::grid::{Col, Grid};
use result::harness::{HarnessParts, PartCpu};
use result::StepResult;

/// What the harness explains beside its table.
pub const HOW: &str = "Plimsoll's own CPU over each step, by the kernel's count of its threads: ms per completed turn, and as a share of the SUT's CPU over the same step; the part that cost most (the probe samples on a clock, so at a few turns a second its per-turn cost is large).";

/// A row per step that has its parts: sessions, harness ms a turn, its share of the
/// SUT's CPU, and the largest part with its ms a turn. None when no step has parts.
pub fn table(steps: &[StepResult]) -> Option<Grid> {
    let mut g = Grid::new(&[
        Col::right("sessions"),
        Col::right("harness ms/turn"),
        Col::right("of the SUT's CPU"),
        Col::left("largest part"),
        Col::right("its ms/turn"),
    ]);
    for r in steps {
        let Some(p) = &r.harness.parts else { continue };
        let (name, big) = p.largest();
        let of_sut = match r.cpu_sec > 0.0 {
            true => format!("{:.0} %", p.total.cpu_sec / r.cpu_sec * 100.0),
            false => "—".into(),
        };
        let ms = |x: &PartCpu| x.ms_per_turn.map_or("—".into(), |m| format!("{m:.2}"));
        g.row(vec![
            r.concurrency.to_string().into(),
            ms(&p.total).into(),
            of_sut.into(),
            words(name).into(),
            ms(&big).into(),
        ]);
    }
    (!g.is_empty()).then_some(g)
}

fn per(p: &PartCpu) -> String {
    match p.ms_per_turn {
        Some(ms) => format!("{ms:.2} ms a turn"),
        None => format!("{:.2} CPU s", p.cpu_sec),
    }
}

/// "harness: 1.00 CPU s (10.00 ms a turn); most in the mock's serving (5.00 ms a turn),
/// then the driver 3.00 ms a turn, …" — the parts that cost anything, largest first.
pub fn line(parts: &HarnessParts) -> String {
    let mut rest: Vec<_> = parts
        .named()
        .into_iter()
        .filter(|(_, p)| p.cpu_sec > 0.0)
        .collect();
    rest.sort_by(|a, b| b.1.cpu_sec.total_cmp(&a.1.cpu_sec));
    let mut out = format!(
        "harness: {:.2} CPU s ({})",
        parts.total.cpu_sec,
        per(&parts.total)
    );
    let mut it = rest.into_iter();
    if let Some((name, p)) = it.next() {
        out += &format!("; most in {} ({})", words(name), per(&p));
    }
    let others: Vec<String> = it
        .map(|(name, p)| format!("{} {}", words(name), per(&p)))
        .collect();
    if !others.is_empty() {
        out += &format!(", then {}", others.join(", "));
    }
    out
}

/// A part's name as said in a sentence.
pub fn words(name: &str) -> &'static str {
    match name {
        "driver" => "the driver",
        "mock_serving" => "the mock's serving",
        "mock_oracle" => "the mock's oracle",
        "mock_cache" => "the mock's prompt cache",
        "probe_sampling" => "the probe's sampling",
        "probe_threads" => "the probe's thread reads",
        _ => "orchestration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(cpu_sec: f64) -> PartCpu {
        PartCpu {
            cpu_sec,
            ms_per_turn: Some(cpu_sec * 10.0),
        }
    }

    #[test]
    fn the_table_has_a_row_per_step_with_parts() {
        let parts = HarnessParts {
            total: part(0.2),
            driver: part(0.05),
            probe_sampling: part(0.15),
            ..HarnessParts::default()
        };
        let mut with = StepResult {
            concurrency: 8,
            cpu_sec: 2.0,
            ..StepResult::default()
        };
        with.harness.parts = Some(parts);
        let without = StepResult::default();
        let t = table(&[without.clone(), with]).unwrap().markdown();
        assert!(
            t.ends_with("| 8 | 2.00 | 10 % | the probe's sampling | 1.50 |\n"),
            "{t}"
        );
        assert_eq!(t.lines().count(), 3);
        assert_eq!(table(&[without]), None);
    }

    #[test]
    fn the_line_names_the_largest_first_and_skips_what_cost_nothing() {
        let p = HarnessParts {
            total: part(1.0),
            driver: part(0.3),
            mock_serving: part(0.5),
            mock_oracle: part(0.1),
            orchestration: part(0.1),
            ..HarnessParts::default()
        };
        assert_eq!(
            line(&p),
            "harness: 1.00 CPU s (10.00 ms a turn); most in the mock's serving (5.00 ms a turn), then the driver 3.00 ms a turn, the mock's oracle 1.00 ms a turn, orchestration 1.00 ms a turn"
        );
    }
}
