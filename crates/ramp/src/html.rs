//! `report.html`: one self-contained file (no scripts, no network) with a chart per
//! measure against concurrency, drawn as inline SVG. Each chart shows every level on a
//! log2 axis with its sample count, leaves a level with no value on the axis marked
//! "not plotted", starts y at zero, smooths nothing, shades the collapsed step, marks
//! the ceiling and the knee, and ends with a line on how to read it.

use serde_json::Value;
use std::fmt::Write;

const W: f64 = 560.0;
const H: f64 = 240.0;
const L: f64 = 56.0; // left margin
const R: f64 = 16.0;
const T: f64 = 28.0;
const B: f64 = 44.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Series<'a> {
    name: &'a str,
    color: &'a str,
    values: Vec<Option<f64>>,
}

struct Chart<'a> {
    title: &'a str,
    unit: &'a str,
    how: &'a str,
    series: Vec<Series<'a>>,
    /// A fitted curve (x, y) drawn as a dashed line.
    curve: Option<Vec<(f64, f64)>>,
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn svg(
    c: &Chart,
    xs: &[f64],
    counts: &[u64],
    collapsed: Option<usize>,
    ceiling: Option<f64>,
    knee: Option<(f64, f64)>,
) -> String {
    let lx: Vec<f64> = xs.iter().map(|x| x.max(1e-9).log2()).collect();
    let (x0, x1) = (
        lx.first().copied().unwrap_or(0.0),
        lx.last().copied().unwrap_or(1.0),
    );
    let span = if (x1 - x0).abs() < 1e-9 { 1.0 } else { x1 - x0 };
    let px = |x: f64| L + (x.max(1e-9).log2() - x0) / span * (W - L - R);
    let mut ymax = c
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b));
    if let Some(curve) = &c.curve {
        ymax = ymax.max(
            curve
                .iter()
                .map(|p| p.1)
                .fold(0.0, f64::max)
                .min(ymax * 2.0),
        );
    }
    let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.1 };
    let py = |y: f64| T + (H - T - B) * (1.0 - y / ymax);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}">"#,
        esc(c.title)
    );
    let _ = write!(
        s,
        r##"<text x="{L}" y="16" class="t">{} ({})</text>"##,
        esc(c.title),
        esc(c.unit)
    );
    // The collapsed step, shaded.
    if let Some(i) = collapsed {
        let x = px(xs[i]);
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{T}" width="24" height="{:.1}" fill="#fdd" />"##,
            x - 12.0,
            H - T - B
        );
    }
    // Axes and y grid.
    for k in 0..=4 {
        let v = ymax * k as f64 / 4.0;
        let y = py(v);
        let _ = write!(
            s,
            r##"<line x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" class="a" text-anchor="end">{}</text>"##,
            W - R,
            L - 6.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{L}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        H - B,
        W - R,
        H - B
    );
    for (i, &x) in xs.iter().enumerate() {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" class="a" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" class="n" text-anchor="middle">n={}</text>"##,
            px(x),
            H - B + 14.0,
            x,
            px(x),
            H - B + 27.0,
            counts[i]
        );
    }
    // Ceiling and knee.
    if let Some(cx) = ceiling {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" y1="{T}" x2="{0:.1}" y2="{1:.1}" stroke="#2a7" stroke-dasharray="4 3"/><text x="{2:.1}" y="{3:.1}" class="m" fill="#2a7" text-anchor="end">ceiling</text>"##,
            px(cx),
            H - B,
            px(cx) - 3.0,
            H - B - 6.0
        );
    }
    if let Some((a, b)) = knee {
        let (xa, xb) = (px(a), px(b));
        let _ = write!(
            s,
            r##"<rect x="{xa:.1}" y="{T}" width="{:.1}" height="{:.1}" fill="#fa0" opacity="0.15"/><text x="{xa:.1}" y="{:.1}" class="m" fill="#c70">knee</text>"##,
            (xb - xa).max(2.0),
            H - T - B,
            T + 10.0
        );
    }
    if let Some(curve) = &c.curve {
        let pts: Vec<String> = curve
            .iter()
            .filter(|p| p.1 <= ymax)
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#888" stroke-dasharray="5 4"/>"##,
            pts.join(" ")
        );
    }
    for (si, ser) in c.series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = ser
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (px(xs[i]), py(v))))
            .collect();
        if pts.len() > 1 {
            let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                s,
                r##"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"##,
                p.join(" "),
                ser.color
            );
        }
        for (x, y) in &pts {
            let _ = write!(
                s,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{}"/>"##,
                ser.color
            );
        }
        for (i, v) in ser.values.iter().enumerate() {
            if v.is_none() && si == 0 {
                let _ = write!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" class="np" text-anchor="middle">not plotted</text>"##,
                    px(xs[i]),
                    H - B - 6.0
                );
            }
        }
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="16" class="l" fill="{}" text-anchor="end">{}</text>"##,
            W - R - si as f64 * 70.0,
            ser.color,
            esc(ser.name)
        );
    }
    s.push_str("</svg>");
    let _ = write!(
        s,
        r#"<p class="how"><b>How to read this:</b> {}</p>"#,
        esc(c.how)
    );
    s
}

/// The whole report for a ladder document (fresh or from the history).
pub fn render(doc: &Value) -> String {
    let steps = doc["steps"].as_array().cloned().unwrap_or_default();
    let xs: Vec<f64> = steps
        .iter()
        .map(|s| s["concurrency"].as_f64().unwrap_or(1.0))
        .collect();
    let counts: Vec<u64> = steps
        .iter()
        .map(|s| s["sessions_ok"].as_u64().unwrap_or(0))
        .collect();
    let get = |k: &str| -> Vec<Option<f64>> { steps.iter().map(|s| s[k].as_f64()).collect() };
    let a = &doc["analysis"];
    let collapsed = steps.iter().position(|s| s["outcome"] != "ok");
    let ceiling = a["ceiling"].as_f64();
    let knee = match a["knee"]["confidence"].as_str() {
        Some("clear" | "weak") => Some((
            a["knee"]["from"].as_f64().unwrap_or(0.0),
            a["knee"]["to"].as_f64().unwrap_or(0.0),
        )),
        _ => None,
    };
    let throughput: Vec<Option<f64>> = steps
        .iter()
        .map(|s| Some(s["turns"].as_f64()? / (s["wall_ms"].as_f64()? / 1000.0).max(1e-9)))
        .collect();
    let usl_curve = a["usl"]["lambda"].as_f64().map(|l| {
        let (sg, kp) = (
            a["usl"]["sigma"].as_f64().unwrap_or(0.0),
            a["usl"]["kappa"].as_f64().unwrap_or(0.0),
        );
        let (lo, hi) = (
            xs.first().copied().unwrap_or(1.0),
            xs.last().copied().unwrap_or(1.0) * 1.5,
        );
        (0..=60)
            .map(|i| {
                let n = lo * (hi / lo).powf(i as f64 / 60.0);
                (n, l * n / (1.0 + sg * (n - 1.0) + kp * n * (n - 1.0)))
            })
            .filter(|p| p.0 <= xs.last().copied().unwrap_or(1.0))
            .collect::<Vec<_>>()
    });
    let charts = [
        Chart { title: "Latency inflation", unit: "× ideal", how: "1.0 means sessions took as long as the mock's own generation time; the knee is where this turns up.", series: vec![Series { name: "p50", color: "#36c", values: get("latency_inflation") }], curve: None },
        Chart { title: "Session latency", unit: "ms", how: "Whole-session time, median and 99th percentile; a widening gap is queueing in the system under test.", series: vec![Series { name: "p50", color: "#36c", values: get("p50_session_ms") }, Series { name: "p99", color: "#c33", values: get("p99_session_ms") }], curve: None },
        Chart { title: "Peak RSS", unit: "MB", how: "The whole process tree's resident memory at its highest during the step.", series: vec![Series { name: "peak", color: "#639", values: get("peak_rss_mb") }], curve: None },
        Chart { title: "Memory per session", unit: "KB", how: "(peak − baseline RSS) / sessions: the marginal cost of one more session; flat is healthy.", series: vec![Series { name: "KB/session", color: "#963", values: get("rss_kb_per_session") }], curve: None },
        Chart { title: "OS threads", unit: "threads", how: "Peak OS threads (not green threads); growth with sessions means a thread per session.", series: vec![Series { name: "peak", color: "#396", values: get("peak_threads") }], curve: None },
        Chart { title: "CPU per turn", unit: "ms", how: "The system under test's CPU time per completed turn.", series: vec![Series { name: "CPU ms/turn", color: "#c63", values: get("cpu_ms_per_turn") }], curve: None },
        Chart { title: "Throughput", unit: "turns/s", how: "Measured points; the dashed line is the Universal Scalability Law fit (shown only with 4 or more steps).", series: vec![Series { name: "measured", color: "#36c", values: throughput }], curve: usl_curve },
    ];
    let mut body = String::new();
    for c in &charts {
        let _ = write!(
            body,
            "<section>{}</section>",
            svg(c, &xs, &counts, collapsed, ceiling, knee)
        );
    }
    let verdict = format!(
        "ceiling: {} · knee: {} – {} ({}) · collapse: {}",
        a["ceiling"],
        a["knee"]["from"],
        a["knee"]["to"],
        a["knee"]["confidence"].as_str().unwrap_or(""),
        a["collapse"]["outcome"].as_str().map_or(
            "none within the ladder".to_string(),
            |o| format!("{o} at {}", a["collapse"]["concurrency"])
        )
    );
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll report</title><style>
body{{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}}
section{{display:inline-block;vertical-align:top;margin:0 16px 20px 0;width:{W}px}}
.t{{font:bold 13px sans-serif}} .a{{font:10px sans-serif;fill:#555}} .n{{font:9px sans-serif;fill:#999}}
.m{{font:10px sans-serif}} .l{{font:11px sans-serif}} .np{{font:9px sans-serif;fill:#c33}} .how{{font-size:12px;color:#555;margin:2px 0}}
</style></head><body><h1>Plimsoll ramp</h1><p>{}</p><p><b>{}</b></p>{}</body></html>
"#,
        esc(doc["config"].as_str().unwrap_or("")),
        esc(&verdict),
        body
    )
}

/// `compare.html`: per metric, the base and branch medians against concurrency on one
/// chart, with the verdict of every level under it.
pub fn render_compare(doc: &Value) -> String {
    let levels = doc["levels"].as_array().cloned().unwrap_or_default();
    let xs: Vec<f64> = levels
        .iter()
        .map(|l| l["concurrency"].as_f64().unwrap_or(1.0))
        .collect();
    let counts: Vec<u64> = levels
        .iter()
        .map(|l| l["base_outcomes"].as_array().map_or(0, |a| a.len() as u64))
        .collect();
    let mut body = String::new();
    for m in crate::compare::METRICS {
        let side = |k: &str| -> Vec<Option<f64>> {
            levels
                .iter()
                .map(|l| l["metrics"][*m][k].as_f64())
                .collect()
        };
        let verdicts: Vec<String> = levels
            .iter()
            .map(|l| {
                format!(
                    "{}: {}",
                    l["concurrency"],
                    l["metrics"][*m]["verdict"].as_str().unwrap_or("")
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
                    values: side("base"),
                },
                Series {
                    name: "branch",
                    color: "#c33",
                    values: side("branch"),
                },
            ],
            curve: None,
        };
        let _ = write!(
            body,
            "<section>{}</section>",
            svg(&c, &xs, &counts, None, None, None)
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
        esc(doc["base"].as_str().unwrap_or("")),
        esc(doc["branch"].as_str().unwrap_or("")),
        doc["ceiling"]["base"],
        doc["ceiling"]["branch"],
        body
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_every_chart_and_marks_gaps() {
        let doc = serde_json::json!({
            "config": "x.toml",
            "steps": [
                {"concurrency": 10, "sessions_ok": 10, "outcome": "ok", "latency_inflation": 1.0, "p50_session_ms": 100.0, "p99_session_ms": 120.0, "peak_rss_mb": 10.0, "rss_kb_per_session": 50.0, "peak_threads": 3, "cpu_ms_per_turn": 1.0, "turns": 30, "wall_ms": 1000.0},
                {"concurrency": 20, "sessions_ok": 0, "outcome": "oom_killed", "latency_inflation": null, "p50_session_ms": null, "p99_session_ms": null, "peak_rss_mb": 90.0, "rss_kb_per_session": 400.0, "peak_threads": 3, "cpu_ms_per_turn": null, "turns": 5, "wall_ms": 300.0}
            ],
            "analysis": {"ceiling": 10, "knee": {"confidence": "insufficient"}, "collapse": {"concurrency": 20, "outcome": "oom_killed"}, "usl": {"refused": "too few"}}
        });
        let html = super::render(&doc);
        assert_eq!(html.matches("<svg").count(), 7);
        assert!(
            html.contains("not plotted")
                && html.contains("n=10")
                && html.contains("ceiling")
                && html.contains("How to read this")
        );
        assert!(
            !html.contains("<script") && !html.contains("http://") && !html.contains("https://")
        );
    }
}
