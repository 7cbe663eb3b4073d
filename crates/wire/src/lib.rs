//! Wire formats of the LLM APIs the mock speaks: OpenAI Chat Completions, Responses and
//! Embeddings, Anthropic Messages and Gemini generateContent; OpenAI's audio APIs (speech,
//! transcriptions and the Realtime API's events: `audio`); and of the Model Context
//! Protocol's JSON-RPC messages, for the tools it serves (`mcp`).
//!
//! This crate owns the byte-level truth of each API: how a request is read into one
//! normalized [`Request`], how a [`Reply`] the mock decided on is rendered as a plain
//! JSON body or as a sequence of SSE frames, how errors look in each API's own
//! envelope, which headers carry request ids and rate limits, how reasoning is shown
//! and which rules each API enforces on reasoning sent back, and how each reports its
//! prompt cache. All of one API's knowledge
//! is one [`Dialect`] (a folder per API), reached through [`Api::dialect`]: nothing
//! outside this crate needs to match on the API. It owns no timing, no randomness and no
//! policy: what to answer is the mock's business; how to say it is this crate's.

mod api;
mod cache;
mod dialect;
mod dialects;
mod error;
mod fields;
mod openai;
mod ratelimit;
mod reply;
mod request;
mod times;

mod chat;
mod gemini;
mod messages;
mod responses;

pub mod audio;
mod embeddings;
pub mod mcp;
pub mod sse;
mod stream;
mod tokens;

pub use api::Api;
pub use cache::{
    too_many_breakpoints, Breakpoint, CacheAsk, CacheRules, CacheUsage, Spot, Steps, Ttl,
};
pub use dialect::{Dialect, FrameState, Seals, ThoughtFault, ThoughtMint, UrlCall, UrlRefused};
pub use dialects::error_body;
pub use embeddings::{parse_embeddings, render_embeddings, EmbeddingRequest};
pub use error::{Code, ErrorKind, WireError};
pub use ratelimit::{Bucket, QuotaRefusal, RateReading};
pub use reply::{At, Chunk, Part, Reply, StopReason};
pub use request::{
    Message, ReasoningAsk, Request, Role, Thought, ThoughtKind, Tool, ToolCall, ToolChoice,
};
pub use stream::{render_json, StreamRenderer};
pub use times::{go_duration, rfc3339};
pub use tokens::{count_tokens, for_each_token};
