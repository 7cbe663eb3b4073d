//! `report.md` for a ladder and `compare.md` for a comparison.

use crate::table::{row, HEADER};
use analysis::stats::METRICS;
use serde_json::Value;

/// A ladder document as Markdown: the table, how to read it, the verdict, the projection.
pub fn ladder(doc: &Value) -> String {
    let steps = doc["steps"].as_array().cloned().unwrap_or_default();
    let mut s = format!(
        "# Plimsoll ramp — {}\n\nRun {} · machine: {} · cap: {}\n\n{HEADER}\n",
        doc["config"].as_str().unwrap_or(""),
        doc["run"],
        doc["environment"]["machine"].as_str().unwrap_or(""),
        doc["environment"]["cap"]
    );
    for r in &steps {
        s.push_str(&row(r));
        s.push('\n');
    }
    let a = &doc["analysis"];
    s.push_str(&format!(
        "\n*How to read this:* one fresh SUT per row; inflation is p50 session time over the time the mock itself took; KB/sess is (peak − baseline RSS) / sessions; `bound = harness` rows describe Plimsoll, not the SUT.\n\n- ceiling: {}\n- knee: {} – {} ({})\n- collapse: {}\n",
        a["ceiling"],
        a["knee"]["from"],
        a["knee"]["to"],
        a["knee"]["confidence"].as_str().unwrap_or(""),
        a["collapse"]
    ));
    if let Some(why) = a["usl"]["refused"].as_str() {
        s.push_str(&format!("- USL: not fitted — {why}\n"));
    } else {
        s.push_str(&format!(
            "- USL: σ = {}, κ = {}, λ = {}, peak at {} (R² {})\n",
            a["usl"]["sigma"],
            a["usl"]["kappa"],
            a["usl"]["lambda"],
            a["usl"]["peak_concurrency"],
            a["usl"]["r2"]
        ));
    }
    if let Some(lines) = a["capacity"]["working"].as_array() {
        s.push_str("\n## Capacity projection (not a measurement)\n\n");
        for l in lines {
            s.push_str(&format!("- {}\n", l.as_str().unwrap_or("")));
        }
    }
    s
}

/// The comparison as a Markdown table (also printed on the terminal).
pub fn compare(doc: &Value) -> String {
    let mut s = format!(
        "# Plimsoll compare\n\nbase: `{}`  \nbranch: `{}`  \nrepetitions: {} (interleaved)\n\n| sessions | metric | base | branch | ratio | 95 % CI | verdict |\n|---:|:--|---:|---:|---:|:--|:--|\n",
        doc["base"].as_str().unwrap_or(""),
        doc["branch"].as_str().unwrap_or(""),
        doc["repeat"]
    );
    for l in doc["levels"].as_array().into_iter().flatten() {
        for m in METRICS {
            let v = &l["metrics"][*m];
            let f = |x: &Value| x.as_f64().map_or("—".into(), |x| format!("{x:.2}"));
            let ci = v["ci95"]
                .as_array()
                .map_or("—".into(), |c| format!("{} – {}", f(&c[0]), f(&c[1])));
            s.push_str(&format!(
                "| {} | {m} | {} | {} | {} | {ci} | {} |\n",
                l["concurrency"],
                f(&v["base"]),
                f(&v["branch"]),
                f(&v["ratio"]),
                v["verdict"].as_str().unwrap_or("")
            ));
        }
    }
    s.push_str("\n*How to read this:* ratio = branch median / base median; every metric is lower-is-better, so \"worse\" means p < 0.05/7 (Mann–Whitney, Bonferroni over the 7 metrics) and medians more than 1 % apart; the 95 % interval of the ratio is a bootstrap.\n");
    s
}
