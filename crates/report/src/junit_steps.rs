//! JUnit XML and the pull-request summary for `run` and `ramp`. A step's cases are the
//! checks its exit code is made of (the outcome, every session completing, integrity, its
//! list of checks — the config's thresholds and the budgets it is judged by — and the
//! harness keeping up), so the report fails exactly when `run` exits non-zero. A ladder is a suite per level, a case per budget check at that level,
//! failing where the level is over budget or collapsed, with the figures.

use super::{document, Case};
use result::budget::{num, words};
use result::ladder::LadderDoc;
use result::words::{count, Unit};
use result::{Bound, Check, Outcome, StepReport};

/// The outcome, with its cause and the SUT's last output where the step kept them.
fn outcome_said(step: &StepReport) -> String {
    let o = step.result.outcome;
    match &step.cause {
        Some(c) => {
            let said = words::cause::with_output(c, step.last_output.as_deref());
            format!("outcome {o} — {said}")
        }
        None => format!("outcome {o}"),
    }
}

/// The cases of one step, what `run`'s exit code is made of.
fn step_cases(step: &StepReport, checks: &[Check]) -> Vec<Case> {
    let r = &step.result;
    let case = |name: String, out: String, failure: Option<String>, kind| Case {
        name,
        out,
        failure,
        kind,
        skipped: None,
    };
    let total = r.sessions_ok + r.sessions_failed;
    let first = step
        .first_errors
        .iter()
        .map(|(k, f)| format!("{k}: {f}"))
        .next()
        .map_or(String::new(), |f| format!("; first: {f}"));
    let mut cases = vec![
        case(
            "the step ran to its end".into(),
            format!("outcome {}", r.outcome),
            (r.outcome != Outcome::Ok).then(|| outcome_said(step)),
            "outcome",
        ),
        case(
            "every session completed".into(),
            format!("{} of {total} completed", r.sessions_ok),
            (r.sessions_failed > 0)
                .then(|| format!("{} of {total} failed{first}", r.sessions_failed)),
            "outcome",
        ),
        case(
            "every reply went to its own session".into(),
            count(r.integrity_violations, "integrity violation"),
            (r.integrity_violations > 0).then(|| {
                let v = step
                    .violations
                    .first()
                    .map_or(String::new(), |v| v.to_string());
                format!(
                    "{}: {v}",
                    count(r.integrity_violations, "integrity violation")
                )
            }),
            "outcome",
        ),
    ];
    for c in checks {
        let mut case = case(
            crate::checks::case_name(c),
            crate::checks::measured(c),
            c.over.then(|| crate::checks::breach(c)),
            "budget",
        );
        case.skipped = c
            .value
            .is_none()
            .then(|| "not measured in this step".to_string());
        cases.push(case);
    }
    cases.push(case(
        "the harness kept up".into(),
        format!(
            "mock lateness p99 {} ms, driver lag p99 {} ms",
            num(r.harness.mock_timing_error_p99_ms),
            num(r.harness.driver_lag_p99_ms)
        ),
        (r.harness.bound == Bound::Harness).then(|| {
            "Plimsoll itself was the bottleneck: these figures describe the harness, not the SUT"
                .to_string()
        }),
        "harness",
    ));
    cases
}

/// The JUnit document of one `plimsoll run` step.
pub fn run(step: &StepReport, checks: &[Check]) -> String {
    let name = format!(
        "plimsoll run: {}",
        Unit::of_step(&step.result).level(step.result.concurrency)
    );
    document("plimsoll run", &[(name, step_cases(step, checks))])
}

/// The Markdown a CI job summary or a pull request's comment shows for one step: pass or
/// fail and why, then the step's lines as the terminal shows them.
pub fn run_summary(step: &StepReport, checks: &[Check]) -> String {
    let failed: Vec<String> = step_cases(step, checks)
        .into_iter()
        .filter_map(|c| c.failure)
        .collect();
    let head = match failed.is_empty() {
        true => format!(
            "**Plimsoll run: pass** — {}, every check held\n\n",
            Unit::of_step(&step.result).level(step.result.concurrency)
        ),
        false => format!(
            "**Plimsoll run: FAIL** — {}\n\n{}\n\n",
            Unit::of_step(&step.result).level(step.result.concurrency),
            failed
                .iter()
                .map(|f| format!("- {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    let lines = crate::step::lines(step, checks).join("\n");
    format!("{head}```text\n{lines}\n```\n")
}

/// The JUnit document of a ramp (or of each arm's ladder): a suite per level, a case for
/// its outcome and one per budget check, failing where the level collapsed or is over
/// budget. Levels above the line fail by design — that is where the line is; gate a
/// change with `compare`.
pub fn ramp(config: &str, docs: &[LadderDoc]) -> String {
    let suites: Vec<(String, Vec<Case>)> = docs.iter().flat_map(level_suites).collect();
    document(&format!("plimsoll ramp: {config}"), &suites)
}

fn level_suites(doc: &LadderDoc) -> Vec<(String, Vec<Case>)> {
    let budget = doc.budget().cloned().unwrap_or_default();
    let arm = doc.arm.as_ref().map_or(String::new(), |a| format!("{a}: "));
    let checks = analysis::standing::checks(&doc.steps, &budget);
    doc.steps
        .iter()
        .zip(checks)
        .map(|(s, checks)| {
            let mut cases = vec![Case {
                name: "the level ran to its end".into(),
                out: format!("outcome {}", s.outcome),
                failure: (s.outcome != Outcome::Ok).then(|| format!("outcome {}", s.outcome)),
                kind: "outcome",
                skipped: None,
            }];
            // A collapsed level's figures are not judged (the verdict does not judge them),
            // nor a figure the level did not measure: both are skipped, not passed.
            let judged = s.outcome == Outcome::Ok;
            cases.extend(checks.into_iter().map(|c| {
                // The figure as the verdict says it (0.0114, not a cell's 0.01).
                let figure = c.value.map_or("—".to_string(), num);
                let said = format!("{} {figure}", words(&c.name));
                let skipped = match (judged, c.value) {
                    (false, _) => Some("not judged: the level collapsed".to_string()),
                    (true, None) => Some("not measured at this level".to_string()),
                    _ => None,
                };
                Case {
                    name: format!("{} ≤ {}", words(&c.name), num(c.limit)),
                    failure: (judged && c.over).then(|| format!("{said} > {}", num(c.limit))),
                    out: said,
                    kind: "budget",
                    skipped,
                }
            }));
            let level = format!("{arm}{}", Unit::of_step(s).level(s.concurrency));
            (level, cases)
        })
        .collect()
}

/// The Markdown a CI job summary or a pull request's comment shows for a ramp: each
/// ladder's verdict, the lines that back it, and its table.
pub fn ramp_summary(docs: &[LadderDoc]) -> String {
    let mut s = String::new();
    for doc in docs {
        let arm = doc
            .arm
            .as_ref()
            .map_or(String::new(), |a| format!(" ({a})"));
        s.push_str(&format!(
            "**Plimsoll ramp{arm}: {}**\n\n",
            crate::verdict::headline(doc)
        ));
        let details = crate::verdict::details(doc);
        for l in &details.lines {
            s.push_str(&format!("- {l}\n"));
        }
        s.push('\n');
        s.push_str(&crate::table::grid(doc, &doc.steps).markdown());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::CheckFrom;

    /// A `run --budget` the step broke exits 2, and its JUnit fails the budget's case with
    /// the figures (it once passed every case); a threshold's case is named as before.
    #[test]
    fn a_broken_budget_fails_its_case_as_the_exit_code_does() {
        let step = StepReport {
            result: result::StepResult {
                concurrency: 4,
                sessions_ok: 4,
                peak_rss_mb: 4210.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let checks = [
            Check {
                name: "p99_session_ms".into(),
                from: CheckFrom::Threshold,
                limit: 2000.0,
                value: Some(1500.0),
                over: false,
            },
            Check {
                name: "rss_mb".into(),
                from: CheckFrom::Budget,
                limit: 4096.0,
                value: Some(4210.0),
                over: true,
            },
        ];
        assert_eq!(step.result.exit_code(&checks), result::exit::THRESHOLD);
        let x = run(&step, &checks);
        assert!(x.contains("name=\"p99_session_ms ≤ 2000\""), "{x}");
        assert!(x.contains("name=\"budget RSS MB ≤ 4096\""), "{x}");
        assert!(
            x.contains("message=\"budget RSS MB 4210 &gt; 4096\""),
            "{x}"
        );
        assert!(x.contains("failures=\"1\""), "{x}");
        let md = run_summary(&step, &checks);
        assert!(md.starts_with("**Plimsoll run: FAIL**"), "{md}");
        assert!(
            md.contains("threshold crossed: budget RSS MB 4210 > 4096"),
            "{md}"
        );
    }
}
