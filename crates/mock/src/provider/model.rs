//! What one model of the mock is: its timing, output length, failures and script.

use crate::failures::rates::Failures;
use crate::failures::script::FailRule;
use crate::provider::script::{Scope, Step};
use crate::pushback::limits::Limits;
use std::sync::Arc;

/// How a nominal duration is spread from one request to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// Exactly the nominal duration.
    Fixed,
    /// Nominal × U(1 − spread, 1 + spread).
    Uniform { spread: f64 },
    /// Nominal × exp(N(0, sigma)): the median is the nominal, the tail is long.
    LogNormal { sigma: f64 },
}

/// When the model reasons before it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasoningMode {
    /// When the request asks (Anthropic `thinking`, OpenAI `reasoning_effort` /
    /// `reasoning`).
    Auto,
    /// On every OpenAI request too (o-series, gpt-5); Anthropic models still think
    /// only when the request enables thinking, as the API does.
    Always,
    /// Never: requests that ask get plain replies, and nothing is checked.
    Off,
}

/// How the model reasons (see `provider/thoughts.rs` for the signatures).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reasoning {
    pub mode: ReasoningMode,
    /// Reasoning length in tokens, drawn per reply (OpenAI: scaled by the effort;
    /// Anthropic: at most the budget).
    pub tokens: (u32, u32),
    /// The share of Anthropic replies whose thinking comes as `redacted_thinking`.
    pub redacted_share: f64,
    /// Time per reasoning token; `None`: the model's `tok_ms`.
    pub tok_ms: Option<f64>,
}

impl Default for Reasoning {
    fn default() -> Self {
        Reasoning {
            mode: ReasoningMode::Auto,
            tokens: (200, 200),
            redacted_share: 0.0,
            tok_ms: None,
        }
    }
}

/// The behaviour of one model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    pub ttft_ms: f64,
    pub tok_ms: f64,
    /// Output length in tokens, drawn uniformly from `[min, max]` per request.
    pub output_tokens: (u32, u32),
    pub tokens_per_chunk: u32,
    pub jitter: Jitter,
    /// Scripted steps; empty means the default policy (see reply.rs).
    pub script: Arc<Vec<Step>>,
    pub scope: Scope,
    pub failures: Failures,
    /// Failures by rule (see `failures/script.rs`): they take the place of the seeded draw.
    pub fail: Arc<Vec<FailRule>>,
    /// This model's own quotas and slots (see `pushback/limits.rs`).
    pub limits: Limits,
    pub reasoning: Reasoning,
    /// Length of this model's embedding vectors (`POST /v1/embeddings`).
    pub embedding_dim: u32,
    /// Time to read the prompt, per 1,000 input tokens the cache did not hold: added to
    /// the time to first token (0: every prompt is read at once, as before).
    pub prefill_ms_per_1k: f64,
    /// The shortest prefix the prompt cache holds for this model (`None`: its API's).
    pub cache_min_tokens: Option<u32>,
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec {
            ttft_ms: 200.0,
            tok_ms: 5.0,
            output_tokens: (50, 50),
            tokens_per_chunk: 1,
            jitter: Jitter::Fixed,
            script: Arc::new(Vec::new()),
            scope: Scope::Turn,
            failures: Failures::NONE,
            fail: Arc::new(Vec::new()),
            limits: Limits::default(),
            reasoning: Reasoning::default(),
            embedding_dim: 1536,
            prefill_ms_per_1k: 0.0,
            cache_min_tokens: None,
        }
    }
}
