//! What the in-process mock knew at the end of a step: its lateness, the LLM calls and
//! tokens, injected failures, integrity violations (in all, by kind, the first few), the
//! sessions whose marker reached it, the provider's pushback, what reasoning cost, and the
//! unloaded time each session asked of it (the ideal a session is measured against).

use crate::rates::round3;
use result::round2;

/// What the mock knew at the end of the step.
pub(crate) struct MockSide {
    pub(crate) late_p99_ms: f64,
    pub(crate) llm_calls: u64,
    pub(crate) tokens_out: u64,
    pub(crate) injected: u64,
    pub(crate) violations: u64,
    pub(crate) ideal_ms: Option<f64>,
    pub(crate) violation_list: Vec<serde_json::Value>,
    pub(crate) marked: usize,
    pub(crate) provider: Option<result::Provider>,
    pub(crate) reasoning: Option<result::Reasoning>,
    /// Violations by kind (echo, isolation, history, reasoning).
    pub(crate) by_kind: Vec<(String, u64)>,
}

/// What reasoning cost, from the ledger (none when no reply reasoned).
fn reasoning_of(ledger: &serde_json::Value) -> Option<result::Reasoning> {
    let r = &ledger["totals"]["reasoning"];
    let replies = r["replies"].as_u64().filter(|n| *n > 0)?;
    let ms = |k: &str| round2(r[k].as_f64().unwrap_or(0.0));
    Some(result::Reasoning {
        replies,
        reasoning_tokens: r["reasoning_tokens"].as_u64().unwrap_or(0),
        first_token_ms: ms("first_token_ms_mean"),
        first_answer_token_ms: ms("first_answer_token_ms_mean"),
    })
}

/// What the provider's quotas and slots did, from the ledger (none when none were set).
fn provider_of(ledger: &serde_json::Value) -> Option<result::Provider> {
    let p = ledger.get("provider")?;
    let t = &ledger["totals"];
    let calls = t["llm_calls"].as_u64().unwrap_or(0);
    let answered = p["answered"].as_u64().unwrap_or(0);
    let retried = t["retries"].as_u64().unwrap_or(0).min(calls);
    let refused: std::collections::BTreeMap<String, u64> = p["refused"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_u64().filter(|n| *n > 0)?)))
        .collect();
    let n_refused: u64 = refused.values().sum();
    let queue_ms = t["queue_ms"].as_f64().unwrap_or(0.0);
    let provider_ms = queue_ms + t["llm_ms"].as_f64().unwrap_or(0.0);
    let queue_share = if provider_ms > 0.0 {
        queue_ms / provider_ms
    } else {
        0.0
    };
    // What held calls back most: the limit that refused most, or the slots when calls
    // spent a larger share of the provider's time waiting than they were refused.
    let refused_share = n_refused as f64 / calls.max(1) as f64;
    let top_refuser = p["refused_by"]
        .as_object()
        .and_then(|o| o.iter().max_by_key(|(_, n)| n.as_u64().unwrap_or(0)))
        .map(|(words, _)| words.clone());
    let slots = p["slots"].as_str().map(String::from);
    let binding = if analysis::provider::refusals_lead(refused_share, queue_share) {
        top_refuser
    } else if queue_share >= analysis::provider::QUEUE_LEADS {
        slots.or(top_refuser)
    } else {
        top_refuser
    };
    let wait = |k: &str| round2(p["queue_wait_ms"][k].as_f64().unwrap_or(0.0));
    Some(result::Provider {
        limits: p["limits"].as_str().unwrap_or("").to_string(),
        answered,
        refused_share: round3(refused_share),
        refused,
        retried,
        amplification: round2(calls as f64 / (calls - retried).max(1) as f64),
        queue_wait_p50_ms: wait("p50"),
        queue_wait_p99_ms: wait("p99"),
        queue_share: round3(queue_share),
        peak_in_flight: p["peak_in_flight"].as_u64().unwrap_or(0),
        peak_queued: p["peak_queued"].as_u64().unwrap_or(0),
        binding,
    })
}

impl MockSide {
    pub(crate) fn read(
        timing: &mock::TimingSnapshot,
        ledger: &serde_json::Value,
        think_ms: f64,
        failed: &std::collections::HashSet<String>,
    ) -> MockSide {
        let totals = &ledger["totals"];
        MockSide {
            late_p99_ms: timing.late_p99_ms,
            llm_calls: totals["llm_calls"].as_u64().unwrap_or(0),
            tokens_out: totals["output_tokens"].as_u64().unwrap_or(0),
            injected: totals["injected_failures"]
                .as_object()
                .map_or(0, |o| o.values().filter_map(|v| v.as_u64()).sum()),
            violations: totals["integrity_violations"].as_u64().unwrap_or(0),
            ideal_ms: ideal_session_ms(ledger, think_ms, failed),
            violation_list: ledger["violations"].as_array().cloned().unwrap_or_default(),
            marked: ledger["sessions"].as_object().map_or(0, |o| {
                o.keys()
                    .filter(|k| k.as_str() != mock::ledger::ANONYMOUS)
                    .count()
            }),
            provider: provider_of(ledger),
            reasoning: reasoning_of(ledger),
            by_kind: totals["violations_by_kind"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                .collect(),
        }
    }
}

/// What the mock scheduled for a session's replies plus its think time: the median over
/// the sessions the ledger knows.
/// The median over the sessions that went through of the provider's unloaded time for
/// them, plus think time: a failed session asked the provider for less than a session
/// does (with most sessions failing early, the median would be one call).
fn ideal_session_ms(
    ledger: &serde_json::Value,
    think_ms: f64,
    failed: &std::collections::HashSet<String>,
) -> Option<f64> {
    let mut ideal: Vec<f64> = ledger["sessions"]
        .as_object()
        .map(|s| {
            s.iter()
                .filter(|(k, _)| k.as_str() != mock::ledger::ANONYMOUS)
                .filter(|(k, _)| !failed.contains(k.as_str()))
                .filter_map(|(_, v)| v["llm_ms"].as_f64())
                .map(|ms| ms + think_ms)
                .collect()
        })
        .unwrap_or_default();
    ideal.sort_by(f64::total_cmp);
    (!ideal.is_empty()).then(|| round2(ideal[ideal.len() / 2]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_is_the_median_session_plus_think_time() {
        let ledger = serde_json::json!({"sessions": {
            "a": {"llm_ms": 100.0}, "b": {"llm_ms": 300.0}, "c": {"llm_ms": 200.0},
            (mock::ledger::ANONYMOUS): {"llm_ms": 9999.0}
        }});
        let none = Default::default();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &none), Some(250.0));
        assert_eq!(ideal_session_ms(&serde_json::json!({}), 50.0, &none), None);
        // Sessions that failed early asked for less: they are left out.
        let failed = ["a".to_string(), "c".to_string()].into_iter().collect();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &failed), Some(350.0));
    }
}
