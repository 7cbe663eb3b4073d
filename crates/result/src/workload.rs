//! What a step that replayed a recorded workload says about it: the workload's
//! fingerprint (its source files' SHA-256, its size, its shape), how it was replayed,
//! how faithfully the system under test followed the recording (calls, tools in order,
//! output tokens, think times), and whether the replayed shape matches the recorded one
//! (two-sample tests). Two runs of different workloads are not the same experiment.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Replayed {
    /// SHA-256 over the workload's source files: its identity.
    pub sha256: String,
    /// The recording: sessions, turns, model calls.
    pub recorded_sessions: u64,
    pub recorded_turns: u64,
    pub recorded_calls: u64,
    /// p50/p99 of turns per session, calls per turn, output tokens per call.
    pub shape: String,
    /// "exact" (each recorded session once, at its start) or "sampled".
    pub mode: String,
    pub speed: f64,
    /// Sessions whose calls reached the mock.
    pub sessions: u64,
    /// Of them, those whose calls per turn and tools (in order) were the recording's.
    pub sessions_as_recorded: u64,
    /// Model calls answered, and the calls the recording has for the sessions played.
    pub calls: u64,
    pub calls_recorded: u64,
    /// Output tokens answered, and the recording's for the calls played.
    pub output_tokens: u64,
    pub output_tokens_recorded: u64,
    /// How much later than recorded the pauses between turns ended.
    pub think_late_p99_ms: f64,
    /// Each session that did not follow its recording, its first difference: the turn,
    /// the call, recorded against what happened (a few sessions at most).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
    /// The fewest and the most turns a replayed session ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_ran: Option<(u32, u32)>,
    /// Replayed against recorded, per distribution: the two-sample KS test.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fit: BTreeMap<String, Fit>,
}

/// A two-sample Kolmogorov–Smirnov test of a replayed distribution against the recorded.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fit {
    pub d: f64,
    pub p: f64,
    pub n: u64,
    /// p ≥ 0.05: no evidence that the shapes differ.
    pub same: bool,
}
