//! `plimsoll run` end to end: the real binary, real SUT processes on loopback.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

struct Run {
    code: i32,
    result: Option<serde_json::Value>,
    stderr: String,
}

fn run(config: &Path, extra: &[&str]) -> Run {
    let out = Command::new(BIN)
        .arg("run")
        .arg("--config")
        .arg(config)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let result = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).expect("RESULT is JSON"));
    Run {
        code: out.status.code().unwrap_or(-1),
        result,
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// A config in a temp dir next to a copy of the floor's session file.
fn config(name: &str, sut_command: &str, extra: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plimsoll-run-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("examples/floor/session.toml"),
        dir.join("session.toml"),
    )
    .unwrap();
    let scenario = root().join("scenarios/memory.toml");
    std::fs::write(
        dir.join("plimsoll.toml"),
        format!("[sut]\ncommand = {sut_command}\nready_timeout_s = 10\nstop_grace_s = 2\n[mock]\nscenario = {:?}\n{extra}\n", scenario.display()),
    )
    .unwrap();
    dir.join("plimsoll.toml")
}

#[test]
fn floor_step_is_ok_and_the_result_matches_the_schema() {
    let r = run(
        &root().join("examples/floor/plimsoll.toml"),
        &["--concurrency", "30"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.result.expect("a RESULT line");
    ramp::schema::check(&v).unwrap();
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

/// A Python SUT that keeps 16 MB per turn it serves: made to be OOM-killed.
const LEAKY_SERVER: &str = r#"
import http.server, os, json
leak = []
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'ok')
    def do_POST(self):
        self.rfile.read(int(self.headers['content-length']))
        leak.append(bytearray(16 << 20))
        body = json.dumps({"reply": "Remembered and recalled fact"}).encode()
        self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers(); self.wfile.write(body)
http.server.ThreadingHTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()
"#;

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            if rest
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u32>().ok())
                == Some(pid)
            {
                out.push(p);
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
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
    // Wait until the SUT is up (a child process of plimsoll), then interrupt mid-step.
    let mut sut = Vec::new();
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        sut = children_of(child.id());
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
    std::thread::sleep(std::time::Duration::from_millis(200));
    for p in sut {
        assert!(!alive(p), "SUT process {p} survived Ctrl-C");
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
}

/// Runs `plimsoll ramp`; also returns how many cgroups that process left behind.
fn ramp_with_pid(config: &Path, extra: &[&str]) -> (i32, serde_json::Value, String, usize) {
    let child = Command::new(BIN)
        .arg("ramp")
        .arg("--config")
        .arg(config)
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let prefix = format!("plimsoll-{}-", child.id());
    let out = child.wait_with_output().unwrap();
    let left = [
        "/sys/fs/cgroup/memory",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flat_map(|rd| rd.flatten())
    .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
    .count();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = serde_json::from_str(stdout.lines().last().unwrap_or("null"))
        .unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap_or(-1),
        doc,
        String::from_utf8_lossy(&out.stderr).to_string(),
        left,
    )
}

fn ramp(config: &Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let (code, doc, err, _) = ramp_with_pid(config, extra);
    (code, doc, err)
}

#[test]
fn ramp_writes_its_reports_and_leaves_no_cgroups() {
    let out = std::env::temp_dir().join(format!("plimsoll-ramp-test-{}", std::process::id()));
    let (code, doc, err, left) = ramp_with_pid(
        &root().join("examples/floor/plimsoll.toml"),
        &[
            "--ladder",
            "4,8,16",
            "--host",
            "64GB,16cpu",
            "--target",
            "100000",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 3);
    assert_eq!(doc["analysis"]["ceiling"], 16);
    assert_eq!(doc["analysis"]["no_collapse"], true);
    assert!(doc["analysis"]["usl"]["refused"]
        .as_str()
        .unwrap()
        .contains("at least 4"));
    assert!(doc["analysis"]["capacity"]["hosts"].as_u64().unwrap() >= 1);
    let method = doc["steps"][0]["cap"]["method"].as_str().unwrap();
    assert_eq!(doc["environment"]["cap"]["method"], method);
    assert!(["cgroup-v1", "cgroup-v2", "affinity"].contains(&method));
    assert!(
        err.contains("| sessions |") && err.contains("widen the ladder"),
        "{err}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| sessions |") && md.contains("Capacity projection"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["steps"], doc["steps"]);
    assert_eq!(left, 0, "a cgroup was left behind");
    let _ = std::fs::remove_dir_all(&out);
}

/// The main job: under a 100 MB cap, a SUT that leaks 16 MB per turn holds one session
/// of 3 turns and is OOM-killed at two; the ramp names the collapse and the ceiling.
#[test]
fn ramp_stops_at_the_first_collapse_and_names_the_ceiling() {
    if !Path::new("/sys/fs/cgroup/memory").exists()
        && !Path::new("/sys/fs/cgroup/cgroup.controllers").exists()
    {
        eprintln!("no cgroup hierarchy; skipping");
        return;
    }
    let server = LEAKY_SERVER;
    let cfg = config(
        "ramp-oom",
        &format!("[\"python3\", \"-c\", {server:?}]"),
        "",
    );
    let (code, doc, err) = ramp(&cfg, &["--ladder", "1,2,4", "--mem", "100M", "--cpus", "1"]);
    assert_eq!(code, 0, "{err}");
    if doc["steps"][0]["cap"]["method"] == "affinity" {
        eprintln!("memory not cappable here; skipping the collapse check");
        return;
    }
    assert_eq!(doc["analysis"]["ceiling"], 1, "{doc}");
    assert_eq!(doc["analysis"]["collapse"]["concurrency"], 2, "{doc}");
    assert_eq!(
        doc["analysis"]["collapse"]["outcome"], "oom_killed",
        "{doc}"
    );
    assert_eq!(
        doc["steps"].as_array().unwrap().len(),
        2,
        "the ramp stops at the collapse"
    );
    assert!(err.contains("collapse at 2 sessions: oom_killed"), "{err}");
}

#[test]
fn demo_runs_with_nothing_set_up() {
    let out = std::env::temp_dir().join(format!("plimsoll-demo-test-{}", std::process::id()));
    let o = Command::new(BIN)
        .args(["demo", "--ladder", "4,8", "--no-cap", "--out"])
        .arg(&out)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(doc["analysis"]["ceiling"], 8);
    assert!(out.join("report.md").exists() && out.join("setup/plimsoll.toml").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn history_records_runs_and_report_re_renders_them_identically() {
    let dir = std::env::temp_dir().join(format!("plimsoll-history-test-{}", std::process::id()));
    let db = dir.join("history.db");
    let (code, doc, err) = ramp(
        &root().join("examples/floor/plimsoll.toml"),
        &[
            "--ladder",
            "3,6",
            "--no-cap",
            "--history",
            db.to_str().unwrap(),
            "--out",
            dir.join("a").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let run = doc["run"].as_i64().unwrap();
    let list = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(list.contains("done") && list.lines().count() == 2, "{list}");
    let o = Command::new(BIN)
        .args(["report", &run.to_string(), "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.join("b"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = std::fs::read_to_string(dir.join("a/report.md")).unwrap();
    let b = std::fs::read_to_string(dir.join("b/report.md")).unwrap();
    assert_eq!(a, b, "re-rendered report differs");
    let missing = Command::new(BIN)
        .args(["report", "999", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run 999"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_ramp_keeps_its_finished_steps() {
    let dir = std::env::temp_dir().join(format!("plimsoll-interrupt-test-{}", std::process::id()));
    let db = dir.join("history.db");
    let child = Command::new(BIN)
        .args(["ramp", "--config"])
        .arg(root().join("examples/floor/plimsoll.toml"))
        .args(["--ladder", "2,4,8,16,32", "--no-cap", "--history"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Each step of the floor takes about 2 s: interrupt during the second.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let list = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    let line = list.lines().nth(1).unwrap_or("");
    assert!(line.contains("interrupted"), "{list}");
    let steps: i64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!((1..5).contains(&steps), "{list}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A quick memory scenario (10 ms to first token) so compare's many steps stay short.
fn fast_config(name: &str) -> PathBuf {
    let cfg = config(name, "[\"true\"]", "[step]\nconcurrency = 6\n");
    let dir = cfg.parent().unwrap().to_path_buf();
    let scenario = std::fs::read_to_string(root().join("scenarios/memory.toml"))
        .unwrap()
        .replace("ttft_ms = 150", "ttft_ms = 10")
        .replace("tok_ms = 4", "tok_ms = 1");
    std::fs::write(dir.join("fast.toml"), scenario).unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("scenario = ") {
                "scenario = \"fast.toml\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&cfg, text).unwrap();
    cfg
}

fn compare(cfg: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = Command::new(BIN)
        .arg("compare")
        .arg("--config")
        .arg(cfg)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = serde_json::from_str(stdout.lines().last().unwrap_or("null"))
        .unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap_or(-1),
        doc,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

const FLOOR: &str = "{{plimsoll}} floor --listen 127.0.0.1:{{port}}";

#[test]
fn compare_calls_a_thread_per_session_worse_and_a_build_against_itself_unchanged() {
    let cfg = fast_config("compare");
    let branch = format!("{FLOOR} --thread-per-session");
    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            &branch,
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
            "--fail-on",
            "peak_threads>+0",
        ],
    );
    assert_eq!(code, 2, "{err}");
    let m = &doc["levels"][0]["metrics"];
    assert_eq!(m["peak_threads"]["verdict"], "worse", "{m}");
    assert!(m["peak_threads"]["ratio"].as_f64().unwrap() > 1.5);
    assert!(err.contains("FAIL: 6 sessions: peak_threads"), "{err}");
    assert!(err.contains("| 6 | peak_threads |"), "{err}");

    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            FLOOR,
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let m = doc["levels"][0]["metrics"].as_object().unwrap();
    assert_eq!(m.len(), 7);
    for (name, v) in m {
        assert_eq!(v["verdict"], "no significant change", "{name}: {v}");
    }
    let (_, doc, _) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            FLOOR,
            "--ladder",
            "6",
            "--repeat",
            "2",
            "--no-cap",
        ],
    );
    assert!(doc["levels"][0]["metrics"]["peak_threads"]["verdict"]
        .as_str()
        .unwrap()
        .starts_with("too few"));
}

#[test]
fn compare_builds_git_refs_in_worktrees_and_removes_them() {
    let repo = std::env::temp_dir().join(format!("plimsoll-compare-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.invalid"]);
    git(&["config", "user.name", "t"]);
    // The "build" writes the flag the agent starts with; the branch turns threads on.
    std::fs::write(repo.join("build.sh"), "echo '' > flags\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(
        repo.join("build.sh"),
        "echo '--thread-per-session' > flags\n",
    )
    .unwrap();
    git(&["commit", "-q", "-am", "branch: a thread per session"]);
    let cfg = fast_config("compare-refs");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "command = [\"true\"]",
        &format!("command = [\"sh\", \"-c\", \"exec {} floor --listen 127.0.0.1:$PORT $(cat flags)\"]\ncwd = {:?}", BIN, repo.display()),
    );
    std::fs::write(&cfg, text).unwrap();
    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base",
            "main~1",
            "--branch",
            "main",
            "--build",
            "sh build.sh",
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        doc["levels"][0]["metrics"]["peak_threads"]["verdict"], "worse",
        "{doc}"
    );
    let list = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout).lines().count(),
        1,
        "worktrees left behind"
    );
    let _ = std::fs::remove_dir_all(&repo);
}
