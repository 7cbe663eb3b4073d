//! A ladder of voice calls, told as a team running a voice agent reads it: the steps of a
//! real run (examples/pipecat-voice, Pipecat 1.14 under a 1-core cap, calls of 2 turns,
//! ladder 4, 8, 16, 24, 32: stalls from 16 with the cap 84 % full, the cap full at 24,
//! every call failing at 32) analysed afresh. Known answers: it holds 8 calls; the wall is
//! the CPU where the calls first went over (16), said with what callers heard there and
//! what a call costs; every count is in calls; nothing speaks of
//! a rate of turns, a knee or a USL fit.

use analysis::ladder::{analyse, Projection};
use analysis::Budget;
use result::ladder::{LadderDoc, RunAnalysis};
use result::StepResult;

fn doc() -> LadderDoc {
    doc_with(|_| {})
}

/// The fixture's steps, changed by `f` before they are analysed.
fn doc_with(f: impl Fn(&mut StepResult)) -> LadderDoc {
    let text = include_str!("../fixtures/calls/steps.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let mut steps: Vec<StepResult> = serde_json::from_value(v["steps"].clone()).unwrap();
    steps.iter_mut().for_each(f);
    let mut budget = Budget::default();
    budget.apply_flag("response_p95_ms=2000").unwrap();
    let budget = budget.for_calls();
    let causes = vec![None; steps.len()];
    let a = analyse(&steps, &[], &causes, &budget, Projection::default(), false);
    // The budget in force, as a run records it.
    let environment =
        result::ladder::RunEnvironment::Run(Box::new(result::environment::Environment {
            budget: Some(budget),
            ..Default::default()
        }));
    LadderDoc {
        steps,
        environment,
        analysis: Some(RunAnalysis::Ladder(Box::new(a))),
        ..Default::default()
    }
}

#[test]
fn a_ladder_of_calls_holds_calls_and_names_its_wall_in_calls() {
    let lines = report::verdict::verdict_lines(&doc());
    let all = lines.join("\n");
    assert_eq!(
        lines[0],
        "verdict: holds 8 calls · wall: CPU (1-core cap nearly full at 16) · collapse at 32",
        "{all}"
    );
    assert!(
        all.contains("budget: error rate ≤ 0, response p95 ms ≤ 2000, stall share ≤ 0.01; over from 16 (stall share 0.0114 > 0.01)"),
        "{all}"
    );
    let wall = lines.iter().find(|l| l.starts_with("wall: ")).unwrap();
    assert!(
        wall.starts_with("wall: CPU — the SUT's CPU reaches 84 % of the 1-core cap at 16 calls, where 1 % of the replies' time stalled and replies began in 1942 ms at p95; each call costs about"),
        "{wall}"
    );
    assert!(wall.contains("CPU ms a second (at 8 calls)"), "{wall}");
    assert!(all.contains("memory grows 13.9 MB a call"), "{all}");
    for never in [
        "turns/s",
        "knee",
        "USL",
        " sessions",
        "a session",
        "widen the ladder",
    ] {
        assert!(!all.contains(never), "{never:?} in\n{all}");
    }
}

#[test]
fn the_table_of_calls_shows_what_callers_heard() {
    let d = doc();
    let md = report::markdown::ladder(&d);
    assert!(md.contains("| calls | outcome"), "{md}");
    let row24 = md.lines().find(|l| l.starts_with("|    24 |")).unwrap();
    assert!(
        row24.contains(" 33.4 ") && row24.contains(" 99 % "),
        "{row24}"
    );
}

#[test]
fn a_harness_that_fell_behind_its_frames_is_the_wall_not_the_bot() {
    // The same ladder as if the harness had been given more calls than its core paces:
    // from 16 calls its frames left 45 ms late at p99 (over one 20 ms frame), which
    // `calls_harness_bound` calls harness-bound. The stalls there are Plimsoll's doing.
    let d = doc_with(|s| {
        if s.concurrency >= 16 {
            let v = s.voice.as_mut().unwrap();
            v.frame_jitter_p99_ms = 45.0;
            s.harness.bound = analysis::outcome::calls_harness_bound(0.5, 45.0, 10.0, 20.0);
        }
    });
    let lines = report::verdict::verdict_lines(&d);
    let all = lines.join("\n");
    assert!(
        lines[0].contains("wall: Plimsoll itself (harness-bound from 16)"),
        "{all}"
    );
    assert!(!all.contains("wall: CPU"), "{all}");
    assert_eq!(
        analysis::outcome::calls_harness_bound(0.5, 12.0, 10.0, 20.0),
        result::Bound::Sut,
        "frames late by less than one frame are the bot's to bear"
    );
}

#[test]
fn the_html_report_of_calls_charts_what_callers_heard() {
    let d = doc();
    let html = report::html::render(&d);
    if let Some(out) = std::env::var_os("PLIMSOLL_CALLS_HTML") {
        std::fs::write(out, &html).unwrap();
    }
    for chart in [
        "Response latency",
        "Broken audio",
        "Event-loop lag",
        "Memory per call",
    ] {
        assert!(html.contains(&format!(">{chart} (")), "{chart} missing");
    }
    for never in [
        ">Throughput<",
        ">Latency inflation<",
        "turns/s",
        "knee",
        "USL",
    ] {
        assert!(!html.contains(never), "{never:?} in the calls report");
    }
}

#[test]
fn the_junit_report_of_calls_names_levels_in_calls_and_skips_what_a_collapse_left_unjudged() {
    let xml = report::junit::steps::ramp("plimsoll.toml", &[doc()]);
    assert!(xml.contains("<testsuite name=\"8 calls\""), "{xml}");
    assert!(!xml.contains("sessions\""), "{xml}");
    // 16 calls: over budget on stalls, a failure with the figures.
    let at16 = xml.split("<testsuite name=\"16 calls\"").nth(1).unwrap();
    let at16 = at16.split("</testsuite>").next().unwrap();
    assert!(
        at16.contains("<failure message=\"stall share 0.0114 &gt; 0.01\""),
        "{at16}"
    );
    // 32 calls collapsed: its outcome fails, its budgets are skipped, not passed.
    let at32 = xml.split("<testsuite name=\"32 calls\"").nth(1).unwrap();
    let at32 = at32.split("</testsuite>").next().unwrap();
    assert!(
        at32.contains("failures=\"1\"") && at32.contains("skipped=\"3\""),
        "{at32}"
    );
    assert!(
        at32.contains("<skipped message=\"not judged: the level collapsed\"/>"),
        "{at32}"
    );
}

/// The density question on a real worker: examples/livekit-agent's two arms (LiveKit's
/// process and thread job executors, `ramp --cpus 1 --ladder 1,2,4,8`, 2026-11-29; the
/// levels 1 and 2 kept). Known answers: each arm's line says what it holds and, at that
/// line, a call's memory by PSS — the slope from 1 to 2 calls, which the cgroup's anonymous
/// pages bear out (64.4 and 13.5 MB a call), where level 1's own quotient said 80.6 and
/// 43.9, the first call's set-up spread over one — and its CPU a call-second, read from the
/// step it holds at.
#[test]
fn arms_of_a_worker_say_what_a_call_costs_at_each_line() {
    let text = include_str!("../fixtures/arms-calls/result.json");
    let d: result::arms::ArmsDoc = serde_json::from_str(text).unwrap();
    let lines = report::arms::summary_lines(&d);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("process  holds 1 call · "),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with(" — at 1: 63.7 MB a call (PSS, 1 → 2 calls), 225 CPU ms a call-second"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("thread   holds 1 call · "),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with(" — at 1: 13.7 MB a call (PSS, 1 → 2 calls), 219 CPU ms a call-second"),
        "{}",
        lines[1]
    );
    // The same in report.md's table, a column of its own.
    let md = report::arms::markdown(&d);
    assert!(md.contains("| a session at its line |"), "{md}");
    assert!(md.contains("| at 1: 13.7 MB a call (PSS, 1 → 2 calls), 219 CPU ms a call-second |"));
}

/// Issue 62's done-when on the 2-core Xeon (2026-12-06): examples/livekit-agent, `ramp
/// --cpus 1 --budget pss_mb=4096 --ladder 1,2,4`, three runs (`arms-xeon/run*.json`, the
/// connections' series and the log's examples left out). Known answer: each arm's MB a
/// call at its line is within 25 % of what the cgroup's anonymous pages grew a call over
/// the same levels (the median of their pairwise slopes). An arm that holds only its first
/// level gives that level's own figure and says the first call's set-up is in it.
#[test]
fn an_arms_memory_a_call_is_what_its_cgroup_grew_a_call() {
    let runs = [
        include_str!("../fixtures/arms-xeon/run1.json"),
        include_str!("../fixtures/arms-xeon/run2.json"),
        include_str!("../fixtures/arms-xeon/run3.json"),
    ];
    for text in runs {
        let d: result::arms::ArmsDoc = serde_json::from_str(text).unwrap();
        for (arm, line) in d.arms.iter().zip(report::arms::summary_lines(&d)) {
            let said = mb_a_call(&line);
            let anon: Vec<(f64, f64)> = arm
                .steps
                .iter()
                .filter(|s| s.outcome.is_ok())
                .map(|s| (s.concurrency as f64, s.cgroup_anon_peak_mb.unwrap()))
                .collect();
            let grew = median_slope(&anon);
            assert!(
                (said - grew).abs() <= 0.25 * grew,
                "{line}: cgroup {grew:.1}"
            );
            assert!(line.contains("(PSS, 1 → "), "{line}");
        }
    }
    // The process arm of run 1 as if its levels 2 and 4 had collapsed.
    let mut d: result::arms::ArmsDoc = serde_json::from_str(runs[0]).unwrap();
    for s in d.arms[0].steps.iter_mut().skip(1) {
        s.outcome = result::Outcome::ErrorRate;
    }
    if let Some(RunAnalysis::Ladder(a)) = d.arms[0].analysis.as_mut() {
        a.verdict.as_mut().unwrap().holds = Some(1);
    }
    let line = &report::arms::summary_lines(&d)[0];
    assert!(
        line.contains(" — at 1: 84.0 MB a call (PSS, the first call's set-up in it), "),
        "{line}"
    );
}

/// "… — at 4: 66.1 MB a call (PSS, …" → 66.1.
fn mb_a_call(line: &str) -> f64 {
    let at = line.rsplit(" — at ").next().unwrap();
    let figure = at.split(": ").nth(1).unwrap().split(" MB a call").next();
    figure.unwrap().parse().unwrap_or_else(|_| panic!("{line}"))
}

/// The median of the pairwise slopes of `p`.
fn median_slope(p: &[(f64, f64)]) -> f64 {
    let mut slopes = Vec::new();
    for (i, a) in p.iter().enumerate() {
        for b in &p[i + 1..] {
            slopes.push((b.1 - a.1) / (b.0 - a.0));
        }
    }
    slopes.sort_by(f64::total_cmp);
    let n = slopes.len();
    match n % 2 {
        1 => slopes[n / 2],
        _ => (slopes[n / 2 - 1] + slopes[n / 2]) / 2.0,
    }
}
