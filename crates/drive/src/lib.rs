//! Driving sessions against the system under test.
//!
//! `session` reads `session.toml` (how one session talks to the SUT: protocol, URL and
//! body templates per turn, extraction and checks); `driver` runs C sessions of K turns
//! concurrently over HTTP JSON or SSE and records turn, session and first-event
//! latencies in HDR histograms, with errors classified; `http` is the client. Starting
//! the SUT and judging the step are not this crate's business.

mod chat;
mod checks;
pub mod driver;
pub mod http;
mod http_turn;
pub mod load;
pub mod session;
mod ws;

pub use driver::{drive, DriveOptions, DriveReport, Progress};
pub use load::FullLoad;
pub use session::{Chat, SessionError, SessionSpec};
