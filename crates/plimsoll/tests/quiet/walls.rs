//! Walls inside the process and a verdict that can be trusted, end to end with known
//! answers: the floor serving on one event loop (its thread is the wall, at one core's
//! worth of turns), a Node server whose libuv pool of one worker is (not its main thread), a JVM server
//! whose fixed pool of 4 workers each waits on a provider call, a thread started per turn (threads grow 3 a session), a cold start
//! (the rate never above what the CPU allows), a clean service (no growth finding), and
//! the demo's agent beside a CPU burner on the SUT's core (the verdict says the machine
//! was busy before anything else; a burner gone by the re-run gives the quiet answer). One test runs them one after the other: each pins its SUT to the same cores.

use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command};

fn ramp(example: &str, args: &[&str]) -> (Value, String) {
    let mut all = vec!["--no-history"];
    all.extend_from_slice(args);
    ramp_json(&root().join("examples").join(example), &all)
}

/// The findings as the verdict's lines word them (the document keeps their facts).
fn findings(doc: &Value) -> Vec<String> {
    doc["analysis"]["verdict"]["lines"]
        .as_array()
        .map(|lines| {
            lines
                .iter()
                .filter(|l| l["label"] == "finding")
                .filter_map(|l| l["text"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The number after `prefix` in the first finding that starts with it (past a "first to
/// run out: " where another limit is farther off).
fn slope_in(found: &[String], prefix: &str) -> Option<f64> {
    let f = found
        .iter()
        .map(|f| f.trim_start_matches("first to run out: "))
        .find(|f| f.starts_with(prefix))?;
    f[prefix.len()..].split_whitespace().next()?.parse().ok()
}

/// ~100 CPU ms a turn on one thread under a 2-core cap: the thread is the wall, the
/// process near half its cap, the plateau within 15 % of 1000 / 100 turns/s.
fn event_loop() {
    let (doc, err) = ramp(
        "event-loop",
        &["--cpus", "2", "--no-partition", "--ladder", "8,16,32,48"],
    );
    let v = &doc["analysis"]["verdict"];
    assert_eq!(v["wall"]["kind"], "thread", "{err}");
    assert!(
        v["wall"]["short"]
            .as_str()
            .unwrap()
            .contains("`floor-loop`"),
        "{err}"
    );
    let steps = doc["steps"].as_array().unwrap();
    let cpu_ms = steps
        .iter()
        .filter_map(|s| s["cpu_ms_per_turn"].as_f64())
        .fold(0.0, f64::max);
    let best = steps
        .iter()
        .filter_map(|s| s["turns_per_s"].as_f64())
        .fold(0.0, f64::max);
    // Each session waits ~0.75 s on the mock between its loop's turns of work, so the
    // loop is busy ~84 % of the time at 24 sessions and ~92 % at 48 (a quiet run:
    // 9.66 turns/s against 10.08 allowed): the ladder goes to 48 to reach the plateau.
    // Both are this run's own measures: a slower machine moves them together. Another
    // process on the SUT's cores does not cancel; the verdict then says "machine busy"
    // (the run measured the others' share) and the loop may get less than its core, so
    // the plateau may sit lower, never above what one core allows.
    let allows = 1000.0 / cpu_ms;
    let busy = v["headline"]
        .as_str()
        .unwrap_or_default()
        .starts_with("machine busy");
    assert!(
        (best - allows).abs() <= 0.15 * allows || (busy && best <= 1.15 * allows),
        "plateau {best} turns/s against one core's {allows}\n{err}"
    );
}

/// A Node server hashing off its event loop on libuv's pool of one worker
/// (UV_THREADPOOL_SIZE=1): the worker, not the main thread, is the wall, and the verdict
/// says which and what sets the pool's size. Skipped where Node is not installed.
fn node_pool() {
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("SKIPPED node_pool: node is not on PATH");
        return;
    }
    let (doc, err) = ramp(
        "node-pool",
        &["--cpus", "2", "--no-partition", "--ladder", "4,16,32,64"],
    );
    let w = &doc["analysis"]["verdict"]["wall"];
    assert_eq!(w["kind"], "thread", "{err}");
    let short = w["short"].as_str().unwrap_or_default();
    assert!(
        short.starts_with("one worker thread (`node`"),
        "{short}\n{err}"
    );
    assert!(short.ends_with("the main thread idle)"), "{short}\n{err}");
    let text = w["text"].as_str().unwrap_or_default();
    assert!(text.contains("not the main thread"), "{text}");
    assert!(text.contains("a pool of 1 worker"), "{text}");
    assert!(text.contains("UV_THREADPOOL_SIZE"), "{text}");
}

/// A JVM server on `Executors.newFixedThreadPool(4)` whose turns block on their LLM call:
/// the wall is its four `pool-1-thread-*` workers, each waiting on a provider call, named
/// from the threads' names. Skipped where Java is not installed.
fn jvm_pool() {
    if Command::new("java").arg("-version").output().is_err() {
        eprintln!("SKIPPED jvm_pool: java is not on PATH");
        return;
    }
    let (doc, err) = ramp(
        "jvm-pool",
        &["--cpus", "2", "--no-partition", "--ladder", "2,4,8,16"],
    );
    let w = &doc["analysis"]["verdict"]["wall"];
    assert_eq!(w["kind"], "pool", "{err}");
    assert_eq!(
        w["short"],
        "a worker pool of 4 threads (`pool-1-thread-*`, each waiting on a provider call)",
        "{err}"
    );
    // Its JIT's threads waiting for a CPU at 2 sessions moved nothing: not a finding.
    assert!(
        !findings(&doc)
            .iter()
            .any(|f| f.contains("queue for the cores")),
        "{:?}",
        findings(&doc)
    );
}

/// A thread per turn that is never released: 3 a session (sessions of 3 turns).
fn thread_per_turn() {
    let (doc, err) = ramp("thread-per-turn", &["--cpus", "1", "--ladder", "4,8,16,32"]);
    let found = findings(&doc);
    let slope = slope_in(&found, "threads grow ").expect(&err);
    assert!((slope - 3.0).abs() <= 0.6, "slope {slope}\n{err}");
    assert!(
        found
            .iter()
            .any(|f| f.contains("a thread per request (turn) that is never released")),
        "{found:?}"
    );
}

/// A cold first turn: the rate never above what the CPU per turn allows, the cold start
/// named, and the CPU's share of the cap read over the same span as the rate (issue 50:
/// it read 22 % over the quick turns while the rate came from every turn, ~90 %).
/// (Three levels: the cold start is named from the first, and a fourth at 16 took 17 s.)
fn cold_start() {
    let (doc, err) = ramp("cold-start", &["--cpus", "1", "--ladder", "2,4,8"]);
    for s in doc["steps"].as_array().unwrap() {
        let rate = s["turns_per_s"].as_f64().unwrap();
        if let Some(allows) = s["rate_check"]["cpu_allows_turns_per_s"].as_f64() {
            assert!(rate <= allows * 1.1, "{rate} > {allows}\n{err}");
        }
        // Read from the wall time, share × cores / rate is the CPU per turn itself (the
        // floor's start, a few ms, and rounding apart); from the span of full load, the
        // span's own turns.
        if s["rate_check"]["used"] == "wall" {
            let per_turn =
                s["cpu_of_cap"].as_f64().unwrap() * s["cpu_cores"].as_f64().unwrap() * 1000.0
                    / rate;
            let said = s["cpu_ms_per_turn"].as_f64().unwrap();
            assert!(
                (per_turn / said - 1.0).abs() < 0.15,
                "{per_turn} against {said}\n{err}"
            );
        }
    }
    assert!(
        findings(&doc).iter().any(|f| f.starts_with("a cold start")),
        "{:?}\n{err}",
        findings(&doc)
    );
}

/// The floor on its own: nothing grows per session beyond what a session holds.
fn clean() {
    let (doc, err) = ramp("floor", &["--cpus", "1", "--ladder", "4,8,16,32"]);
    let grows: Vec<String> = findings(&doc)
        .into_iter()
        .filter(|f| f.contains("per session"))
        .collect();
    assert!(grows.is_empty(), "{grows:?}\n{err}");
}

/// The demo's agent (60 CPU ms a turn under a 1-core cap) on a quiet machine, at a level
/// well within budget and one well over it (inflation ~1.4 and ~2.4 on a quiet box): the
/// answer the busy runs are held to.
const DEMO_LADDER: &[&str] = &["--cpus", "1", "--ladder", "4,16"];

fn quiet_demo() -> Value {
    let (doc, err) = ramp("cpu-bound", DEMO_LADDER);
    let headline = doc["analysis"]["verdict"]["headline"].as_str().expect(&err);
    assert!(!headline.contains("busy"), "{headline}\n{err}");
    doc
}

/// A process spinning on every core for as long as it lives.
struct Burner(Vec<Child>);

impl Drop for Burner {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One spinner per core: whichever core the SUT is given, something else wants it.
fn burn() -> Burner {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Burner(
        (0..cores)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .unwrap()
            })
            .collect(),
    )
}

/// With the SUT's core shared with a spinner, the verdict's first words say the machine
/// was busy and every step ran again.
fn busy() {
    let _b = burn();
    let (doc, err) = ramp("cpu-bound", &["--cpus", "1", "--ladder", "4,8"]);
    let headline = doc["analysis"]["verdict"]["headline"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(headline.starts_with("machine busy"), "{headline}\n{err}");
    assert!(
        err.contains("warning: the machine is busy before load"),
        "{err}"
    );
    for s in doc["steps"].as_array().unwrap() {
        assert_eq!(s["interference"]["contaminated"], true, "{s}");
    }
}

/// A burner on the SUT's core while the first step runs, stopped as soon as Plimsoll says
/// it will run that step again: the re-run is clean, and the verdict is the quiet one.
/// Where the re-run still found the core taken with the burner gone (seen in CI: 11 % on
/// a VM whose hypervisor takes some of each core), the machine was not quiet: once more.
fn busy_then_quiet(quiet: &Value) {
    let (doc, err) = burned_then_quiet();
    let first = &doc["steps"][0];
    if first["interference"]["contaminated"] == true && first["interference"]["rerun"] == true {
        // Plimsoll said what it found: the verdict is the busy one.
        let headline = doc["analysis"]["verdict"]["headline"].as_str();
        assert!(
            headline.is_some_and(|h| h.starts_with("machine busy")),
            "{err}"
        );
        eprintln!(
            "the re-run found the SUT's core taken with the burner gone ({}): once more",
            first["interference"]
        );
        return judge_quiet_again(quiet, burned_then_quiet());
    }
    judge_quiet_again(quiet, (doc, err))
}

/// The demo ramp with a burner on the SUT's core until Plimsoll says it will run the first
/// step again: its RESULT document and its stderr.
fn burned_then_quiet() -> (Value, String) {
    use std::io::BufRead;
    let mut burner = Some(burn());
    let mut child = Command::new(BIN)
        .args(["ramp", "--json", "--no-history"])
        .args(DEMO_LADDER)
        .current_dir(root().join("examples").join("cpu-bound"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let mut err = String::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("running it again") {
            burner = None; // the burner stops during the pause
        }
        err.push_str(&line);
        err.push('\n');
    }
    drop(burner);
    assert!(child.wait().unwrap().success(), "{err}");
    let out = out.join().unwrap();
    let doc: Value = serde_json::from_str(out.lines().last().unwrap_or("null")).expect(&err);
    (doc, err)
}

/// The busy-then-quiet ramp's verdict is the quiet ladder's, its first step run again.
fn judge_quiet_again(quiet: &Value, (doc, err): (Value, String)) {
    let v = &doc["analysis"]["verdict"];
    let headline = v["headline"].as_str().expect(&err);
    assert!(err.contains("running it again"), "{err}");
    assert!(!headline.contains("busy"), "{headline}\n{err}");
    let first = &doc["steps"][0];
    assert_eq!(first["concurrency"], 4, "{err}");
    assert_eq!(first["interference"]["rerun"], true, "{first}");
    assert_eq!(first["interference"]["contaminated"], false, "{first}");
    // The quiet ladder's answer over the same levels.
    let held_quiet = quiet["analysis"]["verdict"]["standings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["standing"] == "holds")
        .filter_map(|l| l["concurrency"].as_u64())
        .max();
    assert_eq!(v["holds"].as_u64(), held_quiet, "{headline}\n{err}");
}

#[test]
fn walls_inside_the_process_and_a_busy_machine_are_named() {
    event_loop();
    node_pool();
    jvm_pool();
    thread_per_turn();
    cold_start();
    clean();
    let quiet = quiet_demo();
    busy();
    busy_then_quiet(&quiet);
}
