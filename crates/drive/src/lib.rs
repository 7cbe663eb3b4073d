//! Drives sessions against the system under test and records what happened to them:
//! a session file read once into a typed spec, C sessions run over HTTP, SSE, WebSocket,
//! a chat client, a raw socket or a voice call (or a bus's publishers and subscribers),
//! every turn, session and request timed in HDR histograms and every failure counted by
//! kind.
//!
//! The data flows down this list: `spec` reads `session.toml` (with `template` for its
//! placeholders and `pointer` for its JSON pointers); `address` says where load may go;
//! `driver` runs request/reply sessions (over `http`, `stream`, `checks`, `framed`, and
//! `encode` for form and multipart bodies), `call` places voice calls (Twilio Media
//! Streams or raw PCM) and `bus` runs a bus; all record into `run`, whose `DriveReport` is what a caller
//! gets back. Starting the SUT and judging the step are not this crate's business.

pub mod address;
pub mod bus;
pub mod call;
mod checks;
mod driver;
pub mod encode;
mod framed;
mod hist;
pub mod http;
pub mod pointer;
pub mod run;
pub mod spec;
mod stream;
pub mod template;

pub use driver::drive;
pub use run::{
    DriveOptions, DriveReport, FullLoad, Hook, Progress, RequestStats, THREAD_NAME, TURN_BUCKETS_S,
};
pub use spec::{Chat, SessionError, SessionSpec};
pub use voice::pool::cores;
