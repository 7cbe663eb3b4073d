//! How a figure is printed in a table cell: three significant places, a dash for none.

/// A number rounded for a table cell: 3 significant digits at most, whole above 100.
pub fn cell(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}
