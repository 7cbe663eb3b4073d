//! The end-to-end tests whose verdicts name a CPU wall or the harness's share of the CPU,
//! one executable: scripts/test runs its modules one after another, each alone on a quiet
//! machine, after the lanes (`quiet MODULE::`). One module a subject; each drives the real
//! binary (`CARGO_BIN_EXE_plimsoll`).

#[path = "../common/mod.rs"]
mod common;

mod arms;
mod bus;
mod quota;
mod run;
mod verdict;
mod walls;
