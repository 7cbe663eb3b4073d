//! A sweep's reports: the terminal's row per point and verdict, `report.md`'s table, and
//! `report.html`'s heat map (rows: the first axis, columns: the last; colour: the
//! standing; the number: throughput).

use crate::grid::{Col, Grid};
use crate::svg::esc;
use result::environment::Axis;
use result::sweep::{Cell, SweepDoc};
use result::{PointStanding, StepResult};
use std::fmt::Write;

fn cell(v: Option<f64>) -> String {
    crate::table::cell(v)
}

/// Deliveries a second on a bus, else turns a second.
fn rate(step: &StepResult) -> Option<f64> {
    step.bus
        .as_ref()
        .map(|b| b.deliver_per_s)
        .or_else(|| crate::table::turns_per_s(step))
}

/// What went wrong in a step, in a few words: lost messages, failed sessions.
fn damage(step: &StepResult) -> String {
    match &step.bus {
        Some(b) => format!("{} lost, {} failed", b.lost, step.sessions_failed),
        None => format!("{} failed", step.sessions_failed),
    }
}

/// One point on the terminal.
pub fn row(label: &str, step: &StepResult, standing: &str) -> String {
    format!(
        "  {label:<28} {standing:<9} {:<12} {:>10}/s  p50/p99 {} / {} ms  {}",
        step.outcome.as_str(),
        cell(rate(step)),
        cell(step.p50_turn_ms),
        cell(step.p99_turn_ms),
        damage(step)
    )
}

/// The verdict: each row's cliff.
pub fn verdict_lines(doc: &SweepDoc) -> Vec<String> {
    let mut out = vec!["verdict:".to_string()];
    for r in &doc.sweep.rows {
        out.push(format!("  {}", words::sweep::row(&doc.sweep, r)));
    }
    if doc.interrupted {
        out.push("  (interrupted: the points not run are marked skipped)".into());
    }
    out
}

fn names(doc: &SweepDoc) -> Vec<String> {
    doc.sweep.axes.iter().map(|a| a.name.clone()).collect()
}

pub fn markdown(doc: &SweepDoc) -> String {
    let mut md = String::from("# Plimsoll sweep\n\n");
    for line in verdict_lines(doc).iter().skip(1) {
        let _ = writeln!(md, "- {}", line.trim());
    }
    md.push('\n');
    md.push_str(&points_table(doc).markdown());
    let _ = writeln!(
        md,
        "\nThroughput is deliveries a second for a bus, turns a second otherwise. Each row stops at its first collapse (the rest: skipped)."
    );
    md
}

/// Every point, as a Markdown table.
fn points_table(doc: &SweepDoc) -> Grid {
    let names = [
        "point",
        "standing",
        "outcome",
        "throughput /s",
        "p50 ms",
        "p99 ms",
        "damage",
    ];
    let cols: Vec<Col> = names.iter().map(|&n| Col::plain(n)).collect();
    let mut g = Grid::new(&cols);
    for c in &doc.sweep.cells {
        let s = c.step.as_ref();
        g.row(vec![
            c.label.as_str().into(),
            c.standing.as_str().into(),
            s.map_or("—", |s| s.outcome.as_str()).into(),
            cell(s.and_then(rate)).into(),
            cell(s.and_then(|s| s.p50_turn_ms)).into(),
            cell(s.and_then(|s| s.p99_turn_ms)).into(),
            s.map_or("—".into(), damage).into(),
        ]);
    }
    g
}

fn colour(standing: PointStanding) -> &'static str {
    match standing {
        PointStanding::Holds => "#9cd69c",
        PointStanding::Over => "#f2c46d",
        PointStanding::Collapsed => "#e88080",
        PointStanding::Skipped => "#ddd",
    }
}

/// The heat map: the first axis down, the last across (one row with one axis).
pub fn heat_map(doc: &SweepDoc) -> String {
    let axes = &doc.sweep.axes;
    let vals = |a: Option<&Axis>| -> Vec<f64> { a.map(|a| a.values.clone()).unwrap_or_default() };
    let across = vals(axes.last());
    let down = if axes.len() > 1 {
        vals(axes.first())
    } else {
        vec![f64::NAN]
    };
    let (cw, ch, left, top) = (110.0, 44.0, 120.0, 40.0);
    let w = left + cw * across.len() as f64 + 10.0;
    let h = top + ch * down.len() as f64 + 10.0;
    let names = names(doc);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12"><text x="{left}" y="14" font-weight="bold">{} →</text>"#,
        esc(names.last().map_or("", |s| s.as_str()))
    );
    if axes.len() > 1 {
        let _ = write!(
            svg,
            r#"<text x="4" y="{}" font-weight="bold">{} ↓</text>"#,
            top - 6.0,
            esc(&names[0])
        );
    }
    for (j, x) in across.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            left + cw * (j as f64 + 0.5),
            top - 6.0,
            analysis::budget::num(*x)
        );
    }
    let cells: &[Cell] = &doc.sweep.cells;
    for (i, y) in down.iter().enumerate() {
        if !y.is_nan() {
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                left - 8.0,
                top + ch * (i as f64 + 0.6),
                analysis::budget::num(*y)
            );
        }
        for (j, x) in across.iter().enumerate() {
            let c = cells.iter().find(|c| {
                let v = &c.values;
                v.last() == Some(x) && (y.is_nan() || v.first() == Some(y))
            });
            let standing = c.map_or(PointStanding::Skipped, |c| c.standing);
            let text = c
                .and_then(|c| c.step.as_ref())
                .and_then(rate)
                .map_or("—".to_string(), |r| {
                    format!("{}/s", crate::table::cell(Some(r)))
                });
            let (x0, y0) = (left + cw * j as f64, top + ch * i as f64);
            let _ = write!(
                svg,
                r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="{}" stroke="#fff"><title>{}: {standing}</title></rect><text x="{}" y="{}" text-anchor="middle">{}</text><text x="{}" y="{}" text-anchor="middle" font-size="10">{standing}</text>"##,
                cw - 2.0,
                ch - 2.0,
                colour(standing),
                esc(c.map_or("", |c| c.label.as_str())),
                x0 + cw / 2.0,
                y0 + 18.0,
                esc(&text),
                x0 + cw / 2.0,
                y0 + 34.0
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

pub fn html(doc: &SweepDoc) -> String {
    let verdict: Vec<String> = verdict_lines(doc)
        .iter()
        .skip(1)
        .map(|l| format!("<li>{}</li>", esc(l.trim())))
        .collect();
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll sweep</title><style>{}</style></head><body><h1>Plimsoll sweep</h1><p class="verdict"><b>Verdict:</b></p><ul>{}</ul><h2>Heat map</h2>{}<p>Each cell is one fresh step: green holds the budget, amber is over it, red collapsed, grey was not run (a smaller value in its row collapsed). The number is throughput: deliveries a second for a bus, turns a second otherwise.</p><h2>Points</h2>{}</body></html>
"#,
        crate::html::STYLE,
        verdict.join(""),
        heat_map(doc),
        points_table(doc).html()
    )
}
