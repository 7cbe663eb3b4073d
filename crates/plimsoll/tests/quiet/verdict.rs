//! Verdicts with known answers, end to end under a 1-core cap: an agent whose wall is its
//! CPU (60 CPU ms a turn: at most 1000 / 60 turns/s) and one whose wall is inside it (two
//! turns at a time: at most 2 / turn time, with the CPU idle), and two whose wall is their
//! provider (a quota of 1,500 requests/min; 6 generation slots). All run in this one test,
//! one after the other: each pins its SUT to the same core, so running them side by side
//! would halve the CPU of the first.

use crate::common::*;
use serde_json::Value;

/// The ramp, run once more where a step says the harness could not keep up: what these
/// known answers judge is the SUT's wall, which a step cannot show when Plimsoll itself says
/// it fell behind (seen in CI on a VM whose hypervisor took 4 % of a core: the driver 73 ms
/// late at one session, its own CPU 3 %).
fn ramp_in(dir: &std::path::Path, args: &[&str]) -> (Value, String) {
    let (doc, err) = ramp_json(dir, args);
    let steps = doc["steps"].as_array().map_or(&[][..], |s| s.as_slice());
    match steps.iter().find(|s| s["harness"]["bound"] != "sut") {
        Some(s) => {
            eprintln!(
                "a step was not SUT-bound ({}): running the ramp once more",
                s["harness"]
            );
            ramp_json(dir, args)
        }
        None => (doc, err),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn no_harness_bound(doc: &Value, err: &str) {
    for s in doc["steps"].as_array().unwrap() {
        assert_eq!(s["harness"]["bound"], "sut", "{s}\n{err}");
    }
}

/// (a) The CPU-bound agent, with the auto ladder and default flags from the repository
/// root: CPU named as the wall, the plateau where its cost predicts, the budget line
/// found within the resolution in fewer steps than a 10 %-step ladder would take.
fn cpu_bound() {
    let (doc, err) = ramp_in(
        &root(),
        &[
            "--config",
            "examples/cpu-bound/plimsoll.toml",
            "--cpus",
            "1",
            "--no-history",
        ],
    );
    no_harness_bound(&doc, &err);
    let steps = doc["steps"].as_array().unwrap();
    let v = &doc["analysis"]["verdict"];
    assert_eq!(v["wall"]["kind"], "cpu", "{err}");
    let cpu_ms = median(
        steps
            .iter()
            .filter_map(|s| s["cpu_ms_per_turn"].as_f64())
            .collect(),
    );
    let predicted = 1000.0 / cpu_ms;
    let plateau = v["plateau"]["turns_per_s"].as_f64().expect(&err);
    // Both sides are this run's own measures, so a slower machine moves them together.
    // What does not cancel is another process taking the SUT's core: the verdict then
    // says "machine busy" (the run measured the others' share), and the plateau may sit
    // lower than its CPU predicts, never higher (a core cannot give more than itself).
    let busy = v["headline"].as_str().unwrap().starts_with("machine busy");
    assert!(
        (plateau / predicted - 1.0).abs() <= 0.15 || (busy && plateau <= predicted * 1.15),
        "plateau {plateau} turns/s, predicted {predicted}\n{err}"
    );
    // The budget line: the last level within inflation 2.0 and the first over it, within
    // the 10 % resolution.
    let (holds, over) = (
        v["holds"].as_u64().unwrap(),
        v["over_from"].as_u64().unwrap(),
    );
    let at = |n: u64| steps.iter().find(|s| s["concurrency"] == n).unwrap();
    assert!(at(holds)["latency_inflation"].as_f64().unwrap() <= 2.0);
    assert!(at(over)["latency_inflation"].as_f64().unwrap() > 2.0);
    assert!(
        over == holds + 1 || over as f64 <= holds as f64 * 1.1 + 1e-9,
        "{holds}..{over}\n{err}"
    );
    let top = steps.last().unwrap()["concurrency"].as_f64().unwrap();
    let geometric = ((top / 2.0).ln() / 1.1f64.ln()).ceil() as usize + 1;
    assert!(
        steps.len() < geometric,
        "{} steps vs {geometric}",
        steps.len()
    );
    assert!(
        err.contains("auto ladder:") && err.contains("verdict: holds"),
        "{err}"
    );
    assert!(v["headline"].as_str().unwrap().contains("wall: CPU"), "{v}");
    // The line with its spread (the levels either side of it ran again): on a quiet
    // machine it holds 11 or 12 (three runs in a row: 11, 11, 12; docs/benchmarks/demo.md).
    // The boundary is smooth (latency inflation creeps past 2 between 12 and 14), so the
    // repeats may spread it: a CI runner said 11–14, with 12, 13 and 14 each held in 1 of
    // 3 runs at inflation 1.89–2.21. The range starts within two levels of 11–12, spans
    // at most four, and its ends are what its runs say. A busy machine may pull it lower
    // only while its first words say so (`busy`, above). A quiet CI run read 15–15
    // (inflation 1.98 at 14, 2.09 at 16): where inflation crosses 2 between levels of 61
    // CPU ms a turn is a precision figure, not logic — a wrong wall or a wrong cap gives
    // a line of 4 or 32, so the ends are held to 9–16.
    let (low, high) = (
        v["line"]["low"].as_u64().expect(&err),
        v["line"]["high"].as_u64().expect(&err),
    );
    assert!(high - low <= 4, "{low}–{high}\n{err}");
    assert!(
        (9..=16).contains(&high) && (busy || (9..=16).contains(&low)),
        "line {low}–{high}\n{err}"
    );
    let runs = v["line"]["runs"].as_array().unwrap();
    let held = |n: u64| {
        runs.iter()
            .find(|r| r["concurrency"] == n)
            .map(|r| (r["held"].as_u64().unwrap(), r["of"].as_u64().unwrap()))
    };
    if let Some((h, of)) = held(low) {
        assert!(2 * h > of, "{low} held in {h} of {of}\n{err}");
    }
    if let Some((h, _)) = held(high) {
        assert!(h >= 1, "{high} never held\n{err}");
    }
    assert!(!v["line"]["runs"].as_array().unwrap().is_empty(), "{v}");
    // On a 2-core machine with cgroup v1 the SUT's own core is held by a cpuset.
    let first = &steps[0];
    if first["cap"]["method"] == "cgroup-v1" && first["partition"].is_object() {
        assert_eq!(first["partition"]["method"], "cpuset", "{first}");
        assert_eq!(first["partition"]["sut"], "1", "{first}");
    }
}

/// (b) The agent with an internal limit, from inside its own directory with the default
/// config: a limit inside the SUT (queueing), never CPU, never the harness. (Flat from 2
/// over three levels is a clear plateau; a level at 16 took 15 s more and judged nothing.)
fn internal_limit() {
    let (doc, err) = ramp_in(
        &root().join("examples/internal-limit"),
        &["--cpus", "1", "--ladder", "1,2,4,8", "--no-history"],
    );
    no_harness_bound(&doc, &err);
    let steps = doc["steps"].as_array().unwrap();
    let v = &doc["analysis"]["verdict"];
    assert_eq!(v["wall"]["kind"], "internal", "{err}");
    let turn_s = steps[0]["p50_turn_ms"].as_f64().unwrap() / 1000.0;
    let predicted = 2.0 / turn_s;
    let plateau = v["plateau"]["turns_per_s"].as_f64().expect(&err);
    assert!(
        (plateau / predicted - 1.0).abs() <= 0.15,
        "plateau {plateau} turns/s, predicted {predicted}\n{err}"
    );
    for s in steps {
        assert!(s["cpu_of_cap"].as_f64().unwrap() < 0.5, "{s}");
    }
    // The headline names the wall in a few words; its evidence is the wall's own line.
    let headline = v["headline"].as_str().unwrap();
    let wall = v["wall"]["text"].as_str().unwrap();
    assert!(
        headline.contains("wall: inside the SUT")
            && wall.contains("the limit is inside the SUT (queueing)")
            && !wall.contains("CPU —"),
        "{headline}\n{wall}"
    );
}

/// LLM calls a turn and the turn's time at the first level: what one session asks of the
/// provider, in calls per second.
fn calls_per_s_per_session(steps: &[Value]) -> f64 {
    let s = &steps[0];
    let calls_per_turn = s["llm_calls"].as_f64().unwrap() / s["turns"].as_f64().unwrap();
    calls_per_turn / (s["p50_turn_ms"].as_f64().unwrap() / 1000.0)
}

/// (c) The floor against a quota of 1,500 requests/min per key (25 calls/s): the provider
/// is the wall from the first level whose demand exceeds the quota, and no level below it
/// saw a refusal.
fn provider_quota() {
    let (doc, err) = ramp_in(
        &root().join("examples/provider-quota"),
        &["--ladder", "1,2,4,8", "--no-history"],
    );
    no_harness_bound(&doc, &err);
    let steps = doc["steps"].as_array().unwrap();
    let v = &doc["analysis"]["verdict"];
    let carried = 25.0 / calls_per_s_per_session(steps);
    let predicted = [1.0, 2.0, 4.0, 8.0]
        .into_iter()
        .find(|&l| l > carried)
        .unwrap();
    assert_eq!(v["wall"]["kind"], "provider", "{err}");
    assert_eq!(
        v["wall"]["from"].as_f64(),
        Some(predicted),
        "quota carries {carried} sessions\n{err}"
    );
    for s in steps
        .iter()
        .filter(|s| s["concurrency"].as_f64().unwrap() < predicted)
    {
        assert_eq!(s["provider"]["refused_share"], 0.0, "{s}");
    }
    let wall = v["wall"]["text"].as_str().unwrap();
    assert!(
        wall.contains("the 1,500 requests/min quota per key refused")
            && wall.contains("retry amplification"),
        "{wall}"
    );
    assert!(
        v["headline"]
            .as_str()
            .unwrap()
            .contains("wall: the provider (the 1,500 requests/min quota per key"),
        "{v}"
    );
    assert!(
        err.contains("provider: 1,500 requests/min per key — at 8:"),
        "{err}"
    );
}

/// (d) The floor against 6 generation slots: throughput flat where the slots predict
/// (6 calls at a time, each a third of a turn), named as the provider, not as a limit
/// inside the SUT, and latency over budget because calls wait.
fn provider_slots() {
    let (doc, err) = ramp_in(
        &root().join("examples/provider-slots"),
        &["--ladder", "1,2,4,8,16", "--no-history"],
    );
    no_harness_bound(&doc, &err);
    let steps = doc["steps"].as_array().unwrap();
    let v = &doc["analysis"]["verdict"];
    // A turn's calls run one after another, each holding a slot: 6 turns at a time.
    let predicted = 6.0 / (steps[0]["p50_turn_ms"].as_f64().unwrap() / 1000.0);
    let plateau = v["plateau"]["turns_per_s"].as_f64().expect(&err);
    assert!(
        (plateau / predicted - 1.0).abs() <= 0.15,
        "plateau {plateau} turns/s, predicted {predicted}\n{err}"
    );
    assert_eq!(v["wall"]["kind"], "provider", "{err}");
    let wall = v["wall"]["text"].as_str().unwrap();
    assert!(
        wall.contains("the 6 generation slots kept calls waiting")
            && !wall.contains("inside the SUT"),
        "{wall}"
    );
    assert_eq!(v["over_from"], 16, "{err}");
}

#[test]
fn verdicts_name_the_wall_their_agent_was_built_with() {
    cpu_bound();
    internal_limit();
    provider_quota();
    provider_slots();
}
