//! One chart as inline SVG: a measure against concurrency on a log2 axis, y from zero,
//! every level labelled with its sample count, gaps marked "not plotted", the collapsed
//! step shaded, the ceiling and knee marked, an optional fitted curve dashed.

use std::fmt::Write;

pub const W: f64 = 560.0;
const H: f64 = 240.0;
const L: f64 = 56.0; // left margin
const R: f64 = 16.0;
const T: f64 = 28.0;
const B: f64 = 44.0;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub values: Vec<Option<f64>>,
}

pub struct Chart<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub how: &'a str,
    pub series: Vec<Series<'a>>,
    /// A fitted curve (x, y) drawn as a dashed line.
    pub curve: Option<Vec<(f64, f64)>>,
    /// A horizontal limit (value, label), e.g. the latency budget or the CPU cap.
    pub limit: Option<(f64, &'a str)>,
}

/// Pixels a level's label needs along the x axis before the next may be drawn.
const LABEL_ROOM: f64 = 22.0;

/// What is marked on every chart of a ladder.
#[derive(Clone, Default)]
pub struct Marks {
    pub collapsed: Option<usize>,
    /// The level marked on every chart and its word: "holds" (the last level within
    /// budget) or, for a run judged without a budget, "ceiling".
    pub ceiling: Option<(f64, &'static str)>,
    pub knee: Option<(f64, f64)>,
    /// Levels (by index) where Plimsoll, not the SUT, was the bottleneck.
    pub harness_bound: Vec<usize>,
    /// The line's range, when its levels ran more than once and disagreed.
    pub line: Option<(f64, f64)>,
    /// The level still running on a live page (by index): its point hollow, marked
    /// "running", joined to the finished ones by a dashed line — never read as a drop.
    pub running: Option<usize>,
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v == 0.0 || v >= 0.1 {
        format!("{v:.2}")
    } else {
        // A small measure (dollars a session) keeps three significant digits: at two
        // decimals every tick of a $0.0009 axis read "0.00".
        analysis::budget::num(v)
    }
}

/// The mapping from data to the drawing's coordinates.
struct Frame {
    x0: f64,
    span: f64,
    ymax: f64,
}

impl Frame {
    fn new(c: &Chart, xs: &[f64]) -> Frame {
        let lx: Vec<f64> = xs.iter().map(|x| x.max(1e-9).log2()).collect();
        let (x0, x1) = (
            lx.first().copied().unwrap_or(0.0),
            lx.last().copied().unwrap_or(1.0),
        );
        let span = if (x1 - x0).abs() < 1e-9 { 1.0 } else { x1 - x0 };
        let mut ymax = c
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .fold(0.0f64, |a, &b| a.max(b));
        if let Some(curve) = &c.curve {
            let top = curve.iter().map(|p| p.1).fold(0.0, f64::max);
            ymax = ymax.max(top.min(ymax * 2.0));
        }
        if let Some((v, _)) = c.limit {
            ymax = ymax.max(v);
        }
        let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.1 };
        Frame { x0, span, ymax }
    }

    fn px(&self, x: f64) -> f64 {
        L + (x.max(1e-9).log2() - self.x0) / self.span * (W - L - R)
    }

    fn py(&self, y: f64) -> f64 {
        T + (H - T - B) * (1.0 - y / self.ymax)
    }
}

/// The chart, with its "How to read this" line under it.
pub fn chart(c: &Chart, xs: &[f64], counts: &[u64], marks: &Marks) -> String {
    let f = Frame::new(c, xs);
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
    if let Some(i) = marks.collapsed {
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{T}" width="24" height="{:.1}" fill="#fdd" />"##,
            f.px(xs[i]) - 12.0,
            H - T - B
        );
    }
    axes(&mut s, &f, xs, counts);
    ceiling_and_knee(&mut s, &f, marks);
    if let Some((v, label)) = c.limit {
        let y = f.py(v);
        let _ = write!(
            s,
            r##"<line x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#c33" stroke-dasharray="6 3"/><text x="{:.1}" y="{:.1}" class="m" fill="#c33" text-anchor="end">{}</text>"##,
            W - R,
            W - R - 2.0,
            y - 3.0,
            esc(label)
        );
    }
    for &i in &marks.harness_bound {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" class="hb" text-anchor="middle">harness-bound</text>"##,
            f.px(xs[i]),
            T + 22.0
        );
    }
    if let Some(curve) = &c.curve {
        fitted(&mut s, &f, curve);
    }
    // Legends from the right, each as wide as its name (about 6 px a character at 11 px),
    // on a second row once they would run into the title.
    let title_end = L + (c.title.chars().count() + c.unit.chars().count() + 3) as f64 * 7.5;
    let (mut right, mut row) = (W - R, 16.0);
    for (si, ser) in c.series.iter().enumerate() {
        let width = ser.name.chars().count().max(4) as f64 * 6.2;
        if row < 20.0 && right - width < title_end {
            (right, row) = (W - R, 27.0);
        }
        series(&mut s, &f, xs, (si, right, row, marks.running), ser);
        right -= width + 14.0;
    }
    s.push_str("</svg>");
    let _ = write!(
        s,
        r#"<p class="how"><b>How to read this:</b> {}</p>"#,
        esc(c.how)
    );
    s
}

fn axes(s: &mut String, f: &Frame, xs: &[f64], counts: &[u64]) {
    for k in 0..=4 {
        let v = f.ymax * k as f64 / 4.0;
        let y = f.py(v);
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
    // Levels bisected close together (10, 11, 12) would print over one another: a label
    // only where there is room since the last one drawn (every point is still plotted).
    let mut last_px = f64::NEG_INFINITY;
    for (i, &x) in xs.iter().enumerate() {
        if (f.px(x) - last_px).abs() < LABEL_ROOM {
            continue;
        }
        last_px = f.px(x);
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" class="a" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" class="n" text-anchor="middle">n={}</text>"##,
            f.px(x),
            H - B + 14.0,
            x,
            f.px(x),
            H - B + 27.0,
            counts[i]
        );
    }
}

fn ceiling_and_knee(s: &mut String, f: &Frame, marks: &Marks) {
    if let Some((cx, word)) = marks.ceiling {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" y1="{T}" x2="{0:.1}" y2="{1:.1}" stroke="#2a7" stroke-dasharray="4 3"/><text x="{2:.1}" y="{3:.1}" class="m" fill="#2a7" text-anchor="end">{word}</text>"##,
            f.px(cx),
            H - B,
            f.px(cx) - 3.0,
            H - B - 6.0
        );
    }
    if let Some((a, b)) = marks.line {
        let (xa, xb) = (f.px(a), f.px(b));
        let _ = write!(
            s,
            r##"<rect x="{xa:.1}" y="{T}" width="{:.1}" height="{:.1}" fill="#2a7" opacity="0.12"/><text x="{:.1}" y="{:.1}" class="m" fill="#2a7" text-anchor="middle">line</text>"##,
            (xb - xa).max(2.0),
            H - T - B,
            (xa + xb) / 2.0,
            T + 22.0
        );
    }
    if let Some((a, b)) = marks.knee {
        let (xa, xb) = (f.px(a), f.px(b));
        let _ = write!(
            s,
            r##"<rect x="{xa:.1}" y="{T}" width="{:.1}" height="{:.1}" fill="#fa0" opacity="0.15"/><text x="{xa:.1}" y="{:.1}" class="m" fill="#c70">knee</text>"##,
            (xb - xa).max(2.0),
            H - T - B,
            T + 10.0
        );
    }
}

fn fitted(s: &mut String, f: &Frame, curve: &[(f64, f64)]) {
    let pts: Vec<String> = curve
        .iter()
        .filter(|p| p.1 <= f.ymax)
        .map(|&(x, y)| format!("{:.1},{:.1}", f.px(x), f.py(y)))
        .collect();
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#888" stroke-dasharray="5 4"/>"##,
        pts.join(" ")
    );
}

fn series(
    s: &mut String,
    f: &Frame,
    xs: &[f64],
    (si, legend_x, legend_y, running): (usize, f64, f64, Option<usize>),
    ser: &Series,
) {
    let point = |i: usize, v: &Option<f64>| v.map(|v| (f.px(xs[i]), f.py(v)));
    let pts: Vec<(f64, f64)> = (ser.values.iter().enumerate())
        .filter(|(i, _)| Some(*i) != running)
        .filter_map(|(i, v)| point(i, v))
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
    if let Some((x, y)) = running.and_then(|i| point(i, ser.values.get(i)?)) {
        running_point(s, (x, y), pts.last().copied(), ser.color, si == 0);
    }
    for (i, v) in ser.values.iter().enumerate() {
        if v.is_none() && si == 0 {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" class="np" text-anchor="middle">not plotted</text>"##,
                f.px(xs[i]),
                H - B - 6.0
            );
        }
    }
    let _ = write!(
        s,
        r##"<text x="{legend_x:.1}" y="{legend_y}" class="l" fill="{}" text-anchor="end">{}</text>"##,
        ser.color,
        esc(ser.name)
    );
}

/// The level still running: a hollow point joined to the last finished one by a dashed
/// line, and (on the first series) the word "running" over it — so far, not measured.
fn running_point(
    s: &mut String,
    (x, y): (f64, f64),
    from: Option<(f64, f64)>,
    color: &str,
    say: bool,
) {
    if let Some((fx, fy)) = from {
        let _ = write!(
            s,
            r##"<line x1="{fx:.1}" y1="{fy:.1}" x2="{x:.1}" y2="{y:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="3 3"/>"##
        );
    }
    let _ = write!(
        s,
        r##"<circle class="running" cx="{x:.1}" cy="{y:.1}" r="4" fill="#fff" stroke="{color}" stroke-width="2"/>"##
    );
    if say {
        // Beside the point, on the side with room (the axis' labels are on the left).
        let (tx, anchor) = match x > W / 2.0 {
            true => (x - 7.0, "end"),
            false => (x + 7.0, "start"),
        };
        let _ = write!(
            s,
            r##"<text x="{tx:.1}" y="{:.1}" class="n" text-anchor="{anchor}">running</text>"##,
            y + 3.0
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn axis_ticks_keep_small_measures_readable() {
        // agno's cost per session: $0.00089; its axis read "0.00" at every tick.
        let ticks: Vec<String> = [0.0, 0.000222, 0.000887, 0.5, 12.34, 250.0]
            .iter()
            .map(|&v| super::fmt_num(v))
            .collect();
        assert_eq!(
            ticks,
            ["0.00", "0.000222", "0.000887", "0.50", "12.3", "250"]
        );
    }

    #[test]
    fn a_running_level_is_drawn_apart_from_the_finished_ones() {
        use super::*;
        // Throughput 10 and 20 at the finished levels; 2 so far, a second into the third.
        let c = Chart {
            title: "Throughput",
            unit: "turns/s",
            how: "",
            series: vec![Series {
                name: "measured",
                color: "#36c",
                values: vec![Some(10.0), Some(20.0), Some(2.0)],
            }],
            curve: None,
            limit: None,
        };
        let xs = [1.0, 2.0, 4.0];
        let running = Marks {
            running: Some(2),
            ..Marks::default()
        };
        let svg = chart(&c, &xs, &[1, 1, 1], &running);
        let line = svg
            .split("<polyline points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(
            line.split(' ').count(),
            2,
            "the solid line joins the finished levels only: {svg}"
        );
        assert_eq!(svg.matches(r#"class="running""#).count(), 1, "{svg}");
        assert!(
            svg.contains(">running</text>") && svg.contains("stroke-dasharray=\"3 3\""),
            "{svg}"
        );
        // Finished, the same level is a point like the others.
        let done = chart(&c, &xs, &[1, 1, 1], &Marks::default());
        assert!(!done.contains("running"), "{done}");
    }
}
