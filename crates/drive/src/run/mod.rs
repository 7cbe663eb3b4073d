//! A run of sessions as the runners and the callers both see it: what it is asked
//! (`options`), what it counts while it goes (`progress`, `recorder`, `load`), how a
//! failure is named (`failure`) and what it gives back (`report`).
//!
//! This module imports none of the runners, the transports or the session-file readers:
//! they all import it, so the types they share sit below every one of them.

mod failure;
mod load;
pub(crate) mod options;
mod progress;
pub(crate) mod recorder;
mod report;

pub use failure::Failure;
pub use load::FullLoad;
pub use options::{DriveOptions, Hook};
pub(crate) use progress::InFlight;
pub use progress::{Progress, TURN_BUCKETS_S};
pub(crate) use recorder::{measure_lag, Lag, Recorder};
pub use report::{DriveReport, RequestStats};
