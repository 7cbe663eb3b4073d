//! The end-to-end tests that wait on the clock (calls, ramps with think time, the live
//! page, shards, soaks), one executable: scripts/test runs it in the lanes beside the SDK
//! suites. One module a subject; each drives the real binary (`CARGO_BIN_EXE_plimsoll`).
//! A test that judges a CPU wall goes in `tests/quiet` instead.

#[path = "../common/mod.rs"]
mod common;

mod arms;
mod bench;
mod compare;
mod cores;
mod crash;
mod history;
mod live;
mod preflight;
mod ramp;
mod run;
mod schemas;
mod scratch;
mod sessions;
mod shards;
mod soak;
mod words;
mod workload;
