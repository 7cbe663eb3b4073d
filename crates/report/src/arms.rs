//! The report of a ramp over `[[arm]]`s: a line per arm saying what it holds and its
//! wall, every arm on each chart (one colour an arm), then each arm's verdict and steps.

use crate::svg::{chart, esc, Chart, Marks, Series, W};
use result::arms::ArmsDoc;
use result::ladder::LadderDoc;
use result::StepResult;
use std::fmt::Write;

const COLORS: [&str; 8] = [
    "#36c", "#c33", "#393", "#e70", "#639", "#099", "#963", "#c6c",
];

fn name(arm: &LadderDoc) -> &str {
    arm.arm.as_deref().unwrap_or("?")
}

/// "process  holds 4 calls · wall: … — at 4: 64 MB a call (PSS, 1 → 4 calls), 171 CPU ms a
/// call-second" — an arm's headline and what a session cost at its line, one line each
/// (the density question: a process per call against many in one); then, with a
/// replicas axis, each variant's scaling.
pub fn summary_lines(doc: &ArmsDoc) -> Vec<String> {
    let arms = &doc.arms;
    let width = arms
        .iter()
        .map(|a| name(a).chars().count())
        .max()
        .unwrap_or(0);
    let mut out: Vec<String> = arms
        .iter()
        .map(|a| {
            format!(
                "{:<width$}  {}{}",
                name(a),
                crate::verdict::headline(a),
                at_the_line(a).map_or(String::new(), |c| format!(" — {c}")),
                width = width
            )
        })
        .collect();
    out.extend(scaling_lines(doc));
    out
}

/// What a session cost at the level an arm holds: memory a session (PSS where it was
/// read; the slope over the levels that did not collapse, `analysis::memory::session_cost`)
/// and CPU, a call-second's for calls, a turn's for text sessions.
fn at_the_line(a: &LadderDoc) -> Option<String> {
    let held = a.ladder()?.verdict.as_ref()?.holds?;
    let s = a.steps.iter().find(|s| s.concurrency == held)?;
    let cost = analysis::memory::session_cost(&a.steps, held)?;
    let (noun, cpu) = if s.voice.is_some() {
        let per = s.cpu_ms_per_call_second();
        ("call", per.map(|c| format!("{c:.0} CPU ms a call-second")))
    } else {
        let per = s.cpu_ms_per_turn;
        ("session", per.map(|c| format!("{c:.1} CPU ms a turn")))
    };
    // One level's own figure carries what the first session set up (on the LiveKit
    // worker's process arm, 83 MB at 1 call where the cgroup grew 61 a call): say so.
    let over = match cost.over {
        Some((lo, hi)) => format!(", {lo} → {hi} {noun}s"),
        None => format!(", the first {noun}'s set-up in it"),
    };
    // Under a megabyte a session, in kilobytes: "0.0 MB" would say nothing grew.
    let amount = match cost.mb < 1.0 {
        true => format!("{:.0} KB", cost.mb * 1024.0),
        false => format!("{:.1} MB", cost.mb),
    };
    let memory = format!("{amount} a {noun} ({}{over})", cost.measure.as_str());
    Some(match cpu {
        Some(c) => format!("at {held}: {memory}, {c}"),
        None => format!("at {held}: {memory}"),
    })
}

/// "scaling of held: 1 replica: 6.2 turns/s at most, 71 MB each; 2 replicas: …".
fn scaling_lines(doc: &ArmsDoc) -> Vec<String> {
    let rows = &doc.scaling;
    let mut variants: Vec<String> = Vec::new();
    for r in rows {
        if !variants.contains(&r.variant) {
            variants.push(r.variant.clone());
        }
    }
    variants
        .iter()
        .map(|v| {
            let parts: Vec<String> = rows
                .iter()
                .filter(|r| &r.variant == v)
                .map(words::scaling::line)
                .collect();
            format!("scaling of {v}: {}", parts.join("; "))
        })
        .collect()
}

/// Every level any arm ran, in order.
fn levels(arms: &[LadderDoc]) -> Vec<f64> {
    let mut xs: Vec<f64> = arms
        .iter()
        .flat_map(|a| &a.steps)
        .map(|s| s.concurrency as f64)
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// One measure of every arm at every level (None where an arm did not run it).
fn per_arm(
    arm: &LadderDoc,
    xs: &[f64],
    get: &dyn Fn(&StepResult) -> Option<f64>,
) -> Vec<Option<f64>> {
    xs.iter()
        .map(|x| {
            arm.steps
                .iter()
                .find(|s| s.concurrency as f64 == *x)
                .and_then(get)
        })
        .collect()
}

type Get = fn(&StepResult) -> Option<f64>;

/// The charts: (title, unit, how to read it, the measure).
const CHARTS: [(&str, &str, &str, Get); 6] = [
    (
        "Throughput",
        "turns/s",
        "Completed turns per second, an arm a line: where a line stops growing is that arm's wall.",
        crate::table::turns_per_s,
    ),
    (
        "Latency inflation",
        "× ideal",
        "p50 session time over the mock's own time; 1.0 is no queueing at all.",
        |s| s.latency_inflation,
    ),
    (
        "CPU of its cap",
        "%",
        "The SUT's CPU over the cores it could use; 100 % is the wall.",
        |s| s.cpu_of_cap.map(|c| c * 100.0),
    ),
    (
        "Session latency p99",
        "ms",
        "Whole-session time, 99th percentile.",
        |s| s.p99_session_ms,
    ),
    (
        "Peak memory",
        "MB",
        "The SUT's process tree at its highest during the step: by PSS where it was read (each page its processes share counted once, as forked workers share theirs), RSS else.",
        |s| Some(s.memory().2),
    ),
    (
        "CPU per turn",
        "ms",
        "The SUT's CPU time per completed turn.",
        |s| s.cpu_ms_per_turn,
    ),
];

fn charts(arms: &[LadderDoc], xs: &[f64], counts: &[u64]) -> String {
    let names: Vec<String> = arms.iter().map(|a| name(a).to_string()).collect();
    let mut body = String::new();
    for (title, unit, how, get) in CHARTS {
        let series = arms
            .iter()
            .enumerate()
            .map(|(i, a)| Series {
                name: &names[i],
                color: COLORS[i % COLORS.len()],
                values: per_arm(a, xs, &get),
            })
            .collect();
        let c = Chart {
            title,
            unit,
            how,
            series,
            curve: None,
            limit: None,
        };
        let _ = write!(
            body,
            "<section>{}</section>",
            chart(&c, xs, counts, &Marks::default())
        );
    }
    body.push_str(&connections_chart(arms, xs, counts));
    body
}

/// Peak connections per arm and peer: a pool is a line that stays flat as sessions grow.
fn connections_chart(arms: &[LadderDoc], xs: &[f64], counts: &[u64]) -> String {
    let mut lines: Vec<(String, usize, String)> = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        for p in crate::charts::peers(&a.steps) {
            lines.push((format!("{}→{p}", name(a)), i, p));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let series = lines
        .iter()
        .enumerate()
        .map(|(j, (label, i, peer))| Series {
            name: label,
            color: COLORS[j % COLORS.len()],
            values: per_arm(&arms[*i], xs, &|s| crate::charts::peak_to(s, peer)),
        })
        .collect();
    let c = Chart {
        title: "Connections",
        unit: "peak",
        how: "The SUT's established connections to each peer at their most (arm→peer). A line that stays flat while sessions grow, with throughput flat too, is a pool every turn waits for.",
        series,
        curve: None,
        limit: None,
    };
    format!(
        "<section>{}</section>",
        chart(&c, xs, counts, &Marks::default())
    )
}

/// Sessions completed at each level, over every arm.
fn counts(arms: &[LadderDoc], xs: &[f64]) -> Vec<u64> {
    xs.iter()
        .map(|x| {
            arms.iter()
                .map(|a| {
                    per_arm(a, &[*x], &|s| Some(s.sessions_ok as f64))[0].unwrap_or(0.0) as u64
                })
                .sum()
        })
        .collect()
}

/// An arm's verdict in the summary table: what it holds, its wall, its collapse.
fn cells(a: &LadderDoc) -> (String, String, String) {
    let v = a.ladder().and_then(|l| l.verdict.as_ref());
    let level = |x: Option<usize>| x.map_or("none".into(), |h| h.to_string());
    (
        level(v.and_then(|v| v.holds)),
        v.map_or(String::new(), |v| words::wall::text(&v.wall)),
        level(v.and_then(|v| v.collapse)),
    )
}

/// `report.html` for arms.
pub fn html(doc: &ArmsDoc) -> String {
    let arms = &doc.arms;
    let xs = levels(arms);
    let counts = counts(arms, &xs);
    let mut rows = String::new();
    for (i, a) in arms.iter().enumerate() {
        let (holds, wall, collapse) = cells(a);
        let _ = write!(
            rows,
            r#"<tr><td style="color:{}"><b>{}</b></td><td>{holds}</td><td style="text-align:left">{}</td><td>{collapse}</td><td style="text-align:left">{}</td></tr>"#,
            COLORS[i % COLORS.len()],
            esc(name(a)),
            esc(&wall),
            esc(&at_the_line(a).unwrap_or_default()),
        );
    }
    let scaling: String = scaling_lines(doc)
        .iter()
        .map(|l| format!("<li>{}</li>", esc(l)))
        .collect();
    let mut each = String::new();
    for a in arms {
        let _ = write!(
            each,
            "<h2>Arm {}</h2><p class=\"verdict\">{}</p>{}",
            esc(name(a)),
            esc(&crate::verdict::headline(a)),
            crate::html::steps_and_dependencies(a)
        );
    }
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll arms</title><style>{}</style></head><body><h1>Plimsoll ramp — {} arms</h1><p>{}</p><table><tr><th>arm</th><th>holds</th><th>wall</th><th>collapse</th><th>a session at its line</th></tr>{rows}</table><ul>{scaling}</ul><div>{}</div>{each}</body></html>
"#,
        crate::html::STYLE.replace("{W}", &W.to_string()),
        arms.len(),
        esc(&doc.config),
        charts(arms, &xs, &counts),
    )
}

/// `report.md` for arms: a line per arm, then each arm's own report.
pub fn markdown(doc: &ArmsDoc) -> String {
    let mut s = format!(
        "# Plimsoll ramp — {} arms of {}\n\n| arm | holds | wall | collapse | a session at its line |\n|:--|--:|:--|--:|:--|\n",
        doc.arms.len(),
        doc.config
    );
    for a in &doc.arms {
        let (holds, wall, collapse) = cells(a);
        let _ = writeln!(
            s,
            "| {} | {holds} | {} | {collapse} | {} |",
            name(a),
            wall.replace('|', "\\|"),
            at_the_line(a).unwrap_or_default(),
        );
    }
    for l in scaling_lines(doc) {
        let _ = writeln!(s, "\n- {l}");
    }
    for a in &doc.arms {
        let own = crate::markdown::ladder(a).replacen(
            "# Plimsoll ramp —",
            &format!("## Arm {} —", name(a)),
            1,
        );
        let _ = write!(s, "\n{own}");
    }
    s
}
