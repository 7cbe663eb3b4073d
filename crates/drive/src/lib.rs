//! Driving sessions against the system under test.
//!
//! `session` reads `session.toml` (how one session talks to the SUT: one request per
//! turn, or named setup/turn/teardown requests — `request` — with templates, extraction
//! and checks); `driver` runs C sessions of K turns concurrently over HTTP JSON, SSE
//! (`stream`), WebSocket or as a chat client, `sequence` runs a session's requests, and
//! both record turn, session, first-token and per-request latencies in HDR histograms,
//! with errors classified; `http` is the client; `bus` runs publishers and subscribers
//! (a session file with `[[role]]` tables) and accounts for every message. Starting
//! the SUT and judging the step are not this crate's business.

pub mod bus;
mod chat;
mod checks;
pub mod driver;
pub mod http;
mod http_turn;
pub mod load;
pub mod pointer;
mod raw;
mod request;
mod resident;
mod sequence;
pub mod session;
mod stream;
pub mod template;
mod ws;

pub use driver::{drive, DriveOptions, DriveReport, Progress, RequestStats};
pub use load::FullLoad;
pub use resident::Hook;
pub use session::{Chat, SessionError, SessionSpec};
