//! Benchmarks of Plimsoll's own parts: commands that print numbers.
//!
//! `plimsoll bench mock` starts the mock as a separate process (so its CPU and
//! memory are its own), opens C concurrent streaming requests against it over
//! loopback in a closed loop, and reports how closely the achieved timing follows
//! the requested one, the chunk rate, the mock's CPU per chunk and its memory per
//! open stream. It owns no production code path.

mod mock_bench;
mod probe_bench;
mod procfs;
mod report;

pub use mock::run::raise_nofile_limit;
pub use mock_bench::{run_mock_bench, MockBenchOptions, MockBenchResult};
pub use probe::machine::fingerprint;
pub use probe_bench::{hold_threads, run_probe_bench};
pub use report::print_mock_bench;
