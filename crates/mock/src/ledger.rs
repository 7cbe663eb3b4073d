//! The ledger: what the mock served to each session and what it found wrong.
//!
//! Per session: calls, tokens, injected failures by kind, retries (the same
//! conversation sent again), integrity violations, worst frame lateness, and what the
//! mock said (tool-call ids with their arguments, hashes of text answers, in order) so
//! the oracle can check the history it is sent back. Sessions are sharded by name so
//! concurrent sessions rarely share a lock.

use crate::failures::rates::Injected;
pub use crate::session::ANONYMOUS;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

const SHARDS: usize = 32;
/// Violations kept in full; beyond this only counts grow.
const MAX_KEPT: usize = 10_000;
const MAX_ANONYMOUS_SEEN: usize = 10_000;

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
    pub reasoned: Reasoned,
    /// Content hash → times seen.
    pub seen: HashMap<u64, u32>,
    /// Tool-call id → what was said.
    pub issued_calls: HashMap<String, Said>,
    /// Hash of a text answer → what was said.
    pub issued_texts: HashMap<u64, Said>,
    pub next_seq: u32,
}

/// What the model's reasoning cost: sums over the replies that reasoned.
#[derive(Clone, Copy, Default, Debug)]
pub struct Reasoned {
    pub replies: u64,
    pub tokens: u64,
    pub first_ms: f64,
    pub answer_ms: f64,
    pub answer_max_ms: f64,
}

impl Reasoned {
    fn add(&mut self, o: &Reasoned) {
        self.replies += o.replies;
        self.tokens += o.tokens;
        self.first_ms += o.first_ms;
        self.answer_ms += o.answer_ms;
        self.answer_max_ms = self.answer_max_ms.max(o.answer_max_ms);
    }

    fn json(&self) -> serde_json::Value {
        let per = |x: f64| {
            if self.replies == 0 {
                0.0
            } else {
                x / self.replies as f64
            }
        };
        serde_json::json!({
            "replies": self.replies,
            "reasoning_tokens": self.tokens,
            "first_token_ms_mean": per(self.first_ms),
            "first_answer_token_ms_mean": per(self.answer_ms),
            "first_answer_token_ms_max": self.answer_max_ms,
        })
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Violation {
    pub session: String,
    /// The session's turn, as its marker says (`turn=K`); unmarked: the position of the
    /// user message in the conversation.
    pub turn: u32,
    /// echo | isolation | history
    pub kind: &'static str,
    pub detail: String,
    pub excerpt: String,
}

#[derive(Default)]
pub struct Ledger {
    shards: Vec<Mutex<HashMap<String, Entry>>>,
    /// Tool-call id or text hash → the session it was said to (for leak detection).
    owners: Vec<Mutex<HashMap<String, String>>>,
    violations: Mutex<(Vec<Violation>, u64, BTreeMap<&'static str, u64>)>,
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
            violations: Mutex::new((Vec::new(), 0, BTreeMap::new())),
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
            e.reasoned.add(&Reasoned {
                replies: 1,
                tokens: tokens as u64,
                first_ms,
                answer_ms,
                answer_max_ms: answer_ms,
            })
        });
    }

    pub fn llm_time(&self, session: &str, ms: f64) {
        self.with(session, |e| e.llm_ms += ms);
    }

    pub fn late(&self, session: &str, late_ms: f64) {
        self.with(session, |e| e.late_max_ms = e.late_max_ms.max(late_ms));
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
            all.1 += 1;
            *all.2.entry(x.kind).or_insert(0) += 1;
            if all.0.len() < MAX_KEPT {
                all.0.push(x);
            }
        }
    }

    /// Violations by kind, and their total.
    pub fn violation_counts(&self) -> (u64, BTreeMap<&'static str, u64>) {
        let all = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        (all.1, all.2.clone())
    }

    /// The whole ledger as served on `GET /plimsoll/ledger`.
    pub fn snapshot(&self) -> serde_json::Value {
        let mut sessions = serde_json::Map::new();
        let mut totals = Totals::default();
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for (name, e) in shard.iter() {
                totals.add(e);
                sessions.insert(name.clone(), session_json(e));
            }
        }
        let all = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::json!({
            "totals": {
                "sessions": sessions.len(),
                "llm_calls": totals.calls,
                "prompt_tokens": totals.prompt_tokens,
                "output_tokens": totals.output_tokens,
                "retries": totals.retries,
                "refused": totals.refused,
                "queue_ms": totals.queue_ms,
                "llm_ms": totals.llm_ms,
                "reasoning": totals.reasoned.json(),
                "injected_failures": injected_json(&totals.injected),
                "integrity_violations": all.1,
                "violations_by_kind": all.2,
            },
            "sessions": sessions,
            "violations": all.0,
            "violations_truncated": all.1 as usize > all.0.len(),
        })
    }

    /// Totals for `/metrics`.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for shard in &self.shards {
            for e in shard.lock().unwrap_or_else(|p| p.into_inner()).values() {
                t.add(e);
            }
        }
        t
    }
}

#[derive(Default, Debug)]
pub struct Totals {
    pub sessions: u64,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    pub retries: u64,
    pub refused: u64,
    pub queue_ms: f64,
    pub llm_ms: f64,
    pub reasoned: Reasoned,
    pub injected: [u64; 7],
}

impl Totals {
    fn add(&mut self, e: &Entry) {
        self.sessions += 1;
        self.calls += e.calls;
        self.prompt_tokens += e.prompt_tokens;
        self.output_tokens += e.output_tokens;
        self.retries += e.retries;
        self.refused += e.refused;
        self.queue_ms += e.queue_ms;
        self.llm_ms += e.llm_ms;
        self.reasoned.add(&e.reasoned);
        for (t, x) in self.injected.iter_mut().zip(e.injected) {
            *t += x;
        }
    }
}

fn injected_json(counts: &[u64; 7]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for k in Injected::ALL {
        m.insert(k.name().into(), counts[k as usize].into());
    }
    serde_json::Value::Object(m)
}

fn session_json(e: &Entry) -> serde_json::Value {
    serde_json::json!({
        "llm_calls": e.calls,
        "prompt_tokens": e.prompt_tokens,
        "output_tokens": e.output_tokens,
        "retries": e.retries,
        // Distinct conversations sent, and attempts per one (exact retry amplification).
        "distinct_calls": e.seen.len(),
        "attempts_per_call": if e.seen.is_empty() { 0.0 } else { e.calls as f64 / e.seen.len() as f64 },
        "refused": e.refused,
        "queue_ms": e.queue_ms,
        "injected_failures": injected_json(&e.injected),
        "integrity_violations": e.violations,
        "late_max_ms": e.late_max_ms,
        "llm_ms": e.llm_ms,
    })
}

/// Hash of an answer's text as the oracle compares it (surrounding white space ignored).
pub fn text_hash(text: &str) -> u64 {
    crate::hash::fnv1a(7, text.trim().as_bytes())
}
