//! The board's metrics in Prometheus's text exposition format 0.0.4, as `/metrics` serves
//! them: each family's HELP and TYPE, its points with their labels escaped, a histogram as
//! cumulative `_bucket`s with `le`, its `_sum` and `_count`.

use crate::board::State;
use crate::metrics::{families, Kind, Value};
use std::fmt::Write;

/// A label value as the format wants it: backslash, quote and newline escaped.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Labels in order, as `{a="x",b="y"}`.
fn labels<V: AsRef<str>>(pairs: &[(&str, V)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", esc(v.as_ref())))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A number as the format writes it (integers without a fraction).
fn val(x: f64) -> String {
    match x {
        x if x.is_nan() => "NaN".into(),
        x if x.is_infinite() => if x > 0.0 { "+Inf" } else { "-Inf" }.into(),
        x if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        x => format!("{x}"),
    }
}

/// The board in Prometheus's text format.
pub fn render(s: &State) -> String {
    let mut out = String::new();
    for f in families(s) {
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        };
        let _ = writeln!(
            out,
            "# HELP {} {}\n# TYPE {} {kind}",
            f.name, f.help, f.name
        );
        for (l, v) in &f.points {
            match v {
                Value::Number(x) => {
                    let _ = writeln!(out, "{}{} {}", f.name, labels(l), val(*x));
                }
                Value::Histogram {
                    bounds,
                    cumulative,
                    sum,
                } => {
                    let les = bounds.iter().map(|b| val(*b)).chain(["+Inf".to_string()]);
                    for (le, n) in les.zip(cumulative) {
                        let mut with: Vec<(&str, String)> = l.clone();
                        with.push(("le", le));
                        let _ = writeln!(out, "{}_bucket{} {n}", f.name, labels(&with));
                    }
                    let count = cumulative.last().copied().unwrap_or(0);
                    let _ = writeln!(out, "{}_sum{} {}", f.name, labels(l), val(*sum));
                    let _ = writeln!(out, "{}_count{} {count}", f.name, labels(l));
                }
            }
        }
    }
    out
}
