//! A step driven from several processes: four shards against one SUT and one shared
//! mock, merged, against one driver running the same schedule — the same counters, the
//! same percentiles within what the latencies themselves vary — and the merges that must
//! say "unknown" (a shard missing, one twice, one late).

use crate::common::{self, root, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Children killed when the test ends, however it ends.
struct Procs(Vec<Child>);

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16) {
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {port}");
}

/// A shared mock and the floor agent pointed at it, as a cluster would have them running.
fn rig() -> (Procs, String, String) {
    let (mp, sp) = (free_port(), free_port());
    let mock = Command::new(BIN)
        .args([
            "mock",
            "--listen",
            &format!("127.0.0.1:{mp}"),
            "--seed",
            "1",
        ])
        .arg("--scenario")
        .arg(root().join("scenarios/memory.toml"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(mp);
    let sut = floor(sp, mp);
    wait_for(sp);
    (
        Procs(vec![mock, sut]),
        format!("http://127.0.0.1:{sp}"),
        format!("http://127.0.0.1:{mp}"),
    )
}

/// The floor agent on `sp`, its provider the mock on `mp`.
fn floor(sp: u16, mp: u16) -> Child {
    Command::new(BIN)
        .args([
            "floor",
            "--listen",
            &format!("127.0.0.1:{sp}"),
            "--model",
            "memory",
        ])
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{mp}/v1"))
        .env("OPENAI_API_KEY", "x")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn config() -> PathBuf {
    root().join("examples/floor/plimsoll.toml")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plimsoll-shards-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn shard_cmd(target: &str, mock: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("run")
        .arg("--config")
        .arg(config())
        .args(["--target", target, "--mock", mock])
        .args(extra);
    c
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// N shards started together against the rig, into `dir`. The shared start is 3 s ahead:
/// a shard that begins over a second after it is called late (the merge's tolerance), and
/// four processes starting at once on a busy 2-core machine can take a second or two.
fn shards(target: &str, mock: &str, n: usize, dir: &Path, extra: &[&str]) {
    let at = format!("{:.3}", now_s() + 3.0);
    let kids: Vec<Child> = (0..n)
        .map(|i| {
            shard_cmd(target, mock, extra)
                .args(["--shard", &format!("{i}/{n}"), "--start-at", &at])
                .arg("--shard-dir")
                .arg(dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn result_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT: {}", String::from_utf8_lossy(&out.stderr)));
    serde_json::from_str(line).unwrap()
}

fn merge(dirs: &[&Path]) -> Output {
    Command::new(BIN).arg("merge").args(dirs).output().unwrap()
}

fn close(a: &Value, b: &Value, key: &str, within: f64) {
    let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
    assert!(
        (x - y).abs() <= within * y,
        "{key}: merged {x} vs one driver {y} (within {within})"
    );
}

/// The merged shards against one driver on the same schedule: counters equal, the
/// percentiles as near as two runs of the one driver are to each other on a busy machine.
/// A merge that reads one shard's figures or adds the shards' is off by 4× (or by a
/// quarter for a shard left out): that is what the tolerances still catch. The mock's own
/// time (`ideal_session_ms`) is the same schedule on both sides, so it stays close.
fn same_run(merged: &Value, one: &Value, sessions: u64) {
    for key in [
        "sessions_ok",
        "turns",
        "llm_calls",
        "sessions_failed",
        "integrity_violations",
    ] {
        assert_eq!(merged[key], one[key], "{key}");
    }
    assert_eq!(merged["sessions_ok"].as_u64(), Some(sessions));
    assert_eq!(
        merged["llm_calls"].as_u64(),
        Some(sessions * 9),
        "3 turns × 3 LLM calls"
    );
    for (key, tolerance) in [
        ("p50_session_ms", 0.2),
        ("p99_session_ms", 0.5),
        ("p50_turn_ms", 0.2),
        ("ideal_session_ms", 0.05),
        ("turns_per_s", 0.2),
    ] {
        close(merged, one, key, tolerance);
    }
    assert_eq!(merged["outcome"], "ok");
    assert_eq!(merged["shards"]["merged"], 4);
}

#[test]
fn four_shards_merge_to_what_one_driver_measures_closed_and_open() {
    let (_procs, target, mock) = rig();
    for (name, extra) in [
        ("closed", vec!["-c", "40"]),
        ("open", vec!["-c", "40", "--rate", "40"]),
    ] {
        let dir = scratch(name);
        shards(&target, &mock, 4, &dir, &extra);
        let out = merge(&[&dir]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let merged = result_of(&out);
        let one = shard_cmd(&target, &mock, &extra).output().unwrap();
        assert_eq!(
            one.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&one.stderr)
        );
        let one = result_of(&one);
        same_run(&merged, &one, 40);
        if name == "open" {
            assert_eq!(merged["arrival_rate_per_s"], 40.0);
            assert_eq!(merged["sessions"], 40);
        } else {
            assert_eq!(merged["concurrency"], 40);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_missing_a_doubled_or_a_late_shard_gives_unknown() {
    let (_procs, target, mock) = rig();
    let dir = scratch("gaps");
    shards(&target, &mock, 4, &dir, &["-c", "8"]);
    // One shard's files twice (a restarted pod): unknown, exit 5.
    let twice = scratch("gaps-twice");
    std::fs::create_dir_all(&twice).unwrap();
    for ext in ["json", "hlog"] {
        let f = format!("shard-3-of-4.{ext}");
        std::fs::copy(dir.join(&f), twice.join(&f)).unwrap();
    }
    let out = merge(&[&dir, &twice]);
    assert_eq!(out.status.code(), Some(5));
    let r = result_of(&out);
    assert_eq!(r["outcome"], "unknown");
    assert!(r["p50_session_ms"].is_null() && r["turns_per_s"].is_null());
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard 3 of 4 ran twice"));
    // One missing.
    std::fs::remove_file(dir.join("shard-1-of-4.json")).unwrap();
    let out = merge(&[&dir]);
    assert_eq!(out.status.code(), Some(5));
    let r = result_of(&out);
    assert!(r["shards"]["unknown"]
        .as_str()
        .unwrap()
        .contains("shard 1 of 4 missing"));
    assert_eq!(r["sessions_ok"], 6, "what the three shards drove, no more");
    // One begun two seconds after the shared start.
    let late = scratch("late");
    let at = format!("{:.3}", now_s() + 0.5);
    let first = shard_cmd(
        &target,
        &mock,
        &["-c", "4", "--shard", "0/2", "--start-at", &at],
    )
    .arg("--shard-dir")
    .arg(&late)
    .output()
    .unwrap();
    assert!(first.status.success());
    std::thread::sleep(Duration::from_millis(1500));
    let second = shard_cmd(
        &target,
        &mock,
        &["-c", "4", "--shard", "1/2", "--start-at", &at],
    )
    .arg("--shard-dir")
    .arg(&late)
    .output()
    .unwrap();
    assert!(second.status.success());
    let out = merge(&[&late]);
    assert_eq!(out.status.code(), Some(5));
    let why = result_of(&out)["shards"]["unknown"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        why.contains("shard 1 began") && why.contains("after the shared start"),
        "{why}"
    );
    for d in [dir, twice, late] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_shard_without_its_target_or_start_is_told_what_to_add() {
    let out = Command::new(BIN)
        .arg("run")
        .arg("--config")
        .arg(config())
        .args(["--shard", "1/4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--target http://HOST:PORT"));
    let out = shard_cmd(
        "http://127.0.0.1:9",
        "http://127.0.0.1:9",
        &["--shard", "1/4"],
    )
    .output()
    .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --start-at"));
    let out = shard_cmd(
        "http://10.1.2.3:80",
        "http://127.0.0.1:9",
        &["--shard", "0/1"],
    )
    .output()
    .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--allow-remote"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let empty = scratch("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = merge(&[&empty]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no shard-I-of-N.json"));
    let _ = std::fs::remove_dir_all(empty);
}

/// The containers `plimsoll k8s` renders, run here as a cluster would run them: the mock
/// from the Deployment, four driver pods from the Indexed Job (JOB_COMPLETION_INDEX set,
/// started a second apart: they meet at the mock's barrier), and the merge Job, which
/// waits at the mock for their files and prints the one RESULT. Watched live, each pod
/// pushes its figures to a collector: their last pushes add up to the merge's RESULT.
#[test]
fn the_rendered_jobs_run_a_sharded_step_end_to_end() {
    let exp = scratch("experiment");
    let collector = common::otlp::Receiver::start();
    let out = Command::new(BIN)
        .args([
            "k8s",
            "--shards",
            "4",
            "--target",
            "http://agent:8080",
            "--image",
            "i",
        ])
        .args(["--run-id", "r-e2e", "-c", "24", "--prometheus", "--otlp"])
        .args(["http://otel-collector:4318", "--config"])
        .arg(config())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = text
        .split("\n---\n")
        .skip(1)
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kind = |k: &str, component: &str| {
        docs.iter()
            .find(|d| {
                d["kind"] == k
                    && d["metadata"]["labels"]["app.kubernetes.io/component"] == component
            })
            .unwrap()
            .clone()
    };
    // The ConfigMap's files where the pods mount them.
    std::fs::create_dir_all(&exp).unwrap();
    for (name, body) in kind("ConfigMap", "experiment")["data"].as_object().unwrap() {
        std::fs::write(exp.join(name), body.as_str().unwrap()).unwrap();
    }
    let (mp, sp) = (free_port(), free_port());
    let local = |s: &str| {
        s.replace("/experiment", exp.to_str().unwrap())
            .replace("0.0.0.0:8700", &format!("127.0.0.1:{mp}"))
            .replace(
                "http://plimsoll-mock:8700",
                &format!("http://127.0.0.1:{mp}"),
            )
            .replace("http://agent:8080", &format!("http://127.0.0.1:{sp}"))
            .replace("http://otel-collector:4318", &collector.url)
            // Four pods on one host: each its own port, and no linger for a scrape.
            .replace("0.0.0.0:9466", "127.0.0.1:0")
            .replace("--live-linger", "--otlp-every")
    };
    let container = |d: &Value| d["spec"]["template"]["spec"]["containers"][0].clone();
    let command = |c: &Value| {
        let mut cmd = Command::new(BIN);
        for a in c["args"].as_array().unwrap() {
            cmd.arg(local(a.as_str().unwrap()));
        }
        for e in c["env"].as_array().into_iter().flatten() {
            cmd.env(
                e["name"].as_str().unwrap(),
                local(e["value"].as_str().unwrap()),
            );
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    };
    let mut procs = Procs(Vec::new());
    // The drivers start before the mock is up, as pods may.
    let driver = container(&kind("Job", "driver"));
    let mut pods = Vec::new();
    for i in 0..4 {
        pods.push(
            command(&driver)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .spawn()
                .unwrap(),
        );
        std::thread::sleep(Duration::from_millis(400));
    }
    procs.0.push(
        command(&container(&kind("Deployment", "mock")))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(mp);
    procs.0.push(floor(sp, mp));
    let merge = command(&container(&kind("Job", "merge"))).spawn().unwrap();
    for p in pods {
        let o = p.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let out = merge.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = result_of(&out);
    assert_eq!(r["outcome"], "ok");
    assert_eq!(
        (r["sessions_ok"].as_u64(), r["turns"].as_u64()),
        (Some(24), Some(72))
    );
    assert_eq!(
        common::otlp::shards_added(&collector.bodies(), "r-e2e", 4, 24),
        (24, 72, 72),
        "{r}"
    );
    assert_eq!(r["llm_calls"], 24 * 9);
    assert_eq!(r["shards"]["merged"], 4);
    assert!(
        r["shards"]["late_start_ms_max"].as_f64().unwrap() < 500.0,
        "{r}"
    );
    let _ = std::fs::remove_dir_all(&exp);
}
