//! A comparison's breached `--fail-on` gates in words: the one place they are worded, for
//! the terminal's FAIL lines, the CI summary and the JUnit cases.

use result::compare::Breach;

/// "4 sessions: p99_session_ms +30.0 % (limit +10.0 %)", "ceiling 8 → 4", ….
pub fn said(b: &Breach) -> String {
    match b {
        Breach::Grew {
            level,
            unit,
            metric,
            change,
            limit,
        } => format!(
            "{}: {metric} {:+.1} % (limit +{:.1} %)",
            unit.level(*level),
            change * 100.0,
            limit * 100.0
        ),
        Breach::Vanished {
            level,
            unit,
            metric,
        } => format!(
            "{}: {metric} has a base value but none on the branch (every such request failed?)",
            unit.level(*level)
        ),
        Breach::NoFigure { metric } => format!(
            "--fail-on {metric}: no level has this figure (a request of that name is not in the session, or no LLM call to price?)"
        ),
        Breach::Ceiling { base, branch } => format!("ceiling {base} → {branch}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::words::Unit;

    #[test]
    fn each_breach_says_its_gate_level_and_figures() {
        let grew = Breach::Grew {
            level: 4,
            unit: Unit::Call,
            metric: "response_p95_ms".into(),
            change: 0.3,
            limit: 0.1,
        };
        assert_eq!(
            said(&grew),
            "4 calls: response_p95_ms +30.0 % (limit +10.0 %)"
        );
        let gone = Breach::Vanished {
            level: 1,
            unit: Unit::Session,
            metric: "requests.poll.p50_ms".into(),
        };
        assert!(said(&gone).starts_with("1 session: requests.poll.p50_ms has a base value"));
        let none = Breach::NoFigure {
            metric: "cost_per_session".into(),
        };
        assert!(said(&none).starts_with("--fail-on cost_per_session: no level has this figure"));
        let ceiling = Breach::Ceiling { base: 8, branch: 4 };
        assert_eq!(said(&ceiling), "ceiling 8 → 4");
    }
}
