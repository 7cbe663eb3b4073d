//! The ledger as other crates read it: a typed [`Summary`] of what the mock served to
//! each session and what it found wrong, as served on `GET /plimsoll/ledger`.
//!
//! Every struct here declares its fields in the order serde_json writes a map's keys
//! (sorted; the workspace has no `preserve_order`), so serializing a summary directly
//! gives the same bytes as serializing it as a JSON value, and as the ledger wrote
//! before it was typed. [`Totals::add`] is the one way counts are summed: over the
//! sessions of one ledger, or over the ledgers of a run's shards. Recording is the
//! ledger's (`mod.rs`); this module only holds what it reports.

use crate::failures::rates::Injected;
use crate::ledger::cache::{CacheBreak, CacheTotals};
pub use crate::pushback::quota::Usage;
pub use crate::pushback::state::{ProviderSummary, QueueWait};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The ledger: totals, each session, the provider's pushback, the violations found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The first cache break of each kind the oracle found; absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_breaks: Vec<CacheBreak>,
    /// The tools served over MCP: calls, latency per tool, errors, sessions; absent when
    /// no MCP message arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<crate::mcp::summary::McpSummary>,
    /// What the provider's quotas and slots did; absent when no limit was ever set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderSummary>,
    /// Each session by its name ([`ANONYMOUS`](crate::session::ANONYMOUS) for requests
    /// without one).
    pub sessions: BTreeMap<String, SessionSummary>,
    pub totals: Totals,
    /// The violations found, in the order found (at most the first 10,000).
    pub violations: Vec<Violation>,
    /// More violations were found than are listed.
    pub violations_truncated: bool,
}

/// Counts over sessions (one ledger's, or several shards' added up).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// What the prompt cache did; absent when no call was served.
    #[serde(default, skip_serializing_if = "CacheTotals::is_empty")]
    pub cache: CacheTotals,
    pub injected_failures: InjectedCounts,
    pub integrity_violations: u64,
    pub llm_calls: u64,
    /// The generation time the mock scheduled for the replies.
    pub llm_ms: f64,
    pub output_tokens: u64,
    pub prompt_tokens: u64,
    /// Time waited for a generation slot.
    pub queue_ms: f64,
    pub reasoning: Reasoning,
    /// Requests the provider's quotas or full queue refused.
    pub refused: u64,
    /// Requests that resent a conversation already seen.
    pub retries: u64,
    pub sessions: u64,
    /// Violations by kind (echo, isolation, history, reasoning).
    pub violations_by_kind: BTreeMap<String, u64>,
    /// What the audio APIs did; absent when none was called.
    #[serde(default, skip_serializing_if = "crate::ledger::voice::Voice::is_empty")]
    pub voice: crate::ledger::voice::Voice,
}

impl Totals {
    /// What the audio APIs did, as RESULT's `voice.stages` says it (None when none was
    /// called): a step's, or the shards' of one step added.
    pub fn voice_stages(&self) -> Option<result::VoiceStages> {
        let v = &self.voice;
        let mean = |sum: f64, n: u64| (n > 0).then(|| result::round2(sum / n as f64));
        (!v.is_empty()).then(|| result::VoiceStages {
            stt_calls: v.stt_calls,
            stt_ms_mean: mean(v.stt_ms, v.stt_calls),
            tts_calls: v.tts_calls,
            tts_first_byte_ms_mean: mean(v.tts_first_byte_ms, v.tts_calls),
            realtime_responses: v.realtime_responses,
            realtime_response_ms_mean: mean(v.realtime_response_ms, v.realtime_responses),
            unheard: v.unheard,
        })
    }

    /// Adds another's counts to these: sums, the later of the maxima, violations by kind
    /// merged.
    pub fn add(&mut self, o: &Totals) {
        self.cache.add(&o.cache);
        self.injected_failures.add(&o.injected_failures);
        self.integrity_violations += o.integrity_violations;
        self.llm_calls += o.llm_calls;
        self.llm_ms += o.llm_ms;
        self.output_tokens += o.output_tokens;
        self.prompt_tokens += o.prompt_tokens;
        self.queue_ms += o.queue_ms;
        self.reasoning.add(&o.reasoning);
        self.refused += o.refused;
        self.retries += o.retries;
        self.sessions += o.sessions;
        for (kind, n) in &o.violations_by_kind {
            *self.violations_by_kind.entry(kind.clone()).or_insert(0) += n;
        }
        self.voice.add(&o.voice);
    }
}

/// One session's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// Calls per distinct conversation sent (exact retry amplification; 0 without calls).
    pub attempts_per_call: f64,
    /// Distinct conversations sent.
    pub distinct_calls: u64,
    pub injected_failures: InjectedCounts,
    pub integrity_violations: u64,
    /// The worst lateness of a frame sent to the session.
    pub late_max_ms: f64,
    pub llm_calls: u64,
    /// The generation time the mock scheduled for the session's replies: what the
    /// session would take if the system under test added nothing.
    pub llm_ms: f64,
    pub output_tokens: u64,
    pub prompt_tokens: u64,
    pub queue_ms: f64,
    pub refused: u64,
    pub retries: u64,
    /// What the audio APIs did for the session; absent when none was called.
    #[serde(default, skip_serializing_if = "crate::ledger::voice::Voice::is_empty")]
    pub voice: crate::ledger::voice::Voice,
}

/// One session's counts as one session of totals (to sum a subset of a ledger's
/// sessions, a shard's for one): without reasoning or violations by kind, which the
/// ledger keeps for the whole run only.
impl From<&SessionSummary> for Totals {
    fn from(s: &SessionSummary) -> Self {
        Totals {
            cache: CacheTotals::default(),
            injected_failures: s.injected_failures,
            integrity_violations: s.integrity_violations,
            llm_calls: s.llm_calls,
            llm_ms: s.llm_ms,
            output_tokens: s.output_tokens,
            prompt_tokens: s.prompt_tokens,
            queue_ms: s.queue_ms,
            reasoning: Reasoning::default(),
            refused: s.refused,
            retries: s.retries,
            sessions: 1,
            violations_by_kind: BTreeMap::new(),
            voice: s.voice,
        }
    }
}

/// Failures injected, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectedCounts {
    pub cut: u64,
    pub overloaded: u64,
    pub rate_limit: u64,
    pub reset: u64,
    pub server_error: u64,
    pub spike: u64,
    pub stall: u64,
}

impl InjectedCounts {
    /// The count of one kind.
    pub fn of(&self, kind: Injected) -> u64 {
        match kind {
            Injected::RateLimit => self.rate_limit,
            Injected::ServerError => self.server_error,
            Injected::Overloaded => self.overloaded,
            Injected::Reset => self.reset,
            Injected::Cut => self.cut,
            Injected::Stall => self.stall,
            Injected::Spike => self.spike,
        }
    }

    /// Every kind together.
    pub fn total(&self) -> u64 {
        Injected::ALL.iter().map(|k| self.of(*k)).sum()
    }

    pub fn add(&mut self, o: &InjectedCounts) {
        self.cut += o.cut;
        self.overloaded += o.overloaded;
        self.rate_limit += o.rate_limit;
        self.reset += o.reset;
        self.server_error += o.server_error;
        self.spike += o.spike;
        self.stall += o.stall;
    }
}

/// From counts indexed by [`Injected`] (as the ledger keeps them per session).
impl From<&[u64; 7]> for InjectedCounts {
    fn from(n: &[u64; 7]) -> Self {
        let at = |k: Injected| n[k as usize];
        InjectedCounts {
            cut: at(Injected::Cut),
            overloaded: at(Injected::Overloaded),
            rate_limit: at(Injected::RateLimit),
            reset: at(Injected::Reset),
            server_error: at(Injected::ServerError),
            spike: at(Injected::Spike),
            stall: at(Injected::Stall),
        }
    }
}

/// What the model's reasoning cost, over the replies that reasoned. Carried as sums so
/// adding is exact; written (and read) as means per reply, so sums read back from JSON
/// are mean × replies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "ReasoningJson", into = "ReasoningJson")]
pub struct Reasoning {
    pub replies: u64,
    pub reasoning_tokens: u64,
    /// Σ over the replies of when their first token was due.
    pub first_token_ms_sum: f64,
    /// Σ over the replies of when the first token of their answer was due.
    pub first_answer_token_ms_sum: f64,
    pub first_answer_token_ms_max: f64,
}

impl Reasoning {
    /// One reply that reasoned `tokens` tokens: its first token due at `first_ms`, the
    /// first of its answer at `answer_ms`.
    pub fn reply(tokens: u32, first_ms: f64, answer_ms: f64) -> Reasoning {
        Reasoning {
            replies: 1,
            reasoning_tokens: tokens as u64,
            first_token_ms_sum: first_ms,
            first_answer_token_ms_sum: answer_ms,
            first_answer_token_ms_max: answer_ms,
        }
    }

    pub fn add(&mut self, o: &Reasoning) {
        self.replies += o.replies;
        self.reasoning_tokens += o.reasoning_tokens;
        self.first_token_ms_sum += o.first_token_ms_sum;
        self.first_answer_token_ms_sum += o.first_answer_token_ms_sum;
        self.first_answer_token_ms_max = self
            .first_answer_token_ms_max
            .max(o.first_answer_token_ms_max);
    }

    fn per_reply(&self, sum: f64) -> f64 {
        if self.replies == 0 {
            0.0
        } else {
            sum / self.replies as f64
        }
    }

    /// The mean time to the first token of a reply that reasoned.
    pub fn first_token_ms_mean(&self) -> f64 {
        self.per_reply(self.first_token_ms_sum)
    }

    /// The mean time to the first token of the answer, after the reasoning: what a user
    /// of a reasoning model waits for.
    pub fn first_answer_token_ms_mean(&self) -> f64 {
        self.per_reply(self.first_answer_token_ms_sum)
    }
}

/// [`Reasoning`] as written in the ledger's JSON.
#[derive(Serialize, Deserialize)]
struct ReasoningJson {
    first_answer_token_ms_max: f64,
    first_answer_token_ms_mean: f64,
    first_token_ms_mean: f64,
    reasoning_tokens: u64,
    replies: u64,
}

impl From<Reasoning> for ReasoningJson {
    fn from(r: Reasoning) -> Self {
        ReasoningJson {
            first_answer_token_ms_max: r.first_answer_token_ms_max,
            first_answer_token_ms_mean: r.first_answer_token_ms_mean(),
            first_token_ms_mean: r.first_token_ms_mean(),
            reasoning_tokens: r.reasoning_tokens,
            replies: r.replies,
        }
    }
}

impl From<ReasoningJson> for Reasoning {
    fn from(j: ReasoningJson) -> Self {
        let n = j.replies as f64;
        Reasoning {
            replies: j.replies,
            reasoning_tokens: j.reasoning_tokens,
            first_token_ms_sum: j.first_token_ms_mean * n,
            first_answer_token_ms_sum: j.first_answer_token_ms_mean * n,
            first_answer_token_ms_max: j.first_answer_token_ms_max,
        }
    }
}

/// Something the oracle found wrong in a session's conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    pub detail: String,
    pub excerpt: String,
    /// echo | isolation | history | reasoning
    pub kind: Cow<'static, str>,
    pub session: String,
    /// The session's turn, as its marker says (`turn=K`); unmarked: the position of the
    /// user message in the conversation.
    pub turn: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(calls: u64, first_ms: f64, kind: &str) -> Totals {
        let mut injected = [0u64; 7];
        injected[Injected::Stall as usize] = calls;
        Totals {
            injected_failures: InjectedCounts::from(&injected),
            integrity_violations: 1,
            llm_calls: calls,
            llm_ms: 10.0 * calls as f64,
            reasoning: Reasoning::reply(100, first_ms, 2.0 * first_ms),
            sessions: 1,
            violations_by_kind: BTreeMap::from([(kind.to_string(), 1)]),
            ..Totals::default()
        }
    }

    #[test]
    fn totals_add_up_across_shards_and_means_are_per_reply() {
        let mut run = Totals::default();
        for shard in [
            totals(2, 1.0, "echo"),
            totals(3, 3.0, "echo"),
            totals(5, 2.0, "history"),
        ] {
            run.add(&shard);
        }
        assert_eq!((run.sessions, run.llm_calls, run.llm_ms), (3, 10, 100.0));
        assert_eq!(
            (run.injected_failures.stall, run.injected_failures.total()),
            (10, 10)
        );
        assert_eq!(run.integrity_violations, 3);
        assert_eq!(
            run.violations_by_kind,
            BTreeMap::from([("echo".into(), 2), ("history".into(), 1)])
        );
        let r = run.reasoning;
        assert_eq!(
            (r.replies, r.reasoning_tokens, r.first_answer_token_ms_max),
            (3, 300, 6.0)
        );
        assert_eq!(
            (r.first_token_ms_mean(), r.first_answer_token_ms_mean()),
            (2.0, 4.0)
        );
    }

    #[test]
    fn a_subset_of_sessions_sums_to_its_totals() {
        let s = |calls, refused| SessionSummary {
            llm_calls: calls,
            refused,
            llm_ms: 2.5,
            ..Default::default()
        };
        let mut shard = Totals::default();
        for session in [s(3, 1), s(4, 0)] {
            shard.add(&Totals::from(&session));
        }
        assert_eq!(
            (shard.sessions, shard.llm_calls, shard.refused, shard.llm_ms),
            (2, 7, 1, 5.0)
        );
    }

    #[test]
    fn a_summary_reads_back_from_its_json() {
        let mut s = Summary {
            totals: totals(4, 1.5, "isolation"),
            ..Summary::default()
        };
        s.sessions.insert(
            "s1".into(),
            SessionSummary {
                llm_calls: 4,
                attempts_per_call: 1.25,
                ..Default::default()
            },
        );
        s.violations.push(Violation {
            detail: "d".into(),
            excerpt: "e".into(),
            kind: "isolation".into(),
            session: "s1".into(),
            turn: 3,
        });
        s.provider = Some(ProviderSummary {
            answered: 4,
            limits: "60 requests/min per key".into(),
            ..Default::default()
        });
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            serde_json::to_value(&s).unwrap().to_string(),
            "fields in JSON's order"
        );
        assert!(text.contains(r#""reasoning":{"first_answer_token_ms_max":3.0,"first_answer_token_ms_mean":3.0,"first_token_ms_mean":1.5,"reasoning_tokens":100,"replies":1}"#), "{text}");
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        // Without a provider section there is no `provider` key, as before.
        s.provider = None;
        assert!(!serde_json::to_string(&s).unwrap().contains("provider"));
    }
}
