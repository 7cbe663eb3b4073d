//! `plimsoll ramp`, `demo`, `history` and `report` end to end: real steps under real caps.

use crate::common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn ramp_writes_its_reports_and_leaves_no_cgroups() {
    let out = std::env::temp_dir().join(format!("plimsoll-ramp-test-{}", std::process::id()));
    let (code, doc, err, left) = ramp_with_pid(
        &root().join("examples/floor/plimsoll.toml"),
        &[
            "--ladder",
            "4,8,16",
            "--host",
            "64GB,16cpu",
            "--target",
            "100000",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 3);
    assert_eq!(doc["analysis"]["ceiling"], 16);
    assert_eq!(doc["analysis"]["no_collapse"], true);
    let refused = &doc["analysis"]["usl"]["refused"];
    assert_eq!(
        (&refused["why"], &refused["steps"]),
        (&"too_few_steps".into(), &3.into())
    );
    assert!(
        err.contains(
            "USL: not fitted — the USL needs at least 4 steps with throughput; this ladder has 3"
        ),
        "{err}"
    );
    assert!(doc["analysis"]["capacity"]["hosts"].as_u64().unwrap() >= 1);
    let method = doc["steps"][0]["cap"]["method"].as_str().unwrap();
    assert_eq!(doc["environment"]["cap"]["method"], method);
    assert!(["cgroup-v1", "cgroup-v2", "affinity"].contains(&method));
    assert!(
        err.contains("| sessions |") && err.contains("widen the ladder"),
        "{err}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| sessions |") && md.contains("Capacity projection"));
    assert!(!md.contains("null"), "no raw nulls for people: {md}");
    assert!(md.contains("**Verdict: "), "the verdict leads: {md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["steps"], doc["steps"]);
    assert_eq!(left, 0, "a cgroup was left behind");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn demo_runs_with_nothing_set_up() {
    let out = std::env::temp_dir().join(format!("plimsoll-demo-test-{}", std::process::id()));
    let o = Command::new(BIN)
        .args(["demo", "--ladder", "4,8", "--no-cap", "--out"])
        .arg(&out)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(doc["analysis"]["ceiling"], 8);
    assert!(out.join("report.md").exists() && out.join("setup/plimsoll.toml").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn history_records_runs_and_report_re_renders_them_identically() {
    let dir = std::env::temp_dir().join(format!("plimsoll-history-test-{}", std::process::id()));
    let db = dir.join("history.db");
    let (code, doc, err) = ramp(
        &root().join("examples/floor/plimsoll.toml"),
        &[
            "--ladder",
            "3,6",
            "--no-cap",
            "--history",
            db.to_str().unwrap(),
            "--out",
            dir.join("a").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let run = doc["run"].as_i64().unwrap();
    let list = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(list.contains("done") && list.lines().count() == 2, "{list}");
    let o = Command::new(BIN)
        .args(["report", &run.to_string(), "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.join("b"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |d: &str, f: &str| std::fs::read_to_string(dir.join(d).join(f)).unwrap();
    assert_eq!(
        read("a", "report.md"),
        read("b", "report.md"),
        "re-rendered report differs"
    );
    // The history keeps the verdict's facts and no words: the verdict in the re-rendered
    // result.json, its words included, was made from those facts again.
    let verdict_in = |d: &str| {
        let v: serde_json::Value = serde_json::from_str(&read(d, "result.json")).unwrap();
        v["analysis"]["verdict"].clone()
    };
    assert_eq!(verdict_in("a"), verdict_in("b"));
    let stored = store::History::open(&db)
        .unwrap()
        .run(run)
        .unwrap()
        .unwrap();
    let verdict = &stored["analysis"]["verdict"];
    assert!(verdict["wall"]["fact"].is_object(), "{verdict}");
    for words in [
        &verdict["headline"],
        &verdict["lines"],
        &verdict["wall"]["text"],
        &verdict["wall"]["short"],
    ] {
        assert!(words.is_null(), "words stored: {verdict}");
    }
    assert!(doc["analysis"]["verdict"]["headline"].is_string(), "{doc}");
    let missing = Command::new(BIN)
        .args(["report", "999", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run 999"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_ramp_keeps_its_finished_steps() {
    let dir = std::env::temp_dir().join(format!("plimsoll-interrupt-test-{}", std::process::id()));
    let db = dir.join("history.db");
    let mut child = Command::new(BIN)
        .args(["ramp", "--config"])
        .arg(root().join("examples/floor/plimsoll.toml"))
        .args(["--ladder", "2,4,8,16,32", "--no-cap", "--history"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt during the second step: once the first row is printed (a busy machine
    // runs a step again before its row), and a second into the next.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut stderr, &mut line).unwrap_or(0) > 0 {
        seen.push_str(&line);
        let first_row = line.starts_with("|        2 |");
        line.clear();
        if first_row {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(1000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
    let err = seen + &rest;
    assert!(out.status.success(), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let list = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    let line = list.lines().nth(1).unwrap_or("");
    assert!(line.contains("interrupted"), "{list}");
    let steps: i64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!((1..5).contains(&steps), "{list}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The main job: under a 100 MB cap, a SUT that leaks 16 MB per turn holds one session
/// of 3 turns and is OOM-killed at two; the ramp names the collapse and the ceiling.
#[test]
fn ramp_stops_at_the_first_collapse_and_names_the_ceiling() {
    if !Path::new("/sys/fs/cgroup/memory").exists()
        && !Path::new("/sys/fs/cgroup/cgroup.controllers").exists()
    {
        eprintln!("no cgroup hierarchy; skipping");
        return;
    }
    let server = LEAKY_SERVER;
    let cfg = config(
        "ramp-oom",
        &format!("[\"python3\", \"-c\", {server:?}]"),
        "",
    );
    let (code, doc, err) = ramp(&cfg, &["--ladder", "1,2,4", "--mem", "100M", "--cpus", "1"]);
    assert_eq!(code, 0, "{err}");
    if doc["steps"][0]["cap"]["method"] == "affinity" {
        eprintln!("memory not cappable here; skipping the collapse check");
        return;
    }
    assert_eq!(doc["analysis"]["ceiling"], 1, "{doc}");
    assert_eq!(doc["analysis"]["collapse"]["concurrency"], 2, "{doc}");
    assert_eq!(
        doc["analysis"]["collapse"]["outcome"], "oom_killed",
        "{doc}"
    );
    assert_eq!(
        doc["steps"].as_array().unwrap().len(),
        2,
        "the ramp stops at the collapse"
    );
    assert!(err.contains("collapse at 2 sessions: oom_killed"), "{err}");
}

/// kill -9 of `plimsoll ramp` at several points — while the first SUT starts, in the
/// middle of a step, around the next step — its watchdog kills the SUT and removes the
/// step's cgroups and scratch directory; the next command would sweep what even a killed
/// watchdog left.
#[test]
fn sigkill_at_any_point_leaves_no_sut_cgroup_or_scratch_dir() {
    for after_ms in [150u64, 900, 2300] {
        sigkill_after(after_ms);
    }
}

fn sigkill_after(after_ms: u64) {
    let child = Command::new(BIN)
        .args(["ramp", "--no-history", "--ladder", "4,8", "--config"])
        .arg(root().join("examples/floor/plimsoll.toml"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = std::time::Instant::now();
    // Note every SUT seen until the kill, so none can hide.
    let mut sut: Vec<u32> = Vec::new();
    while t0.elapsed() < std::time::Duration::from_millis(after_ms) {
        for p in sut_children(pid) {
            if !sut.contains(&p) {
                sut.push(p);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let dog = watchdog_of(pid);
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let mut child = child;
    let _ = child.wait();
    let prefix = format!("plimsoll-{pid}-");
    let scratch = format!("plimsoll-sut-{pid}-");
    let log = format!("plimsoll-log-{pid}-");
    let left = || -> Vec<String> {
        let cgroups = [
            "/sys/fs/cgroup/memory",
            "/sys/fs/cgroup/cpu",
            "/sys/fs/cgroup/cpuset",
            "/sys/fs/cgroup",
            "/sys/fs/cgroup/unified",
        ];
        let mut names: Vec<String> = cgroups
            .iter()
            .chain([std::env::temp_dir().to_str().unwrap()].iter())
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flat_map(|rd| rd.flatten())
            .map(|e| e.path().display().to_string())
            .filter(|n| n.contains(&prefix) || n.contains(&scratch) || n.contains(&log))
            .collect();
        names.extend(
            sut.iter()
                .filter(|&&p| alive(p))
                .map(|p| format!("pid {p}")),
        );
        names
    };
    assert!(
        within(5.0, || left().is_empty()),
        "killed after {after_ms} ms, left behind: {:?}",
        left()
    );
    if let Some(d) = dog {
        assert!(within(5.0, || !alive(d)), "the watchdog outlived its work");
    }
}
