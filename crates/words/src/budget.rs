//! One step judged alone against the budgets a flag named (`run --budget rss_mb=4096`):
//! the line that says how it stands, first in what `run` prints.

use result::budget::{num, words};
use result::words::{count, Unit};
use result::{Check, CheckFrom, StepResult};

/// "budget: 8 sessions within budget — RSS MB 1721 ≤ 4096; no session failed", from the
/// step and its checks (the budget's, `from` Budget); a step that failed is not judged,
/// and the line says why.
pub fn alone(s: &StepResult, checks: &[Check]) -> String {
    let u = Unit::of_step(s);
    let level = u.level(s.concurrency);
    if !s.judged_by_budget() {
        let why = match s.sessions_failed {
            0 => format!("it ended {}", s.outcome),
            f => format!("{f} of {} failed", count(s.sessions_ok + f, u.one())),
        };
        return format!("budget: {level}, not judged — {why}");
    }
    let budget: Vec<&Check> = checks
        .iter()
        .filter(|c| c.from == CheckFrom::Budget)
        .collect();
    let said: Vec<String> = budget
        .iter()
        .map(|c| {
            let v = c.value.map_or("none".into(), num);
            let op = if c.over { ">" } else { "≤" };
            format!("{} {v} {op} {}", words(&c.name), num(c.limit))
        })
        .collect();
    let standing = match budget.iter().any(|c| c.over) {
        true => "over budget",
        false => "within budget",
    };
    format!(
        "budget: {level} {standing} — {}; no {} failed",
        said.join(", "),
        u.one()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::Outcome;

    fn rss(value: f64, from: CheckFrom) -> Check {
        Check {
            name: if from == CheckFrom::Budget {
                "rss_mb"
            } else {
                "peak_rss_mb"
            }
            .into(),
            from,
            limit: 4096.0,
            value: Some(value),
            over: value > 4096.0,
        }
    }

    /// "N sessions within 4 GB, no errors", and the same over it or failing; a threshold
    /// beside the budget is not the budget's.
    #[test]
    fn a_step_judged_alone_says_its_standing_first() {
        let mut s = StepResult {
            concurrency: 8,
            sessions_ok: 8,
            ..StepResult::default()
        };
        assert_eq!(
            alone(
                &s,
                &[
                    rss(1721.4, CheckFrom::Budget),
                    rss(9000.0, CheckFrom::Threshold)
                ]
            ),
            "budget: 8 sessions within budget — RSS MB 1721 ≤ 4096; no session failed"
        );
        assert_eq!(
            alone(&s, &[rss(4210.0, CheckFrom::Budget)]),
            "budget: 8 sessions over budget — RSS MB 4210 > 4096; no session failed"
        );
        s.sessions_failed = 2;
        s.sessions_ok = 6;
        assert_eq!(
            alone(&s, &[]),
            "budget: 8 sessions, not judged — 2 of 8 sessions failed"
        );
        s.sessions_failed = 0;
        s.outcome = Outcome::Timeout;
        assert_eq!(
            alone(&s, &[]),
            "budget: 8 sessions, not judged — it ended timeout"
        );
    }
}
