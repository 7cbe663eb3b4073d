//! What an agent worker said in its log of taking jobs: LiveKit Agents marks itself full
//! when its load (CPU, averaged over a window) reaches its `load_threshold`, and the
//! server then sends it no job; a job may wait for an idle process to run in; its voice
//! activity detector may fall behind real time, and an event loop of its be blocked. Read from the log by `probe`, judged by
//! `analysis`.

use serde::{Deserialize, Serialize};

/// How long LiveKit Agents averages its load over (its default `load_fnc`: the CPU over
/// 2.5 s): calls offered within one window are admitted before the load shows them.
pub const LOAD_WINDOW_S: f64 = 2.5;

/// A worker's own account of taking jobs over one step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkerLog {
    /// Job requests it took ("received job request": logged once it has room for the
    /// job; one it declines at its load threshold is not logged).
    pub jobs: u64,
    /// Times it marked itself full ("worker is at full capacity, marking as unavailable").
    pub full: u64,
    /// The highest load it gave when it did, and its `load_threshold` then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_load: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The job requests it took within one load window ([`LOAD_WINDOW_S`]) before it
    /// first marked itself full: the calls it admitted before its load showed them.
    #[serde(default)]
    pub admitted_in_window: u64,
    /// The most job requests it took within any one load window: calls admitted before
    /// its load could show them, whether or not it then said it was full.
    #[serde(default)]
    pub most_in_window: u64,
    /// Jobs that waited for an idle process to be made ("no warmed process available").
    #[serde(default)]
    pub waited_for_process: u64,
    /// Times its voice activity detector fell behind real time.
    #[serde(default)]
    pub vad_behind: u64,
    /// Times an event loop of its (a job's or its own) was blocked past its loop monitor's
    /// threshold (100 ms by default: "event loop blocked for 360ms at …"), and the longest.
    #[serde(default)]
    pub loop_blocked: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_blocked_max_ms: Option<f64>,
}

impl WorkerLog {
    /// Whether it said anything worth a line: no job taken and nothing refused is silence.
    pub fn said(&self) -> bool {
        self.jobs > 0
            || self.full > 0
            || self.waited_for_process > 0
            || self.vad_behind > 0
            || self.loop_blocked > 0
    }
}
