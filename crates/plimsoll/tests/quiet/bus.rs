//! Bus steps end to end: the example broker (examples/broker) fanning out and queueing,
//! its planted bugs caught, and a real redis-server's pub/sub over raw TCP.

use crate::common::{root, BIN};
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
    cmd(name, sut, session, "run", extra)
}

fn cmd(name: &str, sut: &str, session: &str, verb: &str, extra: &[&str]) -> Step {
    // One measured step at a time: steps run side by side on two cores would measure
    // each other (and the driver's lag would call them harness-bound).
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
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
        .arg(verb)
        .args(extra)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if verb == "ramp" {
        return Step {
            code: out.status.code().unwrap_or(-1),
            result: serde_json::from_str(&stdout).expect("ramp --json prints the document"),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        };
    }
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
    assert_eq!(r["outcome"], "ok", "{}\n{r}", s.stderr);
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
fn fanout_over_websocket_and_a_slow_subscriber_stalls_the_others() {
    let s = step("ws", &broker(&[]), "ws.toml", &["-c", "20"]);
    let r = &s.result;
    assert_eq!(r["outcome"], "ok", "{}\n{r}", s.stderr);
    assert_eq!(r["bus"]["transport"], "ws");
    assert_eq!((n(r, "delivered"), n(r, "lost")), (1000, 0));
    let quick = r["bus"]["p99_delivery_ms"].as_f64().unwrap();
    // One subscriber takes 5 ms a message, and the broker delivers in one loop: all 50
    // messages wait behind it, so the last arrive 250 ms or more after they were sent.
    let slow = step(
        "ws-slow",
        &broker(&["--slow-subscriber", "5"]),
        "ws.toml",
        &["-c", "20"],
    );
    let stalled = slow.result["bus"]["p99_delivery_ms"].as_f64().unwrap();
    assert_eq!(n(&slow.result, "lost"), 0, "stalled, not lost");
    // The 250 ms is the slow subscriber's sleeps: a floor no machine lowers. Against the
    // quick run measured here, twice is enough: a delivery time that missed the stall
    // reads about the same as the quick one, while a busy machine slows both runs.
    assert!(
        stalled > 200.0 && stalled > 2.0 * quick,
        "p99 {stalled} ms vs {quick} ms"
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
    assert_eq!(r["outcome"], "ok", "{}\n{r}", s.stderr);
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
    // The same session moved by --set, as a sweep moves it.
    let over = step(
        "die-over",
        &die,
        "session.toml",
        &["-c", "5", "--set", "messages=150"],
    );
    assert_ne!(over.result["outcome"], "ok", "{}", over.result);
    assert!(over.result["sessions_failed"].as_u64().unwrap() >= 1);
    assert!(
        over.stderr.contains("closed publisher-0's connection"),
        "{}",
        over.stderr
    );
}

#[test]
fn a_sweep_over_messages_finds_the_cliff_a_concurrency_ladder_never_reaches() {
    let die = broker(&["--die-after", "100"]);
    let out = std::env::temp_dir().join(format!("plimsoll-bus-sweep-{}", std::process::id()));
    let out_s = out.display().to_string();
    let db = format!("{out_s}-history.db");
    let sweep = cmd(
        "sweep",
        &die,
        "session.toml",
        "ramp",
        &[
            "-c",
            "20",
            "--sweep",
            "messages=50,100,150,200",
            "--history",
            &db,
            "--json",
            "--out",
            &out_s,
        ],
    );
    let rows = &sweep.result["sweep"]["rows"];
    assert_eq!(rows[0]["last_holding"], 100.0, "{}", sweep.stderr);
    assert_eq!(rows[0]["first_failing"], 150.0);
    // The cliff in words beside its facts, in --json and in result.json alike.
    let sentence = rows[0]["sentence"].as_str().unwrap_or_default();
    assert!(
        sentence.starts_with("holds up to messages=100; collapses at messages=150 ("),
        "{}",
        rows[0]
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(file["sweep"]["rows"][0]["sentence"], sentence);
    let cells = sweep.result["sweep"]["cells"].as_array().unwrap();
    assert_eq!(
        cells[3]["standing"], "skipped",
        "a row stops at its collapse"
    );
    assert!(
        sweep.stderr.contains("the cliff lies between 100 and 150"),
        "{}",
        sweep.stderr
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("collapsed</text>"),
        "the heat map"
    );
    let _ = std::fs::remove_dir_all(&out);
    // Recorded, and told again from the history alone.
    let again = Command::new(BIN)
        .args(["report", "1", "--db", &db])
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{told}");
    assert!(
        told.contains("the cliff lies between 100 and 150"),
        "{told}"
    );
    for f in [db.clone(), format!("{db}-wal"), format!("{db}-shm")] {
        let _ = std::fs::remove_file(f);
    }
    // The same broker up a concurrency ladder, to more deliveries than the sweep made:
    // 50 messages a connection never reach the 100 frames that kill one.
    let ladder = cmd(
        "ladder",
        &die,
        "session.toml",
        "ramp",
        &["--ladder", "25,50,100,200", "--no-history", "--json"],
    );
    let steps = ladder.result["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{}", ladder.stderr);
    assert!(
        steps.iter().all(|s| s["outcome"] == "ok"),
        "{}",
        ladder.stderr
    );
    assert_eq!(steps[3]["bus"]["delivered"], 10_000);
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
    assert_eq!(r["outcome"], "ok", "{}\n{r}", s.stderr);
    assert_eq!(r["bus"]["transport"], "tcp");
    assert_eq!(
        (n(r, "expected"), n(r, "delivered"), n(r, "lost")),
        (5000, 5000, 0)
    );
    assert!(r["bus"]["p50_delivery_ms"].as_f64().unwrap() > 0.0);
}
