//! The live view of a run while it runs: a board the run writes to (the level it is at,
//! each second's figures, each finished step, the verdict so far), served on loopback as
//! a page that fills in (the report's charts and table so far) and as Prometheus metrics
//! on `/metrics`, pushed to an OpenTelemetry collector over OTLP/HTTP, or written as JSON
//! lines (`events`).

pub mod board;
pub mod cost;
pub mod events;
pub mod metrics;
pub mod otlp;
pub mod page;
pub mod prometheus;
pub mod push;
pub mod serve;

pub use board::{Board, Tick};
pub use serve::{serve, Server};
