//! The synthetic LLM provider (`plimsoll mock`).
//!
//! Serves OpenAI Chat Completions, OpenAI Responses and Anthropic Messages with the
//! exact wire shapes of the official SDKs (rendering lives in the `wire` crate),
//! times every reply by the scenario's model (time to first token, per-token time,
//! jitter) against absolute deadlines, and measures its own lateness so a run can
//! prove the mock was not the bottleneck. It does not drive load or watch the system
//! under test; those are `drive` and `probe`.

mod app;
mod capacity;
mod chain;
mod clock;
mod embed;
mod envelope;
pub mod fail_script;
pub mod failures;
mod handler;
mod hash;
mod inject;
pub mod ledger;
pub mod limits;
mod metrics;
mod model;
mod model_file;
mod oracle;
pub mod pushback;
mod quota;
mod rendezvous;
mod reply;
pub mod run;
pub mod scenario;
pub mod script;
mod server;
pub mod session;
pub mod stats;
mod thoughts;
mod timing;

pub use app::App;
pub use clock::rfc3339;
pub use failures::{Failures, Injected};
pub use hash::fnv1a;
pub use scenario::{Integrity, Jitter, ModelSpec, Scenario, ScenarioError, UnknownModel};
pub use server::{router, MockOptions, MockServer};
pub use stats::TimingSnapshot;
