//! A run of sessions as the runners and the callers both see it: what it is asked
//! (`options`), what a session's requests share (`ctx`), what it counts while it goes
//! (`progress`, `recorder`, `load`, and a call's in `tally`, added up by `sums`, with the audio it keeps,
//! `keeper`, and its off-the-clock work, `background`), how a failure is named
//! (`failure`) and what it gives back (`report`).
//!
//! This module imports none of the runners, the transports or the session-file readers:
//! they all import it, so the types they share sit below every one of them.

pub(crate) mod background;
mod ctx;
pub(crate) mod failure;
pub(crate) mod keeper;
mod load;
pub(crate) mod options;
mod progress;
pub(crate) mod recorder;
mod report;
pub mod sums;
pub mod tally;

pub(crate) use ctx::Ctx;
pub use failure::Failure;
pub use load::FullLoad;
pub use options::{DriveOptions, Hook, KeepAudio};
pub(crate) use progress::InFlight;
pub use progress::{Progress, TURN_BUCKETS_S};
pub(crate) use recorder::{measure_lag, Lag, Recorder};
pub use report::{DriveReport, RequestStats};
pub use sums::{VoiceCounts, VoiceParts};
pub use tally::Tally as VoiceTally;

/// The name of the threads that drive the sessions (the runtime a load command runs
/// on, and the calls' background thread): what a step counts as the driver's CPU.
pub const THREAD_NAME: &str = "plimsoll-drive";
