//! Renders the documents that ladders, soaks and comparisons produce — the terminal table and
//! verdict, Markdown, JUnit XML for CI, and self-contained HTML — reading only those documents (fresh or
//! from the history), so a stored run renders the same again. It measures, analyses and
//! writes nothing itself.

pub mod arms;
pub mod bus;
pub mod calls;
mod charts;
pub mod check;
pub mod checks;
pub mod cost;
pub mod gates;
pub mod grid;
pub mod harness;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod mcp;
pub mod mock_refused;
mod num;
pub mod refusal;
pub mod shards;
pub mod soak;
pub mod step;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod timeline;
pub mod verdict;
mod wall_charts;
pub use result::words;
pub mod workload;

/// A number as a JSON document writes it (1.0, not 1; null when not finite): the reports
/// have always quoted some figures that way.
pub(crate) fn json_num(x: f64) -> String {
    serde_json::to_string(&x).unwrap_or_else(|_| "null".into())
}

/// An optional count as a JSON document writes it ("null" when there is none).
pub(crate) fn json_opt(x: Option<usize>) -> String {
    x.map_or("null".into(), |n| n.to_string())
}
