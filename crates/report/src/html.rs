//! `report.html` and `compare.html`: one self-contained file each (no scripts, no
//! network) with a chart per measure against concurrency (`svg`), smoothing nothing,
//! each ending with a line on how to read it.

use crate::svg::{chart, esc, Chart, Marks, Series, W};
use result::compare::CompareDoc;
use result::ladder::{KneeReading, LadderAnalysis, LadderDoc};
use result::{Bound, Confidence};
use std::fmt::Write;

/// The marks every chart of a ladder carries.
fn marks(doc: &LadderDoc, a: &LadderAnalysis) -> Marks {
    let steps = &doc.steps;
    Marks {
        collapsed: steps.iter().position(|s| !s.outcome.is_ok()),
        // Judged against a budget: the last level within it, or no mark when none is
        // (the ceiling would say "holds" where the verdict says nothing holds).
        ceiling: match &a.verdict {
            Some(v) => v.holds.map(|h| (h as f64, "holds")),
            None => a.ceiling.map(|c| (c as f64, "ceiling")),
        },
        knee: match &a.knee {
            // Calls are judged by what callers hear, not by a rate of turns.
            _ if result::words::Unit::of(steps).is_calls() => None,
            KneeReading::Found(k)
                if matches!(k.confidence, Confidence::Clear | Confidence::Weak) =>
            {
                Some((k.from, k.to))
            }
            _ => None,
        },
        harness_bound: steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.harness.bound == Bound::Harness)
            .map(|(i, _)| i)
            .collect(),
        line: a
            .verdict
            .as_ref()
            .and_then(|v| v.line.as_ref())
            .filter(|l| l.high > l.low)
            .map(|l| (l.low as f64, l.high as f64)),
        running: doc
            .running
            .and_then(|n| steps.iter().rposition(|s| s.concurrency == n)),
    }
}

/// The whole report for a ladder document (fresh or from the history): the verdict on
/// top, the charts, then the steps as a table.
pub fn render(doc: &LadderDoc) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll report</title><style>{}</style></head><body>{}</body></html>
"#,
        style(),
        body(doc)
    )
}

/// The report's style sheet, for a page that shows its body (the live view).
pub fn style() -> String {
    STYLE.replace("{W}", &W.to_string())
}

/// What the report's page holds: the verdict and its lines, the charts, the steps.
pub fn body(doc: &LadderDoc) -> String {
    let steps = &doc.steps;
    let xs: Vec<f64> = steps.iter().map(|s| s.concurrency as f64).collect();
    let counts: Vec<u64> = steps.iter().map(|s| s.sessions_ok).collect();
    let empty = LadderAnalysis::default();
    let a = doc.ladder().unwrap_or(&empty);
    let marks = marks(doc, a);
    let charts = crate::charts::ladder(doc, a, (&xs, &counts), &marks);
    let details: String = crate::verdict::detail_lines(doc)
        .iter()
        .map(|l| format!("<li>{}</li>", esc(l.trim())))
        .collect();
    format!(
        r#"<h1>Plimsoll ramp</h1><p class="verdict"><b>Verdict:</b> {}</p><p>{}</p><ul>{}</ul>{}{}"#,
        esc(&crate::verdict::headline(doc)),
        esc(&doc.config),
        details,
        charts,
        steps_and_dependencies(doc),
    )
}

/// The page's style (`{W}`: a chart's width).
pub(crate) const STYLE: &str = "
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
section{display:inline-block;vertical-align:top;margin:0 16px 20px 0;width:{W}px}
.t{font:bold 13px sans-serif} .a{font:10px sans-serif;fill:#555} .n{font:9px sans-serif;fill:#999}
.m{font:10px sans-serif} .l{font:11px sans-serif} .np{font:9px sans-serif;fill:#c33} .hb{font:9px sans-serif;fill:#e70} .how{font-size:12px;color:#555;margin:2px 0}
.verdict{font-size:17px;border-left:5px solid #36c;padding:6px 12px;background:#f4f7fc}
table{border-collapse:collapse;font-size:12px;margin-top:8px} td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
tr.over td{background:#fff4e0} tr.collapsed td{background:#fde}
";

/// The steps of a ladder as a table, then the latency per request and the dependencies
/// when there are any.
pub(crate) fn steps_and_dependencies(doc: &LadderDoc) -> String {
    let steps = &doc.steps;
    let mut out = format!("<h2>Steps</h2>{}", crate::table::grid(doc, steps).html());
    if let Some(t) = crate::table::requests(steps) {
        let _ = write!(
            out,
            "<h2>Latency per request</h2><p class=\"how\">Each named request of the session, first send to last reply (polls included); failed counts its errors of every kind.</p>{}",
            t.html()
        );
    }
    if let Some(t) = crate::harness::table(steps) {
        let _ = write!(
            out,
            "<h2>What the harness cost</h2><p class=\"how\">{}</p>{}",
            crate::harness::HOW,
            t.html()
        );
    }
    if let Some(t) = crate::cost::table(steps) {
        let _ = write!(
            out,
            "<h2>LLM cost and prompt cache</h2><p class=\"how\">{}</p>{}{}",
            crate::cost::HOW_HTML,
            t.html(),
            crate::cost::break_kinds_html(steps)
        );
    }
    if let Some((table, growth)) = crate::mcp::stdio_table(steps) {
        let _ = write!(
            out,
            "<h2>MCP stdio servers</h2><p class=\"how\">The stdio MCP servers in the SUT's process tree (part of its RSS): the most alive at once, per session, their memory each and together.</p>{}<p>{}</p>",
            table.html(),
            crate::svg::esc(&growth)
        );
    }
    if let Some(t) = crate::table::dependencies(steps) {
        let _ = write!(
            out,
            "<h2>Dependencies</h2><p class=\"how\">Each [[service]] Plimsoll started for the step and each [[probe]] it found running, sampled beside the SUT; clients is the most connections it had accepted at once.</p>{}",
            t.html()
        );
    }
    out
}

/// `compare.html`: per metric, the base and branch medians against concurrency on one
/// chart, with the verdict of every level under it.
pub fn render_compare(doc: &CompareDoc) -> String {
    let levels = &doc.levels;
    let xs: Vec<f64> = levels.iter().map(|l| l.concurrency as f64).collect();
    let counts: Vec<u64> = levels
        .iter()
        .map(|l| l.base_outcomes.len() as u64)
        .collect();
    let mut body = String::new();
    let mut names: Vec<String> = Vec::new();
    for l in levels {
        for m in crate::markdown::metric_names(l) {
            if !names.contains(&m) {
                names.push(m);
            }
        }
    }
    for m in &names {
        let m = m.as_str();
        let side = |k: fn(&result::compare::MetricVerdict) -> Option<f64>| -> Vec<Option<f64>> {
            levels
                .iter()
                .map(|l| l.metrics.get(m).and_then(k))
                .collect()
        };
        let verdicts: Vec<String> = levels
            .iter()
            .map(|l| {
                format!(
                    "{}: {}",
                    l.concurrency,
                    l.metrics
                        .get(m)
                        .map_or(String::new(), |v| words::compare::call(v.verdict))
                )
            })
            .collect();
        let how = format!(
            "Medians of the repetitions (n under each level is per side). Verdicts — {}.",
            verdicts.join("; ")
        );
        let c = Chart {
            title: m,
            unit: "median",
            how: &how,
            series: vec![
                Series {
                    name: "base",
                    color: "#36c",
                    values: side(|v| v.base),
                },
                Series {
                    name: "branch",
                    color: "#c33",
                    values: side(|v| v.branch),
                },
            ],
            curve: None,
            limit: None,
        };
        let _ = write!(
            body,
            "<section>{}</section>",
            chart(&c, &xs, &counts, &Marks::default())
        );
    }
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll compare</title><style>
body{{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}}
section{{display:inline-block;vertical-align:top;margin:0 16px 20px 0;width:{W}px}}
.t{{font:bold 13px sans-serif}} .a{{font:10px sans-serif;fill:#555}} .n{{font:9px sans-serif;fill:#999}}
.m{{font:10px sans-serif}} .l{{font:11px sans-serif}} .np{{font:9px sans-serif;fill:#c33}} .how{{font-size:12px;color:#555;margin:2px 0}}
</style></head><body><h1>Plimsoll compare</h1><p>base: <code>{}</code><br>branch: <code>{}</code><br>ceiling: base {}, branch {}</p>{}</body></html>
"#,
        esc(&doc.base),
        esc(&doc.branch),
        crate::json_opt(doc.ceiling.base),
        crate::json_opt(doc.ceiling.branch),
        body
    )
}

#[cfg(test)]
mod tests {
    use crate::table::tests::step;
    use result::ladder::{Collapse, KneeReading, LadderAnalysis, LadderDoc, UslReading, Verdict};

    #[test]
    fn renders_every_chart_and_marks_gaps() {
        let doc = LadderDoc {
            config: "x.toml".into(),
            steps: vec![
                step(
                    serde_json::json!({"concurrency": 10, "sessions_ok": 10, "outcome": "ok", "latency_inflation": 1.0, "p50_session_ms": 100.0, "p99_session_ms": 120.0, "peak_rss_mb": 10.0, "rss_kb_per_session": 50.0, "peak_threads": 3, "cpu_ms_per_turn": 1.0, "turns": 30, "wall_ms": 1000.0}),
                ),
                step(
                    serde_json::json!({"concurrency": 20, "sessions_ok": 0, "outcome": "oom_killed", "latency_inflation": null, "p50_session_ms": null, "p99_session_ms": null, "peak_rss_mb": 90.0, "rss_kb_per_session": 400.0, "peak_threads": 3, "cpu_ms_per_turn": null, "turns": 5, "wall_ms": 300.0}),
                ),
            ],
            analysis: Some(result::ladder::RunAnalysis::Ladder(Box::new(
                LadderAnalysis {
                    ceiling: Some(10),
                    knee: KneeReading::default(),
                    collapse: Some(Collapse {
                        concurrency: 20,
                        outcome: result::Outcome::OomKilled,
                        cause: None,
                        last_output: None,
                        worker: None,
                    }),
                    usl: UslReading::Refused {
                        refused: result::ladder::UslRefusal::TooFewSteps { steps: 2 },
                    },
                    ..LadderAnalysis::default()
                },
            ))),
            ..LadderDoc::default()
        };
        let html = super::render(&doc);
        assert_eq!(html.matches("<svg").count(), 8);
        // A provider with limits adds its chart.
        let mut pushed = doc.clone();
        let provider = |refused_share: f64| result::Provider {
            refused_share,
            ..result::Provider::default()
        };
        pushed.steps[0].provider = Some(provider(0.0));
        pushed.steps[1].provider = Some(provider(0.2));
        let p = super::render(&pushed);
        assert_eq!(p.matches("<svg").count(), 9);
        assert!(p.contains("Provider pushback"));
        assert!(
            html.contains("not plotted")
                && html.contains("n=10")
                && html.contains(">ceiling<")
                && html.contains("How to read this")
        );
        // Judged against a budget: the level that holds is marked; none, when none holds.
        let judged = |holds: Option<usize>| {
            let mut d = doc.clone();
            if let Some(result::ladder::RunAnalysis::Ladder(a)) = &mut d.analysis {
                a.verdict = Some(Verdict {
                    holds,
                    ..Verdict::default()
                });
            }
            d
        };
        assert!(super::render(&judged(Some(10))).contains(">holds<"));
        let none = super::render(&judged(None));
        assert!(!none.contains(">holds<") && !none.contains(">ceiling<"));
        assert!(
            !html.contains("<script") && !html.contains("http://") && !html.contains("https://")
        );
    }
}
