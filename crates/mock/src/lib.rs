//! The synthetic LLM provider (`plimsoll mock`).
//!
//! Serves OpenAI Chat Completions, Responses and Embeddings, Anthropic Messages and
//! Gemini generateContent with the exact wire shapes of the official SDKs (every byte of
//! them is the `wire` crate's), times every reply by the scenario's model (time to first
//! token, per-token time, jitter) against absolute deadlines, pushes back and fails as
//! the scenario says, checks that the conversations it is sent back are intact, and
//! measures its own lateness so a run can prove the mock was not the bottleneck. It does
//! not drive load or watch the system under test; those are `drive` and `probe`.
//!
//! One folder per job: `provider/` (what the model says and when), `pushback/` (quotas
//! and slots), `cache/` (the provider's prompt cache), `failures/` (failures on purpose),
//! `integrity/` (the oracle), `ledger/` (what was served to whom), `serve/` (HTTP,
//! metrics, admin, the shards' rendezvous), `mcp/` (tools served over the Model Context
//! Protocol, on `/mcp` and over stdio), `audio/` (speech, transcriptions and the Realtime
//! API, with the voice that carries words in its audio).

pub mod cache;
pub mod failures;
mod hash;
pub mod integrity;
pub mod ledger;
pub mod mcp;
pub mod provider;
pub mod pushback;
pub mod serve;
pub mod session;
pub mod spec;

pub use failures::{Failures, Injected};
pub use hash::fnv1a;
pub use provider::scenario::{Integrity, Jitter, ModelSpec, Scenario, ScenarioError, UnknownModel};
pub use serve::app::App;
pub use serve::routes::router;
/// `mock::run::{run, raise_nofile_limit}`: `plimsoll mock` as a foreground command.
pub use serve::run;
pub use serve::server::{MockOptions, MockServer, THREAD_NAME};
pub use serve::stats::TimingSnapshot;
/// Wall-clock times as the providers write them (RFC 3339, UTC).
pub use wire::rfc3339;
