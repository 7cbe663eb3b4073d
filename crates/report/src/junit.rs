//! JUnit XML, the test report CI systems display: a comparison's gates, each gate at each
//! level a test case that fails exactly when `compare` exits 2 for it, with its figures
//! (a step's and a ladder's budget checks are in [`steps`]).

use crate::num::cell;
use result::compare::{Breach, CompareDoc};

#[path = "junit_steps.rs"]
pub mod steps;

/// One test case: its name, what it measured, and why it failed (if it did): a `gate`,
/// a `budget` or an `outcome`.
#[derive(Clone)]
struct Case {
    name: String,
    out: String,
    failure: Option<String>,
    kind: &'static str,
    /// Why the case was not judged (a collapsed level's budgets, a figure not measured).
    skipped: Option<String>,
}

/// The JUnit document of a comparison: a case per `--fail-on` gate and level (or the
/// ceiling's one), a failing case for a gate no level had, and a passing case per level
/// that says its outcomes when no gate was given.
pub fn compare(doc: &CompareDoc, gates: &[(String, f64)], breaches: &[Breach]) -> String {
    let mut cases = Vec::new();
    for (g, limit) in gates {
        let bound = format!("≤ +{} %", result::budget::num(limit * 100.0));
        if g == "ceiling" {
            let b = breaches
                .iter()
                .find(|b| matches!(b, Breach::Ceiling { .. }));
            cases.push(Case {
                name: format!("ceiling may drop {bound}"),
                out: format!(
                    "base {}, branch {}",
                    opt(doc.ceiling.base),
                    opt(doc.ceiling.branch)
                ),
                failure: b.map(crate::gates::said),
                kind: "gate",
                skipped: None,
            });
            continue;
        }
        let missing = breaches
            .iter()
            .find(|b| matches!(b, Breach::NoFigure { metric } if metric == g));
        if let Some(m) = missing {
            cases.push(Case {
                name: format!("{g} {bound}"),
                out: String::new(),
                failure: Some(crate::gates::said(m)),
                kind: "gate",
                skipped: None,
            });
            continue;
        }
        for l in &doc.levels {
            let Some(v) = l.metrics.get(g) else { continue };
            cases.push(Case {
                name: format!("{g} at {} sessions {bound}", l.concurrency),
                out: format!(
                    "base {}, branch {}, ratio {}, verdict {}",
                    cell(v.base),
                    cell(v.branch),
                    cell(v.ratio),
                    words::compare::call(v.verdict)
                ),
                failure: breaches
                    .iter()
                    .find(|b| b.gate() == g && b.level() == Some(l.concurrency))
                    .map(crate::gates::said),
                kind: "gate",
                skipped: None,
            });
        }
    }
    if gates.is_empty() {
        for l in &doc.levels {
            cases.push(Case {
                name: format!("{} sessions (no gate)", l.concurrency),
                out: format!(
                    "base outcomes {:?}, branch outcomes {:?}",
                    l.base_outcomes, l.branch_outcomes
                ),
                failure: None,
                kind: "gate",
                skipped: None,
            });
        }
    }
    suite("plimsoll compare", &cases)
}

fn suite(name: &str, cases: &[Case]) -> String {
    document(name, &[(name.to_string(), cases.to_vec())])
}

/// The XML of test suites under one name: each suite's cases, a failure where one failed.
fn document(name: &str, suites: &[(String, Vec<Case>)]) -> String {
    let count = |f: &dyn Fn(&Case) -> bool| -> usize {
        suites.iter().flat_map(|(_, c)| c).filter(|c| f(c)).count()
    };
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
        esc(name),
        count(&|_| true),
        count(&|c| c.failure.is_some()),
        count(&|c| c.skipped.is_some())
    );
    for (suite, cases) in suites {
        let failures = cases.iter().filter(|c| c.failure.is_some()).count();
        let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
        s.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n",
            esc(suite),
            cases.len()
        ));
        for c in cases {
            s.push_str(&case(c, suite));
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

/// A case, its class its suite's name: CI systems tell tests apart by class and name,
/// and a ladder's levels share their cases' names.
fn case(c: &Case, suite: &str) -> String {
    let mut s = format!(
        "    <testcase classname=\"{}\" name=\"{}\">\n",
        esc(suite),
        esc(&c.name)
    );
    if let Some(why) = &c.skipped {
        s.push_str(&format!("      <skipped message=\"{}\"/>\n", esc(why)));
    }
    if let Some(f) = &c.failure {
        s.push_str(&format!(
            "      <failure message=\"{m}\" type=\"{}\">{m}</failure>\n",
            c.kind,
            m = esc(f)
        ));
    }
    if !c.out.is_empty() {
        s.push_str(&format!("      <system-out>{}</system-out>\n", esc(&c.out)));
    }
    s.push_str("    </testcase>\n");
    s
}

fn opt(x: Option<usize>) -> String {
    x.map_or("none".into(), |n| n.to_string())
}

/// Text as XML character data or an attribute value.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // Control characters XML 1.0 cannot carry.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// The Markdown a CI job summary or a pull request's comment shows: pass or fail and
/// why, then the comparison's table.
pub fn compare_summary(doc: &CompareDoc, breaches: &[Breach]) -> String {
    let head = match breaches.is_empty() {
        true => "**Plimsoll compare: pass** — no gate breached\n\n".to_string(),
        false => format!(
            "**Plimsoll compare: FAIL** — {}\n\n{}\n\n",
            crate::words::count(breaches.len() as u64, "gate") + " breached",
            breaches
                .iter()
                .map(|b| format!("- {}", crate::gates::said(b)))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    head + &crate::markdown::compare(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::compare::{CompareLevel, MetricCall, MetricVerdict, Sides};

    fn doc() -> CompareDoc {
        let mut metrics = std::collections::BTreeMap::new();
        metrics.insert(
            "p99_session_ms".to_string(),
            MetricVerdict {
                base: Some(100.0),
                branch: Some(130.0),
                ratio: Some(1.3),
                verdict: MetricCall::Worse,
                ..Default::default()
            },
        );
        CompareDoc {
            levels: vec![CompareLevel {
                concurrency: 4,
                metrics,
                ..Default::default()
            }],
            ceiling: Sides {
                base: Some(4),
                branch: Some(4),
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_breached_gate_is_a_failure_with_its_figures_and_text_is_escaped() {
        let gates = vec![
            ("p99_session_ms".to_string(), 0.1),
            ("ceiling".to_string(), 0.0),
            ("requests.<&>.p50_ms".to_string(), 0.1),
        ];
        let breaches = vec![
            Breach::Grew {
                level: 4,
                unit: result::words::Unit::Session,
                metric: "p99_session_ms".into(),
                change: 0.3,
                limit: 0.1,
            },
            Breach::NoFigure {
                metric: "requests.<&>.p50_ms".into(),
            },
        ];
        let x = compare(&doc(), &gates, &breaches);
        assert!(x.contains("tests=\"3\" failures=\"2\""), "{x}");
        assert!(
            x.contains("name=\"p99_session_ms at 4 sessions ≤ +10 %\""),
            "{x}"
        );
        assert!(
            x.contains("message=\"4 sessions: p99_session_ms +30.0 % (limit +10.0 %)\""),
            "{x}"
        );
        assert!(
            x.contains("--fail-on requests.&lt;&amp;&gt;.p50_ms: no level"),
            "{x}"
        );
        // A ladder of calls: its breach is its level's case's failure all the same (the
        // case was once found by the words "4 sessions: ").
        let calls = [Breach::Grew {
            level: 4,
            unit: result::words::Unit::Call,
            metric: "p99_session_ms".into(),
            change: 0.3,
            limit: 0.1,
        }];
        let c = compare(&doc(), &gates[..1], &calls);
        assert!(
            c.contains("message=\"4 calls: p99_session_ms +30.0 %"),
            "{c}"
        );
        assert!(
            x.contains("base 100, branch 130, ratio 1.30, verdict worse"),
            "{x}"
        );
        assert!(x.contains("name=\"ceiling may drop ≤ +0 %\""), "{x}");
        let clean = compare(&doc(), &gates, &[]);
        assert!(clean.contains("failures=\"0\""), "{clean}");
        assert!(compare_summary(&doc(), &breaches)
            .starts_with("**Plimsoll compare: FAIL** — 2 gates breached"));
    }
}
