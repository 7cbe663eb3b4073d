//! The verdict under the ladder table, in words, a line each.

use serde_json::Value;

/// The verdict of a ladder document, a line each.
pub fn verdict_lines(doc: &Value) -> Vec<String> {
    let a = &doc["analysis"];
    let mut out = vec![ceiling_line(a)];
    out.extend(collapse_line(a));
    out.push(knee_line(&a["knee"]));
    out.push(usl_line(&a["usl"]));
    if let Some(lines) = a["capacity"]["working"].as_array() {
        out.push("capacity projection (not a measurement):".into());
        out.extend(
            lines
                .iter()
                .map(|l| format!("  {}", l.as_str().unwrap_or(""))),
        );
    }
    out
}

fn ceiling_line(a: &Value) -> String {
    match a["ceiling"].as_u64() {
        Some(c) if a["ceiling_is_harness_bound"] == true => format!(
            "ceiling: {c} sessions — but that step was HARNESS-BOUND: Plimsoll was the bottleneck, not the SUT"
        ),
        Some(c) => format!("ceiling: {c} sessions (the last step without a collapse)"),
        None => "ceiling: none — the first step already collapsed".into(),
    }
}

fn collapse_line(a: &Value) -> Option<String> {
    if let Some(c) = a["collapse"].as_object() {
        Some(format!(
            "collapse at {} sessions: {} — {}",
            c["concurrency"],
            c["outcome"].as_str().unwrap_or(""),
            c["cause"].as_str().unwrap_or("")
        ))
    } else if a["no_collapse"] == true {
        Some("no collapse within the ladder: the ceiling is at the top level or beyond — widen the ladder".into())
    } else {
        None
    }
}

fn knee_line(k: &Value) -> String {
    let conf = k["confidence"].as_str().unwrap_or("");
    match conf {
        "insufficient" => "knee: not enough steps (3 needed)".into(),
        "flat" => format!(
            "knee: none within the ladder — latency inflation stayed within 15 % up to {} sessions",
            k["from"]
        ),
        "at_the_end" => format!(
            "knee: {} or beyond — latency turns at the last level; widen the ladder",
            k["from"]
        ),
        _ => format!(
            "knee: between {} and {} sessions ({conf}; {})",
            k["from"],
            k["to"],
            k["method"].as_str().unwrap_or("")
        ),
    }
}

fn usl_line(u: &Value) -> String {
    if let Some(why) = u["refused"].as_str() {
        return format!("USL: not fitted — {why}");
    }
    let peak =
        u["peak_concurrency"]
            .as_f64()
            .map_or("none (no coherency cost seen)".to_string(), |p| {
                format!(
                    "at {p:.0} sessions, {:.1} turns/s",
                    u["peak_throughput"].as_f64().unwrap_or(0.0)
                )
            });
    format!(
        "USL: σ = {:.4}, κ = {:.6}, λ = {:.2} turns/s; predicted peak {peak} (R² {:.3})",
        u["sigma"].as_f64().unwrap_or(0.0),
        u["kappa"].as_f64().unwrap_or(0.0),
        u["lambda"].as_f64().unwrap_or(0.0),
        u["r2"].as_f64().unwrap_or(0.0)
    )
}
