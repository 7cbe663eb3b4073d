//! An agent worker's own admission, from what it logged (LiveKit Agents): a worker marks
//! itself full when its load reaches its `load_threshold`, and the server then sends it no
//! call — a call placed then gets no agent; it declines a job offered while its load is
//! at the threshold, logging that only when its status changes. That refusal is the
//! worker's limit, not a failure of the system: where calls failed while the worker had
//! marked itself full, or took fewer jobs than calls, it is said as the wall ("the
//! worker refused calls at load 0.93 (its load_threshold 0.7)"). Said
//! beside it: calls it took inside one load window before its load showed them, calls
//! that waited for a job process, a voice activity detector behind real time.

use crate::throughput::Wall;
use result::facts::{Blocked, Finding, WorkerFull};
use result::wall::{WallFact, WorkerRefusal};
use result::worker::WorkerLog;
use result::{StepResult, WallKind};

/// What the worker logged over `s`, when it logged anything of its jobs.
fn worker(s: &StepResult) -> Option<&WorkerLog> {
    s.log.as_ref()?.worker.as_ref().filter(|w| w.said())
}

/// How a worker refused the calls of a step: it marked itself full (its log says so and at
/// what load), or it took fewer jobs than calls were placed — LiveKit Agents declines a
/// job offered while its load is at its threshold, logging only the job requests it
/// takes, and its status when that changes (every 2.5 s).
enum Refusal<'a> {
    Marked(&'a WorkerLog),
    Declined { w: &'a WorkerLog, calls: u64 },
}

/// The worker's refusal where calls of `s` failed, when it refused them.
fn refused(s: &StepResult) -> Option<Refusal<'_>> {
    let failed = s.sessions_failed > 0 || !s.outcome.is_ok();
    let w = worker(s).filter(|_| failed)?;
    let calls = (s.sessions_ok + s.sessions_failed).max(s.concurrency as u64);
    if w.full > 0 {
        Some(Refusal::Marked(w))
    } else if w.jobs < calls {
        Some(Refusal::Declined { w, calls })
    } else {
        None
    }
}

impl Refusal<'_> {
    /// The calls it took in one load window, when more than one (the reason a burst of
    /// calls overloads it): before it first said it was full, or the most in any window
    /// when it declined without a word.
    fn burst(&self) -> Option<u64> {
        let calls = match self {
            Refusal::Marked(w) => w.admitted_in_window,
            Refusal::Declined { w, .. } => w.most_in_window,
        };
        (calls >= 2).then_some(calls)
    }

    /// The refusal as a fact.
    fn fact(&self, s: &StepResult) -> WorkerRefusal {
        match self {
            Refusal::Marked(w) => WorkerRefusal::Marked {
                load: w.full_load,
                threshold: w.threshold,
            },
            Refusal::Declined { w, calls } => WorkerRefusal::Declined {
                jobs: w.jobs,
                calls: *calls,
                cpu: s.cpu_of_cap,
            },
        }
    }
}

/// The wall at `at`, a level whose calls failed, when the worker refused them.
pub fn wall(at: &StepResult) -> Option<Wall> {
    let r = refused(at)?;
    let n = at.concurrency;
    let fact = WallFact::WorkerRefused {
        at: n,
        refusal: r.fact(at),
        failed: at.sessions_failed,
        burst: r.burst(),
    };
    Some(crate::wall::of(WallKind::Internal, Some(n as f64), fact))
}

/// Why the calls of a collapsed level failed, when the worker refused them: the
/// collapse's cause in the verdict's headline.
pub fn refusal(at: &StepResult) -> Option<WorkerRefusal> {
    refused(at).map(|r| r.fact(at))
}

/// The ladder's findings of the worker: marked full without a refusal, and its event
/// loops blocked level by level.
pub fn findings(steps: &[StepResult]) -> Vec<Finding> {
    [marked(steps), blocked(steps)]
        .into_iter()
        .flatten()
        .collect()
}

/// How long the worker's event loops were blocked at each level where its loop monitor
/// said so: "7 times at 2 calls (the longest 714 ms), 15 times at 3 (1019 ms)".
fn blocked(steps: &[StepResult]) -> Option<Finding> {
    let levels: Vec<Blocked> = steps
        .iter()
        .filter_map(|s| {
            let w = worker(s)?;
            let max = w.loop_blocked_max_ms.filter(|_| w.loop_blocked > 0)?;
            Some(Blocked {
                level: s.concurrency,
                times: w.loop_blocked,
                longest_ms: max,
            })
        })
        .collect();
    (!levels.is_empty()).then_some(Finding::LoopsBlocked { levels })
}

/// The lowest level where the worker marked itself full, when no level's calls failed
/// for it (the wall or the collapse says so then).
fn marked(steps: &[StepResult]) -> Option<Finding> {
    if steps.iter().any(|s| refused(s).is_some()) {
        return None;
    }
    let full = steps
        .iter()
        .find(|s| worker(s).is_some_and(|w| w.full > 0))?;
    let w = worker(full)?;
    Some(Finding::WorkerFull(WorkerFull {
        level: full.concurrency,
        load: w.full_load,
        threshold: w.threshold,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::tests::{call, collapsed};
    use crate::verdict::verdict;
    use crate::Budget;
    use result::SutLog;

    /// The verdict's findings in words.
    fn said(v: &result::ladder::Verdict) -> Vec<String> {
        v.findings.iter().map(words::findings::finding).collect()
    }

    /// A worker that took `jobs` calls, `in_window` of them within one load window, then
    /// marked itself full at `load` (its threshold 0.7).
    fn worker(mut s: StepResult, jobs: u64, in_window: u64, load: Option<f64>) -> StepResult {
        s.log = Some(SutLog {
            worker: Some(WorkerLog {
                jobs,
                full: load.is_some() as u64,
                full_load: load,
                threshold: load.map(|_| 0.7),
                admitted_in_window: in_window,
                most_in_window: in_window,
                ..Default::default()
            }),
            ..Default::default()
        });
        s
    }

    /// Response p95 within 2.5 s, as the example's plimsoll.toml says.
    fn budget() -> Budget {
        crate::calls::tests::pipecat_budget()
    }

    /// Issue 52's LiveKit worker, `ramp --cpus 1`: 1 call held, 2 over budget with the
    /// cap 76 % full, 4 collapsed where the worker marked itself full and 2 calls got no
    /// agent.
    #[test]
    fn the_livekit_worker_holds_one_call_and_its_collapse_is_its_own_refusal() {
        let mut four = collapsed(call(4, 0.0, 0.0, 0.95));
        four.sessions_failed = 2;
        let steps = vec![
            worker(call(1, 0.0, 1528.0, 0.30), 1, 1, None),
            worker(call(2, 0.0, 2861.0, 0.76), 2, 2, None),
            worker(four, 4, 4, Some(0.93)),
        ];
        let v = verdict(&steps, &budget());
        assert_eq!(v.holds, Some(1));
        assert_eq!(v.wall.kind, WallKind::Cpu, "{}", words::wall::text(&v.wall));
        assert_eq!(
            words::headline::headline(&v),
            "holds 1 call · wall: CPU (1-core cap nearly full at 2) · collapse at 4: the worker refused calls at load 0.93 (its load_threshold 0.7)"
        );
        // The step's own cause, said after the worker's refusal.
        let failed = result::cause::StepCause {
            cause: result::cause::Cause::Recorded {
                said: "2 calls failed".into(),
            },
            last_output: None,
        };
        let c = crate::ladder::analyse(
            &steps,
            &[],
            &[None, None, Some(failed)],
            &budget(),
            Default::default(),
            false,
        );
        assert_eq!(
            c.collapse
                .as_ref()
                .and_then(words::cause::collapse)
                .as_deref(),
            Some("the worker refused calls at load 0.93 (its load_threshold 0.7); 2 calls failed")
        );
        assert!(
            said(&v).iter().all(|f| !f.contains("marked itself full")),
            "{:?}",
            v.findings
        );
    }

    /// Where the first level past the line is the refusal, it is the wall: the worker's
    /// own limit, with the burst it admitted, never "the SUT failed" nor the CPU.
    #[test]
    fn a_worker_that_refuses_the_first_level_past_the_line_is_the_wall() {
        let mut three = collapsed(call(3, 0.0, 0.0, 0.97));
        three.sessions_failed = 1;
        let steps = vec![
            worker(call(1, 0.0, 1200.0, 0.2), 1, 1, None),
            worker(call(2, 0.0, 1900.0, 0.5), 2, 2, None),
            worker(three, 3, 3, Some(0.91)),
        ];
        let v = verdict(&steps, &budget());
        assert_eq!(v.holds, Some(2));
        assert_eq!(
            v.wall.kind,
            WallKind::Internal,
            "{}",
            words::wall::text(&v.wall)
        );
        assert_eq!(v.wall.from, Some(3.0));
        assert_eq!(
            words::wall::short(&v.wall),
            "the worker refused calls at load 0.91 (its load_threshold 0.7) at 3"
        );
        assert!(
            words::headline::headline(&v).ends_with(" at 3 · collapse at 3"),
            "said once: {}",
            words::headline::headline(&v)
        );
        assert!(words::wall::text(&v.wall).starts_with("the worker's own admission at 3 calls — it marked itself full at load 0.91 (its load_threshold 0.7): 1 call failed; it had taken 3 calls within 2.5 s (one load window) before its load showed them"), "{}", words::wall::text(&v.wall));
        // Without the worker's word the same collapse is the CPU's.
        let mut bare = steps.clone();
        bare[2].log = None;
        assert_eq!(verdict(&bare, &budget()).wall.kind, WallKind::Cpu);
    }

    /// Marked full with every call answered: a finding, not the wall (the step's notes,
    /// `words::worker`, say what the worker said).
    #[test]
    fn a_worker_marked_full_without_a_refusal_is_a_finding() {
        let mut two = worker(call(2, 0.0, 1900.0, 0.8), 2, 2, Some(0.74));
        if let Some(w) = two.log.as_mut().and_then(|l| l.worker.as_mut()) {
            w.waited_for_process = 1;
            w.vad_behind = 3;
            w.loop_blocked = 2;
            w.loop_blocked_max_ms = Some(360.0);
        }
        let steps = vec![worker(call(1, 0.0, 1200.0, 0.3), 1, 1, None), two];
        let v = verdict(&steps, &budget());
        assert_ne!(
            v.wall.kind,
            WallKind::Internal,
            "{}",
            words::wall::text(&v.wall)
        );
        assert!(said(&v).contains(&"the worker marked itself full at load 0.74 (its load_threshold 0.7) from 2 calls, and no call failed for it: a call placed while it is full gets no agent".to_string()), "{:?}", v.findings);
        assert!(said(&v).contains(&"the worker's event loops were blocked past its loop monitor's threshold 2 times at 2 calls (the longest 360 ms): audio and turns wait meanwhile".to_string()), "{:?}", v.findings);
    }

    /// This session's `ramp --cpus 1` of the example: 2 calls held, 3 over with the cap
    /// 89 % full, 4 collapsed where the worker took 3 jobs for 4 calls and never logged
    /// itself full (livekit-agents 1.8.9 declines a job at its threshold silently).
    #[test]
    fn a_worker_offered_fewer_jobs_than_calls_declined_them() {
        let mut four = collapsed(call(4, 0.013, 2687.0, 0.86));
        four.sessions_failed = 1;
        four.sessions_ok = 3;
        let steps = vec![
            worker(call(2, 0.003, 1881.0, 0.61), 2, 0, None),
            worker(call(3, 0.021, 2847.0, 0.89), 3, 0, None),
            worker(four.clone(), 3, 3, None),
        ];
        let v = verdict(&steps, &budget());
        assert_eq!(
            words::headline::headline(&v),
            "holds 2 calls · wall: CPU (1-core cap full at 3) · collapse at 4: the worker took 3 jobs for 4 calls (CPU 86 % of its cap)"
        );
        let w = wall(&steps[2]).expect("declined");
        assert!(words::wall::text(&w).starts_with("the worker's own admission at 4 calls — it took 3 jobs for 4 calls: a worker declines a job offered while its load (its CPU over 2.5 s) is at its load_threshold (0.7 by default in `start` mode), and logs that only when its status changes; its CPU was 86 % of its cap: 1 call failed; it had taken 3 calls within 2.5 s (one load window) before its load showed them"), "{}", words::wall::text(&w));
        // Offered a job for every call: its calls failed for another reason.
        let all = worker(four, 4, 0, None);
        assert!(wall(&all).is_none() && refusal(&all).is_none());
    }
}
