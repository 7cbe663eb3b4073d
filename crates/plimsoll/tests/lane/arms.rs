//! Dependencies end to end: a SUT holding a known number of connections to a
//! `[[service]]`, with a `[[probe]]` on a process Plimsoll did not start, and a session
//! that reaches a service by its port. (The arms' ladder, whose verdict names a wall, runs
//! on the quiet machine: tests/quiet/arms.rs.)

use crate::common::*;
use std::process::Command;

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
