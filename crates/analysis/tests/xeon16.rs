//! Known answers from a 16-core machine (issue 49): `plimsoll demo` run on an idle Intel
//! Xeon with 16 cores, the floor agent under a 1-core quota spread over cores 2-15
//! (`fixtures/xeon16-demo-result.json`, its result.json as written). Its own quota
//! throttled it from 8 sessions on, and a tenth of a core of other work ran on its
//! fourteen cores: neither is a busy machine, and neither is a queue for a CPU.

use analysis::ladder::{analyse, Projection};
use result::ladder::LadderDoc;
use result::StepResult;

fn doc() -> LadderDoc {
    let text = include_str!("fixtures/xeon16-demo-result.json");
    serde_json::from_str(text).expect("the fixture is a ladder's result.json")
}

/// The verdict's first line and its labelled lines, re-judged from the steps.
fn judge(steps: &[StepResult], repeats: &[StepResult]) -> (String, Vec<(String, String)>) {
    let d = doc();
    let budget = d.budget().cloned().unwrap_or_default();
    let causes = vec![None; steps.len()];
    let a = analyse(
        steps,
        repeats,
        &causes,
        &budget,
        Projection::default(),
        false,
    );
    let v = a.verdict.expect("a verdict");
    let lines = words::headline::lines(&v)
        .into_iter()
        .map(|l| (l.label, l.text))
        .collect();
    (words::headline::headline(&v), lines)
}

fn line<'a>(lines: &'a [(String, String)], label: &str) -> &'a str {
    lines
        .iter()
        .find(|(l, _)| l == label)
        .map(|(_, t)| t.as_str())
        .unwrap_or_else(|| panic!("no {label} line in {lines:?}"))
}

fn all_text(headline: &str, lines: &[(String, String)]) -> String {
    let mut all = headline.to_string();
    for (_, t) in lines {
        all.push('\n');
        all.push_str(t);
    }
    all
}

/// The verdict the Xeon's figures call for: 20 sessions, a CPU wall, no busy machine.
/// Returns every line of it, for the checks after.
fn holds_twenty_and_not_busy(headline: &str, lines: &[(String, String)]) -> String {
    assert!(
        headline.starts_with("holds 20 sessions · wall: CPU"),
        "{headline}"
    );
    let all = all_text(headline, lines);
    assert!(
        !all.contains("machine busy") && !all.contains("busy:"),
        "{all}"
    );
    all
}

#[test]
fn an_idle_sixteen_core_machine_is_not_busy_and_the_quota_is_named() {
    let d = doc();
    let (headline, lines) = judge(&d.steps, &d.repeats);
    let all = holds_twenty_and_not_busy(&headline, &lines);
    assert!(!all.contains("for a CPU"), "{all}");
    assert!(!all.contains("queue for the cores"), "{all}");
    // The wall says how the cap held the SUT: its quota over fourteen cores, throttling.
    let wall = line(&lines, "wall");
    assert!(
        wall.contains("throttled in 78 % of its periods by a 1-core quota over 14 cores"),
        "{wall}"
    );
    // Where it shaped latency (over budget from 22), the quota is named as the cause.
    let finding = lines
        .iter()
        .find(|(l, t)| l == "finding" && t.starts_with("its cap shapes its latency"))
        .map(|(_, t)| t.as_str())
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(
        finding.contains("at 22 sessions it was throttled in 91 % of its periods by a 1-core quota over 14 cores"),
        "{finding}"
    );
    assert!(finding.contains("neither a busy machine"), "{finding}");
    let machine = line(&lines, "machine");
    assert!(
        machine.starts_with("quiet: other processes took at most 0.1 % of the CPU the SUT could have used (under a 1-core quota over 14 cores, their time on what the quota leaves idle is not its loss)"),
        "{machine}"
    );
}

/// The first run's step at 32 sessions, as that run recorded it: others at 18 % of the
/// SUT's 1-core cap (a fifth of a core on its fourteen) and the step marked busy.
#[test]
fn a_fifth_of_a_core_on_fourteen_is_not_what_a_one_core_quota_lost() {
    let d = doc();
    let mut steps = d.steps.clone();
    for s in steps.iter_mut().filter(|s| s.concurrency == 32) {
        let i = s.interference.as_mut().expect("measured");
        i.others_share = 0.18;
        i.contaminated = true;
    }
    let (headline, lines) = judge(&steps, &d.repeats);
    holds_twenty_and_not_busy(&headline, &lines);
    assert_eq!(analysis::quota::denied(&steps[7]), Some(0.0));
    assert!(!analysis::quota::contaminated(&steps[7]));
}

/// The same others on a SUT held to one core (a cpuset of 1, as on a 2-core box): there
/// they took CPU the SUT could have used, and the machine is busy.
#[test]
fn the_same_others_on_a_cpuset_of_one_core_make_it_busy() {
    let d = doc();
    let mut steps = d.steps.clone();
    for s in steps.iter_mut() {
        if let Some(c) = s.cap.as_mut() {
            c.cpu_by = Some("cpuset".into());
            c.on = Some("2".into());
        }
        s.cpu_throttled = Some(0.0);
        if s.concurrency == 32 {
            s.interference.as_mut().expect("measured").others_share = 0.18;
        }
    }
    assert!(analysis::quota::contaminated(&steps[7]));
    let (headline, _) = judge(&steps, &d.repeats);
    assert!(
        headline.starts_with("machine busy at 32 (others took 18 % of the SUT's cores)"),
        "{headline}"
    );
}
