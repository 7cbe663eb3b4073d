//! One measured step: a fresh mock and a fresh SUT pointed at it, C sessions driven
//! through it (or the user's own harness driving them), its process tree sampled all
//! along, and one RESULT with an outcome named from evidence.
//!
//! `config` reads `plimsoll.toml`; `step` starts the rig and drives the sessions;
//! `harness` runs the user's harness instead; `judge` turns the measurements into the
//! RESULT and its outcome; `cli` is `plimsoll run` as a command, `check` is `plimsoll
//! check` (one session, failures explained), `init` writes a commented config; `soak` holds
//! a step for a long time with session churn and samples the SUT into a series; `sharded`
//! drives one shard of a step against a SUT and mock already running. It does not run
//! ladders (`ramp`), compare builds (`compare`) or analyse curves (`analysis`).

pub mod check;
pub mod cli;
pub mod clock;
pub mod config;
mod conns;
mod deps;
pub mod environment;
mod fleet;
mod harness;
pub mod init;
mod judge;
mod live;
pub mod parts;
mod rates;
mod responsive;
mod rig;
pub mod sharded;
pub mod soak;
pub mod step;

pub use clock::now_rfc3339;
pub use config::{Config, ConfigError};
pub use result::StepResult;
pub use soak::{SoakPlan, SoakSample};
pub use step::{run_step, StepOptions, StepReport};
