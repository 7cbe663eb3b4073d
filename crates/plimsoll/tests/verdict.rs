//! Verdicts with known answers, end to end under a 1-core cap: an agent whose wall is its
//! CPU (60 CPU ms a turn: at most 1000 / 60 turns/s) and one whose wall is inside it (two
//! turns at a time: at most 2 / turn time, with the CPU idle). Both run in this one test,
//! one after the other: each pins its SUT to the same core, so running them side by side
//! would halve the CPU of the first.

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

fn ramp_in(dir: &std::path::Path, args: &[&str]) -> (Value, String) {
    let out = Command::new(BIN)
        .args(["ramp", "--json"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = serde_json::from_str(stdout.lines().last().unwrap_or("null")).expect(&err);
    (doc, err)
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
    assert!(
        (plateau / predicted - 1.0).abs() <= 0.15,
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
    // On a 2-core machine with cgroup v1 the SUT's own core is held by a cpuset.
    let first = &steps[0];
    if first["cap"]["method"] == "cgroup-v1" && first["partition"].is_object() {
        assert_eq!(first["partition"]["method"], "cpuset", "{first}");
        assert_eq!(first["partition"]["sut"], "1", "{first}");
    }
}

/// (b) The agent with an internal limit, from inside its own directory with the default
/// config: a limit inside the SUT (queueing), never CPU, never the harness.
fn internal_limit() {
    let (doc, err) = ramp_in(
        &root().join("examples/internal-limit"),
        &["--cpus", "1", "--ladder", "1,2,4,8,16", "--no-history"],
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
    let headline = v["headline"].as_str().unwrap();
    assert!(
        headline.contains("the limit is inside the SUT (queueing)") && !headline.contains("CPU —"),
        "{headline}"
    );
}

#[test]
fn verdicts_name_the_wall_their_agent_was_built_with() {
    cpu_bound();
    internal_limit();
}
