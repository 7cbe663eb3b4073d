//! `report.md` for a ladder and `compare.md` for a comparison.

use analysis::stats::METRICS;
use result::compare::{CompareDoc, CompareLevel};
use result::ladder::LadderDoc;

/// A ladder document as Markdown: the verdict first, then the table, how to read it,
/// the lines that back the verdict, and the projection.
pub fn ladder(doc: &LadderDoc) -> String {
    let steps = &doc.steps;
    let env = doc.environment.run();
    let cap = env
        .and_then(|e| e.cap.as_ref())
        .map_or("none".to_string(), |c| {
            format!(
                "{} cores, {} MB ({}{})",
                crate::json_num(c.cpus),
                c.mem_bytes as f64 / 1048576.0,
                c.method,
                c.cpu_by
                    .as_deref()
                    .map_or(String::new(), |b| format!(", held by {b}"))
            )
        });
    let partition = env.and_then(|e| e.partition.as_ref()).map_or(
        "none (Plimsoll and the SUT share the cores)".to_string(),
        |p| {
            let many = p.harness.contains([',', '-']);
            let cores = if many { "cores" } else { "core" };
            format!("Plimsoll on {cores} {}, the SUT on {}", p.harness, p.sut)
        },
    );
    let run = doc
        .run
        .map_or("not recorded".to_string(), |r| r.to_string());
    let mut s = format!(
        "# Plimsoll ramp — {}\n\n**Verdict: {}**\n\nRun {run} · machine: {} · cap: {cap} · cores: {partition}\n\n",
        doc.config,
        crate::verdict::headline(doc),
        doc.environment.machine(),
    );
    let crate::verdict::Details {
        lines: main,
        capacity,
    } = crate::verdict::details(doc);
    // A verdict with labelled lines says them before the table, in the terminal's order.
    let labelled = doc
        .ladder()
        .and_then(|a| a.verdict.as_ref())
        .is_some_and(|v| !words::headline::lines_of(v).is_empty());
    if labelled {
        for l in &main {
            s.push_str(&format!("- {l}\n"));
        }
        s.push('\n');
    }
    s.push_str(&crate::table::grid(doc, steps).markdown());
    s.push_str("\n*How to read this:* one fresh SUT per row; budget is holds / over / collapsed against the budget above; turns/s is completed turns per second with every session in flight; sess p50/p99 are whole-session times in ms; inflation is p50 session time over the time the mock itself took; CPU % cap is the SUT's CPU over the cores it could use; KB/sess is (peak − baseline RSS) / sessions; `bound = harness` rows describe Plimsoll, not the SUT.\n\n");
    if !labelled {
        for l in main {
            s.push_str(&format!("- {l}\n"));
        }
    }
    s.push_str(&sections(steps, capacity.as_deref()));
    s
}

/// The sections after a ladder's table: the workload replayed, per request, cost and
/// cache, MCP stdio servers, dependencies, the capacity projection (each when it has
/// something to say).
fn sections(steps: &[result::StepResult], capacity: Option<&[String]>) -> String {
    let mut s = String::new();
    if let Some(w) = steps.iter().find_map(|r| r.workload.as_ref()) {
        s.push_str("\n## Workload replayed\n\nEvery level replayed this recording (its sessions drawn with the seed); each step's own fidelity is in its RESULT.\n\n");
        for l in crate::workload::lines(w).iter().take(1) {
            s.push_str(&format!("- {l}\n"));
        }
    }
    if let Some(t) = crate::table::requests(steps) {
        s.push_str("\n## Latency per request\n\nEach named request of the session, first send to last reply (polls included); *failed* counts its errors of every kind.\n\n");
        s.push_str(&t.markdown());
    }
    if let Some(t) = crate::cost::markdown(steps) {
        s.push_str(&t);
    }
    if let Some(t) = crate::harness::table(steps) {
        s.push_str(&format!(
            "\n## What the harness cost\n\n{}\n\n{}",
            crate::harness::HOW,
            t.markdown()
        ));
    }
    if let Some((t, growth)) = crate::mcp::stdio_table(steps) {
        s.push_str("\n## MCP stdio servers\n\nThe stdio MCP servers in the SUT's process tree (part of its RSS): the most alive at once, per session, their memory each and together.\n\n");
        s.push_str(&format!("{}\n{growth}\n", t.markdown()));
    }
    if let Some(t) = crate::table::dependencies(steps) {
        s.push_str("\n## Dependencies\n\nEach `[[service]]` Plimsoll started for the step and each `[[probe]]` it found running, sampled beside the SUT; *clients* is the most connections it had accepted at once, *SUT's connections* the most the SUT held to it.\n\n");
        s.push_str(&t.markdown());
    }
    if let Some(working) = capacity {
        s.push_str("\n## Capacity projection (not a measurement)\n\n");
        for l in working {
            s.push_str(&format!("- {}\n", l.trim()));
        }
    }
    s
}

/// The metrics of a compared level: the fixed ones in their order, then per request.
pub(crate) fn metric_names(level: &CompareLevel) -> Vec<String> {
    let mut names: Vec<String> = METRICS.iter().map(|m| m.to_string()).collect();
    for k in level.metrics.keys() {
        if !names.contains(k) {
            names.push(k.clone());
        }
    }
    names
}

/// The comparison as a Markdown table (also printed on the terminal).
pub fn compare(doc: &CompareDoc) -> String {
    let mut s = format!(
        "# Plimsoll compare\n\nbase: `{}`  \nbranch: `{}`  \nrepetitions: {} (interleaved)\n\n",
        doc.base, doc.branch, doc.repeat
    );
    if let Some(l) = &doc.line {
        let r = |(a, b): (usize, usize)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        };
        s.push_str(&format!(
            "line (the highest level clean in every run – in any): base {}, branch {}: {}\n\n",
            r(l.base),
            r(l.branch),
            if l.differ {
                "the ranges are apart, the lines differ"
            } else {
                "the ranges overlap, no difference the repetitions can tell"
            }
        ));
    }
    s.push_str("| sessions | metric | base | branch | ratio | 95 % CI | verdict |\n|---:|:--|---:|---:|---:|:--|:--|\n");
    for l in &doc.levels {
        for m in metric_names(l) {
            let v = l.metrics.get(m.as_str());
            let f = |x: Option<f64>| {
                x.filter(|x| x.is_finite())
                    .map_or("—".into(), |x| format!("{x:.2}"))
            };
            let ci = v.and_then(|v| v.ci95).map_or("—".into(), |c| {
                format!("{} – {}", f(Some(c[0])), f(Some(c[1])))
            });
            s.push_str(&format!(
                "| {} | {m} | {} | {} | {} | {ci} | {} |\n",
                l.concurrency,
                f(v.and_then(|v| v.base)),
                f(v.and_then(|v| v.branch)),
                f(v.and_then(|v| v.ratio)),
                v.map_or(String::new(), |v| words::compare::call(v.verdict))
            ));
        }
    }
    s.push_str("\n*How to read this:* ratio = branch median / base median; every metric is lower-is-better, so \"worse\" means p < 0.05/7 (Mann–Whitney, Bonferroni over the 7 metrics) and medians more than 1 % apart; the 95 % interval of the ratio is a bootstrap.\n");
    s
}
