//! `plimsoll bench mock` (--mcp, --history, --burst), `bench driver` and `bench calls` run end to end for a fraction of a
//! second and prints its table or JSON, so the benchmark cannot rot. It asserts what the table holds, never
//! how fast anything was: the numbers themselves are docs/benchmarks.md's.

use crate::common;
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

fn bench_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(common::BIN)
        .args(["bench", "mock", "--repeat", "1", "--json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn agent_shaped_calls_report_what_the_oracle_and_the_cache_took() {
    let v = bench_json(&[
        "--streams",
        "10",
        "--history",
        "10",
        "--warmup-s",
        "0.5",
        "--window-s",
        "1",
    ]);
    let r = &v["runs"][0];
    assert!(r["request_bytes"].as_u64().unwrap() > 4_000, "{r}");
    assert!(r["requests_ok"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["requests_failed"], 0, "{r}");
    // Text, not a tool call: the delta events counted are the reply's tokens.
    assert!(r["chunks_per_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["oracle_us_per_request"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["cache_us_per_request"].as_f64().unwrap() > 0.0, "{r}");
    let out = Command::new(common::BIN)
        .args([
            "bench",
            "mock",
            "--burst",
            "--history",
            "2",
            "--api",
            "responses",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--history needs --api chat or messages"),
        "{stderr}"
    );
}

#[test]
fn a_burst_measures_every_stream_once_with_the_clients_cpu() {
    let v = bench_json(&["--burst", "--streams", "40", "--burst-s", "0.5"]);
    let r = &v["runs"][0];
    assert_eq!(r["requests_ok"], 40, "{r}");
    assert_eq!(r["requests_failed"], 0, "{r}");
    // 50 tokens a reply, one a chunk.
    assert_eq!(r["chunks"], 40 * 50, "{r}");
    assert!(r["client_cpu_cores"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["mock_cpu_us_per_chunk"].as_f64().unwrap() > 0.0, "{r}");
    // Where a first token's time went: each part measured (the mock's accept-to-request
    // wait comes from its own /plimsoll/timing), and no part above the whole.
    let ms = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    for k in [
        "connect_p99_ms",
        "ttft_err_after_connect_p99_ms",
        "mock_accept_wait_p99_ms",
        "client_wake_late_p99_ms",
    ] {
        assert!(ms(k) > 0.0, "{k}: {r}");
    }
    assert!(ms("connect_p99_ms") <= ms("ttft_err_max_ms"), "{r}");
    assert!(
        ms("ttft_err_after_connect_p99_ms") <= ms("ttft_err_max_ms"),
        "{r}"
    );
}

#[test]
fn the_driver_bench_drives_sessions_and_charges_its_own_threads() {
    let out = Command::new(common::BIN)
        .args(["bench", "driver", "--sessions", "1,4", "--turns", "3"])
        .args(["--window-s", "0.5", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        // A closed loop for half a second against a SUT that answers at once: many turns,
        // none failed, and both the driver's threads and the null SUT's charged.
        assert!(r["turns"].as_u64().unwrap() >= 10, "{r}");
        assert_eq!(r["failed_sessions"], 0, "{r}");
        assert!(r["driver_us_per_turn"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["sut_us_per_turn"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(rows[1]["sessions"], 4);
    // Bad input is refused with the fix.
    let out = Command::new(common::BIN)
        .args(["bench", "driver", "--sessions", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("every count ≥ 1"),
        "{stderr}"
    );
}

#[test]
fn the_calls_bench_places_calls_over_either_transport_and_reads_every_reply() {
    // Both transports in one run: a line of JSON each, in the order asked.
    let out = Command::new(common::BIN)
        .args(["bench", "calls", "--calls", "2", "--turns", "1", "--json"])
        .args(["--transport", "twilio,webrtc"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for (transport, line) in ["twilio", "webrtc"].into_iter().zip(lines) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["transport"], transport, "{v}");
        let r = &v["rows"][0];
        // Two calls of one turn against the bench's bot: each answered, each reply played
        // and read back (over WebRTC: Opus both ways, through the jitter buffer).
        assert_eq!(r["calls"], 2, "{v}");
        assert_eq!(r["calls_failed"], 0, "{transport}: {v}\n{stderr}");
        assert_eq!(r["turns"], 2, "{transport}: {v}");
        assert_eq!(r["replies_read"], 2, "{transport}: {v}");
        assert!(
            r["harness_cpu_ms_per_call_s"].as_f64().unwrap() > 0.0,
            "{v}"
        );
        // Where the CPU went: the harness on the clock and off it (speaking, hearing and,
        // over WebRTC, decoding the bot's Opus) together are what it spent.
        let (on, off) = (
            r["cpu"]["on_clock_cores"].as_f64().unwrap(),
            r["cpu"]["off_clock_cores"].as_f64().unwrap(),
        );
        let total = r["harness_cpu_cores"].as_f64().unwrap();
        assert!(on > 0.0 && off > 0.0, "{transport}: {v}");
        assert!((on + off - total).abs() < 1e-6, "{transport}: {v}");
        assert_eq!(r["kept_time"], r["filled_first"].is_null(), "{v}");
    }
    let out = Command::new(common::BIN)
        .args(["bench", "calls", "--transport", "sip"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("twilio") && stderr.contains("webrtc"),
        "{stderr}"
    );
}

/// kill -9 of a bench that runs its mock and its null SUT as processes of their own, with
/// a scratch directory: its watchdog kills them and removes the directory.
#[test]
fn a_killed_bench_leaves_no_mock_sut_or_scratch_dir() {
    for args in [
        &[
            "bench",
            "mock",
            "--audio",
            "--audio-streams",
            "20",
            "--warmup-s",
            "30",
        ][..],
        &["bench", "driver", "--sessions", "4", "--window-s", "30"][..],
    ] {
        let mut child = Command::new(common::BIN)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Until its mock or null SUT is up (a bound, not a timing: a bug never starts one).
        let started = || -> Vec<u32> {
            common::children_of(pid)
                .into_iter()
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                        let c = String::from_utf8_lossy(&c);
                        c.contains("mock\0--listen") || c.contains("null-sut")
                    })
                })
                .collect()
        };
        assert!(
            common::within(30.0, || !started().is_empty()),
            "{args:?}: its mock or SUT never started"
        );
        let started = started();
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let _ = child.wait();
        let scratch = format!("plimsoll-scratch-{pid}-");
        let left = || -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(std::env::temp_dir())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with(&scratch))
                .collect();
            names.extend(
                started
                    .iter()
                    .filter(|&&p| common::alive(p))
                    .map(|p| format!("pid {p}")),
            );
            names
        };
        assert!(
            common::within(5.0, || left().is_empty()),
            "{args:?} killed, left behind: {:?}",
            left()
        );
    }
}

#[test]
fn the_probe_bench_times_each_reading_and_reads_pss_of_a_forked_tree() {
    let out = Command::new(common::BIN)
        .args(["bench", "probe", "--threads", "20", "--samples", "8"])
        .args(["--memory-mb", "64", "--forks", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("plimsoll bench probe — "), "{stdout}");
    assert!(stdout.contains("time per sample: median "), "{stdout}");
    // Three processes share the 64 MB the first wrote: by PSS, once (not three times).
    let pss = stdout
        .lines()
        .find(|l| l.starts_with("PSS (each process's smaps_rollup: 3 processes, "))
        .unwrap_or_else(|| panic!("no PSS line for 3 processes:\n{stdout}"));
    let mb: f64 = pss
        .split(", ")
        .nth(1)
        .and_then(|w| w.split(' ').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{pss}"));
    assert!((64.0..130.0).contains(&mb), "{mb} MB by PSS: {pss}");
    assert!(pss.contains("µs a read; paced to 0.5 % of a core"), "{pss}");
}
