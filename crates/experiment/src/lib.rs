//! Reads `plimsoll.toml` — a whole experiment: the system under test and how it is ready,
//! the mock's scenario and seed, the session file, the load of a step, thresholds, the
//! budget, services, probes, arms, a recorded workload to replay and the price table its
//! LLM calls are priced with — into one typed [`Config`], every mistake an error naming the
//! file, the line and the fix. It runs nothing.

pub mod config;
pub mod parts;
pub mod prices;
mod raw;
mod read;
pub mod replay;

pub use config::{Config, ConfigError, KeepAudio, ReadyKind};
pub use parts::{Arm, Service, Watch};
pub use raw::schema;
pub use replay::WorkloadSettings;
