//! The provider's prompt cache, per API as each states it: which prefix of a request's
//! prompt it reads from the cache and which it writes, for how long, and what the reply's
//! usage says of it. OpenAI caches automatically (from 1024 tokens, in steps of 128,
//! under a `prompt_cache_key`), Anthropic at the client's `cache_control` breakpoints
//! (looking back 20 blocks from each), Gemini implicitly at the end of any part — the
//! rules are each API's dialect's (`wire::CacheRules`), the entries `store.rs`'s, the
//! prompt as the cache sees it `prefix.rs`'s, and what a session's earlier prompts were
//! `threads.rs`'s (which the oracle compares against: `integrity/cache_breaks.rs`).
//!
//! The cache is the provider's, across sessions: a system prompt cached by one session
//! is read by the next, as it is at a real provider, within one API key and model.

pub mod prefix;
pub mod store;
pub mod threads;

use crate::hash::fnv1a;
use prefix::{Point, Prefix};
use serde::Deserialize;
use store::Store;
use wire::{CacheAsk, CacheRules, CacheUsage, Steps, Ttl};

/// The scenario's `[cache]`: whether the provider caches prompts, how many prefixes it
/// holds, and how long an automatic cache keeps one.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheSettings {
    /// Whether the provider caches prompts; false: nothing is ever cached and usage reports
    /// 0 cached tokens. Default true.
    pub enabled: bool,
    /// Cached prefixes the provider holds at most; the least recently used goes first.
    pub capacity: usize,
    /// OpenAI's and Gemini's automatic cache: seconds an unused prefix lives (the API's
    /// own, 300, when unset). Anthropic's lifetimes are each breakpoint's `ttl`.
    pub implicit_ttl_s: Option<f64>,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            enabled: true,
            capacity: 100_000,
            implicit_ttl_s: None,
        }
    }
}

impl CacheSettings {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=100_000_000).contains(&self.capacity) {
            return Err(format!(
                "capacity must be between 1 and 100000000 prefixes (got {})",
                self.capacity
            ));
        }
        match self.implicit_ttl_s {
            Some(s) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => Err(format!(
                "implicit_ttl_s must be between 0 and 86400 seconds (got {s})"
            )),
            _ => Ok(()),
        }
    }
}

/// What serving one request did to the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// What the reply's usage reports.
    pub usage: CacheUsage,
    /// The longest prefix of this prompt the cache holds afterwards: what the next call
    /// of the conversation could read, if it kept this prompt as its prefix.
    pub held: u32,
}

/// The key of a prefix in the store: its scope (API key, model, cache key) and hash.
fn key(scope: u64, p: &Point) -> u64 {
    fnv1a(scope, &p.hash.to_le_bytes())
}

/// Serves prompt `p` from `store` under `rules`: the longest cached prefix is read, and
/// what may be cached is written (`ttl_ms` for an automatic cache).
pub fn serve(
    store: &Store,
    rules: &CacheRules,
    p: &Prefix,
    ask: &CacheAsk,
    (scope, ttl_ms, now_ms): (u64, u64, u64),
) -> Served {
    let candidates: Vec<Point> = match rules.steps {
        Steps::Tokens { .. } => p.steps.clone(),
        Steps::Blocks => p.ends.clone(),
        Steps::Breakpoints { lookback } => {
            return explicit(store, rules, p, ask, lookback, (scope, now_ms))
        }
    };
    let cacheable: Vec<&Point> = candidates
        .iter()
        .filter(|c| c.tokens >= rules.min_tokens)
        .collect();
    let read = cacheable
        .iter()
        .rev()
        .find(|c| store.hit(key(scope, c), now_ms))
        .map_or(0, |c| c.tokens);
    for c in &cacheable {
        store.write(key(scope, c), ttl_ms, now_ms);
    }
    Served {
        usage: CacheUsage {
            read,
            ..CacheUsage::default()
        },
        held: cacheable.last().map_or(0, |c| c.tokens),
    }
}

/// Anthropic: a hit at a breakpoint or at a part's end up to `lookback` parts before
/// one; each breakpoint past the hit and long enough is written with its own lifetime,
/// the tokens between two of them counted under the later one's.
fn explicit(
    store: &Store,
    rules: &CacheRules,
    p: &Prefix,
    ask: &CacheAsk,
    lookback: usize,
    (scope, now_ms): (u64, u64),
) -> Served {
    let ttls: Vec<Ttl> = ask.all_breakpoints().iter().map(|b| b.ttl).collect();
    let mut marks: Vec<(Point, Ttl)> = p
        .marks
        .iter()
        .zip(ttls)
        .filter_map(|(m, t)| m.map(|m| (m, t)))
        .collect();
    marks.sort_by_key(|(m, _)| m.tokens);
    let mut candidates: Vec<Point> = Vec::new();
    for (m, _) in &marks {
        candidates.push(*m);
        let from = m.part.saturating_sub(lookback);
        candidates.extend(p.ends[from..m.part.min(p.ends.len())].iter().copied());
    }
    candidates.retain(|c| c.tokens >= rules.min_tokens);
    candidates.sort_by_key(|c| std::cmp::Reverse(c.tokens));
    let read = candidates
        .iter()
        .find(|c| store.hit(key(scope, c), now_ms))
        .map_or(0, |c| c.tokens);
    let mut usage = CacheUsage {
        read,
        ..CacheUsage::default()
    };
    let mut upto = read;
    for (m, ttl) in marks.iter().filter(|(m, _)| m.tokens >= rules.min_tokens) {
        store.write(key(scope, m), ttl.ms(), now_ms);
        if m.tokens > upto {
            let n = m.tokens - upto;
            match ttl {
                Ttl::FiveMinutes => usage.write_5m += n,
                Ttl::OneHour => usage.write_1h += n,
            }
            upto = m.tokens;
        }
    }
    Served { usage, held: upto }
}

#[cfg(test)]
mod tests;
