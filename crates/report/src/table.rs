//! The ladder table: one row a step, as printed while a ramp runs and in report.md.

use serde_json::Value;

pub const HEADER: &str = "| sessions | outcome           | p50 ms    | p99 ms    | inflation | RSS MB   | KB/sess   | threads | CPU/turn | bound   |\n|---------:|:------------------|----------:|----------:|----------:|---------:|----------:|--------:|---------:|:--------|";

/// One table row from a RESULT object (as stored, so history re-renders the same).
pub fn row(r: &Value) -> String {
    let o = |k: &str| r[k].as_f64().map_or("—".to_string(), |v| format!("{v:.1}"));
    format!(
        "| {:>7} | {:<17} | {:>9} | {:>9} | {:>9} | {:>8} | {:>9} | {:>7} | {:>8} | {:<7} |",
        r["concurrency"],
        r["outcome"].as_str().unwrap_or(""),
        o("p50_session_ms"),
        o("p99_session_ms"),
        o("latency_inflation"),
        o("peak_rss_mb"),
        o("rss_kb_per_session"),
        r["peak_threads"],
        o("cpu_ms_per_turn"),
        r["harness"]["bound"].as_str().unwrap_or(""),
    )
}
