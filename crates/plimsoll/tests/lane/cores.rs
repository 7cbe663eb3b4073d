//! Pools are sized by the cores the process may use, not the machine's (issue 49): the
//! mock started under `taskset` on one core has one worker thread and one voice thread;
//! on two cores, two of each. On a 16-core machine a mock held to one core once ran a
//! voice thread for each of the sixteen.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

/// The mock's threads by name under `taskset -c CORES`: (workers, voice threads), once
/// there are `want` of each or 5 s have passed (a thread names itself when it starts,
/// which on a busy machine can be a moment after the mock says it listens).
fn mock_threads(cores: &str, want: usize) -> (usize, usize) {
    let mut child = Command::new("taskset")
        .args(["-c", cores, BIN, "mock", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("taskset runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening http://"), "{line}");
    let count = || {
        let names: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", child.id()))
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .map(|n| n.trim().to_string())
            .collect();
        let workers = names.iter().filter(|n| *n == "plimsoll-mock").count();
        let voice = names
            .iter()
            .filter(|n| n.starts_with("plimsoll-mock-v"))
            .count();
        (workers, voice)
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut seen = count();
    while seen != (want, want) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
        seen = count();
    }
    let _ = child.kill();
    let _ = child.wait();
    seen
}

#[test]
fn the_mock_sizes_its_pools_by_the_cores_it_is_given() {
    if Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("skipped: no taskset here (util-linux)");
        return;
    }
    let cores = probe::affinity::available();
    assert_eq!(
        mock_threads(&cores[0].to_string(), 1),
        (1, 1),
        "held to one core"
    );
    if let [a, b, ..] = cores[..] {
        assert_eq!(
            mock_threads(&format!("{a},{b}"), 2),
            (2, 2),
            "held to two cores"
        );
    }
}
