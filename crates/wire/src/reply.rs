//! The answer the mock decided on, independent of the API that carries it, and where
//! one stream frame sits in it.
//!
//! What the answer says is the mock's decision; how each API writes it is its
//! dialect's renderer. This module holds only the shapes between the two.

use crate::cache::CacheUsage;
use crate::request::ToolCall;
use crate::tokens::count_tokens;

/// One piece of the assistant's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    ToolCall(ToolCall),
    /// Anthropic `thinking`: its text streams out, then its signature.
    Thinking {
        text: String,
        signature: String,
    },
    /// Reasoning the client does not read: Anthropic `redacted_thinking` (`seal` is
    /// its `data`) or an OpenAI reasoning item (`seal` is its `encrypted_content`,
    /// when the client asked for it). It takes `tokens` tokens' time.
    Hidden {
        id: String,
        seal: Option<String>,
        tokens: u32,
    },
}

impl Part {
    /// The text that is streamed out in deltas for this part.
    pub fn streamed_text(&self) -> &str {
        match self {
            Part::Text(t) => t,
            Part::ToolCall(c) => &c.arguments,
            Part::Thinking { text, .. } => text,
            Part::Hidden { .. } => "",
        }
    }

    /// Reasoning rather than answer.
    pub fn is_thought(&self) -> bool {
        matches!(self, Part::Thinking { .. } | Part::Hidden { .. })
    }

    /// Output tokens this part costs.
    pub fn tokens(&self) -> u32 {
        match self {
            Part::Hidden { tokens, .. } => *tokens,
            p => count_tokens(p.streamed_text()),
        }
    }
}

/// Why the answer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
}

/// The answer the mock decided on, independent of the API that carries it.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Id suffix, unique per call; each API adds its own prefix.
    pub id: String,
    pub model: String,
    /// Unix seconds for `created` / `created_at`.
    pub created: u64,
    pub parts: Vec<Part>,
    pub stop: StopReason,
    pub prompt_tokens: u32,
    /// All output tokens, reasoning included.
    pub output_tokens: u32,
    /// Of `output_tokens`, those spent reasoning.
    pub reasoning_tokens: u32,
    /// Of `prompt_tokens`, those read from the provider's cache and written to it.
    pub cache: CacheUsage,
}

/// How the streamed text of a reply is cut into timed chunks: each chunk is one
/// delta event and carries `tokens` output tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub part: u16,
    pub start: u32,
    pub end: u32,
    pub tokens: u16,
    /// The chunk is reasoning: it goes at the thinking rate.
    pub thinking: bool,
}

/// Where frame `k` sits in the reply: what a dialect's renderer writes it from.
pub struct At<'a> {
    pub first: bool,
    pub last: bool,
    pub part_start: bool,
    pub part_end: bool,
    pub chunk: Chunk,
    pub delta: &'a str,
}
