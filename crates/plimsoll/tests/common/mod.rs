//! Helpers shared by the end-to-end tests: the real binary, configs in temp dirs.
#![allow(dead_code)]

pub mod otlp;

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub struct Run {
    pub code: i32,
    pub result: Option<serde_json::Value>,
    pub stderr: String,
}

/// `cmd` with the scratch dir `path` is in (or is) as its TMPDIR, where it is one, so the
/// SUT log a failed run keeps goes with the test's dir.
pub fn tmp_in_scratch<'c>(cmd: &'c mut Command, path: &Path) -> &'c mut Command {
    let tmp = std::env::temp_dir();
    let dir = match path.is_dir() {
        true => Some(path),
        false => path.parent(),
    };
    if let Some(d) = dir.filter(|d| d.starts_with(&tmp) && *d != tmp) {
        cmd.env("TMPDIR", d);
    }
    cmd
}

/// `plimsoll run --config config extra…` (TMPDIR the config's scratch dir).
pub fn run(config: &Path, extra: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("run").arg("--config").arg(config).args(extra);
    let out = tmp_in_scratch(&mut cmd, config).output().unwrap();
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

/// A test's own directory in the temp dir, and a path in it (the directory itself, or the
/// config file a run is given): removed with everything in it when this is dropped, as
/// the test ends, passed or panicked, so the suite leaves nothing behind.
pub struct Scratch {
    dir: PathBuf,
    path: PathBuf,
}

impl Scratch {
    /// A fresh, empty `plimsoll-{kind}-{pid}-{name}` in the temp dir.
    pub fn new(kind: &str, name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("plimsoll-{kind}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch {
            path: dir.clone(),
            dir,
        }
    }

    /// The same directory, standing for the file `name` in it.
    pub fn file(mut self, name: &str) -> Scratch {
        self.path = self.dir.join(name);
        self
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A config in a temp dir of its own next to a copy of the floor's session file.
pub fn config(name: &str, sut_command: &str, extra: &str) -> Scratch {
    let cfg = Scratch::new("run-test", name).file("plimsoll.toml");
    let dir = cfg.parent().unwrap();
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
    cfg
}

/// A Python SUT that keeps 16 MB per turn it serves: made to be OOM-killed.
pub const LEAKY_SERVER: &str = r#"
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

pub fn children_of(pid: u32) -> Vec<u32> {
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

fn is_watchdog(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__watchdog"))
}

/// Plimsoll's children that are SUTs (not its watchdog).
pub fn sut_children(pid: u32) -> Vec<u32> {
    children_of(pid)
        .into_iter()
        .filter(|&p| !is_watchdog(p))
        .collect()
}

/// Plimsoll's watchdog process, once it has started.
pub fn watchdog_of(pid: u32) -> Option<u32> {
    children_of(pid).into_iter().find(|&p| is_watchdog(p))
}

/// Waits up to `secs` for `cond`.
pub fn within(secs: f64, cond: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    cond()
}

pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// Runs `plimsoll ramp`; also returns how many cgroups that process left behind.
pub fn ramp_with_pid(config: &Path, extra: &[&str]) -> (i32, serde_json::Value, String, usize) {
    let child = tmp_in_scratch(&mut Command::new(BIN), config)
        .args(["ramp", "--json", "--config"])
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

pub fn ramp(config: &Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let (code, doc, err, _) = ramp_with_pid(config, extra);
    (code, doc, err)
}

/// A quick memory scenario (10 ms to first token) so compare's many steps stay short.
pub fn fast_config(name: &str) -> Scratch {
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

pub fn compare(cfg: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
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

pub const FLOOR: &str = "{{plimsoll}} floor --listen 127.0.0.1:{{port}}";

/// `plimsoll ramp --json ARGS` run in `dir`: the ladder document and what it printed on
/// stderr (for messages). Panics when the ramp fails.
pub fn ramp_json(dir: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = Command::new(BIN)
        .args(["ramp", "--json"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = serde_json::from_str(stdout.lines().last().unwrap_or("null")).expect(&err);
    (doc, err)
}
