//! The ledger: what the mock served to each session and what it found wrong.
//!
//! Per session (`entry.rs`): calls, tokens, injected failures by kind, retries (the same
//! conversation sent again), integrity violations, worst frame lateness, and what the
//! mock said (tool-call ids with their arguments, hashes of text answers, in order) so
//! the oracle can check the history it is sent back, and what the prompt cache did for
//! it with its earlier prompts (`cache.rs`). Sessions are sharded by name so concurrent
//! sessions rarely share a lock. What the ledger reports is a typed [`Summary`]
//! (`summary.rs`).

pub mod aloud;
pub mod cache;
pub mod entry;
pub mod summary;
pub mod voice;

use crate::cache::threads::Threads;
use crate::failures::rates::Injected;
pub use crate::ledger::cache::{CacheBreak, CacheTotals, CallCache, TurnCache};
use crate::ledger::entry::{Entry, Said};
pub use crate::ledger::summary::{
    InjectedCounts, ProviderSummary, QueueWait, Reasoning, SessionSummary, Summary, Totals, Usage,
    Violation,
};
pub use crate::session::ANONYMOUS;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

const SHARDS: usize = 32;
/// Violations kept in full; beyond this only counts grow.
const MAX_KEPT: usize = 10_000;
const MAX_ANONYMOUS_SEEN: usize = 10_000;

/// The violations found: those kept (the first [`MAX_KEPT`]), how many in all, and how
/// many of each kind.
#[derive(Default)]
struct Violations {
    kept: Vec<Violation>,
    count: u64,
    by_kind: BTreeMap<Cow<'static, str>, u64>,
}

#[derive(Default)]
pub struct Ledger {
    shards: Vec<Mutex<HashMap<String, Entry>>>,
    /// Tool-call id or text hash → the session it was said to (for leak detection).
    owners: Vec<Mutex<HashMap<String, String>>>,
    violations: Mutex<Violations>,
    /// Cache breaks: counts by kind and the first of each.
    breaks: Mutex<cache::Breaks>,
    /// The replies spoken aloud lately, for the words check's comparison by sound.
    pub aloud: aloud::Aloud,
}

fn shard_of(key: &str) -> usize {
    (crate::hash::fnv1a(0, key.as_bytes()) as usize) % SHARDS
}

/// What the ledger learns when a request arrives.
pub struct Arrival {
    /// How many times this exact conversation was sent before in this session.
    pub attempt: u32,
}

impl Ledger {
    pub fn new() -> Self {
        Ledger {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            owners: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            violations: Mutex::new(Violations::default()),
            breaks: Mutex::new(cache::Breaks::default()),
            aloud: aloud::Aloud::default(),
        }
    }

    /// Runs `f` on a session's entry under its shard lock.
    pub fn with<R>(&self, session: &str, f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut shard = self.shards[shard_of(session)]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        f(shard.entry(session.to_string()).or_default())
    }

    pub fn arrive(&self, session: &str, content: u64, prompt_tokens: u32) -> Arrival {
        self.with(session, |e| {
            e.calls += 1;
            e.prompt_tokens += prompt_tokens as u64;
            // Anonymous conversations are remembered for retry counting only up to a
            // bound (a retry follows its first try closely), so a long run without
            // session markers neither exhausts memory nor inflates RSS per stream.
            if session == ANONYMOUS
                && e.seen.len() >= MAX_ANONYMOUS_SEEN
                && !e.seen.contains_key(&content)
            {
                e.seen.clear();
            }
            let n = e.seen.entry(content).or_insert(0);
            let attempt = *n;
            *n += 1;
            if attempt > 0 {
                e.retries += 1;
            }
            Arrival { attempt }
        })
    }

    pub fn injected(&self, session: &str, kind: Injected) {
        self.with(session, |e| e.injected[kind as usize] += 1);
    }

    /// Records what the mock answered: each tool call (id, arguments) or the text.
    pub fn said(
        &self,
        session: &str,
        calls: &[(String, String)],
        text: Option<&str>,
        output_tokens: u32,
    ) {
        let mut owned = Vec::new();
        self.with(session, |e| {
            e.output_tokens += output_tokens as u64;
            let seq = e.next_seq;
            e.next_seq += 1;
            for (id, args) in calls {
                e.issued_calls.insert(
                    id.clone(),
                    Said {
                        seq,
                        args: Some(args.clone()),
                    },
                );
                owned.push(id.clone());
            }
            if let Some(t) = text {
                let h = text_hash(t);
                e.issued_texts.insert(h, Said { seq, args: None });
                owned.push(format!("text:{h:016x}"));
                // Speech of a reply comes sentence by sentence: each is the session's.
                owned.extend(voice::sentences(t).iter().map(|s| voice::sentence_key(s)));
            }
        });
        for key in owned {
            self.owners[shard_of(&key)]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, session.to_string());
        }
    }

    /// The session a tool-call id or text hash was said to, if any.
    pub fn owner_of_call(&self, id: &str) -> Option<String> {
        self.owners[shard_of(id)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    pub fn owner_of_text(&self, text: &str) -> Option<String> {
        let key = format!("text:{:016x}", text_hash(text));
        self.owner_of_call(&key)
    }

    /// The session whose reply holds `text` (its whole, or one of its sentences).
    pub fn owner_of_spoken(&self, text: &str) -> Option<String> {
        self.owner_of_text(text).or_else(|| {
            voice::sentences(text)
                .iter()
                .find_map(|s| self.owner_of_call(&voice::sentence_key(s)))
        })
    }

    /// Updates what the audio APIs did for a session.
    pub fn voice(&self, session: &str, f: impl FnOnce(&mut voice::Voice)) {
        self.with(session, |e| f(&mut e.voice));
    }

    pub fn refused(&self, session: &str) {
        self.with(session, |e| e.refused += 1);
    }

    /// Time waited for a slot (not in `llm_ms`: that is the unloaded provider's time).
    pub fn queued(&self, session: &str, ms: f64) {
        self.with(session, |e| e.queue_ms += ms);
    }

    /// A reply that reasoned `tokens` tokens: its first token was due at `first_ms`,
    /// the first of its answer at `answer_ms`.
    pub fn reasoned(&self, session: &str, tokens: u32, first_ms: f64, answer_ms: f64) {
        self.with(session, |e| {
            e.reasoned
                .add(&Reasoning::reply(tokens, first_ms, answer_ms))
        });
    }

    pub fn llm_time(&self, session: &str, ms: f64) {
        self.with(session, |e| e.llm_ms += ms);
    }

    pub fn late(&self, session: &str, late_ms: f64) {
        self.with(session, |e| e.late_max_ms = e.late_max_ms.max(late_ms));
    }

    /// Runs `f` on a session's earlier prompts (the oracle's cache comparison).
    pub fn cache_threads<R>(&self, session: &str, f: impl FnOnce(&mut Threads) -> R) -> R {
        self.with(session, |e| f(&mut e.threads))
    }

    /// Counts one call's use of the prompt cache.
    pub fn cache_call(&self, session: &str, c: &CallCache) {
        self.with(session, |e| e.cache.call(c));
    }

    pub fn cache_break(&self, b: CacheBreak) {
        self.breaks.lock().unwrap_or_else(|p| p.into_inner()).add(b);
    }

    pub fn record(&self, v: Vec<Violation>) {
        if v.is_empty() {
            return;
        }
        for x in &v {
            self.with(&x.session, |e| e.violations += 1);
        }
        let mut all = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        for x in v {
            all.count += 1;
            *all.by_kind.entry(x.kind.clone()).or_insert(0) += 1;
            if all.kept.len() < MAX_KEPT {
                all.kept.push(x);
            }
        }
    }

    /// The whole ledger, typed: every session and their totals, and the violations. The
    /// provider's section is the pushback's (see `App::ledger_summary`).
    pub fn summary(&self) -> Summary {
        let mut sessions = BTreeMap::new();
        let mut totals = Totals::default();
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for (name, e) in shard.iter() {
                totals.add(&e.totals());
                sessions.insert(name.clone(), e.summary());
            }
        }
        let all = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        all.count_into(&mut totals);
        let breaks = self.breaks.lock().unwrap_or_else(|p| p.into_inner());
        breaks.count_into(&mut totals.cache);
        Summary {
            cache_breaks: breaks.first.clone(),
            mcp: None,
            provider: None,
            sessions,
            totals,
            violations: all.kept.clone(),
            violations_truncated: all.count as usize > all.kept.len(),
        }
    }

    /// The whole ledger as served on `GET /plimsoll/ledger`, without the provider's
    /// section.
    pub fn snapshot(&self) -> serde_json::Value {
        serde_json::to_value(self.summary()).expect("a summary serializes")
    }

    /// Totals for `/metrics`.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for shard in &self.shards {
            for e in shard.lock().unwrap_or_else(|p| p.into_inner()).values() {
                t.add(&e.totals());
            }
        }
        let all = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        all.count_into(&mut t);
        let breaks = self.breaks.lock().unwrap_or_else(|p| p.into_inner());
        breaks.count_into(&mut t.cache);
        t
    }
}

impl Violations {
    /// The violations as counted when they were found, into totals summed over sessions
    /// (whose counts may be a moment behind while one is being recorded).
    fn count_into(&self, t: &mut Totals) {
        t.integrity_violations = self.count;
        t.violations_by_kind = self
            .by_kind
            .iter()
            .map(|(k, n)| (k.to_string(), *n))
            .collect();
    }
}

/// Hash of an answer's text as the oracle compares it (surrounding white space ignored).
pub fn text_hash(text: &str) -> u64 {
    crate::hash::fnv1a(7, text.trim().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A ledger with sessions of every sort: anonymous, retried, refused, queued, failed,
    /// reasoning, with violations of several kinds and times that do not add up exactly.
    fn busy() -> Ledger {
        let l = Ledger::new();
        for (i, s) in ["s1", "s2", ANONYMOUS, "s3"].iter().enumerate() {
            for attempt in 0..(i as u64 + 1) {
                l.arrive(s, 40 + attempt % 2, 11 + i as u32);
            }
            l.said(s, &[(format!("call_{i}"), "{}".into())], Some("hi"), 7);
            l.llm_time(s, 0.1 * (i as f64 + 1.0));
            l.queued(s, 0.7 / (i as f64 + 3.0));
            l.late(s, 1.0 / 3.0 + i as f64);
        }
        l.injected("s1", Injected::Cut);
        l.injected("s1", Injected::RateLimit);
        l.injected(ANONYMOUS, Injected::Spike);
        l.refused("s2");
        l.reasoned("s1", 200, 0.1, 0.7);
        l.reasoned("s1", 10, 0.2, 1.3);
        l.reasoned("s3", 33, 1.0 / 3.0, 2.0 / 3.0);
        let v = |session: &str, kind: &'static str| Violation {
            detail: format!("{kind} in {session}"),
            excerpt: "x".into(),
            kind: kind.into(),
            session: session.into(),
            turn: 2,
        };
        l.record(vec![
            v("s1", "history"),
            v("s2", "echo"),
            v("s1", "history"),
        ]);
        l.record(vec![v("s3", "reasoning")]);
        l
    }

    /// The ledger's JSON as it was written before it was typed (a json! value per
    /// session and for the totals), kept here to prove the typed summary's bytes.
    fn untyped(l: &Ledger) -> Value {
        let injected = |n: &[u64; 7]| {
            let mut m = serde_json::Map::new();
            for k in Injected::ALL {
                m.insert(k.name().into(), n[k as usize].into());
            }
            Value::Object(m)
        };
        let mut sessions = serde_json::Map::new();
        let (mut calls, mut prompt, mut output, mut retries, mut refused) = (0, 0, 0, 0, 0);
        let (mut queue_ms, mut llm_ms, mut inj, mut r) =
            (0.0, 0.0, [0u64; 7], Reasoning::default());
        for shard in &l.shards {
            for (name, e) in shard.lock().unwrap().iter() {
                (calls, prompt, output) = (
                    calls + e.calls,
                    prompt + e.prompt_tokens,
                    output + e.output_tokens,
                );
                (retries, refused) = (retries + e.retries, refused + e.refused);
                queue_ms += e.queue_ms;
                llm_ms += e.llm_ms;
                r.add(&e.reasoned);
                for (t, x) in inj.iter_mut().zip(e.injected) {
                    *t += x;
                }
                sessions.insert(name.clone(), json!({
                    "llm_calls": e.calls, "prompt_tokens": e.prompt_tokens,
                    "output_tokens": e.output_tokens, "retries": e.retries,
                    "distinct_calls": e.seen.len(),
                    "attempts_per_call": if e.seen.is_empty() { 0.0 } else { e.calls as f64 / e.seen.len() as f64 },
                    "refused": e.refused, "queue_ms": e.queue_ms,
                    "injected_failures": injected(&e.injected),
                    "integrity_violations": e.violations, "late_max_ms": e.late_max_ms,
                    "llm_ms": e.llm_ms,
                }));
            }
        }
        let per = |x: f64| {
            if r.replies == 0 {
                0.0
            } else {
                x / r.replies as f64
            }
        };
        let all = l.violations.lock().unwrap();
        json!({
            "totals": {
                "sessions": sessions.len(), "llm_calls": calls, "prompt_tokens": prompt,
                "output_tokens": output, "retries": retries, "refused": refused,
                "queue_ms": queue_ms, "llm_ms": llm_ms,
                "reasoning": {
                    "replies": r.replies, "reasoning_tokens": r.reasoning_tokens,
                    "first_token_ms_mean": per(r.first_token_ms_sum),
                    "first_answer_token_ms_mean": per(r.first_answer_token_ms_sum),
                    "first_answer_token_ms_max": r.first_answer_token_ms_max,
                },
                "injected_failures": injected(&inj),
                "integrity_violations": all.count,
                "violations_by_kind": all.by_kind,
            },
            "sessions": sessions,
            "violations": all.kept,
            "violations_truncated": all.count as usize > all.kept.len(),
        })
    }

    #[test]
    fn the_typed_summary_writes_the_bytes_the_untyped_ledger_wrote() {
        let l = busy();
        let before = serde_json::to_string(&untyped(&l)).unwrap();
        let summary = l.summary();
        assert_eq!(serde_json::to_string(&summary).unwrap(), before);
        assert_eq!(serde_json::to_string(&l.snapshot()).unwrap(), before);
        let t = &summary.totals;
        assert_eq!(
            (t.sessions, t.llm_calls, t.retries, t.refused),
            (4, 10, 3, 1)
        );
        assert_eq!(
            (t.integrity_violations, t.violations_by_kind["history"]),
            (4, 2)
        );
        assert_eq!(
            (t.injected_failures.total(), t.injected_failures.cut),
            (3, 1)
        );
        assert_eq!(
            (t.reasoning.replies, t.reasoning.reasoning_tokens),
            (3, 243)
        );
        assert_eq!(summary.sessions["s2"].attempts_per_call, 1.0);
        assert_eq!(l.totals(), summary.totals, "/metrics reads the same totals");
    }
}
