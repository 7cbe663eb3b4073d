//! `plimsoll bench mock --mcp` runs end to end for a fraction of a second a row and
//! prints its table, so the benchmark cannot rot. It asserts what the table holds, never
//! how fast anything was: the numbers themselves are docs/benchmarks.md's.

mod common;

use std::process::Command;

#[test]
fn the_mcp_bench_prints_a_row_per_era_reply_and_tool_with_no_failed_call() {
    let out = Command::new(common::BIN)
        .args(["bench", "mock", "--mcp", "--clients", "2"])
        .args(["--warmup-s", "0.1", "--window-s", "0.2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("plimsoll bench mock --mcp — "),
        "{stdout}"
    );
    assert!(
        stdout.contains("calls/s") && stdout.contains("mock µs/call"),
        "{stdout}"
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| {
            w.first()
                .is_some_and(|e| *e == "legacy" || *e == "stateless")
        })
        .collect();
    assert_eq!(rows.len(), 8, "2 eras × 2 replies × 2 tools:\n{stdout}");
    for w in &rows {
        // era reply tool clients calls/s p50 p99 cpu (user+kernel) cores cores rss failed
        assert_eq!(w[3], "2", "{stdout}");
        let calls: f64 = w[4].parse().unwrap();
        assert!(calls > 0.0, "no calls served:\n{stdout}");
        assert_eq!(w.last(), Some(&"0"), "a call failed:\n{stdout}");
    }
}

#[test]
fn the_mcp_bench_refuses_flags_of_the_streaming_bench() {
    let out = Command::new(common::BIN)
        .args(["bench", "mock", "--mcp", "--streams", "10"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = Command::new(common::BIN)
        .args(["bench", "mock", "--clients", "10"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "--clients without --mcp");
}
