//! What a step's LLM calls did with the provider's prompt cache, and what they cost in
//! money: the cache's figures per step and per turn (`CacheReport`), the cache breaks by
//! kind, a step's bill split by kind of token (`Cost`), and the price table it was priced
//! with (`PriceTable`, a file the user may edit). Types only: the cost is worked out in
//! `analysis::cost`, the table read in `experiment::prices`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The prompt cache over a step's LLM calls.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheReport {
    /// The first break of each kind, with how many there were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub break_kinds: Vec<CacheBreakKind>,
    /// Cache breaks: prompts that threw away what the provider had cached for them.
    pub breaks: u64,
    /// Per turn of the sessions (by their markers): how the cache warmed up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_turn: Vec<CacheTurn>,
    pub cache_write_tokens: u64,
    pub cached_tokens: u64,
    pub calls: u64,
    /// The share of input tokens a cache-friendly client would have read from the cache
    /// (the cacheable part of the prompt each call went on from).
    pub could_hit_share: f64,
    /// Prefixes the provider dropped to make room.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub evicted: u64,
    /// Cached tokens over input tokens.
    pub hit_share: f64,
    pub input_tokens: u64,
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The calls of one turn.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheTurn {
    pub calls: u64,
    pub could_hit_share: f64,
    pub hit_share: f64,
    pub input_tokens: u64,
    /// The mean time the calls' first tokens were due (the prefill of what the cache did
    /// not hold included): the provider's time to first token.
    pub ttft_ms: f64,
    pub turn: u32,
}

/// One kind of cache break: how many, and the first one found.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheBreakKind {
    /// This prompt and the earlier one around the first difference.
    pub after: String,
    pub before: String,
    /// The first differing character within `part`.
    pub char: u64,
    pub count: u64,
    /// system_changed, tools_changed, tools_reordered, messages_changed, model_changed,
    /// cache_key_changed.
    pub kind: String,
    /// Tokens the earlier prompt had cached past the difference.
    pub lost_tokens: u64,
    /// "system message", "tools (tool 2, `memory_get`)", "message 3 (user)".
    pub part: String,
    pub session: String,
    pub turn: u32,
}

/// Tokens of one model over a step, by what a price table charges for.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModelTokens {
    pub calls: u64,
    /// Tokens a cache-friendly client would have read from the cache.
    pub could_tokens: u64,
    /// All input tokens (cached and written ones included).
    pub input_tokens: u64,
    /// All output tokens (reasoning included).
    pub output_tokens: u64,
    pub read_tokens: u64,
    pub reasoning_tokens: u64,
    pub write_1h_tokens: u64,
    pub write_5m_tokens: u64,
}

impl ModelTokens {
    /// Another's tokens counted in (a call's into its model's, a shard's into the whole).
    pub fn add(&mut self, o: &ModelTokens) {
        self.calls += o.calls;
        self.could_tokens += o.could_tokens;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.read_tokens += o.read_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
        self.write_1h_tokens += o.write_1h_tokens;
        self.write_5m_tokens += o.write_5m_tokens;
    }
}

/// Money by kind of token.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CostSplit {
    pub cache_write: f64,
    pub cached_input: f64,
    pub output: f64,
    pub reasoning: f64,
    pub uncached_input: f64,
}

impl CostSplit {
    pub fn total(&self) -> f64 {
        self.cache_write + self.cached_input + self.output + self.reasoning + self.uncached_input
    }
}

/// What a step's LLM calls cost at the price table's prices.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Cost {
    /// Per session, by kind of token.
    pub by_kind: CostSplit,
    /// Each priced model's tokens.
    pub by_model: BTreeMap<String, ModelTokens>,
    pub currency: String,
    pub per_1000_sessions: f64,
    pub per_session: f64,
    pub per_turn: f64,
    /// Per session, had every call read from the cache all it could.
    pub perfect_per_session: f64,
    /// The date the price table's prices were taken.
    pub prices_date: String,
    /// The whole step.
    pub total: f64,
    /// Models the price table has no price for (their tokens are not counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
}

/// One model's prices, per 1,000,000 tokens.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Price {
    pub input: f64,
    pub cached_input: f64,
    /// Writing to the cache (Anthropic's 5-minute writes; the input price when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Anthropic's 1-hour writes (`cache_write` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    pub output: f64,
    /// Reasoning tokens (the output price when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
}

impl Price {
    pub fn write_5m(&self) -> f64 {
        self.cache_write.unwrap_or(self.input)
    }
    pub fn write_1h(&self) -> f64 {
        self.cache_write_1h.unwrap_or(self.write_5m())
    }
    pub fn reasoning(&self) -> f64 {
        self.reasoning.unwrap_or(self.output)
    }
}

/// A price table: the date its prices were taken, the currency, and per model (a dated
/// snapshot such as `claude-sonnet-4-5-20250929` takes the price of its model's name).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PriceTable {
    pub date: String,
    pub currency: String,
    /// Where the prices come from.
    pub source: String,
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The price of `model`: its own, else — for a dated snapshot (`NAME-20250929`,
    /// `NAME-2024-07-18`, `NAME-latest`) — its model's.
    pub fn price(&self, model: &str) -> Option<&Price> {
        self.models.get(model).or_else(|| {
            self.models
                .iter()
                .filter(|(name, _)| {
                    model.strip_prefix(name.as_str()).is_some_and(|rest| {
                        rest == "-latest"
                            || rest.len() > 1
                                && rest.starts_with('-')
                                && rest[1..].chars().all(|c| c.is_ascii_digit() || c == '-')
                    })
                })
                .max_by_key(|(name, _)| name.len())
                .map(|(_, p)| p)
        })
    }
}
