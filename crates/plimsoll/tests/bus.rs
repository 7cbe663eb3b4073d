//! Bus steps end to end: the example broker (examples/broker) fanning out and queueing,
//! its planted bugs caught, and a real redis-server's pub/sub over raw TCP.

mod common;
use common::{root, BIN};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

struct Step {
    code: i32,
    result: Value,
    stderr: String,
}

/// `plimsoll run` of a config in a temp dir: the broker's (or `sut`'s) command, one of
/// examples/broker's session files (or `session`'s text).
fn step(name: &str, sut: &str, session: &str, extra: &[&str]) -> Step {
    let dir = std::env::temp_dir().join(format!("plimsoll-bus-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let session_file: PathBuf = if session.contains('\n') {
        std::fs::write(dir.join("session.toml"), session).unwrap();
        dir.join("session.toml")
    } else {
        root().join("examples/broker").join(session)
    };
    std::fs::write(
        dir.join("plimsoll.toml"),
        format!(
            "[sut]\ncommand = {sut}\nready = \"port\"\nready_timeout_s = 20\nstop_grace_s = 2\n[session]\nfile = {:?}\n[step]\ntimeout_s = 60\n",
            session_file.display()
        ),
    )
    .unwrap();
    let out = Command::new(BIN)
        .current_dir(&dir)
        .arg("run")
        .args(extra)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let result = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).expect("RESULT is JSON"))
        .unwrap_or_else(|| panic!("no RESULT; stderr:\n{stderr}"));
    Step {
        code: out.status.code().unwrap_or(-1),
        result,
        stderr,
    }
}

fn broker(switches: &[&str]) -> String {
    let mut words = vec![
        "python3".to_string(),
        root()
            .join("examples/broker/broker.py")
            .display()
            .to_string(),
        "--port".into(),
        "{{port}}".into(),
    ];
    words.extend(switches.iter().map(|s| s.to_string()));
    format!("{words:?}")
}

fn n(v: &Value, key: &str) -> u64 {
    v["bus"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("bus.{key} in {v}"))
}

#[test]
fn fanout_to_100_subscribers_delivers_every_message_once() {
    let s = step("fanout", &broker(&[]), "session.toml", &["-c", "100"]);
    let r = &s.result;
    assert_eq!(s.code, 0, "{}\n{r}", s.stderr);
    assert_eq!(r["outcome"], "ok");
    assert_eq!(
        (n(r, "subscribers"), n(r, "publishers"), n(r, "published")),
        (100, 1, 50)
    );
    assert_eq!((n(r, "expected"), n(r, "delivered")), (5000, 5000));
    assert_eq!(
        (n(r, "lost"), n(r, "duplicated"), n(r, "out_of_order")),
        (0, 0, 0)
    );
    let first = r["bus"]["max_first_message_ms"].as_f64().unwrap();
    let p99 = r["bus"]["p99_delivery_ms"].as_f64().unwrap();
    assert!(first > 0.0 && p99 > 0.0 && p99 < 5000.0, "{r}");
    assert!(r["bus"]["deliver_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(r["turns"], 5000, "a delivery is a turn");
    assert!(
        s.stderr.contains("5000"),
        "the terminal says what was delivered:\n{}",
        s.stderr
    );
}

#[test]
fn dropped_messages_are_lost_and_fail_the_step() {
    let s = step(
        "drop",
        &broker(&["--drop", "0.01"]),
        "session.toml",
        &["-c", "100"],
    );
    let r = &s.result;
    assert_eq!(r["outcome"], "integrity", "{}\n{r}", s.stderr);
    assert_eq!(s.code, 3);
    let lost = n(r, "lost");
    // 1 % of 5,000 deliveries, drawn at random: well inside 10..120.
    assert!((10..120).contains(&lost), "lost {lost}");
    assert_eq!(n(r, "delivered") + lost, 5000);
    assert!(n(r, "subscribers_with_loss") > 0);
    assert!(s.stderr.contains("lost"), "{}", s.stderr);
}

#[test]
fn a_queue_gives_each_message_to_one_consumer_and_reports_fairness() {
    let s = step("queue", &broker(&[]), "queue.toml", &["-c", "10"]);
    let r = &s.result;
    assert_eq!(s.code, 0, "{}\n{r}", s.stderr);
    assert_eq!(r["bus"]["mode"], "queue");
    assert_eq!((n(r, "published"), n(r, "delivered")), (1000, 1000));
    assert_eq!((n(r, "lost"), n(r, "duplicated")), (0, 0));
    let fair = r["bus"]["fairness"].as_f64().unwrap();
    assert!(fair > 0.95 && fair <= 1.0, "round robin is even: {fair}");
}

#[test]
fn a_connection_that_dies_after_n_frames_fails_past_n_only() {
    let session = |m: u32| {
        std::fs::read_to_string(root().join("examples/broker/session.toml"))
            .unwrap()
            .replace("messages = 50", &format!("messages = {m}"))
    };
    let die = broker(&["--die-after", "100"]);
    let under = step("die-under", &die, &session(90), &["-c", "5"]);
    assert_eq!(under.result["outcome"], "ok", "{}", under.stderr);
    let over = step("die-over", &die, &session(150), &["-c", "5"]);
    assert_ne!(over.result["outcome"], "ok", "{}", over.result);
    assert!(over.result["sessions_failed"].as_u64().unwrap() >= 1);
}

#[test]
fn redis_pubsub_over_raw_tcp() {
    if Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIPPED: redis-server is not installed (scripts/test installs the Debian package)"
        );
        return;
    }
    let s = step(
        "redis",
        r#"["redis-server", "--port", "{{port}}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]"#,
        &std::fs::read_to_string(root().join("examples/redis-pubsub/session.toml")).unwrap(),
        &["-c", "50"],
    );
    let r = &s.result;
    assert_eq!(s.code, 0, "{}\n{r}", s.stderr);
    assert_eq!(r["bus"]["transport"], "tcp");
    assert_eq!(
        (n(r, "expected"), n(r, "delivered"), n(r, "lost")),
        (5000, 5000, 0)
    );
    assert!(r["bus"]["p50_delivery_ms"].as_f64().unwrap() > 0.0);
}
