//! `plimsoll ramp` and `plimsoll demo`: a ladder of fresh steps (`step`) under a resource
//! cap (`cap`), stopping at the first collapse, each step recorded in the history as it
//! finishes; then the analysis (`analysis`) and the reports (`report`); `arms` runs the
//! config's `[[arm]]`s side by side at every level; a step whose machine was busy runs
//! again (`step::start`). It measures nothing itself and renders nothing itself.

pub mod arms;
pub mod clean;
mod confirm;
pub mod demo;
pub mod ladder;
pub mod levels;
pub mod sweep;
