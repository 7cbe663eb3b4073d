//! One session's record in the ledger: what it was served and sent, and what the mock
//! said to it (for the oracle to compare), its earlier prompts and what the cache did for
//! them, and that record summed and summarized.

use crate::cache::threads::Threads;
use crate::ledger::cache::CacheTotals;
use crate::ledger::summary::{InjectedCounts, Reasoning, SessionSummary, Totals};
use std::collections::{BTreeMap, HashMap};

/// One thing the mock said, numbered in the order it was said within the session.
#[derive(Clone, Debug)]
pub struct Said {
    pub seq: u32,
    /// Tool-call arguments, or `None` for a text answer.
    pub args: Option<String>,
}

#[derive(Default, Debug)]
pub struct Entry {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    pub injected: [u64; 7],
    pub retries: u64,
    /// Requests the provider's quotas or full queue refused.
    pub refused: u64,
    /// Time waited for a generation slot.
    pub queue_ms: f64,
    pub violations: u64,
    pub late_max_ms: f64,
    /// The generation time the mock scheduled for this session's replies (time to
    /// first token + token times, jitter and injected delays included): what the
    /// session would take if the system under test added nothing.
    pub llm_ms: f64,
    /// Replies that reasoned, their reasoning tokens, and the scheduled times to
    /// their first token and to the first token of their answer.
    pub reasoned: Reasoning,
    /// Content hash → times seen.
    pub seen: HashMap<u64, u32>,
    /// Tool-call id → what was said.
    pub issued_calls: HashMap<String, Said>,
    /// Hash of a text answer → what was said.
    pub issued_texts: HashMap<u64, Said>,
    pub next_seq: u32,
    /// What the prompt cache did for the session's calls.
    pub cache: CacheTotals,
    /// The session's earlier prompts, per conversation thread.
    pub threads: Threads,
    /// What the audio APIs did for the session.
    pub voice: crate::ledger::voice::Voice,
}

impl Entry {
    /// This session's counts, as one session of the totals.
    pub fn totals(&self) -> Totals {
        Totals {
            cache: self.cache.clone(),
            injected_failures: InjectedCounts::from(&self.injected),
            integrity_violations: self.violations,
            llm_calls: self.calls,
            llm_ms: self.llm_ms,
            output_tokens: self.output_tokens,
            prompt_tokens: self.prompt_tokens,
            queue_ms: self.queue_ms,
            reasoning: self.reasoned,
            refused: self.refused,
            retries: self.retries,
            sessions: 1,
            violations_by_kind: BTreeMap::new(),
            voice: self.voice,
        }
    }

    /// This session as the ledger's summary shows it.
    pub fn summary(&self) -> SessionSummary {
        let distinct = self.seen.len();
        SessionSummary {
            // Attempts per distinct conversation sent: exact retry amplification.
            attempts_per_call: if distinct == 0 {
                0.0
            } else {
                self.calls as f64 / distinct as f64
            },
            distinct_calls: distinct as u64,
            injected_failures: InjectedCounts::from(&self.injected),
            integrity_violations: self.violations,
            late_max_ms: self.late_max_ms,
            llm_calls: self.calls,
            llm_ms: self.llm_ms,
            output_tokens: self.output_tokens,
            prompt_tokens: self.prompt_tokens,
            queue_ms: self.queue_ms,
            refused: self.refused,
            retries: self.retries,
            voice: self.voice,
        }
    }
}
