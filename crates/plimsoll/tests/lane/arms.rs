//! Arms, replicas and dependencies end to end. Two designs of the floor agent side by
//! side with a replicas axis (the one limited to 2 turns in flight: its plateau predicted
//! by its limit, and twice that from two replicas); the same two arms compared by name; and
//! a SUT holding a known number of connections to a `[[service]]`, with a `[[probe]]` on a
//! process Plimsoll did not start.

use crate::common::*;
use serde_json::Value;
use std::process::Command;

fn json_of(out: &std::process::Output) -> (Value, String) {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = serde_json::from_str(stdout.lines().last().unwrap_or("null")).expect(&err);
    (doc, err)
}

fn arm<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["arms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["arm"] == name)
        .unwrap_or_else(|| panic!("no arm {name}"))
}

#[test]
fn two_arms_and_a_replicas_axis_in_one_report() {
    let dir = root().join("examples/arms");
    let out_dir = std::env::temp_dir().join(format!("plimsoll-arms-{}", std::process::id()));
    let out = Command::new(BIN)
        .args([
            "ramp",
            "--json",
            "--no-history",
            "--ladder",
            "2,4,8",
            "--replicas",
            "1,2",
            "--out",
        ])
        .arg(&out_dir)
        .current_dir(&dir)
        .output()
        .unwrap();
    let (doc, err) = json_of(&out);
    let names: Vec<&str> = doc["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["arm"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["limited-x1", "limited-x2", "free-x1", "free-x2"],
        "{err}"
    );
    // Interleaved: every arm at 2 sessions before any at 4.
    let at = |l: &str| {
        err.lines()
            .position(|x| x.contains(l))
            .unwrap_or(usize::MAX)
    };
    assert!(
        at("| free-x2      |        2 |") < at("| limited-x1   |        4 |"),
        "{err}"
    );
    // The limited arm's plateau is what its limit predicts: 2 turns at a time.
    let one = arm(&doc, "limited-x1");
    let turn_s = one["steps"][0]["p50_turn_ms"].as_f64().unwrap() / 1000.0;
    let v = &one["analysis"]["verdict"];
    assert_eq!(v["wall"]["kind"], "internal", "{err}");
    let plateau = v["plateau"]["turns_per_s"].as_f64().expect(&err);
    assert!(
        (plateau / (2.0 / turn_s) - 1.0).abs() <= 0.15,
        "{plateau} vs {}\n{err}",
        2.0 / turn_s
    );
    for s in one["steps"].as_array().unwrap() {
        assert_eq!(s["arm"], "limited", "{s}");
        assert!(s["replicas"].is_null(), "one instance: {s}");
    }
    // Two replicas, each with its own limit of 2: twice the throughput.
    let two = arm(&doc, "limited-x2");
    let s8 = &two["steps"][2];
    assert_eq!(s8["replicas"]["count"], 2, "{s8}");
    assert!(
        s8["replicas"]["rss_mb_per_instance"].as_f64().unwrap() > 1.0,
        "{s8}"
    );
    let scaling = doc["scaling"].as_array().unwrap();
    let eff = scaling
        .iter()
        .find(|s| s["variant"] == "limited" && s["replicas"] == 2)
        .and_then(|s| s["efficiency"].as_f64())
        .expect(&err);
    assert!((0.85..=1.15).contains(&eff), "efficiency {eff}\n{err}");
    // The free arm has no limit: on a quiet machine it hits no wall by 8 sessions, and no
    // efficiency is claimed for it (the line says to widen the ladder). Beside the other
    // tests a busy machine can stop its throughput growing (a CI run of 12-06 read 48.7 %):
    // then the claim is the one its own line prints, never one without a wall.
    let free2 = scaling
        .iter()
        .find(|s| s["variant"] == "free" && s["replicas"] == 2)
        .unwrap();
    let free_line = err
        .lines()
        .find(|l| l.contains("scaling of free:"))
        .expect(&err);
    match free2["efficiency"].as_f64() {
        None => assert!(
            free_line.contains("scaling not measured: 1 replica found no wall"),
            "{free_line}"
        ),
        Some(e) => assert!(
            free_line.contains(&format!("{:.0} % of linear", e * 100.0)),
            "{free2}\n{free_line}"
        ),
    }
    assert!(
        err.contains("scaling of limited: 1 replica:") && err.contains("% of linear"),
        "{err}"
    );
    // One report with every arm on each chart.
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    for n in &names {
        assert!(html.contains(&format!(">{n}</text>")), "{n} on the charts");
        assert!(
            html.contains(&format!("<h2>Arm {n}</h2>")),
            "{n}'s own section"
        );
    }
    assert!(html.contains("Connections (peak)") && html.contains("limited-x1→mock"));
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("| limited-x1 | ") && md.contains("scaling of limited"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);

    // The same arms, compared by name.
    let out = Command::new(BIN)
        .args([
            "compare",
            "--no-history",
            "--base-arm",
            "limited",
            "--branch-arm",
            "free",
            "--ladder",
            "4",
            "--repeat",
            "1",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let (doc, err) = json_of(&out);
    assert_eq!(
        (doc["base"].as_str(), doc["branch"].as_str()),
        (Some("arm limited"), Some("arm free")),
        "{err}"
    );
    let infl = &doc["levels"][0]["metrics"]["latency_inflation"];
    assert!(
        infl["base"].as_f64().unwrap() > infl["branch"].as_f64().unwrap() * 1.3,
        "{infl}"
    );
    // A name that is not an arm is refused before anything starts, naming the arms.
    let out = Command::new(BIN)
        .args(["ramp", "--arm", "limted", "--ladder", "2"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--arm limted: no such [[arm]] (its arms are limited, free)"),
        "{err}"
    );
}

/// A SUT that holds exactly 7 connections to its service, and a process found by pattern.
#[test]
fn connections_to_a_service_are_counted_and_dependencies_sampled() {
    let dir = fresh_dir("conns");
    std::fs::write(
        dir.join("sut.py"),
        format!(
            "import os, socket\nheld = [socket.create_connection((\"127.0.0.1\", int(os.environ[\"HOLD_PORT\"]))) for _ in range(7)]\n{}",
            json_server(r#"{"reply": "ok"}"#, r#"os.environ["PORT"]"#)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("hold.py"),
        r#"import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
kept = []
while True:
    kept.append(s.accept()[0])
"#,
    )
    .unwrap();
    let marker = format!("sleep 3{}.5", std::process::id() % 1000);
    std::fs::write(
        dir.join("plimsoll.toml"),
        format!(
            r#"[sut]
command = ["python3", "sut.py"]
ready_path = "/health"
[[service]]
name = "hold"
command = ["python3", "hold.py", "{{{{port}}}}"]
export = {{ HOLD_PORT = "{{{{port}}}}" }}
[[probe]]
name = "outside"
pattern = "^{}$"
[session]
file = "session.toml"
[step]
concurrency = 3
"#,
            regex_escape(&marker)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "protocol = \"http\"\nurl = \"{{base}}/turn\"\nturns = 2\n[headers]\ncontent-type = \"application/json\"\n",
    )
    .unwrap();
    // A process Plimsoll does not start: this test's own child, not Plimsoll's.
    let mut outside = Command::new("sh")
        .args(["-c", &format!("exec {marker}")])
        .spawn()
        .unwrap();
    let r = run(&dir.join("plimsoll.toml"), &[]);
    let _ = outside.kill();
    let _ = outside.wait();
    let res = r
        .result
        .unwrap_or_else(|| panic!("no RESULT\n{}", r.stderr));
    assert_eq!(res["outcome"], "ok", "{res}\n{}", r.stderr);
    let conns = res["connections"].as_array().unwrap();
    let hold = conns
        .iter()
        .find(|c| c["peer"] == "hold")
        .unwrap_or_else(|| panic!("{res}"));
    assert_eq!(
        (hold["peak"].as_u64(), hold["mean"].as_f64()),
        (Some(7), Some(7.0)),
        "{hold}"
    );
    assert!(!hold["series"].as_array().unwrap().is_empty());
    let deps = res["dependencies"].as_array().unwrap();
    let svc = deps.iter().find(|d| d["name"] == "hold").unwrap();
    assert_eq!(
        (svc["kind"].as_str(), svc["processes"].as_u64()),
        (Some("service"), Some(1)),
        "{svc}"
    );
    assert_eq!(
        svc["peak_clients"], 7,
        "the service saw the same 7 from its side: {svc}"
    );
    let probe = deps.iter().find(|d| d["name"] == "outside").unwrap();
    assert_eq!(
        (probe["kind"].as_str(), probe["processes"].as_u64()),
        (Some("probe"), Some(1)),
        "{probe}"
    );
    // The service is gone with the step.
    let ps = Command::new("pgrep")
        .args(["-f", "hold.py"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ps.stdout).trim().is_empty(),
        "hold.py survived"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A session whose url is a service's (`{{web.port}}`, as a LiveKit call's is the
/// server's) drives the service, not the SUT; a port of no service is refused in one line.
#[test]
fn a_session_reaches_a_service_by_its_port_and_a_service_it_names_must_exist() {
    let dir = fresh_dir("svc-url");
    std::fs::write(
        dir.join("web.py"),
        format!(
            "import sys\n{}",
            json_server(r#"{"who": sys.argv[1]}"#, "sys.argv[2]")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("plimsoll.toml"),
        r#"[sut]
command = ["python3", "web.py", "sut", "{{port}}"]
ready_path = "/health"
[[service]]
name = "web"
command = ["python3", "web.py", "service", "{{port}}"]
[session]
file = "session.toml"
[step]
concurrency = 3
"#,
    )
    .unwrap();
    let session = |name: &str| {
        format!(
            "protocol = \"http\"\nurl = \"http://127.0.0.1:{{{{{name}.port}}}}/turn\"\nturns = 2\n[[check]]\npointer = \"/who\"\nequals = \"service\"\n"
        )
    };
    std::fs::write(dir.join("session.toml"), session("web")).unwrap();
    let r = run(&dir.join("plimsoll.toml"), &[]);
    let res = r
        .result
        .unwrap_or_else(|| panic!("no RESULT\n{}", r.stderr));
    assert_eq!(
        (res["outcome"].as_str(), res["turns"].as_u64()),
        (Some("ok"), Some(6)),
        "every turn answered by the service: {res}\n{}",
        r.stderr
    );
    std::fs::write(dir.join("session.toml"), session("wbe")).unwrap();
    let r = run(&dir.join("plimsoll.toml"), &[]);
    assert!(r.result.is_none() && r.code != 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("session.toml: {{wbe.port}} names no [[service]] of")
            && r.stderr.contains("the services are web"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty directory of the test's own.
fn fresh_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("plimsoll-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A Python HTTP server answering every GET and POST with the JSON `body` (a Python
/// expression) on the port `port` (one too).
fn json_server(body: &str, port: &str) -> String {
    format!(
        r#"import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self): self.answer()
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0)); self.answer()
    def answer(self):
        body = json.dumps({body}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", int({port})), H).serve_forever()
"#
    )
}

fn regex_escape(s: &str) -> String {
    s.replace('.', "\\\\.")
}
