//! What the provider's prompt cache did, as the ledger counts it: per call the prompt's
//! tokens, those read from the cache and written to it, those it could have read, and
//! the output; summed per turn (with when the first token was due) and per model (what a
//! price table prices); and the cache breaks the oracle found, the first of each kind.
//!
//! Fields are declared in the order serde_json writes map keys, as in `summary.rs`.

use result::ModelTokens;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wire::CacheUsage;

/// One served call, as the cache saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallCache {
    pub model: String,
    /// The session's turn (its marker's), 0 when unknown.
    pub turn: u32,
    pub input: u32,
    pub usage: CacheUsage,
    pub could: u32,
    pub output: u32,
    pub reasoning: u32,
    /// When its first token was due (prefill of what missed the cache included).
    pub first_token_ms: f64,
}

/// The calls of one turn (by the sessions' markers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnCache {
    pub calls: u64,
    pub could_tokens: u64,
    /// Σ over the calls of when their first token was due.
    pub first_token_ms_sum: f64,
    pub input_tokens: u64,
    pub read_tokens: u64,
    pub turn: u32,
}

/// The cache over calls (one session's, a ledger's, several shards').
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheTotals {
    /// Cache breaks, in all and by kind.
    pub breaks: u64,
    pub breaks_by_kind: BTreeMap<String, u64>,
    pub by_model: BTreeMap<String, ModelTokens>,
    /// By turn, in order.
    pub by_turn: Vec<TurnCache>,
    pub calls: u64,
    pub could_tokens: u64,
    /// Prefixes the provider dropped to make room.
    pub evicted: u64,
    pub input_tokens: u64,
    pub read_tokens: u64,
    pub write_tokens: u64,
}

impl CacheTotals {
    pub fn is_empty(&self) -> bool {
        self.calls == 0 && self.breaks == 0
    }

    /// Counts one call.
    pub fn call(&mut self, c: &CallCache) {
        let m = ModelTokens {
            calls: 1,
            could_tokens: c.could as u64,
            input_tokens: c.input as u64,
            output_tokens: c.output as u64,
            read_tokens: c.usage.read as u64,
            reasoning_tokens: c.reasoning as u64,
            write_1h_tokens: c.usage.write_1h as u64,
            write_5m_tokens: c.usage.write_5m as u64,
        };
        let t = TurnCache {
            calls: 1,
            could_tokens: c.could as u64,
            first_token_ms_sum: c.first_token_ms,
            input_tokens: c.input as u64,
            read_tokens: c.usage.read as u64,
            turn: c.turn,
        };
        self.add(&CacheTotals {
            by_model: BTreeMap::from([(c.model.clone(), m)]),
            by_turn: vec![t],
            calls: 1,
            could_tokens: m.could_tokens,
            input_tokens: m.input_tokens,
            read_tokens: m.read_tokens,
            write_tokens: m.write_1h_tokens + m.write_5m_tokens,
            ..CacheTotals::default()
        });
    }

    /// Adds another's counts to these.
    pub fn add(&mut self, o: &CacheTotals) {
        self.breaks += o.breaks;
        for (k, n) in &o.breaks_by_kind {
            *self.breaks_by_kind.entry(k.clone()).or_insert(0) += n;
        }
        for (k, m) in &o.by_model {
            self.by_model.entry(k.clone()).or_default().add(m);
        }
        for t in &o.by_turn {
            match self.by_turn.binary_search_by_key(&t.turn, |x| x.turn) {
                Ok(i) => {
                    let x = &mut self.by_turn[i];
                    x.calls += t.calls;
                    x.could_tokens += t.could_tokens;
                    x.first_token_ms_sum += t.first_token_ms_sum;
                    x.input_tokens += t.input_tokens;
                    x.read_tokens += t.read_tokens;
                }
                Err(i) => self.by_turn.insert(i, *t),
            }
        }
        self.calls += o.calls;
        self.could_tokens += o.could_tokens;
        self.evicted += o.evicted;
        self.input_tokens += o.input_tokens;
        self.read_tokens += o.read_tokens;
        self.write_tokens += o.write_tokens;
    }
}

/// A cache break the oracle found (see `integrity/cache_breaks.rs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheBreak {
    /// This prompt around the first difference, and the earlier one (`before`).
    pub after: String,
    pub before: String,
    /// The first differing character within the part.
    pub char: u64,
    pub kind: String,
    /// Tokens the earlier prompt had cached past the difference: what this one could not
    /// read.
    pub lost_tokens: u64,
    /// The part where the prompts differ: "system message", "message 3 (user)" …
    pub part: String,
    pub session: String,
    /// Tokens in common before the difference.
    pub token: u64,
    pub turn: u32,
}

/// The breaks found: counts by kind and the first of each kind.
#[derive(Default)]
pub(crate) struct Breaks {
    pub(crate) first: Vec<CacheBreak>,
    pub(crate) by_kind: BTreeMap<String, u64>,
}

impl Breaks {
    pub(crate) fn add(&mut self, b: CacheBreak) {
        let n = self.by_kind.entry(b.kind.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            self.first.push(b);
        }
    }

    pub(crate) fn count_into(&self, t: &mut CacheTotals) {
        t.breaks = self.by_kind.values().sum();
        t.breaks_by_kind = self.by_kind.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_add_up_by_model_and_turn() {
        let call = |model: &str, turn, read| CallCache {
            model: model.into(),
            turn,
            input: 2000,
            usage: CacheUsage {
                read,
                write_5m: 100,
                write_1h: 0,
            },
            could: 1900,
            output: 50,
            reasoning: 10,
            first_token_ms: 100.0,
        };
        let mut t = CacheTotals::default();
        for c in [call("a", 2, 0), call("a", 1, 1500), call("b", 2, 1900)] {
            t.call(&c);
        }
        assert_eq!(
            (t.calls, t.input_tokens, t.read_tokens, t.write_tokens),
            (3, 6000, 3400, 300)
        );
        assert_eq!(
            t.by_turn
                .iter()
                .map(|x| (x.turn, x.calls))
                .collect::<Vec<_>>(),
            [(1, 1), (2, 2)]
        );
        assert_eq!(t.by_turn[1].read_tokens, 1900);
        assert_eq!(t.by_model["a"].read_tokens, 1500);
        assert_eq!(t.by_model["b"].reasoning_tokens, 10);
    }
}
