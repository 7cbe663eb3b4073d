//! `plimsoll run --live`: the step watched while it runs — its metrics count the level
//! running now, and once it ends they carry its RESULT's figures — and a bad address or
//! URL is refused before anything starts.

use crate::common::{root, BIN};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

/// One GET on loopback, the body.
fn get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map_or(text.clone(), |(_, b)| b.to_string())
}

/// The address a run says its live view serves on (`live: http://ADDR/ …`).
fn served_at(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> String {
    lines
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("live: http://")
                .map(|r| r.split('/').next().unwrap().to_string())
        })
        .expect("the address it serves on")
}

fn figure(metrics: &str, prefix: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn a_step_is_counted_while_it_runs_and_its_result_served_after() {
    let dir = root().join("examples/floor");
    let mut child = Command::new(BIN)
        .args([
            "run",
            "--concurrency",
            "4",
            "--set",
            "turns=12",
            "--live",
            "127.0.0.1:0",
        ])
        .args(["--live-linger", "4"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = served_at(&mut lines);
    // Within the step: the level and its turns counting up.
    let mut seen = Vec::new();
    for _ in 0..40 {
        let m = get(&url, "/metrics");
        if let Some(t) = figure(&m, "plimsoll_turns_total{") {
            assert!(
                m.contains("plimsoll_level{") && m.contains("level=\"4\""),
                "{m}"
            );
            seen.push(t);
        }
        if seen.len() >= 2 && seen.last() > seen.first() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(
        seen.len() >= 2 && seen.last() > seen.first(),
        "turns never counted up: {seen:?}"
    );
    // After it: its RESULT's figures, while the view lingers (read before the RESULT line,
    // which is there to read only once the process has ended).
    let said: Vec<String> = lines
        .map_while(Result::ok)
        .take_while(|l| !l.starts_with("live: serving"))
        .collect();
    let m = get(&url, "/metrics");
    let page = get(&url, "/parts");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let result: serde_json::Value = serde_json::from_str(
        out.lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .unwrap_or_else(|| panic!("{said:?}")),
    )
    .unwrap();
    let rate = figure(&m, "plimsoll_step_turns_per_second{").expect("the step's figure");
    assert!(
        (rate - result["turns_per_s"].as_f64().unwrap()).abs() < 1e-9,
        "{m}"
    );
    assert_eq!(figure(&m, "plimsoll_run_done{"), Some(1.0), "{m}");
    assert!(
        page.contains("the run has ended") && page.contains("Verdict:"),
        "{page}"
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_bad_address_or_url_is_refused_before_the_run() {
    for (flag, value, says) in [
        (
            "--live",
            "localhost",
            "--live \"localhost\": not an address",
        ),
        (
            "--otlp",
            "https://collector:4318",
            "https is not spoken here",
        ),
        (
            "--live-linger",
            "5000",
            "--live-linger 5000: give seconds from 0 to 3600",
        ),
    ] {
        let mut args = vec![
            "run",
            "--config",
            "examples/floor/plimsoll.toml",
            flag,
            value,
        ];
        if flag == "--live-linger" {
            args.push("--live");
        }
        let o = Command::new(BIN)
            .args(&args)
            .current_dir(root())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        // Plimsoll's own error (a bad flag's value), said before any step runs.
        assert_eq!(o.status.code(), Some(1), "{flag} {value}: {err}");
        assert!(err.contains(says), "{flag} {value}: {err}");
        assert!(!err.contains("step:"), "{flag} {value} ran a step: {err}");
    }
}

#[test]
fn a_soak_shows_its_series_and_leak_verdict_so_far() {
    let events = std::env::temp_dir().join(format!("plimsoll-soak-events-{}", std::process::id()));
    let mut child = Command::new(BIN)
        .args([
            "soak",
            "--config",
            "plimsoll.toml",
            "--duration",
            "8s",
            "--drain",
            "1s",
        ])
        .args([
            "--every",
            "0.5s",
            "--no-history",
            "--live",
            "127.0.0.1:0",
            "--live-linger",
            "4",
        ])
        .arg("--events")
        .arg(&events)
        .current_dir(root().join("examples/soak"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = served_at(&mut lines);
    // While it runs: the soak's own charts over the samples so far, and the level's metrics.
    let mut page = String::new();
    for _ in 0..30 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        page = get(&url, "/parts");
        if page.contains("Plimsoll soak") && page.contains("Sessions completed") {
            break;
        }
    }
    assert!(
        page.contains("Plimsoll soak") && page.contains("RSS"),
        "{page}"
    );
    assert!(page.contains("live: "), "{page}");
    let m = get(&url, "/metrics");
    assert!(m.contains("plimsoll_turns_total{"), "{m}");
    // Ended: its final verdict, served while the view lingers.
    let said: Vec<String> = lines
        .map_while(Result::ok)
        .take_while(|l| !l.starts_with("live: serving"))
        .collect();
    let page = get(&url, "/parts");
    let verdict = said
        .iter()
        .find_map(|l| l.strip_prefix("verdict: "))
        .unwrap_or_else(|| panic!("{said:?}"));
    assert!(page.contains("the run has ended"), "{page}");
    assert!(
        page.contains(&verdict[..verdict.len().min(40)]),
        "{verdict}\n{page}"
    );
    assert!(child.wait().unwrap().success());
    // The events carry the soak's words beside its readings, as soak.json does.
    let text = std::fs::read_to_string(&events).unwrap();
    let _ = std::fs::remove_file(&events);
    let last: serde_json::Value = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["event"] == "soak")
        .unwrap_or_else(|| panic!("no soak event: {text}"));
    let a = &last["analysis"];
    assert!(a["headline"].is_string() && a["rule"].is_string(), "{a}");
    for l in a["leaks"].as_array().unwrap() {
        assert!(l["why"].is_string() && l["reading"].is_object(), "{l}");
    }
}

/// `--events FILE`: a ramp's events read back as another tool reads them — the run first,
/// each level before its seconds and its step, each step's RESULT the one the ladder
/// keeps, the verdict, the end last — with no page served (`--events` alone).
#[test]
fn a_ramps_events_are_written_as_they_happen_and_read_back() {
    let dir = std::env::temp_dir().join(format!("plimsoll-events-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("events.jsonl");
    let o = Command::new(BIN)
        .args(["ramp", "--config", "examples/floor/plimsoll.toml"])
        .args(["--ladder", "2,4", "--no-cap", "--no-history", "--json"])
        .arg("--events")
        .arg(&file)
        .current_dir(root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("live: http"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kind = |e: &serde_json::Value| e["event"].as_str().unwrap().to_string();
    assert_eq!(kind(&events[0]), "run");
    assert_eq!(events[0]["unit"], "sessions");
    assert_eq!(kind(events.last().unwrap()), "end");
    // Each level: begun, its seconds, its step; in the ladder's order.
    let mut levels = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if kind(e) != "step" {
            continue;
        }
        let c = e["concurrency"].as_u64().unwrap();
        let begun = events[..i]
            .iter()
            .rposition(|x| kind(x) == "level")
            .expect("a level before its step");
        assert_eq!(events[begun]["concurrency"], c);
        assert!(
            events[begun..i]
                .iter()
                .any(|x| kind(x) == "second" && x["concurrency"] == c),
            "no second of level {c}"
        );
        assert_eq!(e["result"], doc["steps"][levels.len()], "level {c}");
        levels.push(c);
    }
    assert_eq!(levels, [2, 4]);
    let verdict = events
        .iter()
        .find(|e| kind(e) == "verdict")
        .expect("a verdict");
    assert_eq!(verdict["ceiling"], doc["analysis"]["ceiling"]);
    assert_eq!(verdict["verdict"], doc["analysis"]["verdict"]);
    let t: Vec<f64> = events.iter().map(|e| e["t_s"].as_f64().unwrap()).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
}
