//! Steps (and, later, ladders of them): runs the system under test with the mock,
//! drives sessions through it, watches its process tree, and judges the step.
//!
//! `config` reads `plimsoll.toml`; `step` runs one step and builds its RESULT;
//! `result` is the RESULT line, its outcome and exit code; `schema` checks a RESULT
//! object against `schemas/result.v1.json`; `cli` is `plimsoll run` as a command.

pub mod analysis;
pub mod cap;
pub mod cli;
pub mod compare;
pub mod config;
pub mod demo;
mod harness;
pub mod html;
mod judge;
pub mod ladder;
pub mod result;
pub mod schema;
pub mod step;

pub use config::{Config, ConfigError};
pub use result::StepResult;
pub use step::{run_step, StepOptions, StepReport};
