//! Runs one measured step and returns its evidence: a fresh mock and a fresh SUT pointed
//! at it, C sessions driven through it (or the user's own harness driving them), its
//! process tree sampled all along, and one RESULT whose outcome `analysis` names.
//!
//! `start` is where every step starts (Ctrl-C, a busy machine's re-run, the RESULT's
//! schema); `step` starts the rig and drives the sessions; `harness` runs the user's harness
//! instead; `judge` puts the measurements together (the outcome is `analysis::outcome`'s
//! to decide); `soak` holds a step for a long time with session churn and samples the SUT
//! into a series; `sharded` drives one shard of a step against a SUT and mock already
//! running; `own_cpu` splits Plimsoll's own CPU over a step by part. Reading
//! plimsoll.toml is `experiment`'s; printing is `report`'s; ladders,
//! comparisons and curves are `ramp`'s, `compare`'s and `analysis`'s.

pub mod clock;
mod conns;
mod cost_side;
mod deps;
mod driven;
pub mod environment;
mod feed;
mod fleet;
mod harness;
mod judge;
mod live;
mod mcp_side;
mod measured;
mod mock_side;
pub mod options;
mod own_cpu;
mod owner;
mod prepare;
mod rates;
mod replay_diff;
mod replayed;
mod responsive;
mod rig;
mod shard_mock;
pub mod sharded;
pub mod soak;
pub mod start;
mod step;

pub use clock::now_rfc3339;
pub use options::StepOptions;
pub use prepare::{preflight, Preflight};
pub use result::{StepReport, StepResult};
pub use soak::{SoakPlan, SoakSample};
pub use start::{start, Note, Start};
