//! A recorded workload replayed end to end: the example's real trace (24 sessions of the
//! openai-agent example) replayed through the floor agent, exactly and sampled, with the
//! mock answering as recorded and the driver pacing by the recording.

use crate::common::{root, tmp_in_scratch, Scratch, BIN};
use serde_json::Value;
use std::path::Path;

/// A floor agent whose user message carries `{{prompt}}`, a fast provider, and the
/// example's workload.
fn setup(name: &str) -> Scratch {
    let config = Scratch::new("workload", name).file("plimsoll.toml");
    let dir = config.parent().unwrap();
    std::fs::write(
        dir.join("scenario.toml"),
        "seed = 2\n[defaults]\nttft_ms = 5\ntok_ms = 0.05\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "protocol = \"http\"\nurl = \"{{base}}/turn\"\nbody = '{\"session\": \"{{session}}\", \"message\": \"[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] {{prompt}}\"}'\n[headers]\ncontent-type = \"application/json\"\n",
    )
    .unwrap();
    let workload = root().join("examples/openai-agent/traces/workload.json");
    std::fs::write(
        dir.join("plimsoll.toml"),
        format!(
            "[sut]\ncommand = [\"{{{{plimsoll}}}}\", \"floor\", \"--listen\", \"127.0.0.1:{{{{port}}}}\"]\nready_timeout_s = 10\nstop_grace_s = 2\n[mock]\nscenario = \"scenario.toml\"\n[step]\nconcurrency = 8\ntimeout_s = 120\n[workload]\nfile = {:?}\n",
            workload.display()
        ),
    )
    .unwrap();
    config
}

fn result(config: &Path, extra: &[&str]) -> Value {
    let out = tmp_in_scratch(&mut std::process::Command::new(BIN), config)
        .args(["run", "--no-partition", "--json", "--config"])
        .arg(config)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "no RESULT; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

#[test]
fn an_exact_replay_reproduces_calls_tools_tokens_and_think_times() {
    let r = result(&setup("exact"), &["--replay", "exact", "--speed", "4"]);
    let w = &r["workload"];
    assert_eq!(r["outcome"], "ok", "{r}");
    assert_eq!(r["integrity_violations"], 0, "{r}");
    assert_eq!(
        (r["concurrency"].as_u64(), w["mode"].as_str()),
        (Some(24), Some("exact"))
    );
    // Every session: its calls per turn and its tools, in order, as recorded.
    assert_eq!(w["sessions"], 24, "{w}");
    assert_eq!(w["sessions_as_recorded"], 24, "{w}");
    assert_eq!(w["calls"], w["calls_recorded"], "{w}");
    assert_eq!(w["calls"], 220, "{w}");
    let (out, rec) = (
        w["output_tokens"].as_f64().unwrap(),
        w["output_tokens_recorded"].as_f64().unwrap(),
    );
    assert!(
        (out / rec - 1.0).abs() <= 0.01,
        "output tokens {out} against {rec} recorded"
    );
    // Pauses kept: late by a scheduler's wake-up, not by a turn (a bound that a busy
    // machine's few ms cannot cross: 5.24 ms was read here on a busy day).
    assert!(w["think_late_p99_ms"].as_f64().unwrap() <= 100.0, "{w}");
    assert_eq!(
        w["sha256"],
        "350ffb58cc62ead2def2ca8b64a30d09da549c2bfa4709404cf0085a6f006836"
    );
}

#[test]
fn a_sampled_replay_keeps_the_recorded_shape_at_twice_the_sessions() {
    // 48 sessions: two seeded shuffles of the 24 recorded ones, the longest twice.
    let r = result(&setup("sampled"), &["-c", "48"]);
    let w = &r["workload"];
    assert_eq!(r["outcome"], "ok", "{r}");
    assert_eq!(r["integrity_violations"], 0, "{r}");
    assert_eq!(
        (w["mode"].as_str(), w["sessions"].as_u64()),
        (Some("sampled"), Some(48))
    );
    assert_eq!(w["calls"], 440, "{w}");
    for name in ["turns_per_session", "calls_per_turn", "output_tokens"] {
        let f = &w["fit"][name];
        assert_eq!(f["same"], true, "{name}: {f}");
        assert!(f["d"].as_f64().unwrap() <= 0.05, "{name}: {f}");
    }
}

/// A 3-session recorded workload replayed against an agent that offers other tools
/// (issue 40): the floor offers memory_set and memory_get, the recording asks for
/// `lookup_order` where it asked for memory_get. Each session that left the recording
/// names its first difference; the step line says the turns it ran, not "? turns".
#[test]
fn a_replay_against_an_agent_missing_a_recorded_tool_names_the_first_difference() {
    let config = setup("other-tools");
    let dir = config.parent().unwrap();
    let text =
        std::fs::read_to_string(root().join("examples/openai-agent/traces/workload.json")).unwrap();
    let mut w: Value = serde_json::from_str(&text).unwrap();
    // Three sessions that each ask for memory_get somewhere.
    let sessions: Vec<Value> = w["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.to_string().contains("\"memory_get\""))
        .take(3)
        .cloned()
        .collect();
    assert_eq!(sessions.len(), 3);
    w["sessions"] = Value::Array(sessions);
    let renamed = w.to_string().replace("\"memory_get\"", "\"lookup_order\"");
    std::fs::write(dir.join("three.json"), renamed).unwrap();
    let cfg = std::fs::read_to_string(&config).unwrap();
    let cfg = cfg
        .lines()
        .map(|l| match l.starts_with("file = ") {
            true => "file = \"three.json\"".to_string(),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&config, cfg).unwrap();
    let out = std::process::Command::new(BIN)
        .args([
            "run",
            "--no-partition",
            "--replay",
            "exact",
            "--speed",
            "8",
            "--config",
        ])
        .arg(&config)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step: 3 concurrent sessions × "), "{err}");
    assert!(!err.contains("× ? turns"), "{err}");
    assert!(err.contains("turns as recorded"), "{err}");
    assert!(
        err.contains("followed: 0 of 3 sessions as recorded"),
        "{err}"
    );
    assert!(
        err.contains("where 3 sessions left the recording (its first difference):"),
        "{err}"
    );
    let said: Vec<&str> = err.lines().filter(|l| l.contains("(recorded ")).collect();
    assert_eq!(said.len(), 3, "{err}");
    for l in said {
        assert!(
            l.contains(
                "recorded `lookup_order`, a tool the SUT did not offer (the mock called `memory_"
            ),
            "{l}\n{err}"
        );
    }
}
