//! One series against time as inline SVG, for a soak: y from zero — or, when the series
//! stays far from zero, from just under its lowest value (said on the chart), so a 4 MB
//! rise on 112 MB is seen — the drain phase shaded, the warm-up left out of the verdict marked, and the leak verdict's fitted
//! slope (Sen's, through the load phase's median) dashed over the load phase.

use crate::svg::esc;
use std::fmt::Write;

const W: f64 = 560.0;
const H: f64 = 220.0;
const L: f64 = 60.0;
const R: f64 = 16.0;
const T: f64 = 28.0;
const B: f64 = 34.0;

/// A chart of `points` (seconds, value): the drain starts at `drain_from`, the verdict
/// counts from `warmup_s`; `slope` (per second) is drawn through the load phase.
pub struct Timeline<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub how: &'a str,
    pub points: Vec<(f64, f64)>,
    pub drain_from: Option<f64>,
    pub warmup_s: f64,
    pub slope: Option<f64>,
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The y range: from zero, unless the series stays above half its highest value and
/// moves little — then from just under its lowest, so a slow rise shows.
fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    let hi = hi.max(1e-9);
    if !lo.is_finite() || lo < 0.5 * hi {
        return (0.0, hi * 1.1);
    }
    let pad = ((hi - lo) * 0.15).max(hi * 0.005);
    ((lo - pad).max(0.0), hi + pad)
}

/// Where a chart's values fall: seconds across, the value up.
struct Axes {
    tmax: f64,
    ymin: f64,
    ymax: f64,
}

impl Axes {
    fn px(&self, t: f64) -> f64 {
        L + t / self.tmax * (W - L - R)
    }

    fn py(&self, v: f64) -> f64 {
        T + (H - T - B) * (1.0 - (v - self.ymin) / (self.ymax - self.ymin))
    }
}

pub fn render(c: &Timeline) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{0}"><text x="{L}" y="16" class="t">{0} ({1})</text>"#,
        esc(c.title),
        esc(c.unit)
    );
    let tmax = c.points.iter().map(|p| p.0).fold(1.0, f64::max);
    let (lo, hi) = c.points.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| {
        (a.min(p.1), b.max(p.1))
    });
    let (ymin, ymax) = y_range(lo, hi);
    let ax = Axes { tmax, ymin, ymax };
    if ymin > 0.0 {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="16" class="a" text-anchor="end">y axis from {}</text>"##,
            W - R,
            fmt(ymin)
        );
    }
    s.push_str(&phases(c, &ax));
    s.push_str(&ticks(&ax));
    let path: Vec<String> = c
        .points
        .iter()
        .map(|(t, v)| format!("{:.1},{:.1}", ax.px(*t), ax.py(*v)))
        .collect();
    let _ = write!(
        s,
        r##"<polyline fill="none" stroke="#639" stroke-width="1.5" points="{}"/>"##,
        path.join(" ")
    );
    s.push_str(&slope(c, &ax));
    s.push_str("</svg>");
    let _ = write!(
        s,
        r#"<p class="how"><b>How to read this:</b> {}</p>"#,
        esc(c.how)
    );
    s
}

/// The drain shaded, and the warm-up the verdict leaves out.
fn phases(c: &Timeline, ax: &Axes) -> String {
    let mut s = String::new();
    if let Some(d) = c.drain_from {
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{T}" width="{:.1}" height="{:.1}" fill="#eef4ff"/><text x="{:.1}" y="{:.1}" class="m" fill="#36c">drain</text>"##,
            ax.px(d),
            (ax.px(ax.tmax) - ax.px(d)).max(0.0),
            H - T - B,
            ax.px(d) + 3.0,
            T + 12.0
        );
    }
    if c.warmup_s > 0.0 {
        let _ = write!(
            s,
            r##"<rect x="{L}" y="{T}" width="{:.1}" height="{:.1}" fill="#f6f6f6"/><text x="{:.1}" y="{:.1}" class="m" fill="#888">warm-up</text>"##,
            (ax.px(c.warmup_s) - L).max(0.0),
            H - T - B,
            L + 3.0,
            T + 12.0
        );
    }
    s
}

/// Five grid lines with their values, five time marks.
fn ticks(ax: &Axes) -> String {
    let mut s = String::new();
    for k in 0..=4 {
        let v = ax.ymin + (ax.ymax - ax.ymin) * k as f64 / 4.0;
        let _ = write!(
            s,
            r##"<line x1="{L}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#eee"/><text x="{2:.1}" y="{3:.1}" class="a" text-anchor="end">{4}</text>"##,
            ax.py(v),
            W - R,
            L - 6.0,
            ax.py(v) + 4.0,
            fmt(v)
        );
    }
    for k in 0..=4 {
        let t = ax.tmax * k as f64 / 4.0;
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" class="a" text-anchor="middle">{:.0} s</text>"##,
            ax.px(t),
            H - B + 14.0,
            t
        );
    }
    s
}

/// The verdict's slope, dashed over the load phase through its median.
fn slope(c: &Timeline, ax: &Axes) -> String {
    let load: Vec<&(f64, f64)> = c
        .points
        .iter()
        .filter(|p| p.0 >= c.warmup_s && c.drain_from.is_none_or(|d| p.0 < d))
        .collect();
    let (Some(k), Some(first), Some(last)) = (c.slope, load.first(), load.last()) else {
        return String::new();
    };
    let mut vs: Vec<f64> = load.iter().map(|p| p.1).collect();
    vs.sort_by(f64::total_cmp);
    let mid_t = (first.0 + last.0) / 2.0;
    let mid_v = vs[vs.len() / 2];
    let at = |t: f64| mid_v + k * (t - mid_t);
    format!(
        r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#c33" stroke-dasharray="6 3"/>"##,
        ax.px(first.0),
        ax.py(at(first.0)),
        ax.px(last.0),
        ax.py(at(last.0))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_rise_far_from_zero_is_drawn_on_a_zoomed_axis() {
        let (a, b) = y_range(112_408.0, 116_504.0);
        assert!(a > 100_000.0 && b < 118_000.0, "{a} {b}");
        assert_eq!(y_range(2.0, 100.0), (0.0, 110.00000000000001));
        let c = Timeline {
            title: "RSS",
            unit: "MB",
            how: "",
            points: vec![(0.0, 110.0), (100.0, 114.0)],
            drain_from: None,
            warmup_s: 0.0,
            slope: None,
        };
        assert!(render(&c).contains("y axis from "));
    }
}
