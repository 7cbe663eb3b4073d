//! A comparison's document from its samples: verdicts per level and metric, ceilings,
//! and the `--fail-on` gates that were breached.

use crate::stats::{verdict, METRICS};
use serde_json::{json, Value};

/// A comparison summed up.
pub struct Summary {
    /// Per level: every metric's verdict and both sides' outcomes.
    pub levels: Vec<Value>,
    /// (base, branch): the highest level where every repetition was clean.
    pub ceiling: (Option<usize>, Option<usize>),
    /// The `--fail-on` gates breached, in words.
    pub breaches: Vec<String>,
}

/// Per level: every metric's verdict, the outcomes of both sides; the ceiling of each
/// side (the highest level where every repetition was clean); and the gates breached.
pub fn summarise(
    levels_run: &[usize],
    samples: &[[Vec<Value>; 2]],
    fail_on: &[(String, f64)],
) -> Summary {
    let mut levels = Vec::new();
    let mut breaches = Vec::new();
    for (li, &level) in levels_run.iter().enumerate() {
        let mut metrics = serde_json::Map::new();
        for m in METRICS {
            let vals = |side: usize| -> Vec<f64> {
                samples[li][side]
                    .iter()
                    .filter_map(|r| r[*m].as_f64())
                    .collect()
            };
            let v = verdict(&vals(0), &vals(1));
            if let Some((_, limit)) = fail_on.iter().find(|(g, _)| g == m) {
                if let Some(r) = v["ratio"].as_f64() {
                    if r > 1.0 + limit + 1e-12 {
                        breaches.push(format!(
                            "{level} sessions: {m} {:+.1} % (limit +{:.1} %)",
                            (r - 1.0) * 100.0,
                            limit * 100.0
                        ));
                    }
                }
            }
            metrics.insert(m.to_string(), v);
        }
        let outcomes = |side: usize| -> Vec<Value> {
            samples[li][side]
                .iter()
                .map(|r| r["outcome"].clone())
                .collect()
        };
        levels.push(json!({"concurrency": level, "metrics": metrics, "base_outcomes": outcomes(0), "branch_outcomes": outcomes(1)}));
    }
    // Ceiling per side: the highest level where every repetition was clean.
    let ceiling = |side: usize| {
        levels_run
            .iter()
            .enumerate()
            .filter(|(li, _)| samples[*li][side].iter().all(|r| r["outcome"] == "ok"))
            .map(|(_, &l)| l)
            .max()
    };
    let (cb, cr) = (ceiling(0), ceiling(1));
    if let (Some((_, limit)), Some(b), Some(r)) =
        (fail_on.iter().find(|(g, _)| g == "ceiling"), cb, cr)
    {
        // A lower ceiling is worse: the gate reads "may drop by at most".
        if (r as f64) < b as f64 * (1.0 - limit) {
            breaches.push(format!("ceiling {b} → {r}"));
        }
    }
    Summary {
        levels,
        ceiling: (cb, cr),
        breaches,
    }
}
