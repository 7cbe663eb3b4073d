//! `plimsoll run` end to end: the real binary, real SUT processes on loopback.

use crate::common::*;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn floor_step_is_ok_and_the_result_matches_the_schema() {
    let r = run(
        &root().join("examples/floor/plimsoll.toml"),
        &["--concurrency", "30"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.result.expect("a RESULT line");
    result::schema::check(&v).unwrap();
    assert_eq!(v["outcome"], "ok");
    assert_eq!(
        (
            v["concurrency"].as_u64(),
            v["sessions_ok"].as_u64(),
            v["turns"].as_u64()
        ),
        (Some(30), Some(30), Some(90))
    );
    // The memory scenario: 3 model calls per turn.
    assert_eq!(v["llm_calls"], 270);
    assert_eq!(v["integrity_violations"], 0);
    let inflation = v["latency_inflation"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&inflation), "{inflation}");
    assert!(v["peak_threads"].as_u64().unwrap() >= 2);
    assert!(v["peak_rss_mb"].as_f64().unwrap() > 1.0);
    assert_eq!(r.code == 4, v["harness"]["bound"] == "harness");
    assert!(r.stderr.contains("outcome: ok"), "{}", r.stderr);
    the_harness_cpu_is_told_by_part(&v, &r.stderr);
}

/// The parts add up to the total, each part that surely worked shows CPU, the total
/// agrees with the share RESULT gives, and the step line names the largest.
fn the_harness_cpu_is_told_by_part(v: &serde_json::Value, stderr: &str) {
    let p = &v["harness"]["parts"];
    let sec = |k: &str| {
        p[k]["cpu_sec"]
            .as_f64()
            .unwrap_or_else(|| panic!("{k}: {p}"))
    };
    let named = result::harness::HarnessParts::default()
        .named()
        .map(|(name, _)| name);
    let sum: f64 = named.iter().map(|k| sec(k)).sum();
    assert!((sum - sec("total")).abs() < 0.001, "{sum} vs {p}");
    for k in ["driver", "mock_serving", "mock_oracle", "probe_sampling"] {
        assert!(sec(k) > 0.0, "{k} took no CPU: {p}");
    }
    let turns = v["turns"].as_f64().unwrap();
    let per_turn = p["total"]["ms_per_turn"].as_f64().unwrap();
    assert!(
        (per_turn - sec("total") * 1000.0 / turns).abs() < 0.01,
        "{p}"
    );
    // The share of the machine is of the cores Plimsoll ran on (it may be pinned to one).
    let share = sec("total") / (v["wall_ms"].as_f64().unwrap() / 1000.0);
    let said = v["harness"]["cpu_share"].as_f64().unwrap();
    assert!(
        said <= share + 0.006 && said >= share / 2.0 - 0.006,
        "{share} {v}"
    );
    // The part the line names first is the largest, as far as RESULT's rounding (to a
    // tenth of a CPU millisecond) tells: two parts that tie there may be named either way
    // (CI 2026-12-06: the mock's serving and the probe's sampling, 0.22 ms a turn each).
    let most = named.iter().map(|k| sec(k)).fold(0.0, f64::max);
    let first = named
        .iter()
        .find(|k| stderr.contains(&format!("; most in {} (", report::harness::words(k))))
        .unwrap_or_else(|| panic!("no part named first: {stderr}"));
    assert!(
        sec(first) >= most - 0.00011,
        "{first} is not the largest: {p}\n{stderr}"
    );
}

#[test]
fn a_sut_that_dies_mid_step_is_a_collapse() {
    let cfg = config(
        "crash",
        &format!("[\"timeout\", \"-s\", \"TERM\", \"1\", {BIN:?}, \"floor\", \"--listen\", \"127.0.0.1:{{{{port}}}}\"]"),
        "[step]\nconcurrency = 10\n",
    );
    let r = run(&cfg, &[]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v = r.result.unwrap();
    assert_eq!(v["outcome"], "crashed", "{v}");
    assert!(v["sessions_failed"].as_u64().unwrap() > 0);
    assert!(
        v["errors_by_kind"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k == "connect" || k == "protocol"),
        "{v}"
    );
}

#[test]
fn a_sut_that_never_gets_ready_is_a_clear_error() {
    let cfg = config(
        "unready",
        "[\"sh\", \"-c\", \"echo warming up forever; sleep 60\"]",
        "",
    );
    let cfg_text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("ready_timeout_s = 10", "ready_timeout_s = 1");
    std::fs::write(&cfg, cfg_text).unwrap();
    let r = run(&cfg, &[]);
    assert_eq!(r.code, 1);
    assert!(r.result.is_none());
    assert!(
        r.stderr.contains("not ready after 1 s") && r.stderr.contains("warming up forever"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_config_names_file_line_and_field() {
    let cfg = config("bad", "[\"x\"]", "[step]\nconcurrency = -3\n");
    let r = run(&cfg, &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("plimsoll.toml:8: step.concurrency must be between 1 and 1000000 (got -3)"),
        "{}",
        r.stderr
    );
}

#[test]
fn ctrl_c_stops_the_sut_and_leaves_no_orphans() {
    let child = Command::new(BIN)
        .args(["run", "--config"])
        .arg(root().join("examples/floor/plimsoll.toml"))
        .args(["--concurrency", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the SUT is up (a child process of plimsoll), then interrupt mid-step: up
    // to 10 s, as a busy machine may take seconds to start it (the loop ends once it is).
    let mut sut = Vec::new();
    for _ in 0..500 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        sut = sut_children(child.id());
        if !sut.is_empty() {
            break;
        }
    }
    assert!(!sut.is_empty(), "the SUT never started");
    std::thread::sleep(std::time::Duration::from_millis(400));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    // Gone within 5 s (a quiet machine: at once); one that survived Ctrl-C never goes.
    for p in sut {
        assert!(within(5.0, || !alive(p)), "SUT process {p} survived Ctrl-C");
    }
}

/// A SUT that leaks 16 MB per turn in a cgroup capped at 64 MB: the kernel OOM-kills it
/// and the step names the cause from the cgroup's own counter. Needs a writable cgroup v1
/// memory hierarchy (this project's machines have one); elsewhere it is skipped.
#[test]
fn an_oom_kill_in_the_suts_cgroup_is_named() {
    let cg = PathBuf::from(format!(
        "/sys/fs/cgroup/memory/plimsoll-oom-test-{}",
        std::process::id()
    ));
    if std::fs::create_dir(&cg).is_err() {
        eprintln!("no writable cgroup v1 memory hierarchy; skipping");
        return;
    }
    let _ = std::fs::write(cg.join("memory.memsw.limit_in_bytes"), "-1");
    std::fs::write(cg.join("memory.limit_in_bytes"), "67108864").unwrap();
    let server = LEAKY_SERVER;
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec python3 -c \"$SERVER\"",
        cg.display()
    );
    let cfg = config(
        "oom",
        &format!("[\"sh\", \"-c\", {script:?}]\nenv = {{ SERVER = {server:?} }}"),
        "[step]\nconcurrency = 4\n",
    );
    let r = run(&cfg, &[]);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let _ = std::fs::remove_dir(&cg);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v = r.result.unwrap();
    assert_eq!(v["outcome"], "oom_killed", "{v}");
    assert!(v["cgroup_oom_kills"].as_u64().unwrap() >= 1, "{v}");
    assert!(r.stderr.contains("OOM-killed"), "{}", r.stderr);
    // The kinds apart, as sampled: the kernel keeps a peak of the whole (64 MB here), not
    // of each kind, so a leak that fills the cap between two samples reads lower by kind.
    let anon = v["cgroup_anon_peak_mb"].as_f64().unwrap_or(0.0);
    assert!(anon > 0.0 && anon <= 64.0, "{v}");
    assert!(
        r.stderr.contains("cgroup (the SUT's own): peak ") && r.stderr.contains("MB anonymous"),
        "{}",
        r.stderr
    );
}

/// First contact: `init` writes files that `check` runs as they are, from the directory
/// that holds them with default flags; `check` explains a system that never calls the mock.
#[test]
fn init_then_check_from_the_config_directory() {
    let dir = std::env::temp_dir().join(format!("plimsoll-init-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sh = |args: &[&str], cwd: &std::path::Path| {
        let o = Command::new(BIN)
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let floor = format!("'{BIN}' floor --listen 127.0.0.1:{{{{port}}}}");
    let (code, err) = sh(
        &["init", "--command", &floor, "--url", "{{base}}/turn"],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("next: plimsoll check"), "{err}");
    let (code, err) = sh(&["check"], &dir);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("OK: 6 turns went through in 2 sessions side by side"),
        "{err}"
    );
    let (code, err) = sh(&["init", "--command", "x"], &dir);
    assert_eq!(code, 1);
    assert!(err.contains("already exists"), "{err}");
    // A system that answers but never asks an LLM: Plimsoll's own mock as the SUT.
    let quiet = dir.join("quiet");
    let mock = format!("'{BIN}' mock --listen 127.0.0.1:{{{{port}}}}");
    let (code, err) = sh(
        &["init", "--openai", "--dir", "quiet", "--command", &mock],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    let (code, err) = sh(&["check"], &quiet);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("the SUT never called the mock"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The LiteLLM-like case, the way a new user meets it: `plimsoll init --openai` for an
/// OpenAI-compatible proxy in front of the mock, then `plimsoll run` as written. The
/// `openai-chat` client resends the conversation: multi-turn, history checking on, not one
/// integrity violation. (examples/openai-proxy runs the same proxy streamed.)
#[test]
fn a_chat_client_drives_an_openai_compatible_proxy_with_history_on() {
    let dir = std::env::temp_dir().join(format!("plimsoll-openai-init-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let proxy = root().join("examples/openai-proxy/proxy.py");
    let init = Command::new(BIN)
        .args(["init", "--openai", "--dir"])
        .arg(&dir)
        .arg("--command")
        .arg(format!("python3 '{}'", proxy.display()))
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let out = Command::new(BIN)
        .args(["run", "--concurrency", "4"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r: serde_json::Value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap_or_else(|| panic!("no RESULT\n{err}"));
    assert_eq!(r["outcome"], "ok", "{r}\n{err}");
    assert_eq!(r["integrity_violations"], 0, "{r}");
    assert_eq!(
        (r["sessions_ok"].as_u64(), r["turns"].as_u64()),
        (Some(4), Some(12))
    );
    // One LLM call a turn, each carrying the whole conversation so far.
    assert_eq!(r["llm_calls"], 12, "{r}");
    let streamed = Command::new(BIN)
        .args(["run", "--concurrency", "2"])
        .current_dir(root().join("examples/openai-proxy"))
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&streamed.stdout).to_string();
    let r: serde_json::Value = line
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap();
    assert_eq!(
        (r["outcome"].as_str(), r["integrity_violations"].as_u64()),
        (Some("ok"), Some(0))
    );
    assert!(
        r["p50_ttft_ms"].as_f64().is_some(),
        "a streamed chat has a TTFT: {r}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same proxy spoken to as the Anthropic Messages API, streamed: the conversation's
/// content blocks go back every turn; history on, no violation, a TTFT per turn.
#[test]
fn a_messages_client_drives_the_proxy_with_history_on() {
    let dir = std::env::temp_dir().join(format!("plimsoll-anthropic-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let proxy = root().join("examples/openai-proxy/proxy.py");
    std::fs::write(
        dir.join("plimsoll.toml"),
        format!(
            "[sut]\ncommand = [\"python3\", {:?}]\nready_path = \"/health\"\n",
            proxy.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "protocol = \"anthropic-messages\"\nurl = \"{{base}}/v1/messages\"\nstream = true\nturns = 3\n[headers]\ncontent-type = \"application/json\"\nanthropic-version = \"2023-06-01\"\n[[check]]\npointer = \"/content/0/text\"\npresent = true\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--concurrency", "3"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let r: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.strip_prefix("RESULT ")
                .map(|j| serde_json::from_str(j).unwrap())
        })
        .unwrap_or_else(|| panic!("no RESULT\n{err}"));
    assert_eq!(r["outcome"], "ok", "{r}\n{err}");
    assert_eq!(
        (r["integrity_violations"].as_u64(), r["llm_calls"].as_u64()),
        (Some(0), Some(9)),
        "{r}"
    );
    assert!(r["p50_ttft_ms"].as_f64().is_some(), "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every subcommand that reads a config works from the config's own directory with the
/// default `--config`, from the repository root, and from anywhere else with an absolute
/// path: paths in the files count from the file, never from where Plimsoll was started.
#[test]
fn every_subcommand_runs_from_the_config_dir_the_root_and_elsewhere() {
    let floor = root().join("examples/floor");
    let cfg = floor.join("plimsoll.toml");
    let elsewhere = std::env::temp_dir();
    let places: [(&std::path::Path, Vec<String>); 3] = [
        (&floor, vec![]),
        (
            &root(),
            vec!["--config".into(), "examples/floor/plimsoll.toml".into()],
        ),
        (
            &elsewhere,
            vec!["--config".into(), cfg.display().to_string()],
        ),
    ];
    let commands: [&[&str]; 4] = [
        &["run", "--concurrency", "2"],
        &["ramp", "--ladder", "2", "--no-history", "--no-cap"],
        &[
            "compare",
            "--base-cmd",
            "{{plimsoll}} floor --listen 127.0.0.1:{{port}}",
            "--branch-cmd",
            "{{plimsoll}} floor --listen 127.0.0.1:{{port}}",
            "--ladder",
            "2",
            "--repeat",
            "1",
            "--no-history",
            "--no-cap",
        ],
        &["check"],
    ];
    for (dir, config) in &places {
        for c in commands {
            let out = Command::new(BIN)
                .args(c)
                .args(config)
                .current_dir(dir)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{c:?} {config:?} in {}: {err}",
                dir.display()
            );
            assert!(
                !err.contains("Some("),
                "Rust debug text on the terminal: {err}"
            );
        }
    }
}

/// A SUT that cannot start: one clear message, exit 1, and no scratch directory left in
/// Plimsoll's temp dir.
#[test]
fn a_sut_that_cannot_start_leaves_no_scratch_dir() {
    let tmp = std::env::temp_dir().join(format!("plimsoll-tmp-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let cfg = config("nostart", "[\"no-such-agent-xyz\"]", "");
    let out = Command::new(BIN)
        .args(["run", "--config"])
        .arg(&cfg)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no-such-agent-xyz is not on PATH"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The responsiveness probe: a GET /health every 100 ms beside the load. Against the
/// CPU-bound floor under a 1-core cap it stays near its idle value with one session and
/// rises when the SUT is saturated; the SUT's run-queue wait rises with it.
#[test]
fn the_probe_rises_when_the_sut_saturates() {
    let dir = root().join("examples/cpu-bound");
    let probe = |c: &str| -> serde_json::Value {
        let out = Command::new(BIN)
            .args([
                "run", "--json", "--cpus", "1", "--probe", "/health", "-c", c,
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout).to_string();
        serde_json::from_str(line.trim().strip_prefix("RESULT ").unwrap()).unwrap()
    };
    let p99 = |r: &serde_json::Value| r["probe_p99_ms"].as_f64().unwrap();
    let wait = |r: &serde_json::Value| r["sched_delay_ms_per_s"].as_f64().unwrap();
    // Alone on the machine: idle p99 ~3 ms, saturated 16-24 ms. Beside the other tests
    // of this file (run in parallel) one pair read 5.2 against 10.1: a timing figure on a
    // shared machine gets a second pair before it is called a failure. Both rises are
    // judged on the same pair, each against the idle run measured beside it.
    let (idle, _busy) = (0..2)
        .map(|_| (probe("1"), probe("24")))
        .find(|(idle, busy)| {
            p99(busy) > 3.0 * p99(idle).max(2.0) && wait(busy) > 10.0 * wait(idle).max(1.0)
        })
        .unwrap_or_else(|| {
            panic!("the probe's p99 or the run-queue wait did not rise with saturation, twice")
        });
    // Idle, the probe answers within a scheduler's wake-up (~1 ms here); the bound is
    // one a busy machine's noise cannot cross, the rise above is the check that matters.
    assert!(idle["probe_p50_ms"].as_f64().unwrap() < 20.0, "{idle}");
}
