//! The facts a verdict's headline and lines stand on beside the ladder's own: what other
//! processes took of the cores near the line, and why a collapse's calls failed where an
//! agent worker refused them (`words::headline` says them).

use crate::trust::WAIT_WORTH_SAYING;
use result::facts::Machine;
use result::ladder::Verdict;
use result::wall::WorkerRefusal;
use result::StepResult;

/// The level the line is drawn at: the first over budget, else the last within it.
fn near(v: &Verdict) -> Option<usize> {
    v.over_from.or(v.holds).or(v.collapse)
}

/// What other processes took of the SUT's cores (or Plimsoll's), when it was measured:
/// at the step nearest the line among those they put in doubt, else the busiest.
pub fn machine(v: &Verdict, steps: &[StepResult]) -> Option<Machine> {
    let b = crate::trust::busiest(steps, near(v))?;
    let reran = steps
        .iter()
        .filter(|s| s.interference.as_ref().is_some_and(|i| i.rerun))
        .map(|s| s.concurrency)
        .collect();
    // Under a quota over more cores than it, others' time on the spare cores is not the
    // SUT's loss: how the cap was held is said with the share.
    let quota = steps
        .iter()
        .find(|s| s.concurrency == b.level)
        .and_then(crate::quota::held_below_cores);
    Some(Machine {
        level: b.level,
        share: b.share,
        contaminated: b.contaminated,
        starved: crate::trust::starved_harness(b.share, b.harness).filter(|_| b.contaminated),
        wait_ms: b.wait_ms.filter(|w| *w >= WAIT_WORTH_SAYING),
        quota,
        reran,
    })
}

/// The worker's refusal as the collapse's cause, unless the wall there says it.
pub fn collapse_cause(v: &Verdict, steps: &[StepResult]) -> Option<WorkerRefusal> {
    let c = v.collapse?;
    steps
        .iter()
        .find(|s| s.concurrency == c && v.wall.from != Some(c as f64))
        .and_then(crate::admission::refusal)
}

#[cfg(test)]
mod tests {
    use crate::verdict::tests::step;
    use crate::verdict::verdict_with;
    use result::Interference;

    fn busy(mut s: result::StepResult, share: f64) -> result::StepResult {
        s.interference = Some(Interference {
            others_share: share,
            steal_share: 0.0,
            cores: 1.0,
            contaminated: crate::trust::contaminated_by(share, 0.0, None, false),
            rerun: share >= crate::trust::CONTAMINATED,
            harness_share: None,
        });
        s
    }

    fn demo(share_at_64: f64) -> Vec<result::StepResult> {
        vec![
            busy(step(2, 3.2, 1.1, 0.2), 0.01),
            busy(step(4, 6.4, 1.3, 0.4), 0.01),
            busy(step(8, 12.5, 1.7, 0.8), 0.02),
            busy(step(16, 16.4, 2.6, 0.99), 0.02),
            busy(step(32, 16.6, 5.0, 1.0), 0.03),
            busy(step(64, 16.5, 10.0, 1.0), share_at_64),
        ]
    }

    #[test]
    fn a_busy_machine_is_said_first_and_the_line_becomes_a_floor() {
        let b = crate::Budget::default();
        let v = verdict_with(
            &demo(0.35),
            &[step(8, 12.4, 1.8, 0.8), step(16, 16.3, 2.4, 0.99)],
            &b,
        );
        assert_eq!(
            words::headline::headline(&v),
            "machine busy at 64 (others took 35 % of the SUT's cores) — holds at least 8 sessions · wall: CPU (1-core cap full at 16) · no collapse up to 64"
        );
        assert!(
            words::headline::headline(&v).chars().count() <= 160,
            "{}",
            words::headline::headline(&v).len()
        );
        let machine = words::headline::lines(&v)
            .into_iter()
            .find(|l| l.label == "machine")
            .unwrap();
        assert!(
            machine.text.starts_with("busy: other processes took 35 % of the SUT's cores at 64 sessions — the line is a floor")
                && machine.text.ends_with("run again after a pause: 64"),
            "{}",
            machine.text
        );
        let quiet = verdict_with(&demo(0.02), &[], &b);
        assert!(
            !words::headline::headline(&quiet).contains("busy"),
            "{}",
            words::headline::headline(&quiet)
        );
        assert!(words::headline::lines(&quiet)
            .iter()
            .any(|l| l.text == "quiet: other processes took at most 3 % of the SUT's cores"));
    }

    #[test]
    fn a_busy_machine_is_quoted_where_it_put_the_line_in_doubt() {
        let b = crate::Budget::default();
        // Background on the SUT's core at every level, the line between 8 and 16: the
        // step at 16 is the one to quote (what the busy machine put in doubt), not the
        // largest share (at 2) nor the longest wait (at 32).
        let mut steps = demo(0.02);
        for (s, (share, wait)) in steps.iter_mut().zip([
            (0.83, 5.0),
            (0.7, 8.0),
            (0.5, 12.0),
            (0.3, 60.0),
            (0.25, 435.0),
            (0.02, 3.0),
        ]) {
            s.interference = busy(s.clone(), share).interference;
            s.sched_delay_ms_per_s = Some(wait);
        }
        let v = verdict_with(&steps, &[], &b);
        assert!(
            words::headline::headline(&v).starts_with(
                "machine busy at 16 (others took 30 % of the SUT's cores) — holds at least"
            ),
            "{}",
            words::headline::headline(&v)
        );
        assert!(
            words::headline::headline(&v).chars().count() <= 160,
            "{}",
            words::headline::headline(&v)
        );
        let machine = words::headline::lines(&v)
            .into_iter()
            .find(|l| l.label == "machine")
            .unwrap();
        assert!(
            machine.text.starts_with("busy: other processes took 30 % of the SUT's cores at 16 sessions, and its threads waited 60 ms a second for a CPU — "),
            "{}",
            machine.text
        );
        // Only Plimsoll's own core was busy, and Plimsoll fell behind there.
        let mut steps = demo(0.02);
        let mut i = steps[4].interference.clone().unwrap();
        (i.harness_share, i.contaminated) = (Some(0.5), true);
        steps[4].interference = Some(i);
        steps[4].harness.bound = result::Bound::Harness;
        let v = verdict_with(&steps, &[], &b);
        assert!(
            words::headline::headline(&v)
                .starts_with("machine busy at 32 (others took 50 % of Plimsoll's cores) — "),
            "{}",
            words::headline::headline(&v)
        );
    }

    #[test]
    fn a_line_seen_twice_is_a_range_and_its_runs_are_a_line_of_their_own() {
        let b = crate::Budget::default();
        let steps = vec![
            step(8, 8.0, 1.2, 0.5),
            step(11, 11.0, 1.8, 0.7),
            step(12, 12.0, 2.1, 0.8),
            step(13, 12.0, 2.3, 0.9),
        ];
        let repeats = vec![
            step(11, 11.0, 1.9, 0.7),
            step(12, 12.0, 1.9, 0.8),
            step(12, 12.0, 2.2, 0.8),
        ];
        let v = verdict_with(&steps, &repeats, &b);
        assert!(
            words::headline::headline(&v).starts_with("holds 11–12 sessions · wall: "),
            "{}",
            words::headline::headline(&v)
        );
        let lines = words::headline::lines(&v);
        let order: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(&order[..3], ["budget", "line", "wall"]);
        assert_eq!(
            words::headline::lines(&v)[1].text,
            "11 held in 2 of 2 runs, 12 held in 1 of 3 runs; a smooth boundary, bound by latency inflation"
        );
    }
}
