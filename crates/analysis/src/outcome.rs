//! How a step ended, from its evidence: the one place the outcome rules live. A single
//! step (`step`) and a step merged from shards (`shard`) both hand their evidence here.
//!
//! The strongest witness first: the kernel's OOM counter, a full scratch disk, the SUT's
//! exit status, the step timeout, the integrity oracle, then the share of failed sessions.

use result::cause::{Cause, Corrupted};
use result::{Bound, Bus, Outcome};

/// What a step saw that can end it. Fields a caller cannot know stay at their defaults
/// (a merge of shards sampled no SUT: no OOM counter, no exit, no disk).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    /// The shards of a merge do not add up to one run: why.
    pub unknown: Option<String>,
    /// OOM kills the kernel counted in the SUT's own cgroup.
    pub oom_kills: u64,
    /// The SUT's exit during the step (None: it lived to be stopped).
    pub exit: Option<Exit>,
    /// The SUT's last output.
    pub tail: String,
    /// Its scratch directory's filesystem at its fullest.
    pub scratch: Option<Scratch>,
    /// Sessions were still running when the step timeout ran out: after how long, and
    /// where (a shard), when known.
    pub timed_out: bool,
    pub timeout_s: Option<f64>,
    pub timeout_where: Option<String>,
    /// Integrity violations, in all and by kind (the oracle's, a bus's).
    pub violations: u64,
    pub violations_by_kind: Vec<(String, u64)>,
    /// Fields of the session file that name a conversation and carry one value in every
    /// session: isolation violations then follow from the file, not the SUT.
    pub shared_values: Vec<String>,
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    /// Failed sessions over all above this: `error_rate`.
    pub error_rate: f64,
    /// The first failure of each kind (kind, what happened), said with an error rate.
    pub first_errors: Vec<(String, String)>,
    /// What the step ran, sessions or calls: its causes say so.
    pub unit: result::words::Unit,
}

/// How the SUT exited.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exit {
    pub signal: Option<i32>,
    pub code: Option<i32>,
    /// As the OS says it ("signal: 9 (SIGKILL)", "exit status: 1").
    pub text: String,
}

/// The SUT's scratch directory and the room its filesystem had.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scratch {
    pub peak_bytes: u64,
    pub peak_files: u64,
    pub free_min_bytes: Option<u64>,
    pub free_min_inodes: Option<u64>,
    pub fs_inodes: Option<u64>,
}

impl Scratch {
    /// Whether its filesystem came within 64 KB of full.
    pub fn full(&self) -> bool {
        self.free_min_bytes.is_some_and(|b| b < 64 * 1024)
    }

    /// Whether its filesystem ran out of inodes (of those the filesystem limits).
    pub fn out_of_inodes(&self) -> bool {
        self.fs_inodes.is_some_and(|t| t > 0) && self.free_min_inodes == Some(0)
    }
}

/// An outcome other than ok, and its cause (`words::cause` says it).
pub type Collapse = (Outcome, Cause);

/// The outcome from the strongest evidence first; None when the step is ok.
pub fn outcome(e: &Evidence) -> Option<Collapse> {
    if let Some(why) = &e.unknown {
        return Some((Outcome::Unknown, Cause::Unknown { why: why.clone() }));
    }
    let failed = e.exit.is_some() || e.sessions_failed > 0 || e.timed_out;
    cgroup_oom(e.oom_kills)
        .or_else(|| disk_full(e.scratch.as_ref(), &e.tail, failed))
        .or_else(|| exited(e.exit.as_ref(), &e.tail))
        .or_else(|| timed_out(e))
        .or_else(|| integrity(e.violations, &e.violations_by_kind, &e.shared_values))
        .or_else(|| error_rate(e))
}

/// A bus's integrity failures by kind: lost and duplicated messages, and reordered ones
/// where order was promised.
pub fn bus_violations(b: &Bus) -> Vec<(String, u64)> {
    let mut kinds = vec![
        ("lost".to_string(), b.lost),
        ("duplicated".to_string(), b.duplicated),
    ];
    if b.ordered {
        kinds.push(("out of order".into(), b.out_of_order));
    }
    kinds
}

/// Signs in the SUT's last output that it could not create threads.
fn thread_exhaustion(tail: &str) -> bool {
    let t = tail.to_lowercase();
    [
        "can't start new thread",
        "unable to create native thread",
        "pthread_create",
        "resource temporarily unavailable",
        "failed to spawn thread",
    ]
    .iter()
    .any(|s| t.contains(s))
}

/// The kernel counted OOM kills in the SUT's own cgroup.
fn cgroup_oom(kills: u64) -> Option<Collapse> {
    (kills > 0).then_some((Outcome::OomKilled, Cause::CgroupOom { kills }))
}

/// The SUT exited during the step: SIGKILL (the OOM killer's signal), no more threads, or
/// another crash.
fn exited(exit: Option<&Exit>, tail: &str) -> Option<Collapse> {
    let e = exit?;
    let status = e.text.clone();
    Some(if e.signal == Some(9) || e.code == Some(137) {
        (Outcome::OomKilled, Cause::Killed { status })
    } else if thread_exhaustion(tail) {
        (Outcome::ThreadExhaustion, Cause::NoThreads)
    } else {
        (Outcome::Crashed, Cause::Exited { status })
    })
}

fn timed_out(e: &Evidence) -> Option<Collapse> {
    e.timed_out.then(|| {
        let cause = Cause::TimedOut {
            unit: e.unit,
            after_s: e.timeout_s,
            at: e.timeout_where.clone(),
        };
        (Outcome::Timeout, cause)
    })
}

fn integrity(violations: u64, by_kind: &[(String, u64)], shared: &[String]) -> Option<Collapse> {
    let seen = |k: &str| by_kind.iter().any(|(kind, n)| *n > 0 && kind == k);
    let what = if ["lost", "duplicated", "out of order"]
        .iter()
        .any(|k| seen(k))
    {
        Corrupted::Bus
    } else if seen("isolation") && !shared.is_empty() {
        // The session file's doing: one value for every session is one conversation.
        Corrupted::SharedValues {
            fields: shared.to_vec(),
        }
    } else {
        Corrupted::Conversations
    };
    let kinds = by_kind.to_vec();
    (violations > 0).then_some((
        Outcome::Integrity,
        Cause::Integrity {
            violations,
            kinds,
            what,
        },
    ))
}

fn error_rate(e: &Evidence) -> Option<Collapse> {
    let (failed, threshold) = (e.sessions_failed, e.error_rate);
    let total = e.sessions_ok + failed;
    (total > 0 && failed as f64 / total as f64 > threshold).then(|| {
        let cause = Cause::ErrorRate {
            unit: e.unit,
            failed,
            total,
            threshold,
            // What went wrong, where the ladder's line would otherwise say only how often.
            first: e.first_errors.first().cloned(),
        };
        (Outcome::ErrorRate, cause)
    })
}

/// The SUT's scratch filesystem filled up (space or inodes), or its output says so,
/// and something failed: that is the cause, whatever form the failure took.
fn disk_full(disk: Option<&Scratch>, tail: &str, failed: bool) -> Option<Collapse> {
    let said = tail.to_lowercase().contains("no space left on device");
    let none = Scratch::default();
    let disk = disk.unwrap_or(&none);
    let cause = if disk.out_of_inodes() {
        Cause::OutOfInodes {
            files: disk.peak_files,
            inodes: disk.fs_inodes.unwrap_or(0),
        }
    } else if disk.full() {
        Cause::ScratchFull {
            mb: disk.peak_bytes as f64 / 1048576.0,
            files: disk.peak_files,
            said,
        }
    } else if said {
        // Some filesystem filled, not (as far as was seen) the scratch directory's.
        Cause::NoSpaceSaid {
            free_mb: disk.free_min_bytes.map(|b| b as f64 / 1048576.0),
        }
    } else {
        return None;
    };
    failed.then_some((Outcome::DiskFull, cause))
}

/// A harness delay smaller than this share of the p50 turn cannot distort what was
/// measured, whatever its size in milliseconds.
pub const MATERIAL_SHARE: f64 = 0.05;

/// Harness-bound when the mock's frames or the driver's ticks were later than allowed
/// *and* that delay is a material share of a turn: 15 ms on 7.8 s turns is not.
pub fn harness_bound(
    late_p99_ms: f64,
    lag_p99_ms: f64,
    allowed_ms: f64,
    p50_turn_ms: Option<f64>,
) -> Bound {
    let delay = late_p99_ms.max(lag_p99_ms);
    let material = p50_turn_ms.is_none_or(|t| delay > t * MATERIAL_SHARE);
    if delay > allowed_ms && material {
        Bound::Harness
    } else {
        Bound::Sut
    }
}

/// A step of calls is harness-bound when the harness sent its audio frames later than
/// one frame's length at p99 (the bot heard a gap in the caller's audio that the bot did
/// not cause), or the mock's frames were later than allowed — whatever a turn's length:
/// a call's audio is judged frame by frame.
pub fn calls_harness_bound(
    late_p99_ms: f64,
    frames_p99_ms: f64,
    allowed_ms: f64,
    frame_ms: f64,
) -> Bound {
    if frames_p99_ms > allowed_ms.max(frame_ms) || late_p99_ms > allowed_ms.max(frame_ms) {
        Bound::Harness
    } else {
        Bound::Sut
    }
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
