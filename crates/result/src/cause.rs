//! Why a step's outcome is not ok, as facts: the strongest witness `analysis::outcome`
//! found, with its figures (`Cause`). `words::cause` says it. Quoted as it came: the
//! OS's exit status, the first error's message, a shard's account of a merge.

use crate::words::Unit;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// The shards of a merge do not add up to one run: the merge's account of why.
    Unknown { why: String },
    /// The kernel OOM-killed this many processes in the SUT's cgroup.
    CgroupOom { kills: u64 },
    /// The SUT was killed by SIGKILL (the exit status as the OS said it).
    Killed { status: String },
    /// The SUT could not create more threads (its last output says so).
    NoThreads,
    /// The SUT exited during the step.
    Exited { status: String },
    /// The scratch directory's filesystem ran out of inodes (files there at peak, inodes
    /// in all).
    OutOfInodes { files: u64, inodes: u64 },
    /// The scratch directory's filesystem filled up (MB and files there at peak; whether
    /// the SUT's output said so too).
    ScratchFull { mb: f64, files: u64, said: bool },
    /// The SUT's output said "No space left on device" (the scratch filesystem's least
    /// free MB, where read).
    NoSpaceSaid {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        free_mb: Option<f64>,
    },
    /// Sessions or calls were still running after the step timeout (of this many
    /// seconds, at a shard), where known.
    TimedOut {
        unit: Unit,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_s: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// Integrity violations, in all and by kind, and what they were.
    Integrity {
        violations: u64,
        kinds: Vec<(String, u64)>,
        what: Corrupted,
    },
    /// More failed than the threshold allows: failed of all, with the first failure's kind
    /// and what it said.
    ErrorRate {
        unit: Unit,
        failed: u64,
        total: u64,
        threshold: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<(String, String)>,
    },
    /// A cause recorded before causes were facts: as it was said.
    Recorded { said: String },
}

/// A step's cause as a ladder keeps it beside the step: the cause, and the SUT's last
/// output under it where the step kept one.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCause {
    pub cause: Cause,
    pub last_output: Option<String>,
}

/// What integrity violations were.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Corrupted {
    /// A bus lost, duplicated or reordered messages.
    Bus,
    /// Every session sent the same value in these fields that name a conversation: the
    /// session file's doing.
    SharedValues { fields: Vec<String> },
    /// The SUT's conversations were corrupted.
    Conversations,
}

/// A cause as stored: its fact, or the sentence of a run recorded before.
pub fn legacy<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cause>, D::Error> {
    use serde_json::Value;
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(said) => Ok(Some(Cause::Recorded { said })),
        v => serde_json::from_value(v)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}
