//! The verdict of a ladder in words: the one-sentence headline first, then the lines
//! that back it (budget, wall, throughput knee and plateau, collapse, USL, projection).

use analysis::budget::num;
use serde_json::Value;

/// The headline: what the system holds, where it is over budget, its wall, collapse.
pub fn headline(doc: &Value) -> String {
    let a = &doc["analysis"];
    match a["verdict"]["headline"].as_str() {
        Some(h) => h.to_string(),
        // Runs recorded before budgets had only a ceiling.
        None => ceiling_line(a),
    }
}

/// The verdict of a ladder document, a line each, the headline first.
pub fn verdict_lines(doc: &Value) -> Vec<String> {
    let mut out = vec![format!("verdict: {}", headline(doc))];
    out.extend(detail_lines(doc));
    out
}

/// Every line under the headline.
pub fn detail_lines(doc: &Value) -> Vec<String> {
    let a = &doc["analysis"];
    let v = &a["verdict"];
    let mut out = Vec::new();
    if let Some(b) = v["budget"].as_str() {
        out.push(format!("budget: {b}"));
    }
    if let Some(w) = v["wall"]["text"].as_str() {
        out.push(format!("wall: {w}"));
    }
    out.extend(plateau_line(&v["plateau"]));
    for n in v["notes"].as_array().into_iter().flatten() {
        out.push(format!("note: {}", n.as_str().unwrap_or("")));
    }
    out.push(knee_line(&a["knee"]));
    out.extend(collapse_line(a));
    out.extend(harness_line(a));
    out.extend(provider_line(doc));
    out.push(usl_line(&a["usl"]));
    out.extend(log_lines(&a["log"]));
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

/// The provider's limits, and at each level where it refused calls or kept them waiting:
/// how many, the retries they cost, and the wait for a slot.
fn provider_line(doc: &Value) -> Option<String> {
    let steps = doc["steps"].as_array()?;
    let limits = steps
        .iter()
        .find_map(|s| s["provider"]["limits"].as_str())?;
    let per: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            let p = &s["provider"];
            let refused: u64 = p["refused"]
                .as_object()?
                .values()
                .filter_map(|v| v.as_u64())
                .sum();
            let wait = p["queue_wait_p99_ms"].as_f64().unwrap_or(0.0);
            if refused == 0 && wait < 1.0 {
                return None;
            }
            let slots = if wait >= 1.0 {
                format!(" p99 wait for a slot {} ms", num(wait))
            } else {
                String::new()
            };
            let refusals = if refused > 0 {
                format!(
                    " {refused} calls refused ({:.0} %), the SUT resent {} (amplification {}×)",
                    p["refused_share"].as_f64().unwrap_or(0.0) * 100.0,
                    p["retried"].as_u64().unwrap_or(0),
                    num(p["amplification"].as_f64().unwrap_or(1.0)),
                )
            } else {
                String::new()
            };
            let sep = if refused > 0 && wait >= 1.0 { "," } else { "" };
            Some(format!("at {}:{refusals}{sep}{slots}", s["concurrency"]))
        })
        .collect();
    let what = if per.is_empty() {
        "no call refused or kept waiting at any level".to_string()
    } else {
        per.join("; ")
    };
    Some(format!("provider: {limits} — {what}"))
}

/// The SUT's own log: kinds that began under load, each with its level; the noise every
/// level printed summed in one line.
fn log_lines(findings: &Value) -> Vec<String> {
    let all = findings.as_array().cloned().unwrap_or_default();
    let (noise, load): (Vec<&Value>, Vec<&Value>) =
        all.iter().partition(|f| f["at_lowest"] == true);
    let mut out: Vec<String> = load
        .iter()
        .take(5)
        .map(|f| {
            format!(
                "SUT log: {} × {} `{}` at {} sessions, {} (e.g. `{}`)",
                f["count_at_first"],
                f["level"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or(""),
                f["first_at"],
                if f["below_cut"] == true {
                    "not among the kinds kept below"
                } else {
                    "none below"
                },
                f["example"].as_str().unwrap_or("")
            )
        })
        .collect();
    if load.len() > 5 {
        out.push(format!("SUT log: {} more kinds of warning or error began under load (result.json, analysis.log)", load.len() - 5));
    }
    if !noise.is_empty() {
        out.push(format!(
            "SUT log: {} kind(s) of warning or error already at the lowest level (not load's doing), e.g. `{}`",
            noise.len(),
            noise[0]["message"].as_str().unwrap_or("")
        ));
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

fn plateau_line(p: &Value) -> Option<String> {
    let from = p["from"].as_f64()?;
    Some(format!(
        "throughput plateau: {} turns/s from {} sessions over {} levels ({}){}",
        num(p["turns_per_s"].as_f64().unwrap_or(0.0)),
        num(from),
        p["levels"],
        p["confidence"].as_str().unwrap_or(""),
        if p["retrograde"] == true {
            "; it falls after its peak (retrograde)"
        } else {
            ""
        }
    ))
}

fn collapse_line(a: &Value) -> Option<String> {
    let c = &a["collapse"];
    c.as_object()?;
    Some(format!(
        "collapse at {} sessions: {} — {}",
        c["concurrency"],
        c["outcome"].as_str().unwrap_or(""),
        c["cause"].as_str().unwrap_or("")
    ))
}

fn harness_line(a: &Value) -> Option<String> {
    let steps: Vec<String> = a["harness_bound_steps"]
        .as_array()?
        .iter()
        .map(|s| s.to_string())
        .collect();
    (!steps.is_empty()).then(|| {
        format!(
            "harness-bound steps (Plimsoll was the bottleneck there, not the SUT): {}",
            steps.join(", ")
        )
    })
}

fn knee_line(k: &Value) -> String {
    let f = |key: &str| k[key].as_f64().map_or("?".to_string(), num);
    match k["confidence"].as_str().unwrap_or("") {
        "insufficient" => "knee: not enough steps".into(),
        "none" => "throughput knee: none within the ladder — throughput kept scaling".into(),
        // Runs recorded before the throughput knee: the latency knee's words.
        "flat" => format!(
            "knee: none within the ladder — latency inflation stayed within 15 % up to {} sessions",
            f("from")
        ),
        "at_the_end" => format!(
            "knee: {} or beyond — latency turns at the last level; widen the ladder",
            f("from")
        ),
        conf => format!(
            "throughput knee: between {} and {} sessions ({conf}; {})",
            f("from"),
            f("to"),
            k["method"].as_str().unwrap_or("")
        ),
    }
}

fn usl_line(u: &Value) -> String {
    if let Some(why) = u["refused"].as_str() {
        return format!("USL: not fitted — {why}");
    }
    let g = |k: &str| u[k].as_f64().map_or("?".to_string(), num);
    let peak = u["peak_concurrency"]
        .as_f64()
        .map_or("none (no coherency cost seen)".to_string(), |p| {
            format!("at {p:.0} sessions, {} turns/s", g("peak_throughput"))
        });
    let note = u["note"]
        .as_str()
        .map_or(String::new(), |n| format!(" — {n}"));
    format!(
        "USL: σ = {}, κ = {}, λ = {} turns/s; predicted peak {peak} (R² {}){note}",
        g("sigma"),
        g("kappa"),
        g("lambda"),
        u["r2"].as_f64().map_or("?".into(), |r| format!("{r:.3}"))
    )
}
