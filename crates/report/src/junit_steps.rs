//! JUnit XML and the pull-request summary for `run` and `ramp`. A step's cases are the
//! checks its exit code is made of (the outcome, every session completing, integrity, the
//! config's thresholds, the harness keeping up), so the report fails exactly when `run`
//! exits non-zero. A ladder is a suite per level, a case per budget check at that level,
//! failing where the level is over budget or collapsed, with the figures.

use super::{document, Case};
use crate::num::cell;
use result::budget::{num, words};
use result::ladder::LadderDoc;
use result::words::{count, Unit};
use result::{Bound, Outcome, StepReport};

/// The thresholds `run` judges a step by (`[thresholds]`; 0 judges nothing).
#[derive(Clone, Copy, Debug, Default)]
pub struct Thresholds {
    pub p99_session_ms: f64,
    pub peak_rss_mb: f64,
}

/// The cases of one step, what `run`'s exit code is made of.
fn step_cases(step: &StepReport, crossed: &[String], t: Thresholds) -> Vec<Case> {
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
            (r.outcome != Outcome::Ok).then(|| match &step.cause {
                Some(c) => format!("outcome {} — {c}", r.outcome),
                None => format!("outcome {}", r.outcome),
            }),
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
    let thresholds = [
        ("p99_session_ms", t.p99_session_ms, r.p99_session_ms),
        ("peak_rss_mb", t.peak_rss_mb, Some(r.peak_rss_mb)),
    ];
    for (name, limit, value) in thresholds.into_iter().filter(|x| x.1 > 0.0) {
        let mut c = case(
            format!("{name} ≤ {}", num(limit)),
            format!("{name} {}", cell(value)),
            crossed.iter().find(|c| c.starts_with(name)).cloned(),
            "budget",
        );
        c.skipped = value
            .is_none()
            .then(|| "not measured in this step".to_string());
        cases.push(c);
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
pub fn run(step: &StepReport, crossed: &[String], t: Thresholds) -> String {
    let name = format!(
        "plimsoll run: {}",
        Unit::of_step(&step.result).level(step.result.concurrency)
    );
    document("plimsoll run", &[(name, step_cases(step, crossed, t))])
}

/// The Markdown a CI job summary or a pull request's comment shows for one step: pass or
/// fail and why, then the step's lines as the terminal shows them.
pub fn run_summary(step: &StepReport, crossed: &[String], t: Thresholds) -> String {
    let failed: Vec<String> = step_cases(step, crossed, t)
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
    let lines = crate::step::lines(step, crossed).join("\n");
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
                let said = format!("{} {figure}", words(c.budget));
                let skipped = match (judged, c.value) {
                    (false, _) => Some("not judged: the level collapsed".to_string()),
                    (true, None) => Some("not measured at this level".to_string()),
                    _ => None,
                };
                Case {
                    name: format!("{} ≤ {}", words(c.budget), num(c.limit)),
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
        s.push_str(crate::table::header_for(&doc.steps));
        s.push('\n');
        for r in &doc.steps {
            s.push_str(&crate::table::row(r, crate::table::standing_in(doc, r)));
            s.push('\n');
        }
        s.push('\n');
    }
    s
}
