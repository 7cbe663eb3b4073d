//! What the in-process mock knew at the end of a step: its lateness, the LLM calls and
//! tokens, injected failures, integrity violations (in all, by kind, the first few), the
//! sessions whose marker reached it, the provider's pushback, what reasoning cost, the
//! prompt cache and each model's tokens (`cost_side.rs`), the MCP tools called, and the
//! unloaded time each session asked of it, its tools' time included (the ideal a session
//! is measured against).

use crate::rates::round3;
use mock::ledger::{SessionSummary, Summary, Totals, ANONYMOUS};
use result::round2;
use std::collections::BTreeMap;

/// What the mock knew at the end of the step.
pub(crate) struct MockSide {
    pub(crate) late_p99_ms: f64,
    pub(crate) llm_calls: u64,
    pub(crate) tokens_out: u64,
    pub(crate) injected: u64,
    pub(crate) violations: u64,
    pub(crate) ideal_ms: Option<f64>,
    /// Each session's own ideal, by name (a replay's sessions are measured against it).
    pub(crate) ideal_by: BTreeMap<String, f64>,
    pub(crate) violation_list: Vec<serde_json::Value>,
    pub(crate) marked: usize,
    pub(crate) provider: Option<result::Provider>,
    pub(crate) reasoning: Option<result::Reasoning>,
    /// Violations by kind (echo, isolation, history, reasoning).
    pub(crate) by_kind: Vec<(String, u64)>,
    /// The prompt cache, and the tokens each model used (for the cost).
    pub(crate) cache: Option<result::CacheReport>,
    pub(crate) tokens: BTreeMap<String, result::ModelTokens>,
    /// The MCP tools called, when any MCP message arrived.
    pub(crate) mcp: Option<result::Mcp>,
    /// What the audio APIs did, when any was called.
    pub(crate) stages: Option<result::VoiceStages>,
    /// The requests the mock refused.
    pub(crate) refused: result::MockRefusals,
}

/// The mock's refusals as RESULT keeps them.
fn refused_of(r: &mock::serve::refusals::Refusals) -> result::MockRefusals {
    let (kinds, more) = r.list();
    result::MockRefusals {
        kinds: kinds
            .into_iter()
            .map(|k| result::MockRefusal {
                what: k.what.into(),
                status: k.status,
                message: k.message,
                count: k.count,
            })
            .collect(),
        more,
    }
}

/// What reasoning cost, from the ledger (none when no reply reasoned).
fn reasoning_of(t: &Totals) -> Option<result::Reasoning> {
    let r = &t.reasoning;
    (r.replies > 0).then(|| result::Reasoning {
        replies: r.replies,
        reasoning_tokens: r.reasoning_tokens,
        first_token_ms: round2(r.first_token_ms_mean()),
        first_answer_token_ms: round2(r.first_answer_token_ms_mean()),
    })
}

/// What the provider's quotas and slots did, from the ledger (none when none were set).
fn provider_of(ledger: &Summary) -> Option<result::Provider> {
    let p = ledger.provider.as_ref()?;
    let t = &ledger.totals;
    let calls = t.llm_calls;
    let retried = t.retries.min(calls);
    let refused: std::collections::BTreeMap<String, u64> = p
        .refused
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.clone(), *n))
        .collect();
    let n_refused: u64 = refused.values().sum();
    let provider_ms = t.queue_ms + t.llm_ms;
    let queue_share = if provider_ms > 0.0 {
        t.queue_ms / provider_ms
    } else {
        0.0
    };
    // What held calls back most: the limit that refused most, or the slots when calls
    // spent a larger share of the provider's time waiting than they were refused.
    let refused_share = n_refused as f64 / calls.max(1) as f64;
    let top_refuser = p
        .refused_by
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(words, _)| words.clone());
    let binding = if analysis::provider::refusals_lead(refused_share, queue_share) {
        top_refuser
    } else if queue_share >= analysis::provider::QUEUE_LEADS {
        p.slots.clone().or(top_refuser)
    } else {
        top_refuser
    };
    Some(result::Provider {
        limits: p.limits.clone(),
        answered: p.answered,
        refused_share: round3(refused_share),
        refused,
        retried,
        amplification: round2(calls as f64 / (calls - retried).max(1) as f64),
        queue_wait_p50_ms: round2(p.queue_wait_ms.p50),
        queue_wait_p99_ms: round2(p.queue_wait_ms.p99),
        queue_share: round3(queue_share),
        peak_in_flight: p.peak_in_flight,
        peak_queued: p.peak_queued,
        binding,
    })
}

impl MockSide {
    /// `think` is a session's think time, by its name (a replayed session has its own).
    pub(crate) fn read(
        timing: &mock::TimingSnapshot,
        refused: &mock::serve::refusals::Refusals,
        ledger: &Summary,
        think: &dyn Fn(&str) -> f64,
        failed: &std::collections::HashSet<String>,
    ) -> MockSide {
        let t = &ledger.totals;
        MockSide {
            late_p99_ms: timing.late_p99_ms,
            llm_calls: t.llm_calls,
            tokens_out: t.output_tokens,
            injected: t.injected_failures.total(),
            violations: t.integrity_violations,
            ideal_ms: ideal_session_ms_by(&with_tool_time(ledger), think, failed),
            ideal_by: ideals(&with_tool_time(ledger), think, failed),
            violation_list: ledger
                .violations
                .iter()
                .filter_map(|v| serde_json::to_value(v).ok())
                .collect(),
            marked: ledger
                .sessions
                .keys()
                .filter(|k| k.as_str() != ANONYMOUS)
                .count(),
            provider: provider_of(ledger),
            reasoning: reasoning_of(t),
            by_kind: t
                .violations_by_kind
                .iter()
                .map(|(k, n)| (k.clone(), *n))
                .collect(),
            cache: crate::cost_side::cache_report(ledger),
            tokens: crate::cost_side::tokens(&t.cache),
            mcp: ledger.mcp.as_ref().map(crate::mcp_side::from_ledger),
            stages: t.voice_stages(),
            refused: refused_of(refused),
        }
    }
}

/// Each session's unloaded time with the time its MCP tools took added: a session
/// that waits for its tools waits for the provider's side, not the SUT's.
fn with_tool_time(ledger: &Summary) -> std::borrow::Cow<'_, BTreeMap<String, SessionSummary>> {
    let Some(mcp) = ledger.mcp.as_ref().filter(|m| !m.sessions.is_empty()) else {
        return std::borrow::Cow::Borrowed(&ledger.sessions);
    };
    let mut sessions = ledger.sessions.clone();
    for (name, s) in sessions.iter_mut() {
        s.llm_ms += mcp.sessions.get(name).map_or(0.0, |m| m.ms);
    }
    std::borrow::Cow::Owned(sessions)
}

/// The median over the sessions that went through of the provider's unloaded time for
/// them, plus think time: a failed session asked the provider for less than a session
/// does (with most sessions failing early, the median would be one call).
#[cfg(test)]
fn ideal_session_ms(
    sessions: &BTreeMap<String, SessionSummary>,
    think_ms: f64,
    failed: &std::collections::HashSet<String>,
) -> Option<f64> {
    ideal_session_ms_by(sessions, &|_| think_ms, failed)
}

/// The middle value (the upper one of an even count), to the hundredth; None when empty.
pub(crate) fn upper_median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| round2(v[v.len() / 2]))
}

/// Each session that went through: the provider's unloaded time for it plus its think time.
fn ideals(
    sessions: &BTreeMap<String, SessionSummary>,
    think: &dyn Fn(&str) -> f64,
    failed: &std::collections::HashSet<String>,
) -> BTreeMap<String, f64> {
    sessions
        .iter()
        .filter(|(k, _)| k.as_str() != ANONYMOUS && !failed.contains(k.as_str()))
        .map(|(k, v)| (k.clone(), v.llm_ms + think(k)))
        .collect()
}

/// The same with each session's own think time.
fn ideal_session_ms_by(
    sessions: &BTreeMap<String, SessionSummary>,
    think: &dyn Fn(&str) -> f64,
    failed: &std::collections::HashSet<String>,
) -> Option<f64> {
    upper_median(ideals(sessions, think, failed).into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_is_the_median_session_plus_think_time() {
        let session = |llm_ms: f64| SessionSummary {
            llm_ms,
            ..SessionSummary::default()
        };
        let ledger: BTreeMap<String, SessionSummary> = [
            ("a", 100.0),
            ("b", 300.0),
            ("c", 200.0),
            (ANONYMOUS, 9999.0),
        ]
        .into_iter()
        .map(|(k, ms)| (k.to_string(), session(ms)))
        .collect();
        let none = Default::default();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &none), Some(250.0));
        assert_eq!(ideal_session_ms(&BTreeMap::new(), 50.0, &none), None);
        // Sessions that failed early asked for less: they are left out.
        let failed = ["a".to_string(), "c".to_string()].into_iter().collect();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &failed), Some(350.0));
    }
}
