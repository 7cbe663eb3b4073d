//! Whether a step's figures can be taken at their word: which rate to judge it by (the
//! rate of full load, unless the CPU it measured or its own wall time says that rate
//! cannot be), whether its work kept pace, and whether another process took a material
//! share of the SUT's cores. Pure: evidence in, decisions out.

use result::{RateCheck, StepResult, StepState};

/// A full-load rate more than this above what the measured CPU per turn allows on the
/// SUT's cores is one the SUT could not have produced.
pub const CPU_MARGIN: f64 = 1.10;
/// A full-load rate more than this many times the step's turns over its wall time left
/// out work the step did (slow first turns before the span, say).
pub const WALL_MARGIN: f64 = 1.5;
pub use crate::quota::{contaminated_by, CONTAMINATED};
/// The last third of the span of load this much slower than the first: backlogged.
pub const BACKLOG: f64 = 1.5;

/// What the rate is checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateEvidence {
    /// Little's law over the span of full load (closed model), when there is one.
    pub full_load: Option<f64>,
    /// The step's turns over its wall time.
    pub wall: f64,
    /// The SUT's CPU per turn over the step, in ms.
    pub cpu_ms_per_turn: Option<f64>,
    /// The cores the SUT could use.
    pub cores: f64,
}

/// The rate to judge the step by, and the check that chose it: the full-load rate
/// unless it needs more CPU than the SUT's cores have, or stands too far above the
/// step's turns over its wall time — then the wall rate, the conservative one, and why.
pub fn rate(e: RateEvidence) -> (f64, RateCheck) {
    let allows = e
        .cpu_ms_per_turn
        .filter(|c| *c > 0.0)
        .map(|c| e.cores * 1000.0 / c);
    let why = match e.full_load {
        None => None,
        Some(x) if allows.is_some_and(|a| x > a * CPU_MARGIN) => Some(format!(
            "the full-load rate {} turns/s needs more CPU than the SUT had: {} CPU ms a turn on {} allows at most {}",
            crate::budget::num(x),
            crate::budget::num(e.cpu_ms_per_turn.unwrap_or(0.0)),
            result::words::count_f(e.cores, "core"),
            crate::budget::num(allows.unwrap_or(0.0))
        )),
        Some(x) if e.wall > 0.0 && x > e.wall * WALL_MARGIN => Some(format!(
            "the full-load rate {} turns/s is over {WALL_MARGIN}× the step's turns over its wall time ({}): turns left out of the span (slow first turns?) were work the step did",
            crate::budget::num(x),
            crate::budget::num(e.wall)
        )),
        Some(_) => None,
    };
    let use_full = e.full_load.is_some() && why.is_none();
    let rate = if use_full {
        e.full_load.unwrap_or(e.wall)
    } else {
        e.wall
    };
    let check = RateCheck {
        full_load_turns_per_s: e.full_load.map(round2),
        wall_turns_per_s: round2(e.wall),
        cpu_allows_turns_per_s: allows.map(round2),
        used: if use_full { "full_load" } else { "wall" }.into(),
        why,
    };
    (rate, check)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// How work went through a step: overloaded when sessions failed or the step timed out,
/// backlogged when turns slowed through the span of load, else stable.
pub fn state(failed: u64, timed_out: bool, trend: Option<f64>) -> StepState {
    if failed > 0 || timed_out {
        StepState::Overloaded
    } else if trend.is_some_and(|t| t >= BACKLOG) {
        StepState::Backlogged
    } else {
        StepState::Stable
    }
}

/// Whether the machine was busy before any load: other processes used a material share
/// of its cores (`others` in cores, over `cores`), so a step's line may read low.
pub fn busy_before(others: f64, cores: usize) -> bool {
    cores > 0 && others / cores as f64 >= CONTAMINATED
}

/// What others took of Plimsoll's own cores when that, and not a share of the SUT's
/// cores, is what made a step busy (`sut_share`: others' and the hypervisor's share of
/// the SUT's cores): a starved harness beside quiet SUT cores.
pub fn starved_harness(sut_share: f64, harness_share: Option<f64>) -> Option<f64> {
    harness_share.filter(|_| sut_share < CONTAMINATED)
}

/// How much of the cores a step ran on went to others: of the CPU the SUT could have
/// used (and the hypervisor's steal), plus Plimsoll's own cores when it had some; 0 when
/// not measured. The cleaner of two runs is the one with less.
pub fn taken(s: &StepResult) -> f64 {
    let harness = s.interference.as_ref().and_then(|i| i.harness_share);
    crate::quota::denied(s).unwrap_or(0.0) + harness.unwrap_or(0.0)
}

/// A run-queue wait below this (ms a second) is not the harm a busy machine is quoted by.
pub const WAIT_WORTH_SAYING: f64 = 20.0;

/// Where the machine was busiest over a ladder, as the headline and the machine line
/// say it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Busy {
    pub level: usize,
    /// Other processes and the hypervisor, as a share of the SUT's cores.
    pub share: f64,
    /// Other processes on Plimsoll's own cores, when it had some.
    pub harness: Option<f64>,
    /// The SUT's threads' time in a run queue, ms a second: the harm, where the share
    /// alone cannot tell a neighbour that took idle cycles from one that held the SUT up.
    pub wait_ms: Option<f64>,
    pub contaminated: bool,
}

/// The step to quote for the machine: among contaminated steps the one nearest the line
/// (`near`: the level the line is drawn at — what the busy machine put in doubt), then
/// the one whose SUT waited longest for a CPU, then the one where others took the most;
/// among clean steps the one where others took the most.
pub fn busiest(steps: &[StepResult], near: Option<usize>) -> Option<Busy> {
    let all = steps.iter().filter_map(|s| {
        let i = s.interference.as_ref()?;
        Some(Busy {
            level: s.concurrency,
            share: crate::quota::denied(s)?,
            harness: i.harness_share,
            // Time runnable while its quota was spent is the cap's, not the neighbours'.
            wait_ms: s
                .sched_delay_ms_per_s
                .filter(|_| crate::quota::throttled(s).is_none()),
            contaminated: crate::quota::contaminated(s),
        })
    });
    // How far from the line, in doublings; no line, no preference.
    let away = |b: &Busy| match near {
        Some(n) if n > 0 && b.level > 0 => -(b.level as f64 / n as f64).ln().abs(),
        _ => 0.0,
    };
    // A wait too short to be the harm does not rank a step above a larger share.
    let harm = |b: &Busy| b.wait_ms.filter(|w| *w >= WAIT_WORTH_SAYING).unwrap_or(0.0);
    let key = |b: &Busy| match b.contaminated {
        true => (1, away(b), harm(b), b.share),
        false => (0, 0.0, 0.0, b.share),
    };
    all.max_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.total_cmp(&kb.2))
            .then(ka.3.total_cmp(&kb.3))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_too_short_to_matter_does_not_outrank_a_larger_share() {
        let step = |level: usize, share: f64, wait: f64| StepResult {
            concurrency: level,
            interference: Some(result::Interference {
                others_share: share,
                contaminated: true,
                ..Default::default()
            }),
            sched_delay_ms_per_s: Some(wait),
            ..Default::default()
        };
        let b = busiest(&[step(2, 0.8, 3.0), step(4, 0.12, 5.0)], None).unwrap();
        assert_eq!((b.level, b.share), (2, 0.8));
        let b = busiest(&[step(2, 0.8, 3.0), step(4, 0.12, 50.0)], None).unwrap();
        assert_eq!(
            b.level, 4,
            "the wait that held the SUT up is the harm to quote"
        );
        // The demo beside a burner (a real run): every step busy; the line at 6-7.
        let demo = [(2, 0.853), (4, 0.756), (6, 0.69), (7, 0.663), (64, 0.45)];
        let steps: Vec<StepResult> = demo.iter().map(|&(l, s)| step(l, s, 3000.0)).collect();
        let b = busiest(&steps, Some(7)).unwrap();
        assert_eq!((b.level, b.share), (7, 0.663), "the step nearest the line");
    }

    #[test]
    fn a_starved_harness_is_a_busy_machine_only_when_it_fell_behind() {
        assert!(
            !contaminated_by(0.02, 0.0, Some(0.4), false),
            "Plimsoll kept up"
        );
        assert!(contaminated_by(0.02, 0.0, Some(0.4), true));
        assert!(
            !contaminated_by(0.02, 0.0, Some(0.05), true),
            "a trace of others"
        );
        assert!(
            !contaminated_by(0.02, 0.0, None, true),
            "no cores of its own"
        );
        assert!(contaminated_by(0.35, 0.0, None, false) && contaminated_by(0.0, 0.12, None, false));
    }

    #[test]
    fn a_rate_the_cpu_could_not_produce_falls_back_to_the_wall_rate() {
        // An LLM proxy with 3-turn sessions under a 1-core cap: 10.3 CPU ms a turn allows
        // at most ~97 turns/s; the full-load rate read 108, the wall 69.5.
        let (r, c) = rate(RateEvidence {
            full_load: Some(108.0),
            wall: 69.5,
            cpu_ms_per_turn: Some(10.3),
            cores: 1.0,
        });
        assert_eq!(r, 69.5);
        assert_eq!(c.used, "wall");
        assert_eq!(c.cpu_allows_turns_per_s, Some(97.09));
        assert!(c.why.unwrap().contains("needs more CPU than the SUT had"));
        // 331 against 93.6 over the wall: caught by either check.
        let (r, _) = rate(RateEvidence {
            full_load: Some(331.0),
            wall: 93.6,
            cpu_ms_per_turn: None,
            cores: 1.0,
        });
        assert_eq!(r, 93.6);
    }

    #[test]
    fn a_rate_the_evidence_allows_is_kept() {
        // The demo at its wall: 16.8 turns/s at 60 CPU ms a turn on one core (16.7).
        let (r, c) = rate(RateEvidence {
            full_load: Some(16.8),
            wall: 15.1,
            cpu_ms_per_turn: Some(60.0),
            cores: 1.0,
        });
        assert_eq!((r, c.used.as_str(), c.why), (16.8, "full_load", None));
        let (r, c) = rate(RateEvidence {
            wall: 12.0,
            ..RateEvidence::default()
        });
        assert_eq!(
            (r, c.used.as_str()),
            (12.0, "wall"),
            "an open model has no full load"
        );
    }

    #[test]
    fn states_and_contamination() {
        assert_eq!(state(0, false, Some(1.1)), StepState::Stable);
        assert_eq!(state(0, false, Some(2.0)), StepState::Backlogged);
        assert_eq!(state(1, false, Some(1.0)), StepState::Overloaded);
        assert_eq!(state(0, true, None), StepState::Overloaded);
        assert!(contaminated_by(0.35, 0.0, None, false) && contaminated_by(0.0, 0.12, None, false));
        assert!(!contaminated_by(0.05, 0.02, None, false));
    }
}
