//! The cap told from the machine: how the SUT's CPU cap was held (a cpuset of N cores,
//! or a quota over N cores), what its throttling explains — the time its threads spent
//! runnable while the quota was spent is the cap at work, not a queue for a CPU — and
//! what other processes took of the CPU the SUT could have used: only that makes a
//! machine busy. Pure: a step's figures in, decisions out.

use crate::sample::Sample;
use result::facts::CapHeld;
use result::wall::CpuReach;
use result::StepResult;

/// Other processes at this share of the CPU the SUT could have used, or more: the step
/// is contaminated.
pub const CONTAMINATED: f64 = 0.10;

/// Throttled in this share of its periods or more: the quota shaped the step, and the
/// threads' time runnable without a core is mostly the quota's doing.
pub const THROTTLING: f64 = 0.1;
pub use crate::sample::FULL;

/// The cores the SUT's threads could run on: the cores its cap held it to, else its part
/// of a partitioned machine. None when not recorded (the whole machine, unknown here).
pub fn may_use(s: &StepResult) -> Option<f64> {
    let listed = s
        .cap
        .as_ref()
        .and_then(|c| c.on.as_deref())
        .or(s.partition.as_ref().map(|p| p.sut.as_str()))?;
    let n = count_list(listed);
    (n > 0).then_some(n as f64)
}

/// How many cores a kernel core list names: "2-15" → 14, "0,3-4" → 3.
fn count_list(list: &str) -> usize {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(p.parse::<usize>().is_ok()),
        })
        .sum()
}

/// The cores of the CPU cap, when the SUT had one.
fn cap_cores(s: &StepResult) -> Option<f64> {
    s.cap.as_ref().map(|c| c.cpus).filter(|c| *c > 0.0)
}

/// The cores of a CPU quota, when the cap had one (CPU affinity alone holds none: the
/// SUT may use all of the cores it is pinned to).
fn quota_cores(s: &StepResult) -> Option<f64> {
    cap_cores(s).filter(|_| s.cap.as_ref().is_some_and(|c| c.method != "affinity"))
}

/// Whether the SUT's quota is smaller than the cores it may run on: then the quota, not
/// the cores, is what holds it back, and it can be throttled with cores idle. On a cpuset
/// as large as its quota the cores themselves are the limit (its threads queue for them).
fn quota_below_cores(s: &StepResult) -> bool {
    match (quota_cores(s), may_use(s)) {
        (Some(q), Some(m)) => m > q + 1e-9,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// What other processes and the hypervisor took of the CPU the SUT could have used, as a
/// share of its cores (`interference.cores`): under a cap smaller than the cores it may
/// run on, others first take those cores' spare time, and only what passes the spare is
/// the SUT's loss. A tenth of a core on fourteen cores is nothing to a 1-core quota.
pub fn denied(s: &StepResult) -> Option<f64> {
    let i = s.interference.as_ref()?;
    Some(others_denied(s, i) + i.steal_share)
}

/// Other processes' part of [`denied`]: what passed the quota's spare cores.
fn others_denied(s: &StepResult, i: &result::Interference) -> f64 {
    let cores = i.cores.max(1e-9);
    let spare = match (may_use(s), quota_cores(s)) {
        (Some(m), Some(c)) => (m - c).max(0.0),
        _ => 0.0,
    };
    (i.others_share * cores - spare).max(0.0) / cores
}

/// Whether a step measured a busy machine: others took a material share of the CPU the
/// SUT could have used ([`denied`]), or of Plimsoll's own cores where it fell behind.
pub fn contaminated(s: &StepResult) -> bool {
    let Some(i) = s.interference.as_ref() else {
        return false;
    };
    contaminated_by(
        others_denied(s, i),
        i.steal_share,
        i.harness_share,
        s.harness.bound == result::Bound::Harness,
    )
}

/// Whether other processes (or the hypervisor) took a material share of the SUT's cores,
/// or of Plimsoll's own cores in a step where Plimsoll fell behind (`harness_bound`): a
/// harness starved by neighbours measures the machine, not itself.
pub fn contaminated_by(
    others_share: f64,
    steal_share: f64,
    harness_share: Option<f64>,
    harness_bound: bool,
) -> bool {
    others_share >= CONTAMINATED
        || steal_share >= CONTAMINATED
        || (harness_bound && harness_share.is_some_and(|h| h >= CONTAMINATED))
}

/// The share of its periods in which a quota smaller than the SUT's cores throttled it,
/// when material: then its threads' run-queue time is the cap's doing, not a queue for a
/// CPU. (On a cpuset as large as its quota a throttled period is a full core: a queue.)
pub fn throttled(s: &StepResult) -> Option<f64> {
    s.cpu_throttled
        .filter(|t| *t >= THROTTLING)
        .filter(|_| quota_below_cores(s))
}

/// How the cap was held: its cores, and the cores it may run on. None without a cap.
pub fn held(s: &StepResult) -> Option<CapHeld> {
    Some(CapHeld {
        cores: cap_cores(s)?,
        on: may_use(s),
    })
}

/// How a quota smaller than the SUT's cores held it; None where the quota is not below
/// its cores.
pub fn held_below_cores(s: &StepResult) -> Option<CapHeld> {
    quota_below_cores(s).then(|| held(s)).flatten()
}

/// How the cap was held, in words: "a 1-core quota over 14 cores", "a cpuset of 1 core",
/// "a 0.5-core quota on a cpuset of 1 core". None without a cap.
pub fn how(s: &StepResult) -> Option<String> {
    held(s).map(|h| words::findings::cap_held(&h))
}

/// "throttled in 93 % of its periods by a 1-core quota over 14 cores", where the quota
/// throttled the step materially.
pub fn throttle_words(s: &StepResult) -> Option<String> {
    let t = throttled(s)?;
    Some(words::findings::throttled(t, held_below_cores(s).as_ref()))
}

/// Where the SUT's CPU met its cap, and how the cap held it there: "the SUT's CPU reaches
/// 99 % of the 1-core cap at 16 sessions, throttled in 78 % of its periods by a 1-core
/// quota over 14 cores"; a quota that throttled most periods is a full cap, whatever
/// share of it the step's average reads.
pub(crate) fn reach(s: &Sample, wall: f64) -> CpuReach {
    let throttled = s
        .throttled
        .filter(|t| *t >= THROTTLING)
        .and_then(|t| Some((t, s.quota_held?)));
    let read = s.cpu_of_cap.unwrap_or(0.0);
    CpuReach {
        at: s.concurrency,
        cores: s.cpu_cores,
        read,
        throttled,
        burst: read < wall && s.throttled.is_some_and(|x| x >= FULL),
    }
}

/// The same in words.
#[cfg(test)]
pub(crate) fn reach_words(s: &Sample, wall: f64) -> String {
    words::wall::reach(&reach(s, wall), s.unit)
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
